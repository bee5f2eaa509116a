"""The SiamRPN tracking loop in numpy: GluonCV 0.10's ``SiamRPNTracker`` arithmetic, frame for frame.

:meth:`SiamRPNLoop.init` crops the target with context (``context_amount`` of its
perimeter on each axis, a square of side ``s_z``), scales it to 127x127 and keeps its
template. Each :meth:`SiamRPNLoop.update` crops a square ``s_z * 287 / 127`` wide around the
last position, scales it to 287x287 and scores the 5 anchors (aspect ratios 0.33 to 3, 64
pixels of area at stride 8) at each of the 21x21 positions. Each proposal's score is lowered
by a penalty on its change of scale and aspect ratio (``penalty_k``) and mixed with a cosine
window around the last position (``window_influence``); the best one moves the target, and
its size is blended into the old one at a rate of ``lr`` times its penalised score. Crops that
leave the frame are padded with the frame's mean colour.

Frames are RGB (what decord gives); the network sees them in BGR channel order, as GluonCV's
tracker (fed by OpenCV) gave them to the published weights. This module imports no mxnet: the
network and the crops' resize are a subclass's (:class:`~.tracker.SiamRPNTracker` in MXNet,
:class:`~.onnx_runner.ObjectTracker` in onnxruntime), so both runtimes run this same loop.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

__all__ = ["SiamRPNLoop", "TrackedBox", "anchor_grid"]


@dataclass(frozen=True)
class TrackedBox:
    """The target in one frame: ``box`` as (x0, y0, x1, y1) pixels and the network's ``score``
    (probability that the chosen anchor is the target) for that frame; 1.0 on the first frame."""

    box: tuple[float, float, float, float]
    score: float

    @property
    def xywh(self) -> tuple[float, float, float, float]:
        """(x, y, width, height), the layout of OTB's ground truth."""
        x0, y0, x1, y1 = self.box
        return x0, y0, x1 - x0, y1 - y0

    def as_json(self) -> dict[str, Any]:
        return {"box": [round(v, 2) for v in self.box], "score": self.score}


