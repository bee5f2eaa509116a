"""COCO box and mask AP for instance segmentation (Mask R-CNN), through pycocotools.

AP is not reimplemented: detections are encoded as COCO results (masks as RLE by
``pycocotools.mask``) and scored by ``COCOeval`` for ``"bbox"`` and ``"segm"``, the
implementation COCO results are reported with. The conventions are those of GluonCV 0.10's
``COCOInstanceMetric``, with which its published Mask R-CNN numbers were computed: boxes are
``[x1, y1, x2, y2]`` with COCO width ``x2 - x1`` (not pixel-inclusive, unlike
:class:`~gluon_cv_core.detection.metrics.COCODetectionMetric`), coordinates rounded to
2 decimals and scores to 3. Checked equal to GluonCV's metric on a generated COCO instance
file in ``tests/detection/test_instance_metrics.py``.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .metrics import _numpy, run_cocoeval

__all__ = ["COCOInstanceMetric"]

IOU_TYPES = ("bbox", "segm")


class COCOInstanceMetric:
    """COCO box and mask mAP (IoU 0.50:0.95, all areas, 100 detections per image).

    One :meth:`update` per image, because each image's masks have that image's size.

    Parameters
    ----------
    dataset : the evaluated :class:`~gluon_cv_core.datasets.coco.COCOInstance`
        (anything with ``coco``, ``image_ids`` and ``contiguous_id_to_json``).
    score_thresh : detections scoring below it are dropped (GluonCV's default, 0.001).
    mask_thresh : with ``box_masks=True``, the probability above which a pixel is inside.
    """

    def __init__(self, dataset: Any, score_thresh: float = 1e-3, mask_thresh: float = 0.5) -> None:
        self.dataset = dataset
        self._coco = dataset.coco
        self._image_ids = list(dataset.image_ids)
        self._known = set(self._image_ids)
        self.score_thresh = score_thresh
        self.mask_thresh = mask_thresh
        self.reset()

    def reset(self) -> None:
        """Forget every update."""
        self._results: dict[str, list[dict[str, Any]]] = {kind: [] for kind in IOU_TYPES}
        self._done: set[int] = set()
        self._next = 0
        self.coco_eval: dict[str, Any] = {}
        self.summary: dict[str, str] = {}

    def update(self, pred_bboxes: Any, pred_labels: Any, pred_scores: Any, pred_masks: Any,
               image_id: int | None = None, box_masks: bool = False) -> None:
        """Add one image's detections.

        Parameters
        ----------
        pred_bboxes : ``(N, 4)`` corner boxes on the original image.
        pred_labels : ``(N,)`` or ``(N, 1)`` contiguous class ids; -1 marks padding.
        pred_scores : ``(N,)`` or ``(N, 1)``.
        pred_masks : ``(N, H, W)`` binary masks of the original ``H x W`` image, or with
            ``box_masks=True`` the network's ``(N, M, M)`` mask probabilities over each box,
            pasted onto the image by :func:`~gluon_cv_core.detection.models.mask_rcnn.paste_masks`.
        image_id : the COCO image id; by default the next image in the dataset's order.
        """
        boxes, labels, scores, masks = (_numpy(x) for x in (pred_bboxes, pred_labels, pred_scores, pred_masks))
        image_id = self._take(image_id)
        entry = self._coco.loadImgs(image_id)[0]
        size = (int(entry["height"]), int(entry["width"]))
        labels, scores = np.ravel(labels), np.ravel(scores)
        if boxes.ndim != 2 or boxes.shape[1] < 4 or not len(boxes) == len(labels) == len(scores) == len(masks):
            raise ValueError(f"image {image_id}: update() needs (N, 4) boxes and N labels, scores and masks, got "
                             f"boxes {boxes.shape}, labels {labels.shape}, scores {scores.shape}, masks {masks.shape}")
        if box_masks:
            if masks.ndim != 3 or masks.shape[1] != masks.shape[2]:
                raise ValueError(f"image {image_id}: box_masks=True needs (N, M, M) masks, got {masks.shape}")
        elif masks.shape[1:] != size:
            raise ValueError(f"image {image_id}: masks {masks.shape} are not (N, {size[0]}, {size[1]}), the image's "
                             "size; paste them onto the original image, or pass box_masks=True with the "
                             "network's (N, M, M) masks and boxes on the original image")
        to_json = self.dataset.contiguous_id_to_json
        keep = np.array([label in to_json for label in labels.tolist()], bool) & (scores >= self.score_thresh)
        boxes = boxes[keep, :4].astype(np.float64)
        labels, scores, masks = labels[keep].astype(int), scores[keep], masks[keep]
        if box_masks:
            from .masks import paste_masks

            masks = paste_masks(masks, boxes, size, self.mask_thresh)
        self._done.add(image_id)
        if not len(labels):
            return
        from pycocotools import mask as coco_mask

        rles = coco_mask.encode(np.asfortranarray(np.moveaxis(masks, 0, -1).astype(np.uint8) > 0))
        boxes[:, 2:4] -= boxes[:, :2]  # corners -> COCO's x, y, w, h
        for box, label, score, rle in zip(boxes, labels.tolist(), scores.tolist(), rles):
            common = {"image_id": image_id, "category_id": to_json[label], "score": round(float(score), 3)}
            rle["counts"] = rle["counts"].decode("ascii")
            self._results["bbox"].append({**common, "bbox": [round(float(v), 2) for v in box]})
            self._results["segm"].append({**common, "segmentation": rle})

    def _take(self, image_id: int | None) -> int:
        """The image an update is for, checked against the dataset and earlier updates."""
        if image_id is None:
            while self._next < len(self._image_ids) and self._image_ids[self._next] in self._done:
                self._next += 1
            if self._next == len(self._image_ids):
                raise ValueError(f"update() got more images than the dataset has ({len(self._image_ids)}); "
                                 "call reset() between evaluations")
            return self._image_ids[self._next]
        image_id = int(image_id)
        if image_id not in self._known:
            raise ValueError(f"image id {image_id} is not in the evaluated dataset "
                             f"({len(self._image_ids)} images, ids {self._image_ids[:5]}...)")
        if image_id in self._done:
            raise ValueError(f"image {image_id} was already updated; call reset() between evaluations")
        return image_id

    def _evaluate(self, iou_type: str) -> Any:
        results = [dict(r) for r in self._results[iou_type]]  # loadRes adds keys to what it gets
        if not results:
            # loadRes cannot take an empty list: one zero-score detection of a category
            # that does not exist stands in, and is never matched
            from pycocotools import mask as coco_mask

            entry = self._coco.loadImgs(self._image_ids[0])[0]
            empty = coco_mask.encode(np.zeros((entry["height"], entry["width"], 1), np.uint8, order="F"))[0]
            empty["counts"] = empty["counts"].decode("ascii")
            results = [{"image_id": self._image_ids[0], "category_id": 0, "score": 0.0,
                        **({"bbox": [0, 0, 0, 0]} if iou_type == "bbox" else {"segmentation": empty})}]
        evaluation, self.summary[iou_type] = run_cocoeval(self._coco, results, iou_type)
        self.coco_eval[iou_type] = evaluation
        return evaluation

    def get(self) -> tuple[list[str], list[float]]:
        """``(["bbox mAP", "segm mAP"], [box AP, mask AP])``, APs over IoU 0.50:0.95 in
        ``[0, 1]`` (NaN without ground truth). ``summary[kind]`` and
        ``coco_eval[kind].stats`` hold pycocotools' twelve summary numbers afterwards."""
        if len(self._done) != len(self._image_ids):
            warnings.warn(f"COCO mAP over {len(self._done)} of the dataset's {len(self._image_ids)} images; "
                          "the missing ones count as having no detections", stacklevel=2)
        values = []
        for iou_type in IOU_TYPES:
            # precision: (IoU thresholds, recall points, categories, area ranges, max detections)
            precision = self._evaluate(iou_type).eval["precision"][:, :, :, 0, -1]
            valid = precision[precision > -1]
            values.append(float(np.mean(valid)) if valid.size else float("nan"))
        return [f"{kind} mAP" for kind in IOU_TYPES], values
