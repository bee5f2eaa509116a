"""PASCAL VOC detection mAP: the VOC2007 11-point and the VOC2010+ area definitions.

Follows the VOC devkit's rules as GluonCV 0.10's ``VOCMApMetric`` / ``VOC07MApMetric``
apply them, and was checked equal to those (to float64 rounding) on generated worked
cases in ``tests/detection/test_detection_metrics.py``: boxes are pixel-inclusive
(``x2 - x1 + 1`` wide); within an image a class's detections are taken by descending
score, each matched to the ground-truth box it overlaps most; a match below the IoU
threshold, or to a box an earlier detection already took, is a false positive; a match to
a *difficult* box is ignored, and difficult boxes do not count as positives. Classes
without positives have no AP and are left out of the mean.

COCO mAP is not reimplemented: :class:`COCODetectionMetric` hands the detections to
``pycocotools``' ``COCOeval``, the implementation COCO results are reported with, and
was checked equal to GluonCV 0.10's ``COCODetectionMetric`` on a generated COCO file.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Sequence

import numpy as np

__all__ = ["COCODetectionMetric", "VOCMApMetric", "VOC07MApMetric", "pixel_iou", "run_cocoeval"]


def _numpy(value: Any) -> np.ndarray:
    """An array of images; a list of arrays (one batch per device) is joined along images."""
    if isinstance(value, (list, tuple)) and value and all(hasattr(v, "shape") for v in value):
        return np.concatenate([_numpy(v) for v in value], axis=0)
    return value.asnumpy() if hasattr(value, "asnumpy") else np.asarray(value)


def pixel_iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IoU matrix ``(len(a), len(b))`` of corner boxes whose corners are inclusive pixels."""
    a, b = a[:, :4].astype(np.float64), b[:, :4].astype(np.float64)
    a[:, 2:] += 1
    b[:, 2:] += 1
    low = np.maximum(a[:, None, :2], b[None, :, :2])
    high = np.minimum(a[:, None, 2:], b[None, :, 2:])
    inter = np.prod(high - low, axis=2) * (low < high).all(axis=2)
    area_a = np.prod(a[:, 2:] - a[:, :2], axis=1)
    area_b = np.prod(b[:, 2:] - b[:, :2], axis=1)
    return inter / (area_a[:, None] + area_b[None, :] - inter)


def _descending(scores: np.ndarray) -> np.ndarray:
    # reverse of numpy's default argsort: GluonCV's order, so ties rank as they do there
    return scores.argsort()[::-1]


