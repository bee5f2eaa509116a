"""Every registered SlowFast, R(2+1)D, P3D and C3D model has GluonCV 0.10's parameters, loads its
files and matches its outputs.

Parametrized from the registry, so a row added to ``video3d_zoo.json`` is tested here with no
new test. Structure is compared by symbolic shape inference at the smallest clip each family
takes (nothing allocated); one model per family and backbone kind runs forward on random
weights that GluonCV saved and ours loaded strictly, and each family's smallest member trains
one step.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from cv_testlib.detection import (
    assert_gluoncv_file,
    assert_same,
    assert_same_structure,
    assert_same_training_state,
    build_ours,
    empty_mirror,
    random_params_files,
    running_stats,
    strictly_loaded,
)
from cv_testlib.video import gluoncv_outputs, no_initialization, trainable_on_cpu

import gluon_hub
from gluon_hub.compat import mx

import gluoncv  # noqa: E402  (test-only reference; after the compat shim)

pytestmark = pytest.mark.parity

FAMILIES = ("slowfast_", "r2plus1d_", "p3d_", "c3d_")
MODELS = [n for n in gluon_hub.list_models(plugin="cv", task="action-recognition") if n.startswith(FAMILIES)]


def _reference_kwargs(name: str) -> dict:
    """GluonCV's factory arguments for a model with nothing to download (its custom SlowFast
    starts from the Kinetics-400 weights unless told not to)."""
    extra = {"use_kinetics_pretrain": False} if name.endswith("_custom") else {}
    return {"pretrained": False, "pretrained_base": False, **extra}


def _reference(name: str):
    return gluoncv.model_zoo.get_model(name, **_reference_kwargs(name))


def _clip(name: str) -> tuple[int, int, int]:
    """The smallest (frames, height, width) a model takes: SlowFast its two pathways' frames
    (fixed by the name) at 32 pixels (stride 32), P3D 16 frames (four temporal halvings to
    one frame), C3D only its 16x112x112 (``fc6`` has fixed inputs), R(2+1)D anything."""
    if name.startswith("slowfast_"):
        return (gluon_hub.info(name).input.shape[1], 32, 32)
    if name.startswith("p3d_"):
        return (16, 32, 32)
    if name.startswith("c3d_"):
        return (16, 112, 112)
    return (2, 16, 16)


def _clip_input(batch: int, clip: tuple[int, int, int], seed: int = 1):
    return mx.nd.array(np.random.RandomState(seed).uniform(-1, 1, (batch, 3, *clip)))


def test_the_zoo_has_every_gluoncv_3d_model() -> None:
    reference = {n for n in gluoncv.model_zoo.get_model_list() if n.startswith(FAMILIES)}
    assert set(MODELS) == reference
    assert len(MODELS) == 15


@pytest.mark.parametrize("name", MODELS)
def test_parameter_names_shapes_and_count_match_gluoncv(name: str) -> None:
    spec = gluon_hub.info(name)
    clip = _clip(name)
    with no_initialization():
        reference = _reference(name)
    ours = build_ours(name)
    assert_same_structure(ours, reference, (1, 3, *clip), spec)
    # the symbols' names too (GluonCV's block prefixes), so exported graphs name the same weights
    strip = {k: p.name.split("_", 1)[1] for k, p in reference._collect_params_with_prefix().items()}
    assert {k: p.name.split("_", 1)[1] for k, p in ours._collect_params_with_prefix().items()} == strip


@pytest.mark.parametrize("name", MODELS)
def test_weights_name_the_file_gluoncv_publishes(name: str) -> None:
    from gluoncv.model_zoo import model_store

    spec = gluon_hub.info(name)
    sha1 = model_store._model_sha1.get(name)
    if sha1 is None:  # GluonCV lists these names without a file
        assert spec.weights == ()
        return
    assert_gluoncv_file(spec, name, sha1, "kinetics400")
    variant = spec.weight()
    assert spec.class_names(400)[:2] == ["abseiling", "air_drumming"]
    assert [m.name for m in variant.metrics] == ["top-1"]
    assert all(m.source == "https://cv.gluon.ai/model_zoo/action_recognition.html" for m in variant.metrics)


def test_reported_results_and_inputs_are_gluoncvs() -> None:
    # spot checks against GluonCV's model-zoo table (Kinetics400.csv) and its notes on input sizes
    def top1(name: str) -> float:
        return next(m.value for m in gluon_hub.info(name).weight().metrics if m.name == "top-1")

    assert top1("slowfast_8x8_resnet101_kinetics400") == 77.2
    assert top1("r2plus1d_resnet50_kinetics400") == 73.9
    assert top1("p3d_resnet101_kinetics400") == 72.6
    assert top1("c3d_kinetics400") == 59.5
    assert gluon_hub.info("slowfast_16x8_resnet101_kinetics400").input.shape == (3, 80, 224, 224)
    assert gluon_hub.info("r2plus1d_resnet18_kinetics400").input.shape == (3, 16, 112, 112)
    custom = gluon_hub.info("slowfast_4x16_resnet50_custom")
    assert custom.weights == () and custom.input.num_classes == 400


#: one model per family and backbone kind: the (frames, height, width) it runs at, the
#: smallest clip first, then a second size (C3D takes only 16x112x112, SlowFast only its frames)
PARITY = {
    "slowfast_4x16_resnet50_kinetics400": [(36, 32, 32), (36, 64, 48)],
    "r2plus1d_resnet18_kinetics400": [(4, 32, 32), (2, 48, 16)],
    "r2plus1d_resnet50_kinetics400": [(4, 32, 32), (2, 48, 16)],
    "p3d_resnet50_kinetics400": [(16, 32, 32), (20, 64, 48)],
    "c3d_kinetics400": [(16, 112, 112)],
}
#: each family's smallest member trains a step: its clip and batch (C3D has no batch norm)
TRAINED = {
    "slowfast_4x16_resnet50_kinetics400": ((36, 32, 32), 2),
    "r2plus1d_resnet18_kinetics400": ((2, 32, 32), 2),
    "p3d_resnet50_kinetics400": ((16, 32, 32), 2),
    "c3d_kinetics400": ((16, 112, 112), 1),
}


def _uninitialized_reference(name: str):
    """GluonCV's model with no values yet: a file's load or :func:`randomize` fills them, so the
    factory's own random initialisation (tens of millions of values) is skipped."""
    with no_initialization():
        return _reference(name)


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """``saved(name)``: a file of random parameters written by GluonCV's model, made once."""

    def warmed(name: str):
        reference = _uninitialized_reference(name)
        reference.initialize(mx.init.Zero())
        return reference

    return random_params_files(tmp_path_factory, warmed)


