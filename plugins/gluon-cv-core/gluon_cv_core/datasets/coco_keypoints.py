"""COCO person keypoints: one item per annotated person, for top-down pose estimation.

Reads ``root/annotations/person_keypoints_<split>.json`` through
:class:`~gluon_cv_core.datasets.coco.COCODetection` (the same JSON checks, image
paths and box clipping), then splits each image's people into items. Which people are kept
follows GluonCV 0.10's ``COCOKeyPoints`` (checked equal in
``tests/pose/test_keypoints_data.py``): crowd annotations, people with no labelled joint,
and boxes that clip to nothing or have no ``area`` are left out.

Invisible joints: COCO marks each joint ``v = 0`` (not labelled), ``1`` (labelled, occluded)
or ``2`` (labelled, visible). A person's unlabelled joints are kept, with visibility 0, so
that heatmap targets weight them out of the loss; labelled joints get visibility 1 whether
occluded or not, as GluonCV's targets use them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from ..common.images import read_image
from ..pose.keypoints import COCO_FLIP_PAIRS, COCO_KEYPOINTS
from .archives import _fetched
from .coco import COCODetection

__all__ = ["COCOKeyPoints", "coco_keypoints"]

NUM_JOINTS = len(COCO_KEYPOINTS)
_ROW = 4 + 3 * NUM_JOINTS  # a person while loading: box corners, then x, y, visibility per joint


class COCOKeyPoints(COCODetection):
    """COCO person keypoints, one item per person: ``(image, label, image_id)``.

    ``label`` is a dict: ``"bbox"``, the person's ``(4,)`` float64 corners ``[xmin, ymin,
    xmax, ymax]`` in pixels (inclusive, clipped to the image, as GluonCV converts COCO's
    ``[x, y, w, h]``), and ``"joints"``, a ``(17, 3)`` float32 array of ``x, y, visibility``
    per joint in :data:`~gluon_cv_core.pose.keypoints.COCO_KEYPOINTS` order, where
    visibility is 1 for a labelled joint and 0 for an unlabelled one (its ``x, y`` are
    whatever the file holds, usually 0).

    Parameters
    ----------
    root : the folder holding ``annotations/`` and the image folders (``val2017/`` ...).
    splits : annotation file names without ``.json``, e.g. ``"person_keypoints_val2017"``.
    transform : called as ``transform(image, label, image_id)`` for each item.
    skip_empty : leave out images without a usable person; otherwise such an image gives
        one item with box ``[-1, -1, 0, 0]`` and all joints zero, as GluonCV does.

    Raises
    ------
    ValueError
        An annotation whose ``keypoints`` are not 17 ``x, y, v`` triples (``v`` in 0, 1, 2),
        or whose box lies wholly outside its image, naming the file and annotation id; and
        the JSON problems :class:`COCODetection` reports.
    """

    num_joints = NUM_JOINTS
    joint_pairs = COCO_FLIP_PAIRS

    def __init__(self, root: str | os.PathLike[str],
                 splits: str | Sequence[str] = ("person_keypoints_val2017",),
                 transform: Callable[[Any, dict[str, np.ndarray], int], Any] | None = None,
                 skip_empty: bool = True) -> None:
        super().__init__(root, splits, skip_empty=skip_empty, use_crowd=False, classes=("person",))
        self._keypoint_transform = transform
        items, image_ids, labels = [], [], []
        for path, image_id, people in zip(self.items, self.image_ids, self.labels):
            if people.shape[1] != _ROW:  # COCODetection's placeholder for an image without people
                people = np.zeros((1, _ROW))
                people[0, :4] = (-1, -1, 0, 0)
            for person in people:
                items.append(path)
                image_ids.append(image_id)
                labels.append(person)
        # one entry per person from here on
        self.items, self.image_ids, self.labels = items, image_ids, labels

    def _label(self, anns: list[dict[str, Any]], entry: dict[str, Any], mapping: dict[int, int],
               path: Path) -> np.ndarray:
        """The usable people of one image, as ``(N, 4 + 51)`` rows."""
        rows = []
        for ann in anns:
            if ann.get("iscrowd", 0):
                continue
            joints = self._joints(ann, path)
            if not joints.any():  # GluonCV: a person whose keypoints are all zero is skipped
                continue
            box = super()._label([ann], entry, mapping, path)  # checks the bbox, clips, drops empty
            if not len(box):
                self._check_inside(ann, entry, path)
                continue
            if not joints[:, 2].any():  # coordinates but no labelled joint
                continue
            joints[:, 2] = np.minimum(joints[:, 2], 1)
            rows.append(np.concatenate([box[0, :4], joints.ravel()]))
        return np.array(rows, dtype=np.float64).reshape(-1, _ROW)

    @staticmethod
    def _joints(ann: dict[str, Any], path: Path) -> np.ndarray:
        values = ann.get("keypoints")
        where = f"{path}: annotation {ann.get('id')} (image {ann.get('image_id')})"
        if not isinstance(values, list) or len(values) != 3 * NUM_JOINTS:
            count = f"{len(values)} values" if isinstance(values, list) else repr(values)
            raise ValueError(f"{where} has keypoints {count}; COCO person keypoints are {NUM_JOINTS} "
                             f"x, y, v triples ({3 * NUM_JOINTS} numbers), v = 0 for an unlabelled joint")
        try:
            joints = np.array(values, dtype=np.float64).reshape(NUM_JOINTS, 3)
        except (TypeError, ValueError):
            raise ValueError(f"{where} has keypoints that are not all numbers") from None
        bad = np.flatnonzero(~np.isin(joints[:, 2], (0, 1, 2)))
        if len(bad):
            raise ValueError(f"{where}: joint {COCO_KEYPOINTS[bad[0]]} has visibility {joints[bad[0], 2]:g}; "
                             "COCO uses 0 (unlabelled), 1 (occluded) or 2 (visible)")
        return joints

    @staticmethod
    def _check_inside(ann: dict[str, Any], entry: dict[str, Any], path: Path) -> None:
        """A box with no pixel in its image is an annotation error; an empty one inside is skipped."""
        x, y, w, h = (float(v) for v in ann["bbox"])
        width, height = entry["width"], entry["height"]
        if x >= width or y >= height or x + w <= 0 or y + h <= 0:
            raise ValueError(f"{path}: annotation {ann.get('id')} has bbox {ann['bbox']} ([x, y, w, h]) wholly "
                             f"outside its {width}x{height} image {entry.get('id')}; fix or remove it")

    def label(self, index: int) -> dict[str, np.ndarray]:
        """The ``{"bbox", "joints"}`` label of item ``index`` (fresh arrays)."""
        row = self.labels[index]
        return {"bbox": row[:4].copy(), "joints": row[4:].reshape(NUM_JOINTS, 3).astype(np.float32)}

    def __getitem__(self, index: int) -> Any:
        image, label, image_id = read_image(self.items[index]), self.label(index), self.image_ids[index]
        if self._keypoint_transform is not None:
            return self._keypoint_transform(image, label, image_id)
        return image, label, image_id


def coco_keypoints(root: str | os.PathLike[str] | None = None, segment: str = "val", *,
                   transform: Callable[[Any, dict[str, np.ndarray], int], Any] | None = None,
                   cache_root: str | os.PathLike[str] | None = None, **kwargs: Any) -> COCOKeyPoints:
    """COCO 2017 person keypoints by segment, ``"train"`` or ``"val"``.

    Without ``root``, the image archive of the segment and the annotation archive (shared
    with the ``coco`` dataset) come through the hash-verified cache, extracted once.
    """
    if segment not in ("train", "val"):
        raise ValueError(f"COCO 2017 keypoints have segments 'train' and 'val', got {segment!r}")
    if root is None:
        # archive order in datasets.json: train2017, val2017, annotations_trainval2017
        root = _fetched("coco", [0 if segment == "train" else 1, 2], cache_root)
    return COCOKeyPoints(root, f"person_keypoints_{segment}2017", transform=transform, **kwargs)
