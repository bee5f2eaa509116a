"""ONNX export of SiamRPN: two inputs (template, search region), the depth-wise correlation
written as shifted slices, and a search size that changes between training (255) and
tracking (287), so the graph leaves the spatial axes free."""

from __future__ import annotations

import numpy as np
import onnxruntime
import pytest

import gluon_hub
from gluon_hub.compat import mx

pytestmark = pytest.mark.portability  # whole models against MXNet: the 3.11 leg (pyproject.toml)

_NAME = "siamrpn_alexnet_v2_otb15"


def test_siamrpn_fixed_shapes_by_name_keep_call_order(tmp_path):
    """The inputs and outputs keep call order: mxnet.onnx lists the search image (read first
    by the graph) before the template, which gave the template the search image's shape."""
    (by_name,) = gluon_hub.export(_NAME, tmp_path / "by-name.onnx", format="onnx",
                                  input_shape=[(1, 3, 127, 127), (1, 3, 287, 287)])
    session = onnxruntime.InferenceSession(str(by_name), providers=["CPUExecutionProvider"])
    assert {i.name: i.shape for i in session.get_inputs()} == {"data0": [1, 3, 127, 127],
                                                                "data1": [1, 3, 287, 287]}
    assert [o.shape for o in session.get_outputs()] == [[1, 10, 21, 21], [1, 20, 21, 21]]


def test_siamrpn_matches_mxnet_at_two_search_sizes(tmp_path):
    net = gluon_hub.load(_NAME)
    net.initialize(mx.init.Xavier(rnd_type="gaussian", factor_type="in", magnitude=2), force_reinit=True)
    path = tmp_path / "siamrpn.onnx"
    gluon_hub.export(net, path, format="onnx", input_shape=[(1, 3, 127, 127), (1, 3, 255, 255)],
                     dynamic_batch=True, dynamic_spatial=True)
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    for batch, size, side in [(1, 255, 17), (2, 287, 21)]:
        template = rng.normal(size=(batch, 3, 127, 127)).astype(np.float32)
        search = rng.normal(size=(batch, 3, size, size)).astype(np.float32)
        expected = [o.asnumpy() for o in net(mx.nd.array(template), mx.nd.array(search))]
        got = session.run(None, {"data0": template, "data1": search})  # inputs by name: call order
        assert [g.shape for g in got] == [(batch, 10, side, side), (batch, 20, side, side)]
        for g, e in zip(got, expected):
            assert np.abs(g - e).max() <= 1e-4 * np.abs(e).max()
