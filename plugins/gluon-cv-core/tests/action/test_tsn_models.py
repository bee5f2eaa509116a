"""Every registered 2D (TSN-style) action recogniser has GluonCV 0.10's parameters, loads its
files and matches its outputs.

Parametrized from the registry (the rows of ``tsn_zoo.json``). GluonCV's factories always
start from ImageNet weights (its ResNet ones even ignore ``pretrained_base``), so the reference
is built with its backbone constructors swapped for offline ones that initialize randomly.
Structure is compared symbolically; one model per backbone kind runs forward with several
segments per video on random weights that GluonCV saved and ours loaded strictly.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator
from unittest import mock

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
from gluoncv.model_zoo.action_recognition import (
    actionrec_inceptionv1,
    actionrec_inceptionv3,
    actionrec_resnetv1b,
    actionrec_vgg16,
)

pytestmark = pytest.mark.parity

MODELS = [n for n in gluon_hub.list_models(plugin="cv", task="action-recognition")
          if gluon_hub.info(n).factory == "gluon_cv_core.action.models.tsn:tsn"]
#: the ImageNet networks GluonCV's TSN factories build (with pretrained weights) per module
_BACKBONES = [(actionrec_vgg16, "vgg16"), (actionrec_inceptionv1, "googlenet"), (actionrec_inceptionv3, "inception_v3")]
_BACKBONES += [(actionrec_resnetv1b, f"resnet{depth}_v1b") for depth in (18, 34, 50, 101, 152)]


def _offline(build: Callable[..., Any]) -> Callable[..., Any]:
    def randomly_initialized(pretrained: bool = False, **kwargs: Any) -> Any:
        net = build(pretrained=False, **kwargs)
        net.initialize()  # GluonCV's factories move every parameter to ctx, so none may stay uninitialized
        return net

    return randomly_initialized


@contextlib.contextmanager
def _offline_backbones() -> Iterator[None]:
    with contextlib.ExitStack() as stack:
        for module, attr in _BACKBONES:
            stack.enter_context(mock.patch.object(module, attr, _offline(getattr(module, attr))))
        yield


def _reference(name: str, **kwargs: Any) -> Any:
    if name.endswith("_custom"):
        kwargs["use_kinetics_pretrain"] = False  # GluonCV would download resnet*_kinetics400 into it
    with _offline_backbones():
        return gluoncv.model_zoo.get_model(name, pretrained=False, pretrained_base=False, **kwargs)


def test_the_zoo_has_every_gluoncv_2d_action_model() -> None:
    # the *_int8 names are quantized float32 models, out of this zoo's scope
    prefixes = ("vgg16_", "inceptionv1_", "inceptionv3_", "resnet")
    datasets = ("_ucf101", "_hmdb51", "_kinetics400", "_sthsthv2", "_custom")
    reference = {n for n in gluoncv.model_zoo.get_model_list() if n.startswith(prefixes) and n.endswith(datasets)}
    assert set(MODELS) == reference
    assert len(MODELS) == 26


def _dropout_rates(net: Any) -> list[float]:
    """The rate of every dropout layer, in the order the network holds them."""
    rates: list[float] = []
    net.apply(lambda block: rates.append(block._rate) if isinstance(block, mx.gluon.nn.Dropout) else None)
    return rates


@pytest.mark.parametrize("name", MODELS)
def test_parameter_names_shapes_and_count_match_gluoncv(name: str) -> None:
    spec = gluon_hub.info(name)
    size = spec.input.shape[1:]
    ours, reference = build_ours(name), _reference(name)
    # the dataset's dropout (VGG-16 and Inception V3: also inside the reused classifier layers)
    assert _dropout_rates(ours) == _dropout_rates(reference)
    assert set(_dropout_rates(ours)) == {spec.kwargs["dropout_ratio"]}
    assert_same_structure(ours, reference, (1, 3, *size), spec)


@pytest.mark.parametrize("name", MODELS)
def test_weights_and_labels_are_gluoncvs(name: str) -> None:
    from gluoncv.data import HMDB51Attr, Kinetics400Attr, SomethingSomethingV2Attr, UCF101Attr
    from gluoncv.model_zoo import model_store

    spec = gluon_hub.info(name)
    dataset = spec.tags[2]
    if name in model_store._model_sha1:
        sha1 = model_store._model_sha1[name]
        assert_gluoncv_file(spec, name, sha1, dataset)
        variant = spec.weight()
        assert [m.name for m in variant.metrics] == ["top-1"]
        assert variant.metrics[0].source == "https://cv.gluon.ai/model_zoo/action_recognition.html"
    else:
        assert spec.weights == ()
    if dataset == "custom":
        assert spec.input.labels is None and spec.input.num_classes == 400
        return
    attr = {"ucf101": UCF101Attr, "hmdb51": HMDB51Attr, "kinetics400": Kinetics400Attr,
            "sthsthv2": SomethingSomethingV2Attr}[dataset]
    assert spec.class_names(spec.input.num_classes) == list(attr().classes)


def test_reported_results_are_gluoncvs() -> None:
    # spot checks against GluonCV's model-zoo tables (Kinetics400.csv, UCF101.csv, HMDB51.csv, ...)
    def top1(name: str) -> float:
        return gluon_hub.info(name).weight().metrics[0].value

    assert top1("resnet18_v1b_kinetics400") == 65.5
    assert top1("inceptionv3_kinetics400") == 72.5
    assert top1("vgg16_ucf101") == 83.4
    assert top1("resnet50_v1b_hmdb51") == 55.2
    assert top1("resnet50_v1b_sthsthv2") == 35.5
    assert sum(bool(gluon_hub.info(n).weights) for n in MODELS) == 11
    assert gluon_hub.info("inceptionv3_ucf101").input.shape == (3, 299, 299)


#: one model per backbone kind: (factory kwargs, frame sizes). VGG-16's dense layers fix its
#: frame size, Inception's fixed final pools need at least 224 (V1) and 299 (V3) pixels.
FAMILIES = {
    "vgg16_ucf101": ({"num_segments": 2}, [(32, 32)]),
    "inceptionv1_kinetics400": ({"num_segments": 2}, [(224, 224), (232, 288)]),
    "inceptionv3_ucf101": ({"num_segments": 2}, [(299, 299), (331, 320)]),
    "resnet18_v1b_kinetics400": ({"num_segments": 2, "num_crop": 2}, [(32, 32), (48, 40)]),
    "resnet50_v1b_sthsthv2": ({"num_segments": 3}, [(32, 32), (48, 40)]),
}
#: a step in training mode, (frame size, videos of two segments): the smallest model, and
#: Inception V1 for its frozen ("partial") batch norms
TRAINED = {"resnet18_v1b_kinetics400": ((32, 32), 2), "inceptionv1_kinetics400": ((224, 224), 1)}


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """``saved(name)``: a file of random parameters written by GluonCV's model, made once."""

    def warmed(name: str):
        reference = _reference(name)  # one segment: the parameters do not depend on their number
        reference.initialize(force_reinit=True)
        reference(mx.nd.zeros((1, 3, *FAMILIES[name][1][0])))
        return reference

    return random_params_files(tmp_path_factory, warmed)