def anchor_grid(score_size: int, stride: int, ratios: Sequence[float], scales: Sequence[float]) -> np.ndarray:
    """``(4, A * S * S)`` float32 anchors (centre x, centre y, width, height) relative to the crop's
    centre, anchor-major then row then column: the order the network's outputs flatten to."""
    shapes = []
    for ratio in ratios:
        base_w = int(math.sqrt(stride * stride / ratio))  # truncated, as GluonCV and pysot do
        base_h = int(base_w * ratio)
        shapes.extend((base_w * scale, base_h * scale) for scale in scales)
    offsets = (np.arange(score_size) - score_size // 2) * stride
    ys, xs = np.meshgrid(offsets, offsets, indexing="ij")
    count = len(shapes)
    grid = np.empty((4, count, score_size, score_size), dtype=np.float32)
    grid[0], grid[1] = xs, ys
    for k, (w, h) in enumerate(shapes):
        grid[2, k], grid[3, k] = w, h
    return grid.reshape(4, -1)


class SiamRPNLoop(ABC):
    """The tracker's state and arithmetic; a subclass runs the network.

    Subclasses give :meth:`network_input` (a square ``uint8`` BGR patch resized to the
    network's input), :meth:`template` (what the search crops are scored against) and
    :meth:`scores` (the ``cls`` and ``loc`` outputs of a search crop, as numpy).

    Parameters
    ----------
    penalty_k, window_influence, lr : GluonCV's tracking hyper-parameters for the published weights.
    exemplar_size, instance_size : sides of the template and search crops.
    context_amount : context added around the target, as a fraction of its width plus height.
    stride, ratios, scales : the anchors; the network's outputs must have ``len(ratios) * len(scales)``.
    """

    def __init__(self, penalty_k: float = 0.16, window_influence: float = 0.40, lr: float = 0.30,
                 exemplar_size: int = 127, instance_size: int = 287, context_amount: float = 0.5,
                 stride: int = 8, ratios: Sequence[float] = (0.33, 0.5, 1, 2, 3),
                 scales: Sequence[float] = (8,)) -> None:
        self.penalty_k, self.window_influence, self.lr = penalty_k, window_influence, lr
        self.exemplar_size, self.instance_size = exemplar_size, instance_size
        self.context_amount = context_amount
        self.score_size = (instance_size - exemplar_size) // stride + 1
        self.anchors = anchor_grid(self.score_size, stride, ratios, scales)
        hanning = np.hanning(self.score_size)
        self.window = np.tile(np.outer(hanning, hanning).ravel(), len(ratios) * len(scales))
        # the target's centre and size in frame pixels and the first frame's mean colour, set by init
        self._center, self._size, self._mean_colour = np.zeros(2), np.ones(2), np.zeros(3)
        self._template: Any = None

    @abstractmethod
    def network_input(self, patch: np.ndarray, out_size: int) -> Any:
        """``patch`` (side x side x 3 ``uint8`` BGR) resized to ``out_size`` as the network's
        ``(1, 3, out_size, out_size)`` float32 input."""

    @abstractmethod
    def template(self, crop: Any) -> Any:
        """What :meth:`scores` compares search crops with, from the template crop."""

    @abstractmethod
    def scores(self, crop: Any, template: Any) -> tuple[np.ndarray, np.ndarray]:
        """The network's ``cls`` ``(1, 2A, S, S)`` and ``loc`` ``(1, 4A, S, S)`` for a search crop."""

    def init(self, frame: np.ndarray, box: Sequence[float]) -> TrackedBox:
        """Start tracking the object in ``box`` (x0, y0, x1, y1) of ``frame`` (H x W x 3 RGB uint8)."""
        frame = self._bgr(frame)
        x0, y0, x1, y1 = (float(v) for v in box)
        width, height = x1 - x0, y1 - y0
        if not (width > 0 and height > 0):
            raise ValueError(f"the initial box {tuple(box)} is empty: give (x0, y0, x1, y1) with x1 > x0 and y1 > y0")
        self._center = np.array([x0 + (width - 1) / 2, y0 + (height - 1) / 2])
        self._size = np.array([width, height])
        self._mean_colour = frame.mean(axis=(0, 1))
        crop = self.crop(frame, self.exemplar_size, round(self._context_side()))
        self._template = self.template(crop)
        return TrackedBox((x0, y0, x1, y1), 1.0)

    def update(self, frame: np.ndarray) -> TrackedBox:
        """The object's box in the next ``frame`` (H x W x 3 RGB uint8)."""
        if self._template is None:
            raise RuntimeError("call init(first_frame, box) before update(frame)")
        frame = self._bgr(frame)
        side = self._context_side()
        scale = self.exemplar_size / side  # crop pixels per frame pixel
        crop = self.crop(frame, self.instance_size, round(side * (self.instance_size / self.exemplar_size)))
        cls, loc = self.scores(crop, self._template)
        logits = np.asarray(cls)[0].reshape(2, -1)
        score = 1.0 / (1.0 + np.exp(logits[0] - logits[1]))  # softmax over (background, target)
        delta = np.asarray(loc)[0].reshape(4, -1)
        anchors = self.anchors
        boxes = np.stack([delta[0] * anchors[2] + anchors[0], delta[1] * anchors[3] + anchors[1],
                          np.exp(delta[2]) * anchors[2], np.exp(delta[3]) * anchors[3]])

        def _ratio_change(r):
            return np.maximum(r, 1.0 / r)

        def _padded_side(w, h):
            pad = (w + h) * 0.5
            return np.sqrt((w + pad) * (h + pad))

        scale_change = _ratio_change(_padded_side(boxes[2], boxes[3]) /
                                     _padded_side(self._size[0] * scale, self._size[1] * scale))
        aspect_change = _ratio_change((self._size[0] / self._size[1]) / (boxes[2] / boxes[3]))
        penalty = np.exp(-(aspect_change * scale_change - 1) * self.penalty_k)
        ranked = penalty * score * (1 - self.window_influence) + self.window * self.window_influence
        best = int(np.argmax(ranked))
        dx, dy, w, h = boxes[:, best] / scale
        rate = penalty[best] * score[best] * self.lr
        frame_h, frame_w = frame.shape[:2]
        cx = max(0.0, min(float(self._center[0] + dx), frame_w))
        cy = max(0.0, min(float(self._center[1] + dy), frame_h))
        width = max(10.0, min(float(self._size[0] * (1 - rate) + w * rate), frame_w))
        height = max(10.0, min(float(self._size[1] * (1 - rate) + h * rate), frame_h))
        self._center, self._size = np.array([cx, cy]), np.array([width, height])
        return TrackedBox((cx - width / 2, cy - height / 2, cx + width / 2, cy + height / 2), float(score[best]))

    def _context_side(self) -> float:
        """Side of the square around the target that the template shows, in frame pixels."""
        context = self.context_amount * float(np.sum(self._size))
        return float(np.sqrt((self._size[0] + context) * (self._size[1] + context)))

    @staticmethod
    def _bgr(frame: np.ndarray) -> np.ndarray:
        frame = np.asarray(frame)
        if frame.ndim != 3 or frame.shape[2] != 3 or frame.dtype != np.uint8:
            raise ValueError(f"a frame must be height x width x 3 uint8 RGB, got {frame.dtype} {frame.shape}")
        return frame[:, :, ::-1]

    def patch(self, frame: np.ndarray, side: float) -> np.ndarray:
        """The ``side`` x ``side`` square of ``frame`` (BGR) centred on the target, padded with the
        first frame's mean colour where it leaves the frame (``uint8``)."""
        side = int(side)
        frame_h, frame_w = frame.shape[:2]
        left = int(np.floor(self._center[0] - (side + 1) / 2 + 0.5))
        top = int(np.floor(self._center[1] - (side + 1) / 2 + 0.5))
        if left >= 0 and top >= 0 and left + side <= frame_w and top + side <= frame_h:
            return np.ascontiguousarray(frame[top:top + side, left:left + side])
        # the padding is the mean colour cast to uint8 (truncated), as GluonCV fills it
        patch = np.empty((side, side, 3), dtype=np.uint8)
        patch[:] = self._mean_colour.astype(np.uint8)
        x0, y0 = max(left, 0), max(top, 0)
        x1, y1 = min(left + side, frame_w), min(top + side, frame_h)
        if x1 > x0 and y1 > y0:
            patch[y0 - top:y1 - top, x0 - left:x1 - left] = frame[y0:y1, x0:x1]
        return patch

    def crop(self, frame: np.ndarray, out_size: int, side: float) -> Any:
        """The network input of the ``side`` x ``side`` square around the target, at ``out_size``."""
        return self.network_input(self.patch(frame, side), out_size)
