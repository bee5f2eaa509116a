"""The ONNX runner of semantic segmentation: class maps at image size and their colour picture, without MXNet.

``gluon_hub.runtime.load(name)`` builds :class:`Segmenter` for every semantic-segmentation model
(their specs name it as ``runner``). It is ``predict``'s recipe in numpy: the whole image at its
own size, ``to_tensor`` and the model's mean/std, the first output (the main head), scores
smaller than the image (HRNet's quarter) resized to it bilinearly with corners aligned as MXNet's
``BilinearResize2D`` does, and each pixel's highest-scoring class. Same masks as ``gluon-hub
predict`` on MXNet up to pixels whose two best classes tie within the network's float
differences (about 1e-6 of the scores' scale, the ONNX portability rows).
"""

from __future__ import annotations

import os
from typing import Any, Sequence

import numpy as np

from gluon_hub.runtime import Session, read_image

from .predict import ClassShare, class_shares, draw_mask, palette

__all__ = ["Segmenter", "resize_scores"]


def resize_scores(scores: np.ndarray, height: int, width: int) -> np.ndarray:
    """``(C, h, w)`` scores resized to ``(C, height, width)``, bilinear with corners aligned."""
    def axis(size_out: int, size_in: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        scale = (size_in - 1) / (size_out - 1) if size_out > 1 else 0.0
        position = np.arange(size_out, dtype=np.float32) * np.float32(scale)
        first = np.minimum(np.floor(position).astype(np.int64), size_in - 1)
        return first, np.minimum(first + 1, size_in - 1), (position - first).astype(np.float32)

    y0, y1, fy = axis(height, scores.shape[1])
    x0, x1, fx = axis(width, scores.shape[2])
    rows = scores[:, y0] * (1 - fy)[None, :, None] + scores[:, y1] * fy[None, :, None]
    return rows[:, :, x0] * (1 - fx)[None, None, :] + rows[:, :, x1] * fx[None, None, :]


class Segmenter:
    """An exported semantic-segmentation model in an onnxruntime :class:`~gluon_hub.runtime.Session`."""

    def __init__(self, session: Session, spec: Any) -> None:
        session.require(spec, (3, None, None))  # the image at its own size
        self.session = session
        self.spec = spec
        self.mean = np.asarray(spec.input.mean, np.float32)
        self.std = np.asarray(spec.input.std, np.float32)

    def to_input(self, image: np.ndarray) -> np.ndarray:
        """The ``(3, H, W)`` network input of an ``HWC`` ``uint8`` RGB image (its own size)."""
        if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
            raise ValueError(f"expected an HWC uint8 RGB image, got shape {image.shape} and dtype {image.dtype}")
        tensor = (image.astype(np.float32) / np.float32(255.0) - self.mean) / self.std
        return np.ascontiguousarray(tensor.transpose(2, 0, 1))

    def segment(self, images: Sequence[str | os.PathLike[str] | np.ndarray],
                batch_size: int = 1) -> list[tuple[np.ndarray, np.ndarray, int]]:
        """``(image, (H, W) int32 class map, number of classes)`` of each image file or ``HWC``
        ``uint8`` array.

        Consecutive images of the same size run together, ``batch_size`` at a time.
        """
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        pictures = [read_image(i) if not isinstance(i, np.ndarray) else i for i in images]
        results: list[tuple[np.ndarray, np.ndarray, int]] = []
        start = 0
        while start < len(pictures):
            end = start + 1
            while (end < len(pictures) and end - start < batch_size
                   and pictures[end].shape == pictures[start].shape):
                end += 1
            scores = self.session.run(np.stack([self.to_input(p) for p in pictures[start:end]]))[0]
            if scores.ndim != 4:
                raise ValueError(f"{str(self.session.path)!r} returned scores of shape {scores.shape}; a semantic "
                                 "segmentation model returns (batch, classes, height, width)")
            for picture, one in zip(pictures[start:end], scores):
                if one.shape[1:] != picture.shape[:2]:
                    one = resize_scores(one, *picture.shape[:2])
                results.append((picture, one.argmax(axis=0).astype(np.int32), int(scores.shape[1])))
            start = end
        return results

    def classes(self, num_classes: int) -> list[str]:
        """Class names by class id: the spec's, or ``class <i>``."""
        return self.spec.class_names(num_classes)

    def shares(self, mask: np.ndarray, num_classes: int) -> list[ClassShare]:
        """The classes in ``mask``, largest share of pixels first."""
        return class_shares(mask, self.classes(num_classes))

    def draw(self, image: np.ndarray, mask: np.ndarray, num_classes: int, out: str) -> None:
        """Write ``image`` tinted with each pixel's class colour to ``out`` (as ``predict --out`` does)."""
        draw_mask(image, mask, palette(self.spec, num_classes), out)
