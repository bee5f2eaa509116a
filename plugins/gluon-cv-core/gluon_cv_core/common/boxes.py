"""Box and anchor machinery shared by the detectors, as vectorized MXNet operators.

Anchors are computed once with numpy over a whole grid (no loop over boxes) and stored
as constant parameters large enough for big inputs; the forward pass crops them to the
feature map with ``slice_like``, so a hybridized detector accepts any input size and
exports to a symbol file. Decoding and non-maximum suppression go through MXNet's
``contrib`` operators. Constant names and shapes are GluonCV 0.10's, because its
published ``.params`` files carry the anchors too.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from gluon_hub.compat import mx

HybridBlock = mx.gluon.HybridBlock


def ssd_anchor_grid(sizes: tuple[float, float], ratios: Sequence[float], step: float,
                    alloc_size: tuple[int, int], first_layer_lite: bool | None = None,
                    offsets: tuple[float, float] = (0.5, 0.5)) -> np.ndarray:
    """SSD anchors ``(1, 1, H, W, 4 * depth)`` as centre-x, centre-y, width, height, in pixels.

    Per cell: the ``sizes[0]`` square, the ``sqrt(sizes[0] * sizes[1])`` square, then one box
    of area ``sizes[0]**2`` per extra ratio (SSD, arXiv:1512.02325). ``first_layer_lite``
    selects the TF-detection-API layout of ``ssd_300_mobilenet1.0_lite``: ``True`` for its
    first layer (half-size square, no geometric-mean square), ``False`` for the others
    (geometric-mean square last); ``None`` is the standard layout.
    """
    small, large = float(sizes[0]), float(np.sqrt(sizes[0] * sizes[1]))
    extra = [(small * np.sqrt(r), small / np.sqrt(r)) for r in ratios[1:]]
    if first_layer_lite is None:
        shapes = [(small, small), (large, large), *extra]
    elif first_layer_lite:
        shapes = [(small / 2, small / 2), *extra]
    else:
        shapes = [(small / 2, small / 2), *extra, (large, large)]
    height, width = alloc_size
    cy = (np.arange(height) + offsets[0]) * step
    cx = (np.arange(width) + offsets[1]) * step
    grid = np.empty((height, width, len(shapes), 4))
    grid[..., 0] = cx[None, :, None]
    grid[..., 1] = cy[:, None, None]
    grid[..., 2:] = np.asarray(shapes)[None, None]
    return grid.reshape(1, 1, height, width, -1)


class SSDAnchorGenerator(HybridBlock):
    """The anchors of one SSD output layer, cropped to its feature map: ``(1, H*W*depth, 4)``."""

    def __init__(self, index: int, sizes: tuple[float, float], ratios: Sequence[float], step: float,
                 alloc_size: tuple[int, int] = (128, 128), lite: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        layout = (index == 0) if lite else None
        anchors = ssd_anchor_grid(sizes, ratios, step, alloc_size, layout)
        self.num_depth = anchors.shape[-1] // 4
        self.anchors = self.params.get_constant(f"anchor_{index}", anchors)

    def hybrid_forward(self, F, x, anchors):
        return F.slice_like(anchors, x, axes=(2, 3)).reshape((1, -1, 4))


def yolo_offset_grid(alloc_size: tuple[int, int]) -> np.ndarray:
    """Cell offsets ``(1, 1, H, W, 2)`` holding (x, y) of each cell, for YOLO box centres."""
    height, width = alloc_size
    grid = np.empty((height, width, 2))
    grid[..., 0] = np.arange(width)[None, :]
    grid[..., 1] = np.arange(height)[:, None]
    return grid.reshape(1, 1, height, width, 2)


def decode_center_boxes(F, box_preds, anchors, stds: Sequence[float]):
    """Corner boxes from offsets normalized by centre-format anchors (SSD's box coder)."""
    return F.contrib.box_decode(box_preds, anchors, *[float(s) for s in stds], clip=-1,
                                format="center")


def per_class_detections(F, class_scores, boxes, num_classes: int, thresh: float | None):
    """Rows ``(class id, score, x1, y1, x2, y2)``, one per (class, box), classes outermost.

    ``class_scores`` is ``(B, N, num_classes)`` without background; ``boxes`` ``(B, N, 4)``.
    Scores at or below ``thresh`` get id -1 and score 0, which NMS then ignores; with
    ``thresh=None`` every row keeps its class (YOLOv3 leaves the cut to NMS).
    """
    scores = F.transpose(class_scores, axes=(0, 2, 1))  # (B, C, N)
    ids = F.broadcast_add(F.zeros_like(scores), F.arange(num_classes).reshape((1, -1, 1)))
    if thresh is not None:
        keep = scores > thresh
        ids = F.where(keep, ids, F.ones_like(ids) * -1)
        scores = F.where(keep, scores, F.zeros_like(scores))
    tiled = F.broadcast_like(boxes.expand_dims(axis=1), scores.expand_dims(axis=-1), lhs_axes=(1,),
                             rhs_axes=(1,))
    rows = F.concat(ids.expand_dims(axis=-1), scores.expand_dims(axis=-1), tiled, dim=-1)
    return rows.reshape((0, -3, 6))


def nms_split(F, rows, nms_thresh: float, nms_topk: int, post_nms: int):
    """Per-class NMS over detection rows, then ``(ids, scores, boxes)``.

    NMS runs only for ``0 < nms_thresh < 1`` and keeps the first ``post_nms`` rows when
    ``post_nms > 0``, so users can switch either off as in GluonCV's ``set_nms``.
    """
    if 0 < nms_thresh < 1:
        rows = F.contrib.box_nms(rows, overlap_thresh=nms_thresh, topk=nms_topk, valid_thresh=0.01,
                                 id_index=0, score_index=1, coord_start=2, force_suppress=False)
        if post_nms > 0:
            rows = rows.slice_axis(axis=1, begin=0, end=post_nms)
    return (rows.slice_axis(axis=-1, begin=0, end=1), rows.slice_axis(axis=-1, begin=1, end=2),
            rows.slice_axis(axis=-1, begin=2, end=6))


def class_index_map(reuse_weights: Any, old_classes: Sequence[str], new_classes: Sequence[str]) -> dict[int, int]:
    """``{new index: old index}`` from a dict of names or indices, or a list of kept names."""
    old_classes, new_classes = list(old_classes), list(new_classes)
    if reuse_weights is None:
        return {}

    def index(value: Any, classes: list[str], which: str) -> int:
        if isinstance(value, str):
            if value not in classes:
                raise ValueError(f"{value!r} is not one of the {which} classes {classes}")
            return classes.index(value)
        if not 0 <= int(value) < len(classes):
            raise ValueError(f"class index {value} is out of range for the {len(classes)} {which} classes")
        return int(value)

    if isinstance(reuse_weights, dict):
        return {index(k, new_classes, "new"): index(v, old_classes, "old") for k, v in reuse_weights.items()}
    if isinstance(reuse_weights, (list, tuple)):
        missing = [c for c in reuse_weights if c not in old_classes or c not in new_classes]
        if missing:
            raise ValueError(f"reuse_weights names {missing} are not in both the old classes "
                             f"{old_classes} and the new classes {new_classes}")
        return {new_classes.index(c): old_classes.index(c) for c in reuse_weights}
    raise TypeError(f"reuse_weights must be a dict or a list of class names, got {type(reuse_weights).__name__}")
