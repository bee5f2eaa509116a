"""gluon-contrib's models exported to ONNX against MXNet: the CycleGAN generator and
discriminator (InstanceNorm, reflection padding) at two sizes on one dynamic graph, and textCNN
(token ids in, NTC convolutions) at two batch sizes."""

from __future__ import annotations

import numpy as np
import onnxruntime
import pytest

import gluon_hub
from gluon_hub.compat import mx

pytestmark = pytest.mark.portability  # whole models against MXNet: the 3.11 leg (pyproject.toml)


@pytest.mark.parametrize("name", ["cyclegan_resnet_6blocks", "cyclegan_patchgan_70"])
def test_cyclegan_exports(onnx_matches_mxnet, name):
    print(name, onnx_matches_mxnet(name, [(1, 3, 64, 64), (2, 3, 96, 80)]))


@pytest.mark.parametrize("name", ["textcnn_rand", "textcnn_multichannel"])
def test_textcnn_exports(tmp_path, name):
    net = gluon_hub.load(name)
    net.initialize(mx.init.Xavier(rnd_type="gaussian", factor_type="in", magnitude=2), force_reinit=True)
    (path,) = gluon_hub.export(net, tmp_path / "textcnn.onnx", format="onnx", input_shape=(1, 12), dtype="int32",
                               dynamic_batch=True)
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for shape in [(1, 12), (3, 12)]:
        tokens = np.random.default_rng(0).integers(0, 50, size=shape).astype(np.int32)
        expected = net(mx.nd.array(tokens, dtype="int32")).asnumpy()
        (got,) = session.run(None, {session.get_inputs()[0].name: tokens})
        relative = float(np.abs(got - expected).max() / np.abs(expected).max())
        print(name, shape, relative)
        assert relative <= 1e-4
