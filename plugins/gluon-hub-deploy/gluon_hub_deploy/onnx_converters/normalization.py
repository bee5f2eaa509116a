"""MXNet's ``GroupNorm``, which ``mxnet.onnx`` has no converter for, in opset-13 operators.

MXNet 1.x normalises each of ``num_groups`` groups of channels over its channels and
positions, then scales and shifts it by that group's ``gamma`` and ``beta`` (both of shape
``(num_groups,)``). In ONNX: view the input as (N, groups, -1), normalise the last axis,
apply the per-group affine and restore the input's shape, read in the graph so that batch and
spatial axes may stay dynamic. (ONNX's own GroupNormalization arrives only in opset 18.)
"""

from __future__ import annotations

from typing import Any

from onnx.helper import make_node

from ._common import constant, flag, node_inputs, register


@register("GroupNorm")
def convert_group_norm(node: dict[str, Any], **kwargs: Any) -> list[Any]:
    """GroupNorm with per-group gamma and beta; ``output_mean_var`` is not supported."""
    name, (data, gamma, beta), attrs = node_inputs(node, kwargs)
    if flag(attrs, "output_mean_var"):
        raise ValueError(f"GroupNorm {name}: output_mean_var=True (mean and variance outputs) has no converter")
    groups = int(attrs.get("num_groups", 1))
    eps = float(attrs.get("eps", 1e-5))
    c = lambda suffix, values, dtype="int64": constant(kwargs, f"{name}__{suffix}", values, dtype)  # noqa: E731
    n = f"{name}__"  # "__": the parameters are "{name}_gamma" and "{name}_beta"
    return [
        make_node("Shape", [data], [n + "shape"]),
        make_node("Reshape", [data, c("grouped_shape", [0, groups, -1])], [n + "grouped"]),
        make_node("ReduceMean", [n + "grouped"], [n + "mean"], axes=[2], keepdims=1),
        make_node("Sub", [n + "grouped", n + "mean"], [n + "centred"]),
        make_node("Mul", [n + "centred", n + "centred"], [n + "squared"]),
        make_node("ReduceMean", [n + "squared"], [n + "var"], axes=[2], keepdims=1),
        make_node("Add", [n + "var", c("eps", eps, "float32")], [n + "var_eps"]),
        make_node("Sqrt", [n + "var_eps"], [n + "std"]),
        make_node("Div", [n + "centred", n + "std"], [n + "normed"]),
        make_node("Unsqueeze", [gamma, c("axis", [1])], [n + "gamma"]),
        make_node("Unsqueeze", [beta, c("axis_b", [1])], [n + "beta"]),
        make_node("Mul", [n + "normed", n + "gamma"], [n + "scaled"]),
        make_node("Add", [n + "scaled", n + "beta"], [n + "shifted"]),
        make_node("Reshape", [n + "shifted", n + "shape"], [name], name=name),
    ]