class VOCMApMetric:
    """Mean average precision over classes, by the area under the interpolated P/R curve.

    Parameters
    ----------
    iou_thresh : the IoU a detection needs with a ground-truth box to be a true positive.
    class_names : when given, :meth:`get` also returns each class's AP, by name.

    Examples
    --------
    >>> metric = VOCMApMetric()
    >>> metric.update([[[0, 0, 9, 9]]], [[0]], [[0.9]], [[[0, 0, 9, 9]]], [[0]])
    >>> metric.get()
    ('mAP', 1.0)
    """

    def __init__(self, iou_thresh: float = 0.5, class_names: Sequence[str] | None = None) -> None:
        if not 0 < iou_thresh <= 1:
            raise ValueError(f"iou_thresh must be in (0, 1], got {iou_thresh}")
        if class_names is not None and not all(isinstance(n, str) for n in class_names):
            raise ValueError("class_names must be strings")
        self.iou_thresh = iou_thresh
        self.class_names = None if class_names is None else list(class_names)
        self.reset()

    def reset(self) -> None:
        """Forget every update."""
        self._positives: dict[int, int] = defaultdict(int)
        self._scores: dict[int, list[np.ndarray]] = defaultdict(list)
        self._matches: dict[int, list[np.ndarray]] = defaultdict(list)

    def update(self, pred_bboxes: Any, pred_labels: Any, pred_scores: Any, gt_bboxes: Any, gt_labels: Any,
               gt_difficults: Any = None) -> None:
        """Add a batch: per image, predicted boxes ``(N, 4)``, labels and scores ``(N,)`` or
        ``(N, 1)``, ground-truth boxes ``(M, 4)`` and labels; label -1 marks padding.
        Arrays may be MXNet NDArrays, numpy arrays or lists of either."""
        preds = [_numpy(x) for x in (pred_bboxes, pred_labels, pred_scores)]
        gts = [_numpy(gt_bboxes), _numpy(gt_labels)]
        difficults = [None] * len(gts[1]) if gt_difficults is None else _numpy(gt_difficults)
        if not len(preds[0]) == len(preds[1]) == len(preds[2]) == len(gts[0]) == len(gts[1]) == len(difficults):
            raise ValueError("update() needs the same number of images in every argument, got "
                             f"{[len(x) for x in (*preds, *gts, difficults)]}")
        for image in zip(*preds, *gts, difficults):
            self._add_image(*image)

    def _add_image(self, boxes, labels, scores, gt_boxes, gt_labels, difficult) -> None:
        boxes, labels, scores = np.asarray(boxes).reshape(-1, np.shape(boxes)[-1]), np.ravel(labels), np.ravel(scores)
        keep = labels >= 0
        boxes, labels, scores = boxes[keep], labels[keep].astype(int), scores[keep]
        gt_boxes, gt_labels = np.asarray(gt_boxes).reshape(-1, np.shape(gt_boxes)[-1]), np.ravel(gt_labels)
        keep_gt = gt_labels >= 0
        gt_boxes, gt_labels = gt_boxes[keep_gt], gt_labels[keep_gt].astype(int)
        difficult = (np.zeros(len(gt_labels), bool) if difficult is None
                     else np.ravel(difficult)[keep_gt].astype(bool))
        for label in np.unique(np.concatenate([labels, gt_labels])):
            mine = labels == label
            order = _descending(scores[mine])
            cls_boxes, cls_scores = boxes[mine][order], scores[mine][order]
            truth = gt_labels == label
            cls_gt, cls_difficult = gt_boxes[truth], difficult[truth]
            self._positives[label] += int((~cls_difficult).sum())
            self._scores[label].append(cls_scores)
            self._matches[label].append(self._match(cls_boxes, cls_gt, cls_difficult))

    def _match(self, boxes: np.ndarray, gt: np.ndarray, difficult: np.ndarray) -> np.ndarray:
        """1 (true positive), 0 (false positive) or -1 (ignored) per detection, best first."""
        if len(boxes) == 0 or len(gt) == 0:
            return np.zeros(len(boxes), np.int32)
        iou = pixel_iou(boxes, gt)
        best = iou.argmax(axis=1)
        hit = iou.max(axis=1) >= self.iou_thresh
        # a box counts once: for the first (best-scored) detection that takes it
        first = np.zeros(len(boxes), bool)
        taken = np.flatnonzero(hit)
        _, first_of = np.unique(best[taken], return_index=True)
        first[taken[first_of]] = True
        result = np.where(hit & first, 1, 0).astype(np.int32)
        result[hit & difficult[best]] = -1
        return result

    def _precision_recall(self) -> dict[int, tuple[np.ndarray | None, np.ndarray]]:
        curves = {}
        for label, positives in self._positives.items():
            scores = np.concatenate(self._scores[label]) if self._scores[label] else np.zeros(0)
            matches = np.concatenate(self._matches[label]) if self._matches[label] else np.zeros(0, np.int32)
            matches = matches[_descending(scores)]
            tp, fp = np.cumsum(matches == 1), np.cumsum(matches == 0)
            with np.errstate(divide="ignore", invalid="ignore"):
                precision = tp / (tp + fp)
            curves[label] = (tp / positives if positives > 0 else None, precision)
        return curves

    def average_precision(self, recall: np.ndarray | None, precision: np.ndarray) -> float:
        """Area under the precision envelope (each recall's best precision at or beyond it)."""
        if recall is None:
            return float("nan")
        recall = np.concatenate([[0.0], recall, [1.0]])
        envelope = np.maximum.accumulate(np.concatenate([[0.0], np.nan_to_num(precision), [0.0]])[::-1])[::-1]
        steps = np.flatnonzero(recall[1:] != recall[:-1])
        return float(np.sum((recall[steps + 1] - recall[steps]) * envelope[steps + 1]))

    def get(self) -> tuple[Any, Any]:
        """``("mAP", value)``, or with ``class_names`` the per-class APs then ``"mAP"``."""
        curves = self._precision_recall()
        aps = {label: self.average_precision(*curve) for label, curve in curves.items()}
        classes = max(aps, default=-1) + 1
        per_class = [aps.get(label, float("nan")) for label in range(classes)]
        has_ap = [ap for ap in per_class if not np.isnan(ap)]
        mean = float(np.nanmean(per_class)) if has_ap else float("nan")
        if self.class_names is None:
            return "mAP", mean
        named = len(self.class_names)
        values = [aps.get(label, float("nan")) for label in range(named)]
        return [*self.class_names, "mAP"], [*values, mean]


