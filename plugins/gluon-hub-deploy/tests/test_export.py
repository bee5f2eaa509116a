"""gluon_hub.export: MXNet symbol + params that SymbolBlock loads back, and ONNX that
onnxruntime runs with MXNet's results."""

from __future__ import annotations

import numpy as np
import onnxruntime
import pytest

import gluon_hub
from gluon_hub.compat import mx


def _forward_reference(net, x):
    """MXNet's own output, with He (fan-in) weights, which keep the outputs far from zero."""
    net.initialize(mx.init.Xavier(rnd_type="gaussian", factor_type="in", magnitude=2), force_reinit=True)
    return net(mx.nd.array(x)).asnumpy()


def test_mxnet_export_loads_back_with_symbolblock(tmp_path):
    net = gluon_hub.load("cifar_resnet20_v1")
    x = np.random.default_rng(0).normal(size=(2, 3, 32, 32)).astype(np.float32)
    expected = _forward_reference(net, x)
    files = gluon_hub.export(net, tmp_path / "deploy" / "resnet20", input_shape=(2, 3, 32, 32), epoch=3)
    assert [f.name for f in files] == ["resnet20-symbol.json", "resnet20-0003.params"]
    loaded = mx.gluon.SymbolBlock.imports(str(files[0]), ["data"], str(files[1]))
    np.testing.assert_allclose(loaded(mx.nd.array(x)).asnumpy(), expected, rtol=1e-5, atol=1e-5)


def test_export_by_name_takes_the_input_shape_from_the_spec(tmp_path):
    files = gluon_hub.export("cifar_resnet20_v1", tmp_path / "r20")
    symbol = mx.sym.load(str(files[0]))
    _, out_shapes, _ = symbol.infer_shape(data=(1, 3, 32, 32))
    assert out_shapes == [(1, 10)]
    files = gluon_hub.export("cifar_resnet20_v1", tmp_path / "r20-5", classes=5)
    assert mx.sym.load(str(files[0])).infer_shape(data=(1, 3, 32, 32))[1] == [(1, 5)]


def _with_trained_logit_scale(net, head, x, largest=20.0):
    """He-initialise ``net``, then scale its classifier ``head`` so that the largest |logit|
    on ``x`` is ``largest``; returns MXNet's output.

    Random He weights give logits in the thousands (resnet50_v1d), where one float32 ulp is
    already above 1e-4; a trained ImageNet model's logits stay within about 10-30. Scaling
    the last (linear) layer's weight and bias scales the logits exactly, so an absolute 1e-4
    then means what it would for real weights.
    """
    raw = _forward_reference(net, x)
    layer = getattr(net, head)
    for param in (layer.weight, layer.bias):
        param.set_data(param.data() * (largest / np.abs(raw).max()))
    return net(mx.nd.array(x)).asnumpy()


@pytest.mark.parametrize("name, head", [("resnet50_v1d", "fc"), ("mobilenet1.0", "output")])
def test_onnx_export_matches_mxnet(tmp_path, name, head):
    net = gluon_hub.load(name)
    x = np.random.default_rng(1).normal(size=(1, 3, 224, 224)).astype(np.float32)
    expected = _with_trained_logit_scale(net, head, x)
    assert np.abs(expected).max() == pytest.approx(20.0, rel=1e-4)
    (path,) = gluon_hub.export(net, tmp_path / f"{name}.onnx", format="onnx", input_shape=x.shape)
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    assert [i.name for i in session.get_inputs()] == ["data"]  # weights are not inputs
    (got,) = session.run(None, {"data": x})
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-4)


def test_onnx_dynamic_batch(tmp_path):
    net = gluon_hub.load("cifar_resnet20_v1")
    x = np.random.default_rng(2).normal(size=(3, 3, 32, 32)).astype(np.float32)
    expected = _forward_reference(net, x)
    (path,) = gluon_hub.export(net, tmp_path / "r20.onnx", format="onnx", input_shape=(1, 3, 32, 32),
                               dynamic_batch=True)
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(session.run(None, {"data": x})[0], expected, rtol=1e-4, atol=1e-4)


def test_export_errors_say_what_to_do(tmp_path):
    with pytest.raises(ValueError, match="unknown export format 'tflite'"):
        gluon_hub.export("cifar_resnet20_v1", tmp_path / "x", format="tflite")
    block = mx.gluon.nn.Sequential()
    block.add(mx.gluon.nn.Dense(2))
    block.initialize()
    with pytest.raises(TypeError, match="only a HybridBlock"):
        gluon_hub.export(block, tmp_path / "x", input_shape=(1, 3))
    dense = mx.gluon.nn.Dense(2)
    dense.initialize()
    with pytest.raises(ValueError, match="pass input_shape"):
        gluon_hub.export(dense, tmp_path / "x")
    with pytest.raises(ValueError, match="positive ints"):
        gluon_hub.export(dense, tmp_path / "x", input_shape=(0, 3))
    with pytest.raises(TypeError, match="only when model is a name"):
        gluon_hub.export(dense, tmp_path / "x", input_shape=(1, 3), pretrained=True)
