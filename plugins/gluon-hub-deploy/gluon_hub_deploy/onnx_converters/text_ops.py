"""Converters the text models need: one-dimensional convolutions (``layout="NCW"``).

MXNet's ``Convolution`` converter refuses every layout but ``NCHW`` and ``NCDHW``, so
textCNN and ELMo's character CNN (``Conv1D``) did not export at all, although ONNX's
``Conv`` takes ``(batch, channels, width)`` as it is. This converter writes that ``Conv``
for ``NCW`` and hands every other layout to MXNet's own converter unchanged.
"""

from __future__ import annotations

from typing import Any

from ._common import int_tuple, mxnet_graph, node_inputs, register


@register("Convolution")
def convert_convolution(node: dict[str, Any], **kwargs: Any) -> list:
    """``Convolution`` with ``layout="NCW"`` as a 1-D ``Conv``; other layouts as MXNet does."""
    from onnx.helper import make_node

    name, inputs, attrs = node_inputs(node, kwargs)
    if attrs.get("layout") != "NCW":
        return mxnet_graph().registry_[12]["Convolution"](node, **kwargs)  # MXNet's own converter
    conv: dict[str, Any] = {"group": int(attrs.get("num_group", 1))}
    for mx_name, onnx_name in (("kernel", "kernel_shape"), ("stride", "strides"),
                               ("dilate", "dilations")):
        if int_tuple(attrs, mx_name):
            conv[onnx_name] = int_tuple(attrs, mx_name)
    if int_tuple(attrs, "pad"):
        conv["pads"] = int_tuple(attrs, "pad") * 2  # start and end of the one spatial axis
    return [make_node("Conv", inputs, [name], **conv)]
