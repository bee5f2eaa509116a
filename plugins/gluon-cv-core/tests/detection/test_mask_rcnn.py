"""Mask R-CNN matches GluonCV 0.10 (the test-only reference): structure, weights, inference, training.

Every name's parameter names, shapes and count are compared symbolically; one model per head
family and backbone runs forward on random weights that GluonCV saved and ours loaded
strictly. GluonCV's constructors take no proposal counts, so its proposal, sample and
detection counts are shrunk on the built network (same values on both sides) to keep the
region and mask heads cheap on a CPU.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from cv_testlib.detection import (
    assert_same,
    build_ours,
    flat,
    gluoncv_names_with_private_syncbn_state,
    random_input,
    random_params_files,
    randomize,
    roialign_without_negative_batch_indices,
    running_stats,
    strictly_loaded,
)

import gluon_hub
from gluon_cv_core.detection.classes import COCO_CLASSES
from gluon_cv_core.detection.models.mask_rcnn import paste_masks
from gluon_hub.compat import mx

import gluoncv  # noqa: E402  (test-only reference; after the compat shim)
from gluoncv.model_zoo.rcnn.faster_rcnn.rcnn_target import RCNNTargetGenerator

pytestmark = pytest.mark.parity

MODELS = gluon_hub.list_models(plugin="cv", task="instance-segmentation")
#: proposals per image in inference, detections that get a mask, and for training:
#: proposals kept, regions sampled
TEST_PROPOSALS, DETECTIONS, TRAIN_PROPOSALS, SAMPLES = 16, 12, 48, 16


def _reference(name: str):
    """GluonCV's model; its custom constructor gets the COCO classes our spec defaults to."""
    classes = {"classes": list(COCO_CLASSES)} if name.startswith("custom_") else {}
    with gluoncv_names_with_private_syncbn_state():
        return gluoncv.model_zoo.get_model(name, pretrained=False, pretrained_base=False, **classes)


def _shapes(net, size: int) -> dict[str, tuple[int, ...]]:
    """Parameter name -> shape by symbolic inference over the whole network and over its
    feature extractor alone (the custom model leaves pyramid levels P3-P6 unused)."""
    found = {}
    for out in (net(mx.sym.var("data")), net.features(mx.sym.var("data"))):
        out = mx.sym.Group(list(out)) if isinstance(out, (list, tuple)) else out
        args, _, aux = out.infer_shape(data=(1, 3, size, size))
        found.update(zip(out.list_arguments(), args))
        found.update(zip(out.list_auxiliary_states(), aux))
    return {key: tuple(found[p.name]) for key, p in net._collect_params_with_prefix().items()}


def test_the_zoo_has_every_gluoncv_mask_rcnn() -> None:
    reference = {n for n in gluoncv.model_zoo.get_model_list() if "mask_rcnn" in n}
    assert set(MODELS) == reference and len(MODELS) == 9


@pytest.mark.parametrize("name", MODELS)
def test_parameter_names_shapes_count_and_anchors_match_gluoncv(name: str) -> None:
    # 512: large enough for 1000 proposals on the C4 maps, small enough for the custom
    # model's 128x128 anchor grid on P2
    reference, ours = _reference(name), build_ours(name)
    expected, actual = _shapes(reference, 512), _shapes(ours, 512)
    assert sorted(actual) == sorted(expected)
    assert actual == expected
    assert any(key.startswith("mask.") for key in actual)
    learnable = sum(int(np.prod(actual[k])) for k, p in ours._collect_params_with_prefix().items()
                    if p.grad_req != "null")
    assert learnable == gluon_hub.info(name).num_params
    for net in (reference, ours):
        net.initialize()
    constants = [{k: p.data().asnumpy() for k, p in net._collect_params_with_prefix().items()
                  if isinstance(p, mx.gluon.Constant)} for net in (reference, ours)]
    assert constants[1].keys() == constants[0].keys() and constants[0]
    for key, value in constants[0].items():
        np.testing.assert_array_equal(constants[1][key], value, err_msg=key)
    assert (ours.rcnn_max_dets, ours.target_size) == (reference._rcnn_max_dets, reference._target_roi_size)
    assert (ours.short, ours.max_size, ours.train_patterns) == (reference.short, reference.max_size,
                                                                reference.train_patterns)
    assert (-1 if ours._clip is None else ours._clip) == reference.box_decoder._clip  # GluonCV's -1: no cap


