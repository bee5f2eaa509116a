"""COCO box and mask AP of :class:`COCOInstanceMetric` on generated COCO instance files."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from gluon_cv_core.datasets.coco import COCOInstance
from gluon_cv_core.detection.instance_metrics import COCOInstanceMetric

W, H = 50, 40
CATEGORIES = [{"id": 3, "name": "car", "supercategory": "thing"}, {"id": 7, "name": "dog", "supercategory": "thing"}]


def _square(x: float, y: float, side: float) -> list[float]:
    return [x, y, x + side, y, x + side, y + side, x, y + side]


def _ann(ann_id: int, image_id: int, category: int, x: int, y: int, side: int) -> dict:
    return {"id": ann_id, "image_id": image_id, "category_id": category, "iscrowd": 0, "area": float(side * side),
            "bbox": [x, y, side, side], "segmentation": [_square(x, y, side)]}


def _dataset(root: Path, anns: list[dict], images: int) -> COCOInstance:
    """A COCO instance file with polygon objects, and its images, read in mask format."""
    entries = []
    for image_id in range(1, images + 1):
        name = f"{image_id:012d}.jpg"
        (root / "val2017").mkdir(parents=True, exist_ok=True)
        Image.new("RGB", (W, H), (image_id, 0, 0)).save(root / "val2017" / name)
        entries.append({"id": image_id, "file_name": name, "width": W, "height": H,
                        "coco_url": f"http://images.cocodataset.org/val2017/{name}"})
    (root / "annotations").mkdir(parents=True, exist_ok=True)
    (root / "annotations" / "instances_val2017.json").write_text(
        json.dumps({"images": entries, "annotations": anns, "categories": CATEGORIES}))
    return COCOInstance(root, "instances_val2017", segm_format="mask", classes=None)


def _three_images(root: Path) -> COCOInstance:
    anns = [_ann(1, 1, 3, 2, 2, 20), _ann(2, 1, 7, 22, 10, 25), _ann(3, 2, 3, 10, 5, 30), _ann(4, 3, 7, 0, 0, 12),
            _ann(5, 3, 7, 30, 20, 16)]
    return _dataset(root, anns, 3)


def _truth(dataset: COCOInstance, index: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    label = dataset.labels[index]
    return label[:, :4], label[:, 4], np.linspace(0.9, 0.6, len(label)), dataset.masks(index)


def test_perfect_predictions_give_box_and_mask_ap_one(tmp_path: Path) -> None:
    dataset = _three_images(tmp_path)
    metric = COCOInstanceMetric(dataset)
    for index in range(len(dataset)):
        metric.update(*_truth(dataset, index))
    assert metric.get() == (["bbox mAP", "segm mAP"], [1.0, 1.0])
    assert metric.coco_eval["segm"].stats[0] == 1.0 and "Average Precision" in metric.summary["segm"]
    metric.reset()
    with pytest.warns(UserWarning, match="over 0 of the dataset's 3 images"):
        assert metric.get()[1] == [0.0, 0.0]  # no detections: every object missed


def test_shifted_mask_scores_only_the_iou_thresholds_it_reaches(tmp_path: Path) -> None:
    dataset = _dataset(tmp_path, [_ann(1, 1, 3, 5, 5, 20)], 1)
    boxes, labels, scores, masks = _truth(dataset, 0)
    assert masks.sum() == 400  # the polygon covers pixels 5..24 both ways
    shifted = np.roll(masks, 4, axis=2)  # 16 of 20 columns still overlap: IoU 320 / 480 = 2/3
    metric = COCOInstanceMetric(dataset)
    metric.update(boxes, labels, scores, shifted)
    # the box is exact; the mask matches at IoU thresholds 0.50, 0.55, 0.60, 0.65 of ten
    box_ap, mask_ap = metric.get()[1]
    assert box_ap == pytest.approx(1.0)
    assert mask_ap == pytest.approx(0.4)


def test_network_box_masks_are_pasted_onto_the_image(tmp_path: Path) -> None:
    from gluon_cv_core.detection.models.mask_rcnn import paste_masks

    dataset = _dataset(tmp_path, [_ann(1, 1, 3, 5, 5, 20)], 1)
    boxes, labels, scores, _ = _truth(dataset, 0)
    raw = np.zeros((1, 14, 14), np.float32)
    raw[:, :, :7] = 0.9  # the left half of the box
    pasted = COCOInstanceMetric(dataset)
    pasted.update(boxes, labels, scores, raw, box_masks=True)
    full = COCOInstanceMetric(dataset)
    full.update(boxes, labels, scores, paste_masks(raw, boxes, (H, W)))
    assert pasted._results == full._results
    assert pasted.get()[1][1] == 0.0 < full.get()[1][0]  # half a mask: IoU about 1/2 misses 0.5 by a border


def _predictions(dataset: COCOInstance) -> list[tuple[np.ndarray, ...]]:
    """Per image: the truth, a shifted copy of each mask, a false positive and a padded row."""
    rng = np.random.default_rng(0)
    out = []
    for index in range(len(dataset)):
        boxes, labels, _, masks = _truth(dataset, index)
        noise = rng.integers(-2, 3, boxes.shape).astype(np.float32)
        boxes = np.concatenate([boxes, boxes + noise, [[0, 0, 10, 10], [0, 0, 0, 0]]]).astype(np.float32)
        labels = np.concatenate([labels, 1 - labels, [0, -1]]).astype(np.float32)
        scores = rng.permutation(np.arange(len(boxes)) * 0.11 + 0.01).astype(np.float32)
        false_positive = np.zeros((2, H, W), np.uint8)
        false_positive[0, :10, :10] = 1
        masks = np.concatenate([masks, np.roll(masks, 3, axis=1), false_positive])
        out.append((boxes, labels, scores, masks))
    return out


def test_equals_gluoncv_coco_instance_metric(tmp_path: Path) -> None:
    from gluoncv.utils.metrics.coco_instance import COCOInstanceMetric as GluonMetric

    dataset = _three_images(tmp_path)
    ours = COCOInstanceMetric(dataset)
    # GluonCV's metric reads only the dataset's ``coco`` and ``contiguous_id_to_json``
    theirs = GluonMetric(dataset, str(tmp_path / "results"), use_time=False, cleanup=True)
    for prediction in _predictions(dataset):
        ours.update(*prediction)
        theirs.update(*prediction)
    assert len(theirs._results) == len(ours._results["segm"]) == 2 * 5 + 3  # padding gone
    for theirs_one, box, mask in zip(theirs._results, ours._results["bbox"], ours._results["segm"]):
        assert (box["image_id"], box["category_id"]) == (theirs_one["image_id"], theirs_one["category_id"])
        np.testing.assert_allclose(box["bbox"], theirs_one["bbox"], atol=1e-5)
        assert box["score"] == pytest.approx(theirs_one["score"], abs=1e-6) == mask["score"]
        assert mask["segmentation"] == theirs_one["segmentation"]
    names, values = ours.get()
    their_names, their_values = theirs.get()
    assert 0 < values[0] < 1 and 0 < values[1] < 1
    # GluonCV reports 100 * AP to one decimal; the box summaries are pycocotools' own print
    assert [float(their_values[1]), float(their_values[3])] == [round(100 * v, 1) for v in values]
    assert ours.summary["bbox"] == their_values[0]


def test_bad_input_says_what_is_wrong(tmp_path: Path) -> None:
    dataset = _three_images(tmp_path)
    boxes, labels, scores, masks = _truth(dataset, 0)
    metric = COCOInstanceMetric(dataset)
    with pytest.raises(ValueError, match=r"image 1: masks \(2, 20, 25\) are not \(N, 40, 50\).*box_masks=True"):
        metric.update(boxes, labels, scores, masks[:, ::2, ::2])
    with pytest.raises(ValueError, match="image id 99 is not in the evaluated dataset"):
        metric.update(boxes, labels, scores, masks, image_id=99)
    with pytest.raises(ValueError, match=r"image 1: update\(\) needs \(N, 4\) boxes and N labels"):
        metric.update(boxes, labels[:1], scores, masks)
    with pytest.raises(ValueError, match=r"box_masks=True needs \(N, M, M\) masks"):
        metric.update(boxes, labels, scores, masks, box_masks=True)
    metric.update(boxes, labels, scores, masks, image_id=1)
    with pytest.raises(ValueError, match="image 1 was already updated; call reset"):
        metric.update(boxes, labels, scores, masks, image_id=1)
    with pytest.warns(UserWarning, match="over 1 of the dataset's 3 images"):
        mask_ap = metric.get()[1][1]
    # car: 1 of 2 found, precision 1 at recall points 0..0.50 (51 of 101); dog: 1 of 3, points 0..0.33 (34)
    assert mask_ap == pytest.approx((51 + 34) / 202)
