"""Every registered I3D model has GluonCV 0.10's parameters, loads its files and matches its outputs.

Parametrized from the registry, so an I3D row added to ``i3d_zoo.json`` is tested here with no
new test. GluonCV (test-only reference) builds each model with ``pretrained_base=False`` (and
without the Kinetics-400 start of its UCF101/HMDB51/custom models); structure is compared by
symbolic shape inference at a tiny clip, and one model per backbone kind runs forward on random
weights that GluonCV saved and ours loaded strictly.
"""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest
from cv_testlib.detection import (
    assert_gluoncv_file,
    assert_same,
    assert_same_structure,
    assert_same_training_state,
    build_ours,
    random_params_files,
    randomize,
    running_stats,
    strictly_loaded,
)
from cv_testlib.video import gluoncv_outputs, no_initialization, norms, trainable_on_cpu

import gluon_hub
from gluon_hub.compat import mx

import gluoncv  # noqa: E402  (test-only reference; after the compat shim)

pytestmark = pytest.mark.parity

MODELS = [n for n in gluon_hub.list_models(plugin="cv", task="action-recognition") if n.startswith("i3d_")]
#: GluonCV's fine-tuned models start from the Kinetics-400 weights unless told not to (a download)
_FINE_TUNED = ("_ucf101", "_hmdb51", "_custom")


def _reference_kwargs(name: str) -> dict:
    """GluonCV's factory arguments for a model with nothing to download."""
    extra = {"use_kinetics_pretrain": False} if name.endswith(_FINE_TUNED) else {}
    return {"pretrained": False, "pretrained_base": False, **extra}


def _reference(name: str):
    return gluoncv.model_zoo.get_model(name, **_reference_kwargs(name))


def _clip(name: str) -> tuple[int, int, int]:
    """The smallest (frames, height, width) the model takes: I3D ResNets and Inception V1 need
    8 frames (three temporal halvings), Inception V3 75 pixels, the Slow network no minimum."""
    if "inceptionv3" in name:
        return (4, 75, 75)
    if name.startswith("i3d_slow"):
        return (4, 32, 32)
    return (8, 32, 32)


def _clip_input(batch: int, clip: tuple[int, int, int], seed: int = 1):
    return mx.nd.array(np.random.RandomState(seed).uniform(-1, 1, (batch, 3, *clip)))


def test_the_zoo_has_every_gluoncv_i3d_model() -> None:
    reference = {n for n in gluoncv.model_zoo.get_model_list() if n.startswith("i3d_") and not n.endswith("_int8")}
    assert set(MODELS) == reference
    assert len(MODELS) == 13


@pytest.mark.parametrize("name", MODELS)
def test_parameter_names_shapes_and_count_match_gluoncv(name: str) -> None:
    spec = gluon_hub.info(name)
    assert spec.input.layout == "NCTHW" and spec.input.shape[0] == 3
    clip = _clip(name)
    ours = build_ours(name)
    with no_initialization():
        reference = _reference(name)
    assert_same_structure(ours, reference, (1, 3, *clip), spec)


@pytest.mark.parametrize("name", MODELS)
def test_weights_name_the_file_gluoncv_publishes(name: str) -> None:
    from gluoncv.model_zoo import model_store

    spec = gluon_hub.info(name)
    if name.endswith("_custom"):  # a template for the user's own classes: nothing published
        assert spec.weights == () and spec.input.labels is None
        return
    assert_gluoncv_file(spec, name, model_store._model_sha1[name])
    variant = spec.weight()
    assert len(spec.class_names(spec.input.num_classes)) == spec.output_shape[0]
    assert [m.name for m in variant.metrics] == ["top-1"]
    assert all(m.source == "https://cv.gluon.ai/model_zoo/action_recognition.html" for m in variant.metrics)


