"""CenterNet: GluonCV 0.10's parameters for every name, and its outputs on the same weights.

GluonCV (test-only reference) builds each model with ``pretrained_base=False``; structure
is compared symbolically, and one model per backbone family (ResNet deconv, ResNet DCNv2,
MobileNetV3 DUC, DLA-34 IDA, DLA-34 IDA with DCNv2) runs forward on random weights that GluonCV saved and ours loaded strictly.
"""

from __future__ import annotations

import numpy as np
import pytest
from cv_testlib.detection import (
    assert_same,
    build_ours,
    empty_mirror,
    exported_and_reloaded,
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

NAMES = [n for n in gluon_hub.list_models(plugin="cv", task="object-detection") if n.startswith("center_net_")]
#: one model per backbone family; a small input and one that is not a multiple of the stride
FAMILIES = {
    "center_net_resnet18_v1b_voc": [(64, 64), (97, 131)],
    "center_net_resnet18_v1b_dcnv2_coco": [(64, 64), (97, 131)],
    "center_net_mobilenetv3_small_duc_voc": [(64, 64), (97, 131)],
    # DLA's upsampled levels must meet the finer ones exactly (GluonCV's limit too): sides
    # of 32k - 1, which give odd maps at strides 1 and 2
    "center_net_dla34_voc": [(64, 64), (95, 127)],
    "center_net_dla34_dcnv2_coco": [(64, 64), (95, 127)],
}
#: random DLA features are nearly uniform over space after its aggregations, so one class's
#: heatmap bias wins at every cell: all peaks are of that class (their scores still differ)
_ONE_CLASS_WINS = {"center_net_dla34_voc", "center_net_dla34_dcnv2_coco"}


def _reference(name: str):
    return gluoncv.model_zoo.get_model(name, pretrained=False, pretrained_base=False)


def test_the_zoo_has_every_gluoncv_center_net() -> None:
    # the *_int8 names are quantized exports, not architectures
    reference = {n for n in gluoncv.model_zoo.get_model_list()
                 if n.startswith("center_net_") and not n.endswith("_int8")}
    assert set(NAMES) == reference


@pytest.mark.parametrize("name", NAMES)
def test_parameter_names_shapes_count_and_weight_file_match_gluoncv(name: str) -> None:
    from gluoncv.model_zoo import model_store

    spec = gluon_hub.info(name)
    ours = build_ours(name)
    expected = structure(_reference(name), 512)
    actual = structure(ours, 512)
    assert sorted(actual) == sorted(expected)
    assert actual == expected
    learnable = sum(int(np.prod(actual[k])) for k, p in ours._collect_params_with_prefix().items()
                    if p.grad_req != "null")
    assert learnable == spec.num_params
    assert spec.input.num_classes == len(ours.classes) == ours.num_classes
    if name not in model_store._model_sha1:  # GluonCV publishes no weights (the DLA-34 models)
        assert not spec.pretrained and "dla34" in name
        return
    sha1 = model_store._model_sha1[name]
    assert spec.weight().file.hash == f"sha1:{sha1}"
    assert spec.weight().file.filename == f"gluon/models/{name}-{sha1[:8]}.zip"


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """``saved(name)``: a file of random parameters written by GluonCV's model, made once."""

    def warmed(name: str):
        reference = _reference(name)
        reference(mx.nd.zeros((1, 3, 64, 64)))
        return reference

    return random_params_files(tmp_path_factory, warmed)


def _pair(name: str, path: str):
    return strictly_loaded(_reference(name), path), strictly_loaded(build_ours(name), path)


@pytest.mark.parametrize("name", FAMILIES)
def test_inference_matches_gluoncv_hybridized_and_not(name: str, saved) -> None:
    reference, ours = _pair(name, saved(name))
    topk = ours.topk
    for hybridize in (False, True):
        if hybridize:
            ours.hybridize()
            reference.hybridize()
        for size in FAMILIES[name]:
            x = random_input(1, size)
            ids, scores, boxes = reference(x)
            actual = ours(x)
            assert [a.shape for a in actual] == [(1, topk, 1), (1, topk, 1), (1, topk, 4)]
            # real peaks
            assert len(np.unique(scores.asnumpy())) > 1 and scores.asnumpy().min() > 0
            assert len(np.unique(ids.asnumpy())) > 1 or name in _ONE_CLASS_WINS
            np.testing.assert_array_equal(actual[0].asnumpy()[..., 0], ids.asnumpy())
            assert_same(actual[1].reshape((1, -1)), scores)
            assert_same(actual[2], boxes)


@pytest.mark.parametrize("name", FAMILIES)
def test_training_forward_and_batchnorm_statistics_match_gluoncv(name: str, saved) -> None:
    reference, ours = _pair(name, saved(name))
    x = random_input(2, FAMILIES[name][1])  # a batch of two, so batch statistics are real
    before = running_stats(reference)
    # MXNet 1.9 implements DCNv2's backward pass for GPUs only; on a CPU the DCN model's
    # training-mode forward is compared, and its statistics (updated in the backward) are not
    backward = "dcnv2" not in name or mx.context.num_gpus() > 0
    outputs = {}
    for key, net in (("reference", reference), ("ours", ours)):
        with mx.autograd.record():
            outputs[key] = net(x)
            loss = sum((o ** 2).sum() for o in outputs[key])
        if backward:
            loss.backward()  # MXNet moves BatchNorm statistics in the backward pass
    assert len(outputs["ours"]) == len(outputs["reference"]) == 3  # heatmap, wh, reg
    for a, e in zip(outputs["ours"], outputs["reference"]):
        assert a.shape == e.shape
        assert_same(a, e)
    if not backward:
        return
    after, ours_after = running_stats(reference), running_stats(ours)
    assert ours_after.keys() == after.keys() and after
    assert not any(np.allclose(before[k], after[k]) for k in after)  # every statistic moved
    for key in after:
        np.testing.assert_allclose(ours_after[key], after[key], rtol=1e-5, atol=1e-6)


def test_flip_test_averages_with_the_mirrored_image_as_gluoncv_does(saved) -> None:
    name = "center_net_resnet18_v1b_voc"
    path = saved(name)
    reference = _reference(name)
    reference.load_parameters(path)
    reference.flip_test = True  # its factory passes the option on to the backbone, which refuses it
    ours = build_ours(name, flip_test=True)
    ours.load_parameters(path)
    ours.hybridize()
    x = random_input(1, (64, 96))
    ids, scores, boxes = reference(x)
    actual = ours(x)
    np.testing.assert_array_equal(actual[0].asnumpy()[..., 0], ids.asnumpy())
    assert_same(actual[1].reshape((1, -1)), scores)
    assert_same(actual[2], boxes)


def test_reset_class_keeps_the_reused_heatmap_rows_as_gluoncv_does(saved) -> None:
    name = "center_net_resnet18_v1b_voc"
    reference, ours = _pair(name, saved(name))
    kept = (ours.heads[0][0], ours.heads[1], ours.heads[2])  # 3x3 heatmap conv, size and offset heads
    new = ["person", "unicorn", "dog"]
    reference.reset_class(new, reuse_weights={"person": "person", "dog": 11})
    ours.reset_class(new, reuse_weights={"person": "person", "dog": 11})
    assert structure(ours, 64) == structure(reference, 64)
    for attr in ("weight", "bias"):
        expected = getattr(reference.heads[0][2], attr).data().asnumpy()
        actual = getattr(ours.heads[0][2], attr).data().asnumpy()
        assert actual.shape == expected.shape == (3, *expected.shape[1:])
        np.testing.assert_array_equal(actual[[0, 2]], expected[[0, 2]])  # person, dog; not unicorn
    assert (ours.heads[0][0], ours.heads[1], ours.heads[2]) == kept
    ours.hybridize()
    ids = ours(random_input(1, (64, 64)))[0].asnumpy()
    assert set(np.unique(ids)) <= {0.0, 1.0, 2.0} and ours.classes == tuple(new)
    with pytest.raises(ValueError, match="'cat'"):
        ours.reset_class(["dog"], reuse_weights={"dog": "cat"})


def test_hybridized_center_net_exports_and_reloads_as_a_symbol_file(saved, tmp_path) -> None:
    name = "center_net_mobilenetv3_small_duc_voc"
    _, ours = _pair(name, saved(name))
    x = random_input(1, (97, 131))
    expected, actual = exported_and_reloaded(ours, x, tmp_path, name)
    np.testing.assert_array_equal(actual[0].asnumpy(), expected[0].asnumpy())
    assert_same(actual[1], expected[1])
    assert_same(actual[2], expected[2])


def test_pretrained_base_fetches_the_backbone_through_the_cache(tmp_path, monkeypatch) -> None:
    with empty_mirror(monkeypatch, tmp_path) as paths:
        with pytest.raises(Exception, match="resnet18_v1b"):  # the mirror has nothing
            build_ours("center_net_resnet18_v1b_voc", pretrained_base=True)
    assert any(p.startswith("/gluon/models/resnet18_v1b-") for p in paths), paths


def test_bad_backbone_and_classes_are_refused() -> None:
    from gluon_cv_core.detection.models.center_net import center_net

    with pytest.raises(ValueError, match="known: resnet18_v1b"):
        center_net("resnet34_v1b")
    with pytest.raises(ValueError, match="DUC"):
        center_net("mobilenetv3_small_duc", dcn=True)
    with pytest.raises(ValueError, match="known: .*dla34"):
        center_net("dla60")
    with pytest.raises(ValueError, match="non-empty"):
        center_net("resnet18_v1b", classes=[])
