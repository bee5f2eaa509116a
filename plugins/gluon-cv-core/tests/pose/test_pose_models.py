"""Every registered pose estimator has GluonCV 0.10's parameters, loads its files and matches its outputs.

Parametrized from the registry, so a model added to ``pose_zoo.json`` is tested here with no
new test. GluonCV (test-only reference) builds each model with ``pretrained_base=False``;
structure is compared symbolically (no weights allocated), and one model per family and
backbone kind runs forward on random weights that GluonCV saved and ours loaded strictly.
"""

from __future__ import annotations

import numpy as np
import pytest
from cv_testlib.detection import (
    assert_gluoncv_file,
    assert_same,
    assert_same_structure,
    assert_same_training_state,
    build_ours,
    random_input,
    random_params_files,
    running_stats,
    strictly_loaded,
)

import gluon_hub
from gluon_hub.compat import mx

import gluoncv  # noqa: E402  (test-only reference; after the compat shim)

pytestmark = pytest.mark.parity

#: the float32 pose models (the int8 ones, quantized at load, have their own tests)
MODELS = [n for n in gluon_hub.list_models(plugin="cv", task="pose-estimation") if "int8" not in gluon_hub.info(n).tags]


def _reference(name: str):
    return gluoncv.model_zoo.get_model(name, pretrained=False, pretrained_base=False)


def test_the_zoo_has_every_gluoncv_pose_model() -> None:
    # the *_int8 names are quantized float32 models, out of this zoo's scope
    reference = {n for n in gluoncv.model_zoo.get_model_list()
                 if n.startswith(("simple_pose_", "mobile_pose_", "alpha_pose_")) and not n.endswith("_int8")}
    assert set(MODELS) == reference
    assert len(MODELS) == 14


@pytest.mark.parametrize("name", MODELS)
def test_parameter_names_shapes_and_count_match_gluoncv(name: str) -> None:
    spec = gluon_hub.info(name)
    size = spec.input.shape[1:]
    assert_same_structure(build_ours(name), _reference(name), (1, 3, *size), spec)


@pytest.mark.parametrize("name", MODELS)
def test_weights_name_the_file_gluoncv_publishes(name: str) -> None:
    from gluoncv.data import COCOKeyPoints
    from gluoncv.model_zoo import model_store

    spec = gluon_hub.info(name)
    assert_gluoncv_file(spec, name, model_store._model_sha1[name], "coco")
    variant = spec.weight()
    keypoints = [COCOKeyPoints.KEYPOINTS[i] for i in range(len(COCOKeyPoints.KEYPOINTS))]
    assert spec.class_names(spec.input.num_classes) == keypoints
    names = {m.name for m in variant.metrics}
    if name == "mobile_pose_mobilenetv3_small":  # GluonCV's table reports another file's AP
        assert not names
    else:
        assert names == {"OKS AP", "OKS AP50", "OKS AP75",
                         "OKS AP, flip test", "OKS AP50, flip test", "OKS AP75, flip test"}
        assert all(m.source == "https://cv.gluon.ai/model_zoo/pose.html" for m in variant.metrics)


def test_reported_results_are_gluoncvs() -> None:
    # spot checks against GluonCV's model-zoo table (MSCOCO_Simple-Pose.csv, MSCOCO_Alpha-Pose.csv)
    def ap(name: str, metric: str) -> float:
        return next(m.value for m in gluon_hub.info(name).weight().metrics if m.name == metric)

    assert ap("simple_pose_resnet50_v1b", "OKS AP") == 71.0
    assert ap("simple_pose_resnet152_v1d", "OKS AP50, flip test") == 93.4
    assert ap("alpha_pose_resnet101_v1b_coco", "OKS AP") == 74.2
    assert gluon_hub.info("alpha_pose_resnet101_v1b_coco").input.shape == (3, 320, 256)


#: one model per family and backbone kind: (default crop, a crop whose feature maps are odd)
FAMILIES = {
    "simple_pose_resnet18_v1b": [(256, 192), (100, 76)],
    "simple_pose_resnet50_v1d": [(256, 192), (100, 76)],
    "mobile_pose_resnet18_v1b": [(256, 192), (100, 76)],
    "mobile_pose_mobilenet1.0": [(256, 192), (100, 76)],
    "mobile_pose_mobilenetv2_1.0": [(256, 192), (100, 76)],
    "mobile_pose_mobilenetv3_large": [(256, 192), (100, 76)],
    "mobile_pose_mobilenetv3_small": [(256, 192), (100, 76)],
    "alpha_pose_resnet101_v1b_coco": [(320, 256), (100, 76)],
}
#: one model per family trains a step
TRAINED = ["simple_pose_resnet18_v1b", "mobile_pose_mobilenetv3_small", "alpha_pose_resnet101_v1b_coco"]


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """``saved(name)``: a file of random parameters written by GluonCV's model, made once."""

    def warmed(name: str):
        reference = _reference(name)
        reference.initialize(force_reinit=True)
        reference(mx.nd.zeros((1, 3, 64, 48)))
        return reference

    return random_params_files(tmp_path_factory, warmed)


def _pair(name: str, path: str):
    """GluonCV's model and ours, both loaded strictly from the same file."""
    return strictly_loaded(_reference(name), path), strictly_loaded(build_ours(name), path)


@pytest.mark.parametrize("name", FAMILIES)
def test_inference_matches_gluoncv_hybridized_and_not(name: str, saved) -> None:
    reference, ours = _pair(name, saved(name))
    expected = {size: reference(random_input(1, size)) for size in FAMILIES[name]}
    for hybridize in (False, True):
        if hybridize:
            ours.hybridize()
        for size, want in expected.items():
            got = ours(random_input(1, size))
            assert got.shape == want.shape == (1, 17, -(-size[0] // 32) * 8, -(-size[1] // 32) * 8)
            assert float(want.asnumpy().std()) > 1e-3  # random weights gave varied heatmaps to compare
            assert_same(got, want, rtol=1e-4)


def _training_step(net, x, target):
    """Training-mode heatmaps and an MSE loss's backward pass (which updates BatchNorm statistics)."""
    with mx.autograd.record():
        heatmaps = net(x)
        loss = ((heatmaps - target) ** 2).mean()
    loss.backward()
    return heatmaps


@pytest.mark.parametrize("name", TRAINED)
def test_training_step_matches_gluoncv(name: str, saved) -> None:
    reference, ours = _pair(name, saved(name))
    x = random_input(2, (128, 96))  # a batch of two, so batch statistics are real
    target = mx.nd.array(np.random.RandomState(2).uniform(0, 1, (2, 17, 32, 24)))
    before = running_stats(reference)
    expected = _training_step(reference, x, target)
    actual = _training_step(ours, x, target)
    assert_same(actual, expected, rtol=1e-4)
    assert_same_training_state(reference, ours, before)


@pytest.mark.parametrize("factory, backbone", [("simple_pose", "resnet34_v1b"), ("mobile_pose", "vgg16")])
def test_unknown_backbones_are_named_with_the_known_ones(factory: str, backbone: str) -> None:
    import importlib

    build = getattr(importlib.import_module(f"gluon_cv_core.pose.models.{factory}"), factory)
    with pytest.raises(ValueError, match=f"{backbone}.*known: resnet18_v1b"):
        build(backbone)
