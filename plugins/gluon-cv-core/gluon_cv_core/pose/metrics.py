"""COCO keypoint AP (object keypoint similarity, OKS) through pycocotools.

OKS AP is not reimplemented: :class:`COCOKeyPointsMetric` writes the predictions in COCO's
results format and hands them to ``pycocotools``' ``COCOeval(iouType="keypoints")``, the
implementation COCO keypoint results are reported with. Each person's score is GluonCV
0.10's rescoring (its detector score times the mean confidence of the joints above
``in_vis_thresh``); the numbers were checked equal to GluonCV's ``COCOKeyPointsMetric`` on
a generated COCO keypoints file in ``tests/pose/test_keypoints_data.py``.
"""

from __future__ import annotations

import json
import os
import warnings
from typing import Any

import numpy as np

from ..detection.metrics import _numpy, run_cocoeval

__all__ = ["COCOKeyPointsMetric", "STAT_NAMES"]

#: pycocotools' ten keypoint summary numbers, in ``COCOeval.stats`` order
STAT_NAMES = ("AP", "AP .5", "AP .75", "AP (M)", "AP (L)", "AR", "AR .5", "AR .75", "AR (M)", "AR (L)")


class COCOKeyPointsMetric:
    """OKS AP and AR over a COCO keypoints dataset's annotation file.

    Parameters
    ----------
    dataset : the evaluated :class:`~gluon_cv_core.datasets.coco_keypoints.COCOKeyPoints` (one
        annotation file); its ``coco`` object holds the ground truth.
    in_vis_thresh : joints with a lower confidence do not count in a person's score.

    After :meth:`get`, ``coco_eval`` is pycocotools' evaluation and ``summary`` its printout;
    ``results`` is the results JSON (a list of ``{"image_id", "category_id", "keypoints",
    "score"}``) at any time, and :meth:`save` writes it.
    """

    def __init__(self, dataset: Any, in_vis_thresh: float = 0.2) -> None:
        self.dataset = dataset
        self._coco = dataset.coco
        self._category = dataset.contiguous_id_to_json[0]
        self.in_vis_thresh = in_vis_thresh
        self.reset()

    def reset(self) -> None:
        """Forget every update."""
        self.results: list[dict[str, Any]] = []
        self.coco_eval: Any = None
        self.summary = ""

    def update(self, coords: Any, confidence: Any, scores: Any, image_ids: Any) -> None:
        """Add a batch of people: ``coords`` ``(N, joints, 2)`` x/y in the original image,
        ``confidence`` ``(N, joints)`` or ``(N, joints, 1)`` (the heatmap peaks
        :mod:`~gluon_cv_core.pose.decode` returns), the person detector's ``scores``
        ``(N,)`` and the COCO ``image_ids`` ``(N,)``. NDArrays or numpy arrays."""
        coords, confidence = _numpy(coords).astype(np.float64), _numpy(confidence).astype(np.float64)
        scores, image_ids = np.ravel(_numpy(scores)).astype(np.float64), np.ravel(_numpy(image_ids))
        people = len(coords)
        if coords.ndim != 3 or coords.shape[2] != 2:
            raise ValueError(f"coords must be (persons, joints, 2), got shape {coords.shape}")
        confidence = confidence.reshape(people, -1) if people else confidence.reshape(0, coords.shape[1])
        if confidence.shape != coords.shape[:2] or len(scores) != people or len(image_ids) != people:
            raise ValueError(f"update() needs one confidence per joint and one score and image id per person: "
                             f"coords {coords.shape}, confidence {confidence.shape}, "
                             f"scores {scores.shape}, image_ids {image_ids.shape}")
        counted = confidence > self.in_vis_thresh
        totals = np.where(counted, confidence, 0.0).sum(axis=1)
        number = counted.sum(axis=1)
        joint_score = np.divide(totals, number, out=np.zeros_like(totals), where=number > 0)
        triples = np.concatenate([coords, confidence[:, :, None]], axis=2).reshape(people, -1)
        self.results.extend(
            {"image_id": int(image_id), "category_id": self._category, "keypoints": row.tolist(),
             "score": float(rescore)}
            for image_id, row, rescore in zip(image_ids, triples, joint_score * scores)
        )

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the results JSON (COCO's keypoint results format) to ``path``."""
        with open(path, "w", encoding="utf-8") as out:
            json.dump(self.results, out)

    def _evaluate(self) -> Any:
        if not self.results:
            warnings.warn("COCO keypoint AP of no predictions is 0; call update() first", stacklevel=3)
        # pycocotools' loadRes cannot take an empty list: one zero-score person of a category
        # that does not exist stands in, and is never matched
        results = self.results or [{"image_id": int(self._coco.getImgIds()[0]), "category_id": -1,
                                    "keypoints": [0.0] * 3 * self.dataset.num_joints, "score": 0.0}]
        evaluation, self.summary = run_cocoeval(self._coco, results, "keypoints")
        self.coco_eval = evaluation
        return evaluation

    def get(self) -> tuple[list[str], list[float]]:
        """``(STAT_NAMES, values)``: OKS AP over 0.50:0.95, AP at 0.5 and 0.75, AP of medium
        and large people, then the same for AR (pycocotools' ``stats``)."""
        evaluation = self._evaluate()
        return list(STAT_NAMES), [float(v) for v in evaluation.stats[: len(STAT_NAMES)]]