def _pair(name: str, path: str):
    """GluonCV's model and ours, both loaded strictly from the same file."""
    return strictly_loaded(_uninitialized_reference(name), path), strictly_loaded(build_ours(name), path)


@pytest.mark.parametrize("name", PARITY)
def test_inference_matches_gluoncv_hybridized_and_not(name: str, saved, tmp_path) -> None:
    clips = {"x".join(map(str, clip)): _clip_input(1, clip).asnumpy() for clip in PARITY[name]}
    # GluonCV's scores from a child process on oneDNN's AVX2 kernels (gluoncv_outputs says why);
    # 1e-4 of the largest score: float32 rounding of another summation order and ISA, no more
    expected = gluoncv_outputs(name, saved(name), clips, tmp_path, **_reference_kwargs(name))
    ours = strictly_loaded(build_ours(name), saved(name))
    for hybridize in (False, True):
        if hybridize:
            ours.hybridize()
        for key, clip in clips.items():
            got, want = ours(mx.nd.array(clip)), mx.nd.array(expected[key])
            assert got.shape == want.shape == (1, 400)
            assert float(want.asnumpy().std()) > 1e-3  # random weights gave varied scores to compare
            assert_same(got, want, rtol=1e-4)


def _training_step(net, x, weights):
    """Training-mode scores (dropout drawn from the same seed) and a linear loss's backward
    pass (which updates the batch-norm statistics)."""
    mx.random.seed(7)
    with mx.autograd.record():
        scores = net(x)
        loss = (scores * weights).sum()
    loss.backward()
    return scores


def compare_training_steps(name: str, path: str) -> None:
    """One training step of GluonCV's model and ours from the parameters in ``path``: the same
    scores, batch-norm statistics and gradients."""
    reference, ours = _pair(name, path)
    reference = trainable_on_cpu(reference)
    clip, batch = TRAINED[name]
    x = _clip_input(batch, clip)
    weights = mx.nd.array(np.random.RandomState(2).uniform(-1, 1, (batch, 400)))
    before = running_stats(reference)
    expected = _training_step(reference, x, weights)
    actual = _training_step(ours, x, weights)
    assert_same(actual, expected, rtol=1e-4)
    assert_same_training_state(reference, ours, before)


@pytest.mark.parametrize("name", TRAINED)
def test_training_step_matches_gluoncv(name: str, saved) -> None:
    compare_training_steps(name, saved(name))


@pytest.mark.parametrize("factory, kwargs, message", [
    ("r2plus1d", {"depth": 26}, "unknown R\\(2\\+1\\)D depth 26; known: 18, 34, 50, 101, 152"),
    ("p3d", {"depth": 152}, "unknown P3D depth 152; known: 50, 101"),
    ("slowfast", {"depth": 34}, "unknown SlowFast depth 34; known: 50, 101"),
    ("slowfast", {"slow_frames": 8}, "fast_frames \\(32\\) must be alpha \\(8\\) x slow_frames \\(8\\)"),
    ("c3d", {"num_crop": 0}, "num_segments and num_crop must be at least 1"),
])
def test_bad_configurations_are_refused_with_the_fix(factory: str, kwargs: dict, message: str) -> None:
    build = getattr(importlib.import_module(f"gluon_cv_core.action.models.{factory}"), factory)
    with pytest.raises(ValueError, match=message):
        build(**kwargs)


def test_the_custom_slowfast_starts_from_the_published_kinetics_file(monkeypatch, tmp_path) -> None:
    from gluon_hub.cache import DownloadError

    # the mirror has no files: the build asks for GluonCV's Kinetics-400 4x16 ResNet-50 weights
    with empty_mirror(monkeypatch, tmp_path) as asked, pytest.raises(DownloadError):
        build_ours("slowfast_4x16_resnet50_custom", nclass=10, use_kinetics_pretrain=True)
    assert [path.rsplit("/", 1)[-1] for path in asked] == ["slowfast_4x16_resnet50_kinetics400-9d650f51.zip"]
    # another structure is refused before anything is fetched
    with pytest.raises(ValueError, match="needs slowfast_4x16_resnet50_kinetics400's structure.* first 'fast_res4.6"):
        build_ours("slowfast_4x16_resnet101_kinetics400", use_kinetics_pretrain=True)
