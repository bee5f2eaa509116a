"""The hub's adaptive average pooling converter: any output size, on a dynamic graph, against
MXNet at sizes the bins divide and at sizes they do not."""

from __future__ import annotations

import numpy as np
import onnxruntime
import pytest

import gluon_hub
from gluon_hub.compat import mx


@pytest.mark.parametrize("output_size", [1, 2, 3, 6, (2, 3)])
def test_adaptive_avg_pooling_matches_mxnet(tmp_path, output_size):
    data = mx.sym.var("data")
    net = mx.gluon.SymbolBlock(mx.sym.contrib.AdaptiveAvgPooling2D(data, output_size=output_size), [data])
    (path,) = gluon_hub.export(net, tmp_path / "pool.onnx", format="onnx", input_shape=(1, 2, 6, 12),
                               dynamic_batch=True, dynamic_spatial=True)
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for shape in [(1, 2, 6, 12), (2, 2, 13, 7)]:
        x = np.random.default_rng(0).normal(size=shape).astype(np.float32)
        expected = net(mx.nd.array(x)).asnumpy()
        (got,) = session.run(None, {"data": x})
        assert got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6)