def _pair(name: str, path: str, **kwargs: Any):
    """GluonCV's model and ours, both loaded strictly from the same file."""
    return strictly_loaded(_reference(name, **kwargs), path), strictly_loaded(build_ours(name, **kwargs), path)


@pytest.mark.parametrize("name", FAMILIES)
def test_inference_matches_gluoncv_hybridized_and_not(name: str, saved) -> None:
    kwargs, sizes = FAMILIES[name]
    reference, ours = _pair(name, saved(name), **kwargs)
    frames = kwargs["num_segments"] * kwargs.get("num_crop", 1)
    videos = 2 if name.startswith("resnet") else 1
    expected = {size: reference(random_input(videos * frames, size)) for size in sizes}
    for hybridize in (False, True):
        if hybridize:
            ours.hybridize()
        for size, want in expected.items():
            got = ours(random_input(videos * frames, size))
            assert got.shape == want.shape == (videos, gluon_hub.info(name).input.num_classes)
            assert float(want.asnumpy().std()) > 1e-2  # random weights gave varied scores to compare
            assert_same(got, want, rtol=1e-4)


def _training_step(net, x, labels):
    """Training-mode scores and a softmax cross-entropy's backward pass (dropout drawn from seed 7)."""
    mx.random.seed(7)
    with mx.autograd.record():
        scores = net(x)
        loss = mx.gluon.loss.SoftmaxCrossEntropyLoss()(scores, labels).mean()
    loss.backward()
    return scores


@pytest.mark.parametrize("name", TRAINED)
def test_training_step_matches_gluoncv(name: str, saved) -> None:
    size, videos = TRAINED[name]
    reference, ours = _pair(name, saved(name), num_segments=2)  # the parameters do not depend on segments
    x = random_input(2 * videos, size)  # two frames or more, so batch statistics are real
    labels = mx.nd.array([3, 1][:videos])
    before = running_stats(reference)
    expected = _training_step(reference, x, labels)
    actual = _training_step(ours, x, labels)
    assert_same(actual, expected, rtol=1e-4)
    # partial BN: in the Inception networks only the first norm's statistics train
    moved = {"conv1.1.running_mean", "conv1.1.running_var"} if name.startswith("inception") else None
    assert_same_training_state(reference, ours, before, moved)


def test_feature_mode_returns_each_videos_averaged_feature(tmp_path) -> None:
    from gluon_cv_core.action.models.tsn import tsn

    scores_net = tsn("resnet18_v1b", nclass=5, num_segments=3)
    scores_net.initialize()
    x = random_input(6, (32, 32))
    scores_net(x)
    scores_net.save_parameters(str(tmp_path / "tsn.params"))
    features_net = strictly_loaded(tsn("resnet18_v1b", nclass=5, num_segments=3, feat_ext=True),
                                   str(tmp_path / "tsn.params"))
    features = features_net(x)
    assert features.shape == (2, 512)
    assert_same(scores_net(x), scores_net.output(features), rtol=1e-5)


@pytest.mark.parametrize("kwargs, message", [
    ({"backbone": "resnet18_v1d", "nclass": 5}, "unknown TSN backbone 'resnet18_v1d'; known: vgg16, inceptionv1"),
    ({"backbone": "resnet18_v1b", "nclass": 5, "partial_bn": True}, "partial_bn is for the Inception backbones"),
    ({"backbone": "vgg16", "nclass": 5, "num_segments": 0}, "num_segments and num_crop must be at least 1"),
])
def test_bad_arguments_say_what_is_accepted(kwargs: dict, message: str) -> None:
    from gluon_cv_core.action.models.tsn import tsn

    with pytest.raises(ValueError, match=message):
        tsn(**kwargs)
