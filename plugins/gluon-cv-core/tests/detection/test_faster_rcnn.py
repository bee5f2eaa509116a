"""Faster R-CNN matches GluonCV 0.10 (the test-only reference) forward, in training and in its recipe.

Parameter names, shapes, stored anchors and counts of every ``faster_rcnn_*`` name are checked
with the other detectors in ``test_detectors.py`` (parametrized from the registry). Here: the
recipe facts of every name, and forward parity on random weights that GluonCV saved and ours
loaded strictly. GluonCV's predefined constructors take no proposal counts, so its proposal
and sample counts are shrunk on the built network (same values on both sides) to keep the
region head cheap on a CPU.
"""

from __future__ import annotations

import numpy as np
import pytest
from cv_testlib.detection import (
    assert_same,
    build_ours,
    empty_mirror,
    exported_and_reloaded,
    flat,
    gluoncv_names_with_private_syncbn_state,
    random_input,
    random_params_files,
    roialign_without_negative_batch_indices,
    running_stats,
    strictly_loaded,
)
from cv_testlib.rcnn import TEST_PROPOSALS, shrink, shrunk_options

import gluon_hub
from gluon_cv_core.detection.classes import VOC_CLASSES
from gluon_hub.compat import mx

import gluoncv  # noqa: E402  (test-only reference; after the compat shim)

pytestmark = pytest.mark.parity

MODELS = [n for n in gluon_hub.list_models(plugin="cv", task="object-detection") if n.startswith("faster_rcnn_")]


def _reference(name: str):
    classes = {"classes": list(VOC_CLASSES)} if name.endswith("_custom") else {}
    with gluoncv_names_with_private_syncbn_state():
        return gluoncv.model_zoo.get_model(name, pretrained=False, pretrained_base=False, **classes)


def _recipe_of_reference(net) -> dict:
    rpn = net.rpn
    return dict(nms=(net.nms_thresh, net.nms_topk, net.post_nms, net.force_nms), sizes=(net.short, net.max_size),
                roi=(tuple(net._roi_size), net._strides, net._min_stage, net._max_stage),
                rpn=(rpn._nms_thresh, (rpn._train_pre_nms, rpn._train_post_nms), (rpn._test_pre_nms, rpn._test_post_nms),
                     rpn.region_proposer._min_size, rpn.region_proposer._box_decoder._clip),
                clip=net.box_decoder._clip, train_patterns=net.train_patterns,
                sampler=(net.sampler._max_pos, net.sampler._num_sample, net.sampler._max_num_gt,
                         net.sampler._pos_iou_thresh, net.sampler._num_proposal))


def _recipe_of_ours(net) -> dict:
    rpn, sampler = net.rpn, net.sampler
    return dict(nms=(net.nms_thresh, net.nms_topk, net.post_nms, net.force_nms), sizes=(net.short, net.max_size),
                roi=(net._roi_size, net._strides, net._min_stage, net._max_stage),
                rpn=(rpn._nms_thresh, rpn._train, rpn._test, rpn._min_size, rpn._clip),
                clip=net._clip, train_patterns=net.train_patterns,
                sampler=(sampler.max_pos, sampler._num_sample, sampler._max_num_gt, sampler._pos_iou_thresh,
                         sampler._num_proposal))


def test_every_gluoncv_faster_rcnn_with_a_plugin_backbone_is_registered() -> None:
    reference = {n for n in gluoncv.model_zoo.get_model_list()
                 if n.startswith("faster_rcnn_") and not n.endswith("_int8")}
    assert set(MODELS) == reference and len(MODELS) == 13


@pytest.mark.parametrize("name", MODELS)
def test_recipe_matches_gluoncv(name: str) -> None:
    reference, ours = _reference(name), build_ours(name)
    assert _recipe_of_ours(ours) == _recipe_of_reference(reference)
    assert ours.classes == tuple(reference.classes)
    # the anchors the RPN regresses from are data in the published files: equal too
    for net in (reference, ours):
        net.rpn.initialize()
    expected = {k: p.data().asnumpy() for k, p in reference.rpn._collect_params_with_prefix().items()
                if isinstance(p, mx.gluon.Constant)}
    actual = {k: p.data().asnumpy() for k, p in ours.rpn._collect_params_with_prefix().items()
              if isinstance(p, mx.gluon.Constant)}
    assert actual.keys() == expected.keys() and actual
    for key, value in expected.items():
        np.testing.assert_array_equal(actual[key], value, err_msg=key)