def test_reported_results_are_gluoncvs() -> None:
    # spot checks against GluonCV's Action_Recognitions/*.csv rows of the published hashtags
    def top1(name: str) -> float:
        return next(m.value for m in gluon_hub.info(name).weight().metrics if m.name == "top-1")

    assert top1("i3d_resnet50_v1_kinetics400") == 74.0
    assert top1("i3d_resnet50_v1_ucf101") == 95.4  # 760d0981: ImageNet + Kinetics-400 pretrained
    assert top1("i3d_slow_resnet101_f16s4_kinetics700") == 67.65
    assert gluon_hub.info("i3d_inceptionv3_kinetics400").input.shape == (3, 32, 299, 299)
    assert gluon_hub.info("i3d_resnet50_v1_sthsthv2").input.shape == (3, 16, 224, 224)
    assert gluon_hub.info("i3d_resnet50_v1_hmdb51").class_names(51)[0] == gluoncv.data.HMDB51Attr().classes[0]


#: one model per backbone kind (ResNet-101 differs from ResNet-50 only in depth): two clips each
FAMILIES = {
    "i3d_resnet50_v1_kinetics400": [(8, 32, 32), (6, 40, 48)],
    "i3d_nl5_resnet50_v1_kinetics400": [(8, 32, 32), (6, 40, 48)],
    "i3d_inceptionv1_kinetics400": [(8, 32, 32), (6, 40, 48)],
    "i3d_inceptionv3_kinetics400": [(4, 75, 75), (3, 80, 90)],
    "i3d_slow_resnet101_f16s4_kinetics700": [(4, 32, 32), (2, 40, 48)],
}


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """``saved(name)``: a file of random parameters written by GluonCV's model, made once."""
    return random_params_files(tmp_path_factory, _reference)


def _pair(name: str, path: str):
    """GluonCV's model and ours, both loaded strictly from the same file."""
    return strictly_loaded(_reference(name), path), strictly_loaded(build_ours(name), path)


@pytest.mark.parametrize("name", FAMILIES)
def test_inference_matches_gluoncv_hybridized_and_not(name: str, saved, tmp_path) -> None:
    clips = {"x".join(map(str, clip)): _clip_input(1, clip).asnumpy() for clip in FAMILIES[name]}
    # GluonCV's scores from a child process on oneDNN's AVX2 kernels (gluoncv_outputs says why);
    # 1e-4 of the largest score: float32 rounding of another summation order and ISA, no more
    expected = gluoncv_outputs(name, saved(name), clips, tmp_path, **_reference_kwargs(name))
    ours = strictly_loaded(build_ours(name), saved(name))
    for hybridize in (False, True):
        if hybridize:
            ours.hybridize()
        for key, clip in clips.items():
            got, want = ours(mx.nd.array(clip)), mx.nd.array(expected[key])
            assert got.shape == want.shape == (1, gluon_hub.info(name).output_shape[0])
            assert float(want.asnumpy().std()) > 1e-3  # random weights gave varied scores to compare
            assert_same(got, want, rtol=1e-4)


def test_clips_of_one_video_are_averaged_like_gluoncv(saved, tmp_path) -> None:
    name = "i3d_inceptionv1_kinetics400"
    ours = strictly_loaded(build_ours(name, num_segments=2), saved(name))
    clips = _clip_input(4, (8, 32, 32))
    expected = gluoncv_outputs(name, saved(name), {"clips": clips.asnumpy()}, tmp_path,
                               **_reference_kwargs(name), num_segments=2)["clips"]
    assert_same(ours(clips), mx.nd.array(expected), rtol=1e-4)
    assert ours(clips).shape == (2, 400)


#: one I3D per backbone kind in training mode; clips of two videos, so statistics are real
TRAINED = ["i3d_resnet50_v1_kinetics400", "i3d_inceptionv1_kinetics400"]


@pytest.mark.parametrize("name", TRAINED)
def test_training_step_matches_gluoncv(name: str, saved) -> None:
    reference, ours = _pair(name, saved(name))
    reference = trainable_on_cpu(reference)
    x = _clip_input(2, (8, 32, 32))
    before = running_stats(reference)
    results = []
    for net in (reference, ours):
        mx.random.seed(5)  # the same dropout mask
        with mx.autograd.record():
            scores = net(x)
            loss = mx.gluon.loss.SoftmaxCrossEntropyLoss()(scores, mx.nd.array([3, 1]))
        loss.backward()
        results.append(scores)
    assert_same(results[1], results[0], rtol=1e-4)
    assert_same_training_state(reference, ours, before)


