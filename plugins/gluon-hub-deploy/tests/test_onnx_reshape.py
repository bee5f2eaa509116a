"""The hub's Reshape converter: MXNet's codes 0, -1, -2, -3, -4 and ``reverse`` in ONNX, at
a fixed and at a dynamic input shape, and ShuffleNet V2, whose channel shuffle uses them."""

from __future__ import annotations

import numpy as np
import onnxruntime
import pytest

import gluon_hub
from gluon_hub.compat import mx


@pytest.mark.parametrize("codes, reverse", [
    ((0, -4, 2, -1, -2), False),   # ShuffleNet's channel split
    ((0, -4, -1, 3, 0, 0), False),
    ((-4, 1, -1, 0, 0, 0), False),
    ((-3, -2), False),             # merge batch and channels (video models)
    ((0, 0, -3), False),
    ((-3, -3), False),
    ((0, -1), False),
    ((-1, 0), True),
    ((0, 0, -1), True),
    ((-1, 2, 0), True),
    ((-2,), False),
    ((2, 3, -1), False),           # constants only
])
def test_reshape_codes_match_mxnet_at_two_shapes(tmp_path, codes, reverse):
    data = mx.sym.var("data")
    net = mx.gluon.SymbolBlock(mx.sym.Reshape(data, shape=codes, reverse=reverse), data)
    (path,) = gluon_hub.export(net, tmp_path / "reshape.onnx", format="onnx", input_shape=(2, 6, 4, 6),
                               dynamic_batch=True, dynamic_spatial=True)
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for shape in [(2, 6, 4, 6), (3, 6, 8, 12)]:
        x = np.random.default_rng(0).normal(size=shape).astype(np.float32)
        expected = net(mx.nd.array(x)).asnumpy()
        (got,) = session.run(None, {"data": x})
        assert got.shape == expected.shape
        np.testing.assert_array_equal(got, expected)


@pytest.mark.portability
def test_shufflenet_v2_exports(onnx_matches_mxnet):
    diffs = onnx_matches_mxnet("shufflenet_v2", [(1, 3, 64, 64), (2, 3, 96, 96)])
    print("shufflenet_v2", diffs)
