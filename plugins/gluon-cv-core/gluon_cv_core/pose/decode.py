"""Heatmaps to keypoint coordinates in the image, as GluonCV 0.10 decodes them, vectorized.

Every function takes a batch of heatmaps ``(persons, keypoints, height, width)`` as a numpy
array (or anything ``np.asarray`` reads, such as ``NDArray.asnumpy()``) and returns
``(coords, confidence)``: ``(persons, keypoints, 2)`` x/y image coordinates and
``(persons, keypoints, 1)`` peak heatmap values. A keypoint whose peak is not positive is
reported at heatmap position (0, 0), as GluonCV does, so its confidence is what to
threshold. Checked equal to GluonCV's ``heatmap_to_coord``, ``get_final_preds`` and
``heatmap_to_coord_alpha_pose`` (``gluoncv.data.transforms.pose``) on random heatmaps and
boxes; GluonCV loops over persons and keypoints in Python, these do not.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["heatmap_peaks", "refine_peaks", "heatmap_to_coord", "heatmap_to_coord_affine",
           "heatmap_to_coord_alpha_pose", "upscale_boxes", "person_boxes"]


def _heatmaps(heatmaps: Any) -> np.ndarray:
    maps = np.asarray(heatmaps, dtype=np.float32)
    if maps.ndim != 4:
        raise ValueError(f"heatmaps must be (persons, keypoints, height, width), got shape {maps.shape}")
    return maps


def _boxes(boxes: Any, persons: int) -> np.ndarray:
    array = np.asarray(boxes, dtype=np.float64).reshape(-1, 4) if len(boxes) else np.zeros((0, 4))
    if len(array) != persons:
        raise ValueError(f"got {len(array)} boxes (x0, y0, x1, y1) for {persons} heatmap sets: one per person")
    return array


def heatmap_peaks(heatmaps: Any) -> tuple[np.ndarray, np.ndarray]:
    """The integer ``(x, y)`` of each heatmap's maximum (the first, on ties) and its value;
    ``(0, 0)`` where the maximum is not positive."""
    maps = _heatmaps(heatmaps)
    n, k, _, width = maps.shape
    flat = maps.reshape(n, k, -1)
    index = flat.argmax(axis=2)
    peak = np.take_along_axis(flat, index[..., None], axis=2)
    coords = np.stack([index % width, index // width], axis=-1).astype(np.float32)
    coords *= (peak > 0)
    return coords, peak


def refine_peaks(heatmaps: Any, coords: np.ndarray) -> np.ndarray:
    """``coords`` moved a quarter pixel towards the larger neighbour along x and along y.

    The argmax is only accurate to a heatmap pixel (4 image pixels at stride 4); the quarter
    step halves that error on average. As in GluonCV (and the Simple Baselines code), peaks
    within two pixels of the border are left where they are.
    """
    maps = _heatmaps(heatmaps)
    n, k, height, width = maps.shape
    px = np.floor(coords[..., 0] + 0.5).astype(np.int64)
    py = np.floor(coords[..., 1] + 0.5).astype(np.int64)
    inside = (px > 1) & (px < width - 1) & (py > 1) & (py < height - 1)
    # clipped so that gathering is safe everywhere; the mask discards the clipped ones
    x, y = np.clip(px, 1, width - 2), np.clip(py, 1, height - 2)
    rows, joints = np.arange(n)[:, None], np.arange(k)[None, :]
    dx = maps[rows, joints, y, x + 1] - maps[rows, joints, y, x - 1]
    dy = maps[rows, joints, y + 1, x] - maps[rows, joints, y - 1, x]
    step = np.stack([np.sign(dx), np.sign(dy)], axis=-1) * np.float32(0.25)
    return (coords + step * inside[..., None]).astype(np.float32)


def heatmap_to_coord(heatmaps: Any, boxes: Any, refine: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Keypoints of the persons cropped at ``boxes`` (``(x0, y0, x1, y1)`` each, the crops the
    heatmaps were computed from): heatmap position ``p`` of ``size`` maps to ``x0 + (x1 - x0) * p / size``.

    This is GluonCV's ``heatmap_to_coord`` (its demos' decoding after
    ``detector_to_simple_pose``), which uses the integer peak; ``refine=True`` first applies
    the quarter-pixel step of :func:`refine_peaks`, as GluonCV's evaluation does.
    """
    maps = _heatmaps(heatmaps)
    coords, peak = heatmap_peaks(maps)
    if refine:
        coords = refine_peaks(maps, coords)
    box = _boxes(boxes, len(maps))
    half = (box[:, 2:] - box[:, :2]) / 2
    center = box[:, :2] + half
    ratio = coords / np.array([maps.shape[3], maps.shape[2]], dtype=np.float32)
    preds = (half * 2)[:, None, :].astype(np.float32) * ratio + (center - half)[:, None, :].astype(np.float32)
    return preds.astype(np.float32), peak