class VOC07MApMetric(VOCMApMetric):
    """Mean average precision by VOC2007's 11-point rule: the mean, over recall 0, 0.1, ...
    1, of the best precision at that recall or beyond."""

    def average_precision(self, recall: np.ndarray | None, precision: np.ndarray) -> float:
        if recall is None:
            return float("nan")
        precision = np.nan_to_num(precision)
        points = [precision[recall >= t].max() if (recall >= t).any() else 0.0 for t in np.arange(0.0, 1.1, 0.1)]
        return float(np.sum(points) / 11.0)


class COCODetectionMetric:
    """COCO box mAP (IoU 0.50:0.95, all areas, 100 detections per image) through pycocotools.

    Detections are collected per image, in the order of ``dataset`` (a
    :class:`~gluon_cv_core.datasets.coco.COCODetection`), then scored by
    ``COCOeval`` against the dataset's annotation file. Boxes are pixel-inclusive corners,
    as the dataset's labels are, so a box's COCO width is ``xmax - xmin + 1`` (GluonCV's
    convention, which its published COCO numbers were computed with).

    Parameters
    ----------
    dataset : the evaluated dataset; it must come from a single annotation file.
    score_thresh : detections scoring below it are dropped before evaluation.
    data_shape : ``(height, width)`` the network saw, when every image was resized to one
        size (SSD, YOLOv3): boxes are scaled back to each original image.
    post_affine : with ``data_shape``, a function ``(orig_w, orig_h, out_w, out_h)`` giving
        the 2x3 map back to the original image, instead of scaling (CenterNet,
        :func:`~gluon_cv_core.detection.presets.centernet_inverse_affine`).
    """

    def __init__(self, dataset: Any, score_thresh: float = 0.05, data_shape: tuple[int, int] | None = None,
                 post_affine: Any = None) -> None:
        if data_shape is not None and len(data_shape) != 2:
            raise ValueError(f"data_shape is (height, width), got {data_shape!r}")
        if post_affine is not None and data_shape is None:
            raise ValueError("post_affine maps boxes from the network's data_shape; give data_shape too")
        self.dataset = dataset
        self._coco = dataset.coco
        self._image_ids = list(dataset.image_ids)
        self.score_thresh = score_thresh
        self._data_shape = data_shape
        self._post_affine = post_affine
        self.reset()

    def reset(self) -> None:
        """Forget every update."""
        self._results: list[dict[str, Any]] = []
        self._seen = 0
        self.coco_eval: Any = None
        self.summary = ""

    def update(self, pred_bboxes: Any, pred_labels: Any, pred_scores: Any, *unused: Any) -> None:
        """Add a batch: per image, boxes ``(N, 4)``, contiguous class ids and scores ``(N,)``
        or ``(N, 1)`` (id -1 marks padding). Images are taken in the dataset's order; the
        ground-truth arguments a validation loop passes along are ignored."""
        boxes_batch, labels_batch, scores_batch = (_numpy(x) for x in (pred_bboxes, pred_labels, pred_scores))
        if self._seen + len(boxes_batch) > len(self._image_ids):
            raise ValueError(f"update() got more images ({self._seen + len(boxes_batch)}) than the dataset "
                             f"has ({len(self._image_ids)}); call reset() between evaluations")
        to_json = self.dataset.contiguous_id_to_json
        for boxes, labels, scores in zip(boxes_batch, labels_batch, scores_batch):
            image_id = self._image_ids[self._seen]
            self._seen += 1
            labels = np.ravel(labels)
            valid = labels >= 0
            boxes = np.asarray(boxes).reshape(len(labels), -1)[valid, :4].astype(np.float64)
            labels, scores = labels[valid].astype(int), np.ravel(scores)[valid].astype(np.float64)
            keep = np.array([label in to_json for label in labels], bool) & (scores >= self.score_thresh)
            boxes, labels, scores = boxes[keep], labels[keep], scores[keep]
            boxes = self._to_original(boxes, image_id)
            boxes[:, 2:4] -= boxes[:, :2] - 1  # inclusive corners -> COCO's x, y, w, h
            self._results.extend(
                {"image_id": image_id, "category_id": to_json[label], "bbox": box.tolist(), "score": score}
                for box, label, score in zip(boxes, labels.tolist(), scores.tolist())
            )

    def _to_original(self, boxes: np.ndarray, image_id: int) -> np.ndarray:
        if self._data_shape is None:
            return boxes
        entry = self._coco.loadImgs(image_id)[0]
        height, width = self._data_shape
        if self._post_affine is None:
            boxes[:, (0, 2)] *= float(entry["width"]) / width
            boxes[:, (1, 3)] *= float(entry["height"]) / height
            return boxes
        matrix = self._post_affine(entry["width"], entry["height"], width, height)
        for corner in (slice(0, 2), slice(2, 4)):
            points = np.ones((len(boxes), 3), np.float32)
            points[:, :2] = boxes[:, corner]
            boxes[:, corner] = (points[:, None, :].astype(np.float64) * matrix[None]).sum(axis=2)
        return boxes

    def _evaluate(self) -> Any:
        if self._seen != len(self._image_ids):
            import warnings

            warnings.warn(f"COCO mAP over {self._seen} of the dataset's {len(self._image_ids)} images; "
                          "the missing ones count as having no detections", stacklevel=3)
        # pycocotools' loadRes cannot take an empty list: one zero-score detection of a
        # category that does not exist stands in, and is never matched
        results = self._results or [{"image_id": self._image_ids[0], "category_id": 0, "bbox": [0, 0, 0, 0],
                                     "score": 0.0}]
        evaluation, self.summary = run_cocoeval(self._coco, results, "bbox")
        self.coco_eval = evaluation
        return evaluation

    def get(self) -> tuple[list[str], list[float]]:
        """``([*class names, "mAP"], [AP per class..., mAP])``, APs over IoU 0.50:0.95;
        a class without ground truth or detections has NaN. ``summary`` and
        ``coco_eval.stats`` hold pycocotools' twelve summary numbers afterwards."""
        evaluation = self._evaluate()
        # precision: (IoU thresholds, recall points, categories, area ranges, max detections)
        precision = evaluation.eval["precision"][:, :, :, 0, -1]
        cat_ids = list(evaluation.params.catIds)
        values = []
        for index in range(len(self.dataset.classes)):
            column = precision[:, :, cat_ids.index(self.dataset.contiguous_id_to_json[index])]
            values.append(float(np.mean(column[column > -1])) if (column > -1).any() else float("nan"))
        valid = precision[precision > -1]
        mean = float(np.mean(valid)) if valid.size else float("nan")
        return [*self.dataset.classes, "mAP"], [*values, mean]


def run_cocoeval(coco: Any, results: list[dict[str, Any]], iou_type: str) -> tuple[Any, str]:
    """pycocotools' evaluation of ``results`` against ``coco`` for ``iou_type`` ("bbox", "segm",
    "keypoints"), its progress lines silenced: ``(COCOeval, printed summary)``. The COCO
    metrics of boxes, masks and keypoints all score through this one call."""
    import contextlib
    import io

    from pycocotools.cocoeval import COCOeval

    # pycocotools >= 2.0.9 copies the file's "info" into the results; custom files may lack it
    coco.dataset.setdefault("info", {})
    with contextlib.redirect_stdout(io.StringIO()):  # progress lines
        evaluation = COCOeval(coco, coco.loadRes(results), iou_type)
        evaluation.evaluate()
        evaluation.accumulate()
    summary = io.StringIO()
    with contextlib.redirect_stdout(summary):
        evaluation.summarize()
    return evaluation, summary.getvalue().strip()