#: one model per backbone family (and the SyncBatchNorm build), a small input and one that
#: is not a multiple of the stride
FAMILIES = {
    "faster_rcnn_resnet50_v1b_voc": [(96, 128), (97, 131)],
    "faster_rcnn_resnet101_v1d_coco": [(96, 128), (97, 131)],
    "faster_rcnn_fpn_resnet50_v1b_coco": [(96, 128), (97, 131)],
    "faster_rcnn_fpn_syncbn_resnet50_v1b_coco": [(96, 128), (97, 131)],
    "faster_rcnn_fpn_syncbn_resnest50_coco": [(96, 128), (97, 131)],  # split attention, avd pools
}


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """``saved(name)``: a file of random parameters written by GluonCV's model, made once."""

    def warmed(name: str):
        reference = _reference(name)
        reference.initialize()
        shrink(reference, 1)
        with roialign_without_negative_batch_indices():
            reference(mx.nd.zeros((1, 3, 96, 128)))
        return reference

    return random_params_files(tmp_path_factory, warmed)


def _pair(name: str, path: str, batch: int = 1):
    reference = strictly_loaded(_reference(name), path)
    shrink(reference, batch)
    return reference, strictly_loaded(build_ours(name, **shrunk_options(batch)), path)


@pytest.mark.parametrize("name", FAMILIES)
def test_inference_matches_gluoncv_hybridized_and_not(name: str, saved) -> None:
    reference, ours = _pair(name, saved(name))
    expected = {}
    with roialign_without_negative_batch_indices():
        for size in FAMILIES[name]:
            expected[size] = reference(random_input(1, size))
    for hybridize in (False, True):
        if hybridize:
            ours.hybridize()
        for size in FAMILIES[name]:
            ids, scores, boxes = expected[size]
            assert ids.shape[1] == ours.num_class * TEST_PROPOSALS
            assert (ids.asnumpy() >= 0).sum() > 10  # NMS kept real detections to compare
            actual = ours(random_input(1, size))
            np.testing.assert_array_equal(actual[0].asnumpy(), ids.asnumpy())
            assert_same(actual[1], scores)
            assert_same(actual[2], boxes)


def _training_step(net, x, gt_boxes, gt_labels):
    """Training-mode outputs from a fixed seed (the region sampler draws random numbers) and
    a backward pass, in which MXNet updates BatchNorm statistics."""
    mx.random.seed(7)
    with mx.autograd.record():
        outputs = net(x, gt_boxes, gt_labels)
        loss = (outputs[0] ** 2).sum() + (outputs[1] ** 2).sum() + (outputs[5] ** 2).sum() + (outputs[6] ** 2).sum()
    loss.backward()
    return flat(outputs)


@pytest.mark.parametrize("name", FAMILIES)
def test_training_forward_and_batchnorm_statistics_match_gluoncv(name: str, saved) -> None:
    batch = 2
    reference, ours = _pair(name, saved(name), batch)
    x = random_input(batch, FAMILIES[name][1])
    # one padded ground-truth row in the first image; labels index the foreground classes
    gt_boxes = mx.nd.array([[[10, 12, 60, 70], [40, 30, 120, 90], [-1, -1, -1, -1]],
                            [[0, 0, 50, 40], [20, 50, 100, 96], [70, 10, 128, 60]]])
    gt_labels = mx.nd.array([[[3], [7], [-1]], [[0], [11], [5]]])
    before = running_stats(reference)
    with roialign_without_negative_batch_indices():
        expected = _training_step(reference, x, gt_boxes, gt_labels)
    actual = _training_step(ours, x, gt_boxes, gt_labels)
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        assert a.shape == e.shape
        assert_same(a, e, rtol=1e-4)
    samples = expected[3].asnumpy()
    assert (samples == 1).any() and (samples == -1).any()  # positives and negatives were sampled
    after, ours_after = running_stats(reference), running_stats(ours)
    assert ours_after.keys() == after.keys()
    for key in after:
        np.testing.assert_allclose(ours_after[key], after[key], rtol=1e-4, atol=1e-5, err_msg=key)
    moved = {k for k in after if not np.allclose(before[k], after[k])}
    if "syncbn" in name:  # trained BatchNorm: the backbone's and the box head's statistics move
        assert any(k.startswith("box_features.") for k in moved) and any("layers3" in k for k in moved)
    else:  # GluonCV freezes the backbone's BatchNorm (use_global_stats): nothing moves
        assert not moved, sorted(moved)[:5]


def test_reset_class_keeps_the_reused_predictors_as_gluoncv_does(saved) -> None:
    name = "faster_rcnn_resnet50_v1b_voc"
    reference, ours = _pair(name, saved(name))
    new = ["person", "dog", "unicorn"]
    # GluonCV's reset_class fails on a dict of names (it edits the dict while reading it)
    reference.reset_class(new, reuse_weights={0: VOC_CLASSES.index("person"), 1: VOC_CLASSES.index("dog")})
    ours.reset_class(new, reuse_weights={"person": "person", "dog": 11})
    for attr, rows in (("class_predictor", 3), ("box_predictor", 8)):  # bg, person, dog / person, dog
        for param in ("weight", "bias"):
            expected = getattr(getattr(reference, attr), param).data().asnumpy()
            actual = getattr(getattr(ours, attr), param).data().asnumpy()
            assert actual.shape == expected.shape
            np.testing.assert_array_equal(actual[:rows], expected[:rows])
    ids = ours(random_input(1, (96, 128)))[0].asnumpy()
    assert set(np.unique(ids)) <= {-1.0, 0.0, 1.0, 2.0} and ours.classes == tuple(new)
    with pytest.raises(ValueError, match="'cat'"):
        ours.reset_class(["dog"], reuse_weights={"dog": "cat"})


