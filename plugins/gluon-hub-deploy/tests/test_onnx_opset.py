"""ONNX files declare opset 13, the opset of the nodes mxnet.onnx writes: ReduceMean with its
``axes`` attribute and Split with its ``split`` input run in onnxruntime (TSN, C3D, CycleGAN,
DistilBERT, MobileNetV3 failed before); graphs ONNX cannot express raise OnnxExportError
naming the model, the operator and the alternatives."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime
import pytest

import gluon_hub
from gluon_hub.compat import mx
from gluon_hub_deploy import OnnxExportError


def _run_both(tmp_path, symbol, shape):
    net = mx.gluon.SymbolBlock(symbol, [mx.sym.var("data")])
    x = np.random.default_rng(0).normal(size=shape).astype(np.float32)
    expected = net(mx.nd.array(x))
    expected = [o.asnumpy() for o in (expected if isinstance(expected, (list, tuple)) else [expected])]
    (path,) = gluon_hub.export(net, tmp_path / "graph.onnx", format="onnx", input_shape=shape)
    model = onnx.load(str(path))
    assert [(o.domain, o.version) for o in model.opset_import] == [("", 13)]
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session.run(None, {"data": x}), expected


@pytest.mark.parametrize("op, kwargs", [
    ("mean", {"axis": (2, 3), "keepdims": True}),
    ("mean", {"axis": 1}),
    ("sum", {"axis": (1,)}),
    ("max", {"axis": 3}),
])
def test_reductions_run_at_the_declared_opset(tmp_path, op, kwargs):
    (got,), (expected,) = _run_both(tmp_path, getattr(mx.sym, op)(mx.sym.var("data"), **kwargs), (2, 4, 5, 6))
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("split", [
    lambda d: mx.sym.split(d, num_outputs=2, axis=1),
    lambda d: mx.sym.SliceChannel(d, num_outputs=3, axis=3, squeeze_axis=False),
    lambda d: mx.sym.split_v2(d, indices_or_sections=(1, 3), axis=1),
])
def test_splits_run_at_the_declared_opset(tmp_path, split):
    got, expected = _run_both(tmp_path, split(mx.sym.var("data")), (2, 4, 5, 6))
    assert len(got) == len(expected) > 1
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e)


@pytest.mark.portability
def test_distilbert_exports(tmp_path):
    net = gluon_hub.load("distilbert_6_768_12")
    net.initialize(mx.init.Xavier(rnd_type="gaussian", factor_type="in", magnitude=2), force_reinit=True)
    tokens = np.random.default_rng(0).integers(0, 1000, size=(2, 9)).astype(np.int32)
    expected = net(mx.nd.array(tokens, dtype="int32")).asnumpy()
    (path,) = gluon_hub.export(net, tmp_path / "distilbert.onnx", format="onnx", input_shape=tokens.shape,
                               dtype="int32")
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    (got,) = session.run(None, {session.get_inputs()[0].name: tokens})
    relative = float(np.abs(got - expected).max() / np.abs(expected).max())
    print("distilbert_6_768_12", relative)
    assert relative <= 1e-4


def test_dcnv2_is_reported_not_portable(tmp_path):
    block = mx.gluon.contrib.cnn.ModulatedDeformableConvolution(4, kernel_size=3, padding=1, in_channels=3)
    block.initialize()
    with pytest.raises(OnnxExportError, match=r"ModulatedDeformableConvolution is not portable to ONNX "
                                              r"\(.*DCNv2\) has no ONNX operator\).*format='mxnet'.*gluon-hub deploy"):
        gluon_hub.export(block, tmp_path / "dcn.onnx", format="onnx", input_shape=(1, 3, 8, 8))
    assert not list(tmp_path.iterdir())  # nothing half-written


def test_a_converter_failure_names_the_model_and_operator(tmp_path):
    data = mx.sym.var("data")
    net = mx.gluon.SymbolBlock(mx.sym.GroupNorm(data, num_groups=2, output_mean_var=True)[0], [data])
    net.initialize()
    with pytest.raises(OnnxExportError, match=r"SymbolBlock cannot be exported to ONNX: mxnet.onnx failed on operator "
                                              r"GroupNorm .*output_mean_var.*format='mxnet'") as caught:
        gluon_hub.export(net, tmp_path / "gn.onnx", format="onnx", input_shape=(1, 4, 3, 3))
    assert "Traceback" not in str(caught.value)


@pytest.mark.portability
def test_export_by_name_runs_at_a_second_size(tmp_path):
    (path,) = gluon_hub.export("shufflenet_v2", tmp_path / "shufflenet.onnx", format="onnx",
                               input_shape=(1, 3, 64, 64), dynamic_batch=True, dynamic_spatial=True)
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    assert [d if isinstance(d, int) else None for d in session.get_inputs()[0].shape] == [None, 3, None, None]
    (scores,) = session.run(None, {"data": np.zeros((2, 3, 96, 80), np.float32)})
    assert scores.shape == (2, 1000)


@pytest.mark.portability
def test_a_dcnv2_model_by_name_is_named_not_portable(tmp_path):
    with pytest.raises(OnnxExportError, match=r"^center_net_resnet18_v1b_dcnv2_voc is not portable to ONNX "
                                              r"\(_contrib_ModulatedDeformableConvolution: .*DCNv2"):
        gluon_hub.export("center_net_resnet18_v1b_dcnv2_voc", tmp_path / "c.onnx", format="onnx",
                         input_shape=(1, 3, 64, 64))
