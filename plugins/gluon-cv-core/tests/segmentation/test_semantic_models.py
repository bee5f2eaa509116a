"""Every registered semantic-segmentation model has GluonCV 0.10's parameters, names its
published file and matches GluonCV's outputs, in inference and in a training step.

Parametrized from the registry (task ``semantic-segmentation``), so a model added to any
``models/segmentation/*_zoo.json`` is tested here with no new test. GluonCV (test-only
reference) builds each model with ``pretrained_base=False``. Structure is compared
symbolically for every name; forward parity runs for one model per (family, backbone) pair
(the smallest), and one training step per family (its smallest model).

GluonCV's networks resize to sizes fixed at construction (``height``/``width``, and inside
some heads a feature-map size), so the reference is built for, or re-sized to, each input
size (:data:`REFERENCE_SIZING`); ours take every size from the input.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest
from cv_testlib.detection import (
    assert_same,
    assert_same_training_state,
    build_ours,
    empty_mirror,
    flat,
    random_input,
    random_params_files,
    running_stats,
    strictly_loaded,
    structure,
)

import gluon_hub
from gluon_hub.compat import mx

import gluoncv  # noqa: E402  (test-only reference; after the compat shim)

pytestmark = pytest.mark.parity

#: the float32 models of the families here (int8 ones are quantized at load and HRNet keeps its
#: scores at a quarter of the input: each has its own tests)
MODELS = sorted(n for n in gluon_hub.list_models(plugin="cv", task="semantic-segmentation")
                if "int8" not in gluon_hub.info(n).tags and gluon_hub.info(n).tags[0] != "hrnet_seg")
#: name -> (family, backbone, dataset): the spec's tags
TAGS = {name: gluon_hub.info(name).tags for name in MODELS}

#: family -> (first, second) input sizes (height, width) for forward parity: the first is
#: square (structure is inferred at it), the second not a multiple of the output stride
INPUT_SIZES: dict[str, tuple[tuple[int, int], tuple[int, int]]] = {
    "default": ((64, 64), (75, 75)),
    # GluonCV's Fast-SCNN runs where its 1/8 and 1/32 sizes meet the features (32k, 32k + 1 or 2),
    # its DeepLabV3+ (v3b) at multiples of 8 (its output stride), its ICNet at multiples of 16
    "fastscnn": ((64, 64), (65, 97)), "deeplab_v3b_plus": ((16, 16), (24, 40)),
    "danet": ((32, 32), (45, 45)), "icnet": ((32, 32), (48, 80)),
}
#: family -> extra keyword arguments of GluonCV's ``get_model`` for the reference
REFERENCE_KWARGS: dict[str, dict[str, Any]] = {}


def _stride8(size: tuple[int, int]) -> tuple[int, int]:
    """The side of a dilated backbone's stride-8 features: each of the three stride-2 steps rounds up."""
    return -(-size[0] // 8), -(-size[1] // 8)


def _output_size(reference: Any, size: tuple[int, int]) -> None:
    """GluonCV upsamples its predictions to ``_up_kwargs``, fixed at construction."""
    reference._up_kwargs.update(height=size[0], width=size[1])


def _psp_size(reference: Any, size: tuple[int, int]) -> None:
    _output_size(reference, size)
    height, width = _stride8(size)  # the pyramid's pools are upsampled to the feature map
    reference.head.psp._up_kwargs.update(height=height, width=width)


def _deeplab_size(reference: Any, size: tuple[int, int]) -> None:
    _output_size(reference, size)
    height, width = _stride8(size)  # ASPP's image pooling is upsampled to the feature map
    reference.head.aspp.concurent[-1]._up_kwargs.update(height=height, width=width)


def _fastscnn_size(reference: Any, size: tuple[int, int]) -> None:
    _output_size(reference, size)
    reference.global_feature_extractor.ppm._up_kwargs.update(height=size[0] // 32, width=size[1] // 32)
    reference.feature_fusion._up_kwargs.update(height=size[0] // 8, width=size[1] // 8)


def _deeplab_v3b_plus_size(reference: Any, size: tuple[int, int]) -> None:
    _output_size(reference, size)
    reference.head._up_kwargs.update(height=size[0] // 2, width=size[1] // 2)
    reference.head.aspp.b4._up_kwargs.update(height=size[0] // 2 // 4, width=size[1] // 2 // 4)


def _icnet_size(reference: Any, size: tuple[int, int]) -> None:
    _output_size(reference, size)  # also the sizes of the half and 1/32 branches' inputs
    reference.psp_head.psp._up_kwargs.update(height=size[0] // 32, width=size[1] // 32)
    reference.head._up_kwargs.update(height=size[0], width=size[1])
    for cff, fraction in ((reference.head.cff_12, 8), (reference.head.cff_24, 16)):
        cff._up_kwargs.update(height=size[0] // fraction, width=size[1] // fraction)


#: family -> ``sizing(reference, (height, width))``: make GluonCV's model (not hybridized)
#: run at that input size, as it would have been built for it
REFERENCE_SIZING: dict[str, Callable[[Any, tuple[int, int]], None]] = {
    "fcn": _output_size,
    "psp": _psp_size,
    "deeplab": _deeplab_size,
    "fastscnn": _fastscnn_size, "deeplab_v3b_plus": _deeplab_v3b_plus_size, "icnet": _icnet_size,
}


def _family(name: str) -> str:
    return TAGS[name][0]


def _sizes(name: str) -> tuple[tuple[int, int], tuple[int, int]]:
    return INPUT_SIZES.get(_family(name), INPUT_SIZES["default"])


def _reference(name: str, size: tuple[int, int]) -> Any:
    """GluonCV's model of ``name``, random-initialisable, sized for ``size``."""
    reference = gluoncv.model_zoo.get_model(name, pretrained=False, pretrained_base=False, height=size[0],
                                            width=size[1], **REFERENCE_KWARGS.get(_family(name), {}))
    REFERENCE_SIZING.get(_family(name), _output_size)(reference, size)
    return reference


def _smallest(names: list[str]) -> str:
    return min(names, key=lambda n: (gluon_hub.info(n).num_params, n))


def _groups(key: Callable[[str], Any]) -> list[str]:
    """The smallest model of each group of registered models with the same ``key``."""
    groups: dict[Any, list[str]] = {}
    for name in MODELS:
        groups.setdefault(key(name), []).append(name)
    return sorted(_smallest(names) for names in groups.values())


#: one model per (family, backbone); one per family for the training step
PARITY = _groups(lambda n: TAGS[n][:2])
TRAINING = _groups(_family)


def test_the_zoo_has_every_gluoncv_semantic_segmentation_model() -> None:
    # the *_int8 names are quantized float models, not architectures of their own
    reference = {n for n in gluoncv.model_zoo.get_model_list()
                 if n.startswith(("fcn_", "psp_", "deeplab_", "danet_", "icnet_", "fastscnn_"))
                 and not n.endswith("_int8")}
    assert sorted(reference - set(MODELS)) == []
    assert set(MODELS) == reference


@pytest.mark.parametrize("name", MODELS)
def test_parameter_names_shapes_and_count_match_gluoncv(name: str) -> None:
    size = _sizes(name)[0]
    ours, reference = build_ours(name), _reference(name, size)
    expected, actual = structure(reference, size[0]), structure(ours, size[0])
    assert sorted(actual) == sorted(expected)
    assert actual == expected
    learnable = sum(int(np.prod(actual[k])) for k, p in ours._collect_params_with_prefix().items()
                    if p.grad_req != "null")
    assert learnable == gluon_hub.info(name).num_params
    # the heads train ten times faster than the backbone, as in GluonCV's recipe
    lr_mults = {k: p.lr_mult for k, p in ours._collect_params_with_prefix().items()}
    assert lr_mults == {k: p.lr_mult for k, p in reference._collect_params_with_prefix().items()}
    # GluonCV's Fast-SCNN and DANet keep a dataset's ``classes`` property object, not the names
    # (the classifiers' shapes above hold the count), its DeepLabV3+ (v3b) keeps no ``aux``
    assert ours.nclass == gluon_hub.info(name).input.num_classes
    assert ours.aux == getattr(reference, "aux", False)
    assert ours.crop_size == gluon_hub.info(name).input.shape[-1]


@pytest.mark.parametrize("name", [n for n in MODELS if gluon_hub.info(n).pretrained])
def test_weights_name_the_file_gluoncv_publishes(name: str) -> None:
    from gluoncv.model_zoo import model_store

    spec = gluon_hub.info(name)
    variant = spec.weight()
    sha1 = model_store._model_sha1[name]
    assert variant.file.hash == f"sha1:{sha1}"
    assert variant.file.filename == f"gluon/models/{name}-{sha1[:8]}.zip"
    assert variant.tag == TAGS[name][2]
    assert spec.input.num_classes == len(build_ours(name).classes) == spec.output_shape[0]
    names = [metric.name for metric in variant.metrics]
    assert set(names) <= {"pixAcc", "mIoU"}  # none where GluonCV reports none


def test_only_the_models_gluoncv_publishes_no_weights_for_have_none() -> None:
    from gluoncv.model_zoo import model_store

    unpublished = {n for n in MODELS if not gluon_hub.info(n).pretrained}
    assert unpublished == {n for n in MODELS if n not in model_store._model_sha1}


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """``saved(name)``: a file of random parameters written by GluonCV's model, made once."""

    def warmed(name: str):
        size = _sizes(name)[0]
        reference = _reference(name, size)
        reference.initialize(mx.init.Zero())  # cheap: every value is drawn again by randomize()
        reference(mx.nd.zeros((1, 3, *size)))
        return reference

    return random_params_files(tmp_path_factory, warmed)


@pytest.mark.parametrize("name", PARITY)
def test_inference_matches_gluoncv_hybridized_and_not(name: str, saved) -> None:
    path = saved(name)
    reference = strictly_loaded(_reference(name, _sizes(name)[0]), path)
    ours = strictly_loaded(build_ours(name), path)
    expected = {}
    for size in _sizes(name):
        REFERENCE_SIZING.get(_family(name), _output_size)(reference, size)
        expected[size] = flat(reference(random_input(1, size)))
    for hybridize in (False, True):
        if hybridize:
            ours.hybridize()
        for size, outputs in expected.items():
            actual = flat(ours(random_input(1, size)))
            assert len(actual) == len(outputs) >= 1
            assert actual[0].shape == (1, ours.nclass, *size)  # ICNet's others are at 1/4, 1/8, 1/16
            for a, e in zip(actual, outputs):
                assert a.shape == e.shape
                assert_same(a, e, rtol=1e-4)


def _training_step(net: Any, x: Any) -> list[Any]:
    """Training-mode outputs after a backward pass of a simple loss (MXNet updates BatchNorm
    statistics in the backward pass); dropout draws from a seeded generator, the same on
    both sides since both run their dropouts in the same order and shapes."""
    mx.random.seed(5)
    with mx.autograd.record():
        outputs = flat(net(x))
        loss = sum((out * out).mean() for out in outputs)
    loss.backward()
    return outputs


@pytest.mark.parametrize("name", TRAINING)
def test_training_step_matches_gluoncv(name: str, saved) -> None:
    path = saved(name)
    size = _sizes(name)[1]
    reference = strictly_loaded(_reference(name, size), path)
    ours = strictly_loaded(build_ours(name), path)
    x = random_input(2, size)  # a batch of two, so batch statistics are real
    before = running_stats(reference)
    assert before  # BatchNorm statistics to compare
    expected = _training_step(reference, x)
    actual = _training_step(ours, x)
    assert len(actual) == len(expected) >= 1 + bool(ours.aux)  # DANet 3, ICNet 4 outputs without aux
    for a, e in zip(actual, expected):
        assert a.shape == e.shape
        assert_same(a, e, rtol=1e-4)
    assert_same_training_state(reference, ours, before)


@pytest.mark.parametrize("backbone, file", [("resnet101", "resnet101_v1s"), ("resnest50", "resnest50")])
def test_pretrained_base_comes_through_the_hub_cache(backbone: str, file: str, monkeypatch, tmp_path) -> None:
    from gluon_cv_core.segmentation.models.deeplab import deeplab

    with empty_mirror(monkeypatch, tmp_path) as paths:
        with pytest.raises(Exception, match=file):  # the mirror has nothing
            deeplab(backbone, "ade", pretrained_base=True)
    assert any(p.startswith(f"/gluon/models/{file}-") for p in paths), paths


def test_an_unknown_backbone_or_dataset_names_the_choices() -> None:
    from gluon_cv_core.segmentation.models.fcn import fcn

    with pytest.raises(ValueError, match="resnest269"):
        fcn("resnet51", "voc")
    with pytest.raises(ValueError, match="citys"):
        fcn("resnet50", "pascal")
