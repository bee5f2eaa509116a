"""The hub's GroupNorm converter against MXNet (2-D and 3-D inputs, a dynamic graph), and the
models built on it."""

from __future__ import annotations

import numpy as np
import onnxruntime
import pytest

import gluon_hub
from gluon_hub.compat import mx


@pytest.mark.parametrize("groups, shapes", [
    (1, [(1, 4, 5, 6), (2, 4, 3, 7)]),
    (4, [(1, 8, 5, 6), (3, 8, 9, 2)]),
    (2, [(1, 4, 3, 5, 6), (2, 4, 2, 3, 4)]),  # video (N, C, T, H, W)
])
def test_group_norm_matches_mxnet(tmp_path, groups, shapes):
    data = mx.sym.var("data")
    net = mx.gluon.SymbolBlock(mx.sym.GroupNorm(data, num_groups=groups, eps=1e-3, name="gn"), [data])
    rng = np.random.default_rng(0)
    net.initialize()
    net.collect_params()["gn_gamma"].set_data(mx.nd.array(rng.normal(size=groups)))
    net.collect_params()["gn_beta"].set_data(mx.nd.array(rng.normal(size=groups)))
    (path,) = gluon_hub.export(net, tmp_path / "gn.onnx", format="onnx", input_shape=shapes[0],
                               dynamic_batch=True, dynamic_spatial=True)
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for shape in shapes:
        x = (rng.normal(size=shape) * 3 + 1).astype(np.float32)
        expected = net(mx.nd.array(x)).asnumpy()
        (got,) = session.run(None, {"data": x})
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5)


@pytest.mark.portability
def test_resnet_with_group_norm_exports(onnx_matches_mxnet):
    print("resnet50_v1b_gn", onnx_matches_mxnet("resnet50_v1b_gn", [(1, 3, 64, 64), (2, 3, 96, 80)]))
