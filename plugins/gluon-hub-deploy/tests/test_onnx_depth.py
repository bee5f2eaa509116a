"""Monodepth2 (depth decoder and pose network) exported to ONNX against MXNet, at two input
sizes on one graph with dynamic axes."""

from __future__ import annotations

import numpy as np
import pytest

import gluon_hub
from gluon_cv_core.depth.models.monodepth2 import scale_disparity_heads
from gluon_hub.compat import mx

pytestmark = pytest.mark.portability  # whole models against MXNet: the 3.11 leg (pyproject.toml)


def test_monodepth2_depth_exports(onnx_matches_mxnet):
    net = gluon_hub.load("monodepth2_resnet18_kitti_mono_640x192")
    # random He weights saturate the disparity sigmoids; heads scaled as trained ones are (logits within 10)
    net.initialize(mx.init.Xavier(rnd_type="gaussian", factor_type="in", magnitude=2), force_reinit=True)
    scale_disparity_heads(net, np.random.default_rng(0).normal(size=(1, 3, 64, 96)).astype(np.float32))
    print("monodepth2 depth", onnx_matches_mxnet(net, [(1, 3, 64, 96), (2, 3, 96, 128)], initialise=False))


def test_monodepth2_pose_network_exports(onnx_matches_mxnet):
    print("monodepth2 posenet", onnx_matches_mxnet("monodepth2_resnet18_posenet_kitti_mono_640x192",
                                                   [(1, 6, 64, 96), (2, 6, 96, 128)]))


def test_monodepth2_row_is_measured_with_trained_like_heads():
    """The portability measurement scales the disparity heads (TRAINED_LIKE): with plain random
    weights the saturated sigmoid differs by up to 1.0 of its scale and the row was blocked."""
    from gluon_hub_deploy._measure import TRAINED_LIKE, measure

    name = "monodepth2_resnet18_kitti_stereo_640x192"
    assert gluon_hub.info(name).factory in TRAINED_LIKE
    row = measure(name)
    assert row.status == "exportable", row.blocker
    assert row.max_rel_diff is not None and row.max_rel_diff <= 1e-4
    assert row.input_shapes == ((None, 3, None, None),)