def heatmap_to_coord_affine(heatmaps: Any, center: Any, scale: Any) -> tuple[np.ndarray, np.ndarray]:
    """Keypoints of crops given as ``center`` ``(x, y)`` and ``scale`` ``(width, height)`` in
    image pixels, with the quarter-pixel refinement: GluonCV's ``get_final_preds`` (its COCO
    evaluation, after the ``SimplePoseDefaultValTransform`` crop).

    The crop is the similarity that maps ``center`` to the heatmap's centre and ``scale[0]``
    image pixels to the heatmap's width (the height follows the aspect ratio); this applies
    its inverse.
    """
    maps = _heatmaps(heatmaps)
    coords, peak = heatmap_peaks(maps)
    coords = refine_peaks(maps, coords)
    height, width = maps.shape[2:]
    centers = np.asarray(center, dtype=np.float64).reshape(-1, 2)
    widths = np.asarray(scale, dtype=np.float64).reshape(len(centers), -1)[:, 0]
    pixels = (widths / width)[:, None, None]
    preds = centers[:, None, :] + (coords - np.array([width / 2, height / 2])) * pixels
    return preds.astype(np.float32), peak


def heatmap_to_coord_alpha_pose(heatmaps: Any, boxes: Any) -> tuple[np.ndarray, np.ndarray]:
    """Keypoints of AlphaPose crops, with the quarter-pixel refinement: GluonCV's
    ``heatmap_to_coord_alpha_pose`` after ``detector_to_alpha_pose``.

    AlphaPose pads each box ``(x0, y0, x1, y1)`` to the heatmap's aspect ratio (centred, as its
    cropper does) before resizing, so coordinates scale by the padded height and shift back by
    the padding.
    """
    maps = _heatmaps(heatmaps)
    coords, peak = heatmap_peaks(maps)
    coords = refine_peaks(maps, coords)
    height, width = maps.shape[2:]
    box = _boxes(boxes, len(maps)).astype(np.float32)
    top_left, bottom_right = box[:, :2], box[:, 2:]
    half = (bottom_right - 1 - top_left) / 2
    size_h = np.maximum(bottom_right[:, 1] - top_left[:, 1], (bottom_right[:, 0] - top_left[:, 0]) * height / width)
    size_w = size_h * width / height
    padding = np.stack([(size_w - 1) / 2 - half[:, 0], (size_h - 1) / 2 - half[:, 1]], axis=-1)
    preds = coords * (size_h / height)[:, None, None] - np.maximum(padding, 0)[:, None, :] + top_left[:, None, :]
    return preds.astype(np.float32), peak


def upscale_boxes(boxes: Any, image_shape: tuple[int, ...], scale: float = 1.25) -> np.ndarray:
    """Boxes ``(x0, y0, x1, y1)`` grown ``scale`` times about their centres and clipped to the
    image (``image_shape`` is ``(height, width, ...)``): the crop margin GluonCV's
    ``detector_to_simple_pose`` gives a detected person so that limbs stay in view."""
    box = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    center = (box[:, :2] + box[:, 2:]) / 2
    half = (box[:, 2:] - box[:, :2]) / 2 * scale
    low = np.maximum(center - half, 0)
    high = np.minimum(center + half, np.array([image_shape[1], image_shape[0]], dtype=np.float64))
    return np.concatenate([low, high], axis=1)


def person_boxes(class_ids: Any, scores: Any, boxes: Any, threshold: float = 0.5,
                 person_class: int = 0) -> np.ndarray:
    """The boxes of one image's detections of ``person_class`` scoring at least ``threshold``,
    in detection order: the persons ``detector_to_simple_pose`` hands to the pose network.

    Takes a detector's three outputs for one image (``(N, 1)``, ``(N, 1)``, ``(N, 4)``; a
    leading batch axis of one is accepted).
    """
    ids = np.asarray(class_ids).reshape(-1)
    keep = (ids == person_class) & (np.asarray(scores).reshape(-1) >= threshold)
    return np.asarray(boxes, dtype=np.float64).reshape(-1, 4)[keep]
