"""Monodepth2 (depth decoder and pose network) exported to ONNX against MXNet, at two input
sizes on one graph with dynamic axes."""

from __future__ import annotations

import numpy as np
import pytest

import gluon_hub
from gluon_hub.compat import mx

pytestmark = pytest.mark.portability  # whole models against MXNet: the 3.11 leg (pyproject.toml)


def _disparity_logits_in_trained_range(net, x, largest=10.0):
    """He-initialise ``net``, then scale its four disparity heads so that the largest |logit|
    before their sigmoid is ``largest``.

    Random He weights put those logits in the hundreds, where the sigmoid saturates and its
    float32 rounding near 0 and 1 decides the comparison; a trained model's stay within
    about 10. The heads are the decoder's last convolutions (nothing reads them but the
    sigmoid), so scaling their weight and bias scales the logits exactly: measured at a
    1e-4 scale, where the sigmoid is linear enough to invert.
    """
    net.initialize(mx.init.Xavier(rnd_type="gaussian", factor_type="in", magnitude=2), force_reinit=True)
    heads = [p for name, p in net.collect_params().items() if "depthdecoder0__padconv3x3" in name]
    assert len(heads) == 8  # weight and bias of four heads
    for param in heads:
        param.set_data(param.data() * 1e-4)
    logits = [np.log(o / (1 - o)) for o in (out.asnumpy().astype(np.float64) for out in net(mx.nd.array(x)))]
    factor = largest / max(float(np.abs(logit).max()) for logit in logits)
    for param in heads:
        param.set_data(param.data() * factor)


def test_monodepth2_depth_exports(onnx_matches_mxnet):
    net = gluon_hub.load("monodepth2_resnet18_kitti_mono_640x192")
    _disparity_logits_in_trained_range(net, np.random.default_rng(0).normal(size=(1, 3, 64, 96)).astype(np.float32))
    print("monodepth2 depth", onnx_matches_mxnet(net, [(1, 3, 64, 96), (2, 3, 96, 128)], initialise=False))


def test_monodepth2_pose_network_exports(onnx_matches_mxnet):
    print("monodepth2 posenet", onnx_matches_mxnet("monodepth2_resnet18_posenet_kitti_mono_640x192",
                                                   [(1, 6, 64, 96), (2, 6, 96, 128)]))