def test_hybridized_faster_rcnn_exports_and_reloads_as_a_symbol_file(saved, tmp_path) -> None:
    name = "faster_rcnn_fpn_resnet50_v1b_coco"
    _, ours = _pair(name, saved(name))
    x = random_input(1, (97, 131))
    expected, actual = exported_and_reloaded(ours, x, tmp_path, name)
    for a, e in zip(actual, expected):
        np.testing.assert_array_equal(a.asnumpy(), e.asnumpy())


def test_training_without_ground_truth_says_what_to_pass() -> None:
    net = build_ours("faster_rcnn_resnet50_v1b_custom", classes=["cat"])
    net.initialize()
    with mx.autograd.train_mode(), pytest.raises(ValueError, match="gt_boxes, gt_labels"):
        net(mx.nd.zeros((1, 3, 64, 64)))


@pytest.mark.parametrize("name, kwargs, file", [
    ("faster_rcnn_resnet50_v1b_voc", {"pretrained_base": True}, "resnet50_v1b-0ecdba34.zip"),
    ("faster_rcnn_resnet101_v1d_custom", {"transfer": "coco", "classes": ["dog"]},
     "faster_rcnn_resnet101_v1d_coco-a465eca3.zip"),
])
def test_backbone_and_transfer_weights_come_through_the_cache(name, kwargs, file, tmp_path, monkeypatch) -> None:
    with empty_mirror(monkeypatch, tmp_path) as paths:
        with pytest.raises(Exception, match=file.split("-")[0]):  # the mirror has nothing
            build_ours(name, **kwargs)
    assert any(p.startswith("/gluon/models/" + file) for p in paths), paths


def test_a_batch_gives_each_image_its_own_detections(saved) -> None:
    # GluonCV's inference handles one image per call; ours takes a batch
    name = "faster_rcnn_resnet50_v1b_voc"
    _, ours = _pair(name, saved(name))
    ours.hybridize()
    x = random_input(2, (96, 128))
    both = ours(x)
    for i in range(2):
        alone = ours(x[i:i + 1])
        assert (alone[0].asnumpy() >= 0).sum() > 10
        np.testing.assert_array_equal(both[0][i:i + 1].asnumpy(), alone[0].asnumpy())
        assert_same(both[1][i:i + 1], alone[1])
        assert_same(both[2][i:i + 1], alone[2])


def test_an_image_with_fewer_anchors_than_proposals_still_gives_every_row(saved) -> None:
    # 64x64 gives a 4x4 map: 240 anchors for 300 proposals (GluonCV fails on a slice here)
    name = "faster_rcnn_resnet50_v1b_voc"
    ours = strictly_loaded(build_ours(name), saved(name))
    x = random_input(1, (64, 64))
    plain = ours(x)
    ours.hybridize()
    hybrid = ours(x)
    assert [a.shape for a in hybrid] == [(1, 20 * 300, 1), (1, 20 * 300, 1), (1, 20 * 300, 4)]
    for a, b in zip(plain, hybrid):
        assert_same(a, b)


@pytest.mark.parametrize("name", ["custom_faster_rcnn_fpn", "faster_rcnn_fpn_syncbn_resnet50_v1b_coco"])
def test_fpn_models_take_one_initializer_for_all_their_parameters(name: str) -> None:
    """``net.initialize(Xavier(), force_reinit=True)``, as one reinitialises a network to train from
    scratch, used to fail on the pyramid's biases ("Xavier initializer cannot be applied to vector
    P2_conv_lat_bias"): MXNet gives a symbol's parameters the initialiser it is passed, vectors
    included, unless they name their own. The pyramid's convolutions keep Xavier weights, its
    biases and normalisation start at 0 and 1."""
    net = gluon_hub.load(name)
    net.initialize(mx.init.Xavier(rnd_type="gaussian", factor_type="in", magnitude=2), force_reinit=True)
    net(mx.nd.zeros((1, 3, 128, 128)))
    pyramid = {k: p.data().asnumpy() for k, p in net.collect_params().items() if k.startswith("P")}
    assert any(k.endswith("_weight") and v.std() > 0 for k, v in pyramid.items())
    for key, value in pyramid.items():
        if not key.endswith("_weight"):
            assert (value == (1.0 if key.endswith(("_gamma", "_var")) else 0.0)).all(), key
