"""VOC mAP (VOC07 11-point and VOC2010+ area) equals GluonCV 0.10's VOCMApMetric on worked cases;
COCO mAP (through pycocotools) equals its COCODetectionMetric on generated COCO files."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from PIL import Image

from gluon_cv_core.datasets.coco import COCODetection
from gluon_cv_core.detection.classes import COCO_CLASSES
from gluon_cv_core.detection.metrics import COCODetectionMetric, VOC07MApMetric, VOCMApMetric
from gluon_cv_core.detection.presets import centernet_inverse_affine
from gluon_hub.compat import mx

from gluoncv.data import COCODetection as GluonCOCO
from gluoncv.data.transforms.presets.center_net import get_post_transform
from gluoncv.utils.metrics.coco_detection import COCODetectionMetric as GluonCOCOMetric
from gluoncv.utils.metrics.voc_detection import VOC07MApMetric as GluonCV07, VOCMApMetric as GluonCV12


def _batch(rng: np.random.RandomState, images: int, preds: int, gts: int, classes: int):
    """Detections jittered from the ground truth plus noise, padded with -1, with difficults."""
    gt_xy = rng.uniform(0, 80, (images, gts, 2))
    gt_boxes = np.concatenate([gt_xy, gt_xy + rng.uniform(5, 40, (images, gts, 2))], -1).round()
    gt_labels = rng.randint(0, classes, (images, gts, 1)).astype(float)
    gt_labels[:, -1] = -1  # padding
    difficult = (rng.uniform(size=(images, gts, 1)) < 0.2).astype(float)
    pick = rng.randint(0, gts, (images, preds))
    boxes = np.take_along_axis(gt_boxes, pick[..., None], 1) + rng.normal(0, 4, (images, preds, 4))
    labels = np.take_along_axis(gt_labels, pick[..., None], 1)
    wrong = rng.uniform(size=labels.shape) < 0.2
    labels[wrong] = rng.randint(0, classes, wrong.sum())
    labels[:, -2:] = -1
    scores = rng.uniform(0, 1, (images, preds, 1)).round(2)  # rounding makes ties happen
    return boxes, labels, scores, gt_boxes, gt_labels, difficult


@pytest.mark.parametrize("ours_class, reference_class", [(VOC07MApMetric, GluonCV07), (VOCMApMetric, GluonCV12)])
@pytest.mark.parametrize("seed", range(4))
def test_equals_gluoncv_on_generated_batches(ours_class, reference_class, seed) -> None:
    rng = np.random.RandomState(seed)
    names = ["a", "b", "c", "d", "e"]
    for kwargs in ({}, {"class_names": names}, {"iou_thresh": 0.7}):
        ours, reference = ours_class(**kwargs), reference_class(**kwargs)
        for _ in range(3):  # several updates accumulate
            batch = _batch(rng, images=4, preds=12, gts=6, classes=5)
            ours.update(*[mx.nd.array(a) for a in batch])  # NDArrays, as a validation loop has
            reference.update(*batch)
        (our_names, our_values), (ref_names, ref_values) = ours.get(), reference.get()
        assert our_names == (ref_names if "class_names" in kwargs else "mAP")
        np.testing.assert_allclose(our_values, ref_values, rtol=1e-12, atol=1e-12)
        assert 0 < np.nanmean(np.atleast_1d(our_values)) < 1


def test_worked_case_by_hand() -> None:
    # one class; two positives (one difficult, ignored); detections at 0.9 (hit), 0.8 (a
    # second hit on the same box: false positive), 0.7 (on the difficult box: ignored),
    # 0.6 (the second box, hit)
    gt = [[[0, 0, 9, 9], [20, 20, 29, 29], [50, 50, 59, 59]]]
    gt_labels, difficult = [[0, 0, 0]], [[0, 0, 1]]
    boxes = [[[0, 0, 9, 9], [1, 0, 9, 9], [50, 50, 59, 59], [20, 20, 29, 28]]]
    labels, scores = [[0, 0, 0, 0]], [[0.9, 0.8, 0.7, 0.6]]
    for metric, expected in ((VOCMApMetric(), 0.5 + 0.5 * 2 / 3), (VOC07MApMetric(), (6 + 5 * 2 / 3) / 11)):
        metric.update(boxes, labels, scores, gt, gt_labels, difficult)
        name, value = metric.get()
        assert name == "mAP" and math.isclose(value, expected)
        reference = GluonCV07() if isinstance(metric, VOC07MApMetric) else GluonCV12()
        reference.update(np.array(boxes, float), np.array(labels, float), np.array(scores),
                         np.array(gt, float), np.array(gt_labels, float), np.array(difficult, float))
        assert math.isclose(reference.get()[1], expected)


def test_classes_without_positives_are_left_out_and_empty_is_nan() -> None:
    metric = VOCMApMetric(class_names=["cat", "dog"])
    assert math.isnan(metric.get()[1][-1])
    # a false detection of class 1, which has no ground truth: no AP for it
    metric.update([[[0, 0, 9, 9], [0, 0, 9, 9]]], [[0, 1]], [[0.9, 0.8]], [[[0, 0, 9, 9]]], [[0]])
    names, values = metric.get()
    assert names == ["cat", "dog", "mAP"] and values[0] == 1.0 and math.isnan(values[1]) and values[2] == 1.0


def test_bad_input_is_refused_with_the_reason() -> None:
    with pytest.raises(ValueError, match="iou_thresh"):
        VOCMApMetric(iou_thresh=0)
    with pytest.raises(ValueError, match="same number of images"):
        VOCMApMetric().update([[[0, 0, 1, 1]]], [[0]], [[0.5]], [], [])


# ---------------------------------------------------------------------------- COCO mAP

_COCO_IDS = [i for i in range(1, 91) if i not in (12, 26, 29, 30, 45, 66, 68, 69, 71, 83)]
_USED = [0, 2, 17, 39, 79]  # contiguous ids the fixture uses (json ids 1, 3, 18, 44, 90)


def _coco_fixture(root, rng: np.random.RandomState, images: int = 6):
    """A COCO val2017 file with a few boxes of five classes per image, and the ground truth."""
    entries, annotations, truth = [], [], []
    (root / "val2017").mkdir(parents=True)
    for image_id in range(1, images + 1):
        width, height = int(rng.randint(50, 90)), int(rng.randint(40, 70))
        name = f"{image_id:012d}.jpg"
        Image.new("RGB", (width, height)).save(root / "val2017" / name)
        entries.append({"id": image_id, "file_name": name, "width": width, "height": height,
                        "coco_url": f"http://images.cocodataset.org/val2017/{name}"})
        boxes = []
        for _ in range(rng.randint(1, 5)):
            x, y = rng.uniform(0, width - 12), rng.uniform(0, height - 12)
            w, h = rng.uniform(6, width - x), rng.uniform(6, height - y)
            cls = int(rng.choice(_USED))
            annotations.append({"id": len(annotations) + 1, "image_id": image_id, "category_id": _COCO_IDS[cls],
                                "bbox": [x, y, w, h], "area": w * h, "iscrowd": int(rng.uniform() < 0.1)})
            boxes.append([x, y, x + w - 1, y + h - 1, cls])
        truth.append(np.array(boxes))
    categories = [{"id": i, "name": n, "supercategory": "thing"} for i, n in zip(_COCO_IDS, COCO_CLASSES)]
    (root / "annotations").mkdir()
    (root / "annotations" / "instances_val2017.json").write_text(
        json.dumps({"info": {"description": "fixture"}, "images": entries, "annotations": annotations,
                    "categories": categories}))
    return truth


def _detections(rng: np.random.RandomState, truth, pad: int = 8):
    """Per image, jittered true boxes (some with a wrong class) and random false ones, -1 padded."""
    boxes, labels = np.zeros((len(truth), pad, 4)), -np.ones((len(truth), pad, 1))
    scores = np.zeros((len(truth), pad, 1))
    for i, gt in enumerate(truth):
        found = gt[rng.uniform(size=len(gt)) < 0.8]
        n = min(len(found) + 2, pad)
        noise = np.concatenate([rng.uniform(0, 40, (2, 2)), rng.uniform(45, 80, (2, 2))], axis=1)
        boxes[i, :n] = np.concatenate([found[:, :4] + rng.normal(0, 2, (len(found), 4)), noise])[:n]
        labels[i, :n, 0] = np.concatenate([found[:, 4], rng.choice(_USED, 2)])[:n]
        scores[i, :n, 0] = rng.uniform(0.01, 1, n).round(2)
    return boxes, labels, scores


@pytest.mark.parametrize("seed", range(3))
def test_coco_map_equals_gluoncv(tmp_path, seed) -> None:
    rng = np.random.RandomState(seed)
    truth = _coco_fixture(tmp_path, rng)
    ours = COCODetectionMetric(COCODetection(tmp_path, skip_empty=False, use_crowd=True))
    reference = GluonCOCOMetric(GluonCOCO(str(tmp_path), skip_empty=False), str(tmp_path / "results"),
                                use_time=False, cleanup=True)
    boxes, labels, scores = _detections(rng, truth)
    for batch in (slice(0, 4), slice(4, None)):  # two updates, as a validation loop makes them
        ours.update(mx.nd.array(boxes[batch]), mx.nd.array(labels[batch]), mx.nd.array(scores[batch]))
        reference.update(boxes[batch].copy(), labels[batch], scores[batch])
    names, values = ours.get()
    ref_names, ref_values = reference.get()
    np.testing.assert_array_equal(ours.coco_eval.stats, reference._coco_eval.stats)
    np.testing.assert_array_equal(ours.coco_eval.eval["precision"], reference._coco_eval.eval["precision"])
    assert names == [*COCO_CLASSES, "mAP"] and ref_names[1:-1] == list(COCO_CLASSES)
    # GluonCV prints per-class APs with one decimal; ours are the floats behind them
    assert ["{:.1f}".format(100 * v) for v in values] == ref_values[1:]
    assert values[-1] == ours.coco_eval.stats[0] and 0.05 < values[-1] < 0.95
    assert all(np.isnan(values[k]) for k in range(80) if k not in _USED)
    assert ours.summary.startswith("Average Precision  (AP) @[ IoU=0.50:0.95")


def test_coco_map_rescales_from_the_network_input_like_gluoncv(tmp_path) -> None:
    rng = np.random.RandomState(5)
    truth = _coco_fixture(tmp_path, rng, images=3)
    dataset = COCODetection(tmp_path, skip_empty=False, use_crowd=True)
    gluon_dataset = GluonCOCO(str(tmp_path), skip_empty=False)
    boxes, labels, scores = _detections(rng, truth)
    for kwargs, ref_kwargs in (({}, {}),
                               ({"post_affine": centernet_inverse_affine}, {"post_affine": get_post_transform})):
        ours = COCODetectionMetric(dataset, data_shape=(128, 96), **kwargs)
        reference = GluonCOCOMetric(gluon_dataset, str(tmp_path / "results"), use_time=False, data_shape=(128, 96),
                                    **ref_kwargs)
        scaled = boxes * np.array([96 / 80, 128 / 60, 96 / 80, 128 / 60])  # predictions in the network's frame
        ours.update(scaled, labels, scores)
        reference.update(scaled.copy(), labels, scores)
        ours.get(), reference.get()
        np.testing.assert_array_equal(ours.coco_eval.stats, reference._coco_eval.stats)


def test_coco_map_worked_cases(tmp_path) -> None:
    truth = _coco_fixture(tmp_path, np.random.RandomState(1), images=2)
    metric = COCODetectionMetric(COCODetection(tmp_path, skip_empty=False, use_crowd=True), score_thresh=0.0)
    perfect = [np.pad(gt[:, :4], ((0, 8 - len(gt)), (0, 0))) for gt in truth]
    labels = [np.pad(gt[:, 4], (0, 8 - len(gt)), constant_values=-1) for gt in truth]
    metric.update(np.stack(perfect), np.stack(labels), np.ones((2, 8)))
    del metric.dataset.coco.dataset["info"]  # custom COCO-format files often lack it
    names, values = metric.get()
    assert values[-1] == pytest.approx(1.0)
    metric.reset()
    metric.update(np.zeros((2, 1, 4)), -np.ones((2, 1)), np.zeros((2, 1)))  # nothing detected at all
    assert metric.get()[1][-1] == 0.0
    with pytest.raises(ValueError, match="more images \\(3\\) than the dataset has \\(2\\)"):
        metric.update(np.zeros((1, 1, 4)), -np.ones((1, 1)), np.zeros((1, 1)))
    with pytest.raises(ValueError, match="post_affine maps boxes from the network's data_shape"):
        COCODetectionMetric(metric.dataset, post_affine=centernet_inverse_affine)
