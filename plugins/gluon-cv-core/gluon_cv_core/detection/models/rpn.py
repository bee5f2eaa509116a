"""Region proposal network of Faster R-CNN (Ren et al., arXiv:1506.01497), GluonCV 0.10's layout.

Anchors are one numpy computation over the whole grid, stored as a constant (GluonCV's
published files carry them) and cropped to the feature map with ``slice_like``; decoding,
clipping and NMS are MXNet operators, so the network hybridizes for any input size.
With several feature maps (FPN) one head is shared by all levels and the proposals of
every level enter a single NMS.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from gluon_hub.compat import mx

nn = mx.gluon.nn
HybridBlock = mx.gluon.HybridBlock


def rpn_base_anchors(stride: int, sizes: Sequence[float], ratios: Sequence[float]) -> np.ndarray:
    """Corner anchors ``(len(ratios) * len(sizes), 4)`` of the cell at the origin, ratio-major.

    Detectron's convention, which the published weights were trained with: a ``stride``-wide
    window centred on ``(stride - 1) / 2``, reshaped to each aspect ratio (``h / w``) with
    rounded sides, then scaled to each size; corners are ``centre -+ (side - 1) / 2``.
    """
    ratios = np.asarray(ratios, dtype=np.float64)
    scales = np.asarray(sizes, dtype=np.float64) / stride
    centre = (stride - 1) / 2.0
    widths = np.round(np.sqrt(stride * stride / ratios))
    heights = np.round(widths * ratios)
    w = (widths[:, None] * scales[None, :]).reshape(-1)
    h = (heights[:, None] * scales[None, :]).reshape(-1)
    return np.stack([centre - 0.5 * (w - 1), centre - 0.5 * (h - 1),
                     centre + 0.5 * (w - 1), centre + 0.5 * (h - 1)], axis=1)


def rpn_anchor_grid(stride: int, sizes: Sequence[float], ratios: Sequence[float],
                    alloc_size: tuple[int, int]) -> np.ndarray:
    """The base anchors shifted to every cell: ``(1, 1, H, W, 4 * depth)`` float32 corners."""
    base = rpn_base_anchors(stride, sizes, ratios)
    height, width = alloc_size
    shift_x = np.arange(width, dtype=np.float64) * stride
    shift_y = np.arange(height, dtype=np.float64) * stride
    shifts = np.zeros((height, width, 1, 4))
    shifts[..., 0::2] = shift_x[None, :, None, None]
    shifts[..., 1::2] = shift_y[:, None, None, None]
    grid = shifts + base[None, None]
    return grid.reshape(1, 1, height, width, -1).astype(np.float32)


class RPNAnchorGenerator(HybridBlock):
    """Anchors of one feature map, cropped to its size: ``(1, H*W*depth, 4)`` corners in pixels."""

    def __init__(self, stride: int, base_size: int, ratios: Sequence[float], scales: Sequence[float] | float,
                 alloc_size: tuple[int, int], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        scales = scales if isinstance(scales, (list, tuple)) else [scales]
        self.num_depth = len(ratios) * len(scales)
        grid = rpn_anchor_grid(stride, [s * base_size for s in scales], ratios, alloc_size)
        self.anchors = self.params.get_constant("anchor_", grid)

    def hybrid_forward(self, F, x, anchors):
        return F.slice_like(anchors, x, axes=(2, 3)).reshape((1, -1, 4))


class RPNHead(HybridBlock):
    """3x3 conv + ReLU, then per-anchor objectness logits and box offsets, flattened per image."""

    def __init__(self, channels: int, num_depth: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        init = mx.init.Normal(0.01)
        with self.name_scope():
            self.conv1 = nn.HybridSequential()
            self.conv1.add(nn.Conv2D(channels, 3, 1, 1, weight_initializer=init), nn.Activation("relu"))
            self.score = nn.Conv2D(num_depth, 1, 1, 0, weight_initializer=init)
            self.loc = nn.Conv2D(num_depth * 4, 1, 1, 0, weight_initializer=init)

    def hybrid_forward(self, F, x):
        x = self.conv1(x)
        raw_scores = self.score(x).transpose(axes=(0, 2, 3, 1)).reshape((0, -1, 1))
        raw_boxes = self.loc(x).transpose(axes=(0, 2, 3, 1)).reshape((0, -1, 4))
        return raw_scores, raw_boxes


def proposals(F, anchors, scores, offsets, image, clip: float | None, min_size: float):
    """Rows ``(score, x1, y1, x2, y2)``: decoded, clipped to the image; small boxes get -1."""
    boxes = F.contrib.box_decode(offsets, anchors, 1.0, 1.0, 1.0, 1.0,
                                 clip=-1.0 if clip is None else float(clip), format="corner")
    size = F.shape_array(image).slice_axis(axis=0, begin=2, end=None)  # (H, W)
    limit = F.cast(F.tile(F.reverse(size, axis=0), reps=(2,)), "float32").reshape((1, 1, 4))
    boxes = F.broadcast_minimum(F.maximum(boxes, 0.0), limit)
    x1, y1, x2, y2 = F.split(boxes, axis=-1, num_outputs=4)
    small = ((x2 - x1 + 1.0) < min_size) + ((y2 - y1 + 1.0) < min_size)
    scores = F.where(small, F.ones_like(small) * -1, scores)
    boxes = F.where(F.broadcast_axes(small, axis=2, size=4), F.ones_like(boxes) * -1, boxes)
    return F.concat(scores, boxes, dim=-1)


class RPN(HybridBlock):
    """Region proposals from one feature map (``strides`` an int) or a pyramid (a sequence).

    In inference returns ``(scores (B, post, 1), boxes (B, post, 4))``; in training also the
    raw objectness logits, raw box offsets and the anchors (a list per level for FPN), which
    the RPN loss needs. ``*_pre_nms`` boxes enter NMS at IoU ``nms_thresh``, the best
    ``*_post_nms`` are kept.
    """

    def __init__(self, channels: int, strides: int | Sequence[int], base_size: int, scales: Sequence[float],
                 ratios: Sequence[float], alloc_size: tuple[int, int], clip: float | None, nms_thresh: float,
                 train_pre_nms: int, train_post_nms: int, test_pre_nms: int, test_post_nms: int,
                 min_size: float, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._multi_level = isinstance(strides, (list, tuple))
        self._clip, self._min_size, self._nms_thresh = clip, min_size, nms_thresh
        self._train = (max(1, train_pre_nms), max(1, train_post_nms))
        self._test = (max(1, test_pre_nms), max(1, test_post_nms))
        with self.name_scope():
            if self._multi_level:
                self.anchor_generator = nn.HybridSequential()
                alloc = alloc_size
                for stride, scale in zip(strides, scales):
                    self.anchor_generator.add(RPNAnchorGenerator(stride, base_size, ratios, scale, alloc))
                    side = max(alloc[0] // 2, 16)
                    alloc = (side, side)
                self.rpn_head = RPNHead(channels, self.anchor_generator[0].num_depth)
            else:
                self.anchor_generator = RPNAnchorGenerator(strides, base_size, ratios, scales, alloc_size)
                depth = self.anchor_generator.num_depth
                # the single-level head's layers sit on the RPN itself in GluonCV's files
                init = mx.init.Normal(0.01)
                self.conv1 = nn.HybridSequential()
                self.conv1.add(nn.Conv2D(channels, 3, 1, 1, weight_initializer=init), nn.Activation("relu"))
                self.score = nn.Conv2D(depth, 1, 1, 0, weight_initializer=init)
                self.loc = nn.Conv2D(depth * 4, 1, 1, 0, weight_initializer=init)

    @property
    def test_post_nms(self) -> int:
        """Proposals per image in inference (the RCNN head's ``N``)."""
        return self._test[1]

    def _head(self, x):
        if self._multi_level:
            return self.rpn_head(x)
        x = self.conv1(x)
        return (self.score(x).transpose(axes=(0, 2, 3, 1)).reshape((0, -1, 1)),
                self.loc(x).transpose(axes=(0, 2, 3, 1)).reshape((0, -1, 4)))

    def hybrid_forward(self, F, image, *features):
        pre_nms, post_nms = self._train if mx.autograd.is_training() else self._test
        generators = self.anchor_generator if self._multi_level else [self.anchor_generator]
        anchors, rows, raw_scores, raw_boxes = [], [], [], []
        for generator, feat in zip(generators, features):
            anchor = generator(feat)
            raw_score, raw_box = self._head(feat)
            with mx.autograd.pause():
                rows.append(proposals(F, anchor, F.sigmoid(F.stop_gradient(raw_score)),
                                      F.stop_gradient(raw_box), image, self._clip, self._min_size))
            anchors.append(anchor)
            raw_scores.append(raw_score)
            raw_boxes.append(raw_box)
        with mx.autograd.pause():
            rows = F.concat(*rows, dim=1) if len(rows) > 1 else rows[0]
            kept = F.contrib.box_nms(rows, overlap_thresh=self._nms_thresh, topk=pre_nms, coord_start=1,
                                     score_index=0, id_index=-1, force_suppress=True)
            # rows of -1 (what NMS writes for suppressed boxes) after the survivors, so a small
            # image with fewer anchors than ``post_nms`` still yields ``post_nms`` rows
            filler = F.broadcast_axis(F.zeros_like(F.slice_axis(kept, axis=1, begin=0, end=1)) - 1,
                                      axis=1, size=post_nms)
            kept = F.slice_axis(F.concat(kept, filler, dim=1), axis=1, begin=0, end=post_nms)
            scores = F.slice_axis(kept, axis=-1, begin=0, end=1)
            boxes = F.slice_axis(kept, axis=-1, begin=1, end=None)
        if not mx.autograd.is_training():
            return scores, boxes
        if self._multi_level:
            return (scores, boxes, F.concat(*raw_scores, dim=1), F.concat(*raw_boxes, dim=1), anchors)
        return scores, boxes, raw_scores[0], raw_boxes[0], anchors[0]


__all__ = ["RPN", "RPNAnchorGenerator", "RPNHead", "proposals", "rpn_anchor_grid", "rpn_base_anchors"]