def test_our_video_batchnorm_trains_on_cpu_where_mxnets_does_not() -> None:
    from gluon_cv_core.common.norm import BatchNorm3D

    x = _clip_input(2, (2, 4, 4))
    for norm, fails in ((mx.gluon.nn.BatchNorm, True), (BatchNorm3D, False)):
        net = mx.gluon.nn.HybridSequential()  # 8 channels or more: oneDNN's blocked layout
        net.add(mx.gluon.nn.Conv3D(8, 3, padding=1, in_channels=3), norm(in_channels=8))
        net.initialize()
        with mx.autograd.record():
            y = net(x)
        if fails:  # the MXNet bug BatchNorm3D exists for (a conv's output into BatchNorm)
            with pytest.raises(mx.base.MXNetError, match="is_view"):
                y.backward()
                mx.nd.waitall()
            continue
        y.backward()
        # normalised over batch, time and space: each channel's output has mean 0, variance 1
        out = y.asnumpy()
        np.testing.assert_allclose(out.mean(axis=(0, 2, 3, 4)), 0, atol=1e-5)
        np.testing.assert_allclose(out.var(axis=(0, 2, 3, 4)), 1, rtol=1e-2)
        assert float(mx.nd.abs(net[0].weight.grad()).sum().asscalar()) > 0

def test_partial_bn_freezes_the_shortcut_statistics_as_gluoncv_does() -> None:
    # GluonCV 0.10's partial_bn reaches only the shortcut projections' norms of its I3D ResNets
    ours = build_ours("i3d_resnet50_v1_ucf101")
    global_stats = {k for k, block in norms(ours) if block._kwargs.get("use_global_stats")}
    with no_initialization():
        reference = _reference("i3d_resnet50_v1_ucf101")
    assert global_stats == {k for k, block in norms(reference) if block._kwargs.get("use_global_stats")}
    assert global_stats == {f"res_layers.{i}.0.downsample.1" for i in range(4)}


def test_inflation_matches_gluoncv(tmp_path) -> None:
    """``pretrained_base``: 2D ImageNet weights inflated into 3D exactly as GluonCV inflates them."""
    from gluon_cv_core.action.models.i3d_inception import inflate_base

    from gluoncv.model_zoo.action_recognition import i3d_inceptionv1

    base = gluoncv.model_zoo.get_model("googlenet")
    base.initialize()
    base(mx.nd.zeros((1, 3, 224, 224)))
    randomize(base, seed=3)
    original = i3d_inceptionv1.googlenet
    i3d_inceptionv1.googlenet = lambda pretrained=True, **kwargs: base  # GluonCV would download it
    try:
        with contextlib.redirect_stdout(io.StringIO()):  # GluonCV prints every copied parameter
            reference = gluoncv.model_zoo.get_model("i3d_inceptionv1_kinetics400", pretrained_base=True)
    finally:
        i3d_inceptionv1.googlenet = original
    base.save_parameters(str(tmp_path / "googlenet.params"))
    ours2d = strictly_loaded(build_ours("googlenet"), str(tmp_path / "googlenet.params"))
    ours = inflate_base(build_ours("i3d_inceptionv1_kinetics400"), ours2d)
    expected = reference._collect_params_with_prefix()
    compared = 0
    for key, param in ours._collect_params_with_prefix().items():
        if key.startswith(("output.", "head.")):
            continue
        np.testing.assert_array_equal(param.data().asnumpy(), expected[key].data().asnumpy(), err_msg=key)
        compared += 1
    assert compared == len(expected) - 4  # all but the classifier (under two names)
    first = ours.features[0][0].weight.data().asnumpy()
    np.testing.assert_allclose(first.sum(axis=2), ours2d.conv1[0].weight.data().asnumpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kwargs, message", [
    ({"depth": 34}, "unsupported ResNet depth 34; known: 50, 101, 152"),
    ({"depth": 101, "nonlocal_blocks": 7}, "no non-local layout for depth 101 with 7 blocks"),
    ({"depth": 101, "use_kinetics_pretrain": True}, "use_kinetics_pretrain needs depth 50"),
])
def test_bad_arguments_are_named(kwargs: dict, message: str) -> None:
    from gluon_cv_core.action.models.i3d_resnet import i3d_resnet

    with pytest.raises(ValueError, match=message):
        i3d_resnet(**kwargs)
