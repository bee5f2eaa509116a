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


def test_siamrpn_by_name_is_its_template_and_search_graphs(tmp_path):
    """By name, SiamRPN leaves MXNet as the graphs its spec names: ``template`` (crop -> features),
    run once per object, and ``search`` (features, crop -> cls, loc), batch and search size free;
    together they give the whole network's outputs (inputs and outputs in call order: mxnet.onnx
    lists them in the order the graph reads them, which once swapped the template and the search)."""
    net = gluon_hub.load(_NAME)
    net.initialize(mx.init.Xavier(rnd_type="gaussian", factor_type="in", magnitude=2), force_reinit=True)
    net(mx.nd.zeros((1, 3, 127, 127)), mx.nd.zeros((1, 3, 287, 287)))
    params = tmp_path / "siamrpn.params"
    net.save_parameters(str(params))
    files = gluon_hub.export(_NAME, tmp_path / "by-name.onnx", format="onnx", pretrained=str(params))
    assert [f.name for f in files] == ["by-name-template.onnx", "by-name-search.onnx"]
    template, search = (onnxruntime.InferenceSession(str(f), providers=["CPUExecutionProvider"]) for f in files)
    assert [i.shape[1:] for i in template.get_inputs()] == [[3, 127, 127]]
    assert [i.shape[1:2] for i in search.get_inputs()] == [[256], [3]]
    assert search.get_inputs()[0].shape[2:] == [6, 6] and len(search.get_outputs()) == 2
    rng = np.random.default_rng(1)
    for batch, size, side in [(1, 287, 21), (2, 255, 17)]:
        crop = rng.normal(size=(batch, 3, 127, 127)).astype(np.float32)
        region = rng.normal(size=(batch, 3, size, size)).astype(np.float32)
        expected = [o.asnumpy() for o in net(mx.nd.array(crop), mx.nd.array(region))]
        (features,) = template.run(None, {template.get_inputs()[0].name: crop})
        got = search.run(None, dict(zip([i.name for i in search.get_inputs()], (features, region))))
        assert [g.shape for g in got] == [(batch, 10, side, side), (batch, 20, side, side)]
        for g, e in zip(got, expected):
            assert np.abs(g - e).max() <= 1e-4 * np.abs(e).max()


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