@pytest.mark.parametrize("name", [n for n in MODELS if gluon_hub.info(n).pretrained])
def test_weights_name_the_file_gluoncv_publishes(name: str) -> None:
    from gluoncv.model_zoo import model_store

    spec = gluon_hub.info(name)
    sha1 = model_store._model_sha1[name]
    assert spec.weight().file.hash == f"sha1:{sha1}"
    assert spec.weight().file.filename == f"gluon/models/{name}-{sha1[:8]}.zip"
    assert {m.name for m in spec.weight().metrics} >= {"box AP", "mask AP"}
    assert spec.input.num_classes == 80


#: one model per head family and backbone: C4, FPN, FPN with SyncBatchNorm (ResNet and
#: MobileNet), the custom single-stage pyramid; a small input and one not a multiple of 32
FAMILIES = {
    "mask_rcnn_resnet18_v1b_coco": [(96, 128), (97, 131)],
    "mask_rcnn_fpn_resnet18_v1b_coco": [(96, 128), (97, 131)],
    "mask_rcnn_fpn_syncbn_resnet18_v1b_coco": [(96, 128), (97, 131)],
    "mask_rcnn_fpn_syncbn_mobilenet1_0_coco": [(96, 128), (97, 131)],
    "custom_mask_rcnn_fpn": [(96, 128), (97, 131)],
}


def _shrink(reference, batch: int) -> None:
    """Fewer proposals, samples and masked detections in GluonCV's network."""
    reference._rpn_test_post_nms = reference.rpn._test_post_nms = TEST_PROPOSALS
    reference._rcnn_max_dets = DETECTIONS
    reference.rpn._train_post_nms = reference.sampler._num_proposal = TRAIN_PROPOSALS
    reference._num_sample = reference.sampler._num_sample = SAMPLES
    reference.sampler._max_pos = int(round(SAMPLES * 0.25))
    reference._batch_size = reference.sampler._num_image = reference.mask._batch_images = batch
    reference._target_generator = lambda: RCNNTargetGenerator(reference.num_class, reference.sampler._max_pos, batch)


def _shrunk_options(batch: int) -> dict:
    return dict(rpn_test_post_nms=TEST_PROPOSALS, rcnn_max_dets=DETECTIONS, rpn_train_post_nms=TRAIN_PROPOSALS,
                num_sample=SAMPLES, per_device_batch_size=batch)


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """``saved(name)``: a file of random parameters written by GluonCV's model, made once."""

    def warmed(name: str):
        reference = _reference(name)
        reference.initialize()
        _shrink(reference, 1)
        with roialign_without_negative_batch_indices():
            reference(mx.nd.zeros((1, 3, 96, 128)))
        return reference

    return random_params_files(tmp_path_factory, warmed)


def _pair(name: str, path: str, batch: int = 1):
    reference = strictly_loaded(_reference(name), path)
    _shrink(reference, batch)
    return reference, strictly_loaded(build_ours(name, **_shrunk_options(batch)), path)


@pytest.mark.parametrize("name", FAMILIES)
def test_ids_scores_boxes_and_masks_match_gluoncv_hybridized_and_not(name: str, saved) -> None:
    reference, ours = _pair(name, saved(name))
    expected = {}
    with roialign_without_negative_batch_indices():
        for size in FAMILIES[name]:
            expected[size] = reference(random_input(1, size))
    for hybridize in (False, True):
        if hybridize:
            ours.hybridize()
        for size in FAMILIES[name]:
            ids, scores, boxes, masks = expected[size]
            assert masks.shape[:2] == (1, DETECTIONS)
            assert (ids.asnumpy() >= 0).sum() == DETECTIONS  # every row a real detection
            actual = ours(random_input(1, size))
            np.testing.assert_array_equal(actual[0].asnumpy(), ids.asnumpy())
            for a, e in zip(actual[1:], (scores, boxes, masks)):
                assert a.shape == e.shape
                assert_same(a, e)
            assert float(masks.asnumpy().std()) > 1e-3  # not one constant: masks differ by pixel and detection


