"""The converters of ``onnx_converters/text_ops.py``: ``Convolution`` in the ``NCW`` layout
(``Conv1D``, which MXNet's converter refuses) against onnxruntime, with a free width."""

from __future__ import annotations

import pytest

from gluon_hub.compat import mx

pytest.importorskip("onnxruntime")


@pytest.mark.parametrize("conv_kwargs", [
    dict(kernel_size=3),
    dict(kernel_size=3, strides=2, padding=1, dilation=2, groups=2, use_bias=False),
])
def test_conv1d_exports_at_two_widths(onnx_matches_mxnet, conv_kwargs):
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Conv1D(4, in_channels=6, activation="relu", **conv_kwargs))
    worst = onnx_matches_mxnet(net, [(2, 6, 11), (3, 6, 17)])
    assert max(worst) <= 1e-4


def test_other_layouts_still_go_to_mxnets_converter(onnx_matches_mxnet):
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Conv2D(4, 3, in_channels=2, padding=1))
    assert max(onnx_matches_mxnet(net, [(1, 2, 8, 8)])) <= 1e-4