def _training_step(net, x, gt_boxes, gt_labels):
    """Training-mode outputs from a fixed seed (the region sampler draws random numbers) and
    a backward pass of a loss on the class, box and mask predictions (MXNet updates
    BatchNorm statistics in it)."""
    mx.random.seed(7)
    with mx.autograd.record():
        outputs = net(x, gt_boxes, gt_labels)
        loss = sum((outputs[i] ** 2).sum() for i in (0, 1, 2, 6, 7))
    loss.backward()
    return flat(outputs)


#: one model per head family: C4, FPN (frozen BatchNorm) and FPN with SyncBatchNorm (trained)
TRAINED = ["mask_rcnn_resnet18_v1b_coco", "custom_mask_rcnn_fpn", "mask_rcnn_fpn_syncbn_resnet18_v1b_coco"]


@pytest.mark.parametrize("name", TRAINED)
def test_training_forward_gradients_and_batchnorm_statistics_match_gluoncv(name: str, saved) -> None:
    batch = 2
    reference, ours = _pair(name, saved(name), batch)
    x = random_input(batch, (97, 131))
    gt_boxes = mx.nd.array([[[10, 12, 60, 70], [40, 30, 120, 90], [-1, -1, -1, -1]],
                            [[0, 0, 50, 40], [20, 50, 100, 96], [70, 10, 128, 60]]])
    gt_labels = mx.nd.array([[[2], [0], [-1]], [[1], [2], [0]]])
    before = running_stats(reference)
    with roialign_without_negative_batch_indices():
        expected = _training_step(reference, x, gt_boxes, gt_labels)
    actual = _training_step(ours, x, gt_boxes, gt_labels)
    assert len(actual) == len(expected)
    assert expected[2].shape[:3] == (batch, SAMPLES // 4, reference.num_class)  # mask logits
    for a, e in zip(actual, expected):
        assert a.shape == e.shape
        assert_same(a, e, rtol=1e-4)
    # gradients of the mask head's parameters (the part this module adds) match too
    ours_params = ours.mask._collect_params_with_prefix()
    for key, param in reference.mask._collect_params_with_prefix().items():
        if param.grad_req != "null":
            assert_same(ours_params[key].grad(), param.grad(), rtol=1e-4)
    after, ours_after = running_stats(reference), running_stats(ours)
    assert ours_after.keys() == after.keys()
    for key in after:
        np.testing.assert_allclose(ours_after[key], after[key], rtol=1e-4, atol=1e-5, err_msg=key)
    moved = {k for k in after if not np.allclose(before[k], after[k])}
    if "syncbn" in name:  # trained BatchNorm: the backbone's and the mask head's statistics move
        assert any(k.startswith("mask.") for k in moved) and any("layers3" in k for k in moved)
    else:
        assert not moved, sorted(moved)[:5]


def test_a_batch_gives_each_image_its_own_instances(saved) -> None:
    # GluonCV's inference handles one image per call; ours takes a batch
    name = "mask_rcnn_resnet18_v1b_coco"
    _, ours = _pair(name, saved(name))
    ours.hybridize()
    x = random_input(2, (96, 128))
    both = ours(x)
    for i in range(2):
        alone = ours(x[i:i + 1])
        np.testing.assert_array_equal(both[0][i:i + 1].asnumpy(), alone[0].asnumpy())
        for a, b in zip(both[1:], alone[1:]):
            assert_same(a[i:i + 1], b)


def test_reset_class_keeps_the_reused_mask_channels(saved) -> None:
    name = "mask_rcnn_resnet18_v1b_coco"
    reference, ours = _pair(name, saved(name))
    new = ["person", "dog", "unicorn"]
    reference.reset_class(new, reuse_weights={0: 0, 1: 16})  # GluonCV's COCO index of "dog"
    ours.reset_class(new, reuse_weights={"person": "person", "dog": 16})
    for param in ("weight", "bias"):
        expected = getattr(reference.mask.mask, param).data().asnumpy()
        actual = getattr(ours.mask.mask, param).data().asnumpy()
        assert actual.shape == expected.shape
        np.testing.assert_array_equal(actual[:2], expected[:2])
    ids, _, _, masks = ours(random_input(1, (96, 128)))
    assert set(np.unique(ids.asnumpy())) <= {-1.0, 0.0, 1.0, 2.0} and masks.shape[:2] == (1, DETECTIONS)


def test_paste_masks_equals_gluoncvs_expand_mask() -> None:
    from gluoncv.utils.viz import expand_mask

    rng = np.random.RandomState(0)
    for side, count, (height, width) in ((14, 9, (61, 83)), (28, 7, (120, 97))):
        masks = rng.uniform(0, 1, (count, side, side)).astype(np.float32)
        x1, y1 = rng.uniform(-20, width - 5, count), rng.uniform(-20, height - 5, count)
        boxes = np.stack([x1, y1, x1 + rng.uniform(1, 70, count), y1 + rng.uniform(1, 70, count)], axis=1)
        boxes[0] = [3.2, 4.7, 3.9, 5.1]  # smaller than a pixel
        boxes[1] = [-30, -30, width + 30, height + 30]  # larger than the image
        expected, _ = expand_mask(masks, boxes.copy(), (width, height), scores=np.ones(count))
        actual = paste_masks(masks, boxes, (height, width))
        assert actual.dtype == np.uint8 and actual.shape == (count, height, width)
        np.testing.assert_array_equal(actual, expected)
        assert 0 < actual.sum() < actual.size


def test_paste_masks_says_what_shapes_it_needs() -> None:
    with pytest.raises(ValueError, match=r"\(N, M, M\) masks and \(N, 4\) boxes"):
        paste_masks(np.zeros((2, 14, 14)), np.zeros((3, 4)), (32, 32))


PREDICT_MODEL = "mask_rcnn_fpn_resnet18_v1b_coco"


def test_cli_predict_prints_instances_and_draws_masks_on_a_photograph(tmp_path, capsys) -> None:
    # a photograph scikit-learn ships (427x640); the weights are random (seeded, with spread)
    import sklearn.datasets
    from PIL import Image

    from gluon_hub.cli import main as hub_main

    photo = str(Path(sklearn.datasets.__file__).parent / "images" / "china.jpg")
    params, out = tmp_path / "random.params", tmp_path / "instances.png"
    net = build_ours(PREDICT_MODEL)
    net.initialize()
    net(mx.nd.zeros((1, 3, 64, 64)))
    randomize(net, seed=0)
    net.save_parameters(str(params))
    assert hub_main(["predict", PREDICT_MODEL, photo, "--params", str(params), "--threshold", "0.013",
                     "--out", str(out)]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    result = json.loads(line)
    assert (result["image"], result["width"], result["height"]) == (photo, 640, 427)
    found = result["instances"]
    assert found, "random weights still give some instances above 0.013"
    scores = [i["score"] for i in found]
    assert scores == sorted(scores, reverse=True) and min(scores) >= 0.013
    for inst in found:
        assert set(inst) == {"class", "score", "box", "mask_area"} and inst["class"] in COCO_CLASSES
        x1, y1, x2, y2 = inst["box"]
        assert 0 <= x1 <= x2 <= 640 and 0 <= y1 <= y2 <= 427  # original pixels, clipped
        assert 0 <= inst["mask_area"] <= (x2 - x1 + 2) * (y2 - y1 + 2)  # a mask lies in its box
    assert any(i["mask_area"] > 0 for i in found)
    original = np.asarray(Image.open(photo).convert("RGB"))
    drawn = Image.open(out)
    assert drawn.format == "PNG" and drawn.size == (640, 427)
    assert (np.asarray(drawn.convert("RGB")) != original).any(axis=-1).sum() > 1000


def test_draw_instances_blends_each_mask_in_its_class_colour(tmp_path) -> None:
    from PIL import Image

    from gluon_cv_core.detection.instance_predict import Instance, draw_instances
    from gluon_cv_core.detection.predict import class_colour

    pixels = np.full((60, 80, 3), 100, dtype=np.uint8)
    mask = np.zeros((60, 80), dtype=np.uint8)
    mask[20:40, 30:50] = 1
    dog = Instance("dog", 0.9, (25.0, 15.0, 55.0, 45.0), mask)
    draw_instances(pixels, [dog], COCO_CLASSES, str(tmp_path / "d.png"))
    drawn = np.asarray(Image.open(tmp_path / "d.png").convert("RGB")).astype(int)
    colour = np.array(class_colour(COCO_CLASSES.index("dog")))
    np.testing.assert_array_equal(drawn[30, 40], np.round(100 * 0.5 + colour * 0.5))  # inside the mask
    np.testing.assert_array_equal(drawn[5, 5], [100, 100, 100])  # outside mask and box
    np.testing.assert_array_equal(drawn[30, 25], colour)  # the box's left edge
