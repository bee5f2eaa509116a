"""The ONNX runner of SSD, YOLOv3 and CenterNet: boxes in image pixels and their picture, without MXNet.

``gluon_hub.runtime.load(name)`` builds :class:`Detector` for these families (their specs name
it as ``runner``); their exported graphs end in the decoded, suppressed boxes, so what is left is
``predict``'s recipe in numpy: the shorter side to the model's input side, the longer within
``MAX_SIZE``, OpenCV's bicubic resize (:func:`gluon_hub.runtime.resize_cubic`, the pixels of
MXNet's ``imresize(..., interp=2)``), ``to_tensor`` and the model's mean/std; then the boxes
mapped back to the image and clipped, kept above the threshold, best first. Same answers as
``gluon-hub predict`` on MXNet: the network's own float differences (about 1e-6 of each
output's scale, the ONNX portability rows) are all that separate them.
"""

from __future__ import annotations

import os
from typing import Any, Sequence

import numpy as np

from gluon_hub.runtime import Session, read_image, resize_cubic

from .predict import MAX_SIZE, Detection, draw_detections

__all__ = ["Detector", "resized_size"]


def resized_size(height: int, width: int, short: int, max_size: int = MAX_SIZE) -> tuple[int, int]:
    """``(height, width)`` with the shorter side ``short`` and the longer at most ``max_size``,
    rounded as GluonCV's ``resize_short_within`` rounds them."""
    if height < 1 or width < 1:
        raise ValueError(f"the image is empty ({height}x{width} pixels)")
    scale = short / min(height, width)
    if round(scale * max(height, width)) > max_size:
        scale = max_size / max(height, width)
    return max(1, int(round(height * scale))), max(1, int(round(width * scale)))


class Detector:
    """An exported SSD, YOLOv3 or CenterNet in an onnxruntime :class:`~gluon_hub.runtime.Session`."""

    def __init__(self, session: Session, spec: Any) -> None:
        if len(session.inputs) != 1 or len(session.session.get_outputs()) != 3:
            raise ValueError(f"{str(session.path)!r} is not a detector graph of (image) -> (class ids, scores, "
                             f"boxes); export {spec.name!r} again with gluon_hub.export(..., format=\"onnx\")")
        self.session = session
        self.spec = spec
        self.short = int(spec.input.shape[-1])
        self.mean = np.asarray(spec.input.mean, np.float32)
        self.std = np.asarray(spec.input.std, np.float32)
        count = spec.input.num_classes
        #: Class names by class id: the spec's, or ``class <i>`` where it names none.
        self.classes: list[str] = spec.class_names(count) if count else []

    def to_input(self, image: np.ndarray, max_size: int = MAX_SIZE) -> np.ndarray:
        """The ``(3, h, w)`` network input of an ``HWC`` ``uint8`` RGB image."""
        if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
            raise ValueError(f"expected an HWC uint8 RGB image, got shape {image.shape} and dtype {image.dtype}")
        resized = resize_cubic(image, *resized_size(image.shape[0], image.shape[1], self.short, max_size))
        tensor = (resized.astype(np.float32) / np.float32(255.0) - self.mean) / self.std
        return np.ascontiguousarray(tensor.transpose(2, 0, 1))

    def detect(self, images: Sequence[str | os.PathLike[str] | np.ndarray], threshold: float = 0.5,
               batch_size: int = 1, max_size: int = MAX_SIZE) -> list[tuple[np.ndarray, list[Detection]]]:
        """``(image, detections)`` of each image file or ``HWC`` ``uint8`` array, best first.

        Consecutive images of the same network input size run together, ``batch_size`` at a time.
        """
        if not 0 <= threshold <= 1:
            raise ValueError(f"threshold must be between 0 and 1, got {threshold}")
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        pictures = [read_image(i) if not isinstance(i, np.ndarray) else i for i in images]
        inputs = [self.to_input(p, max_size) for p in pictures]
        results: list[tuple[np.ndarray, list[Detection]]] = []
        start = 0
        while start < len(inputs):
            end = start + 1
            while end < len(inputs) and end - start < batch_size and inputs[end].shape == inputs[start].shape:
                end += 1
            ids, scores, boxes = self.session.run(np.stack(inputs[start:end]))
            for k in range(start, end):
                results.append((pictures[k], self._rows(ids[k - start], scores[k - start], boxes[k - start],
                                                        inputs[k].shape, pictures[k].shape, threshold)))
            start = end
        return results

    def _rows(self, ids: np.ndarray, scores: np.ndarray, boxes: np.ndarray, input_shape: tuple[int, ...],
              image_shape: tuple[int, ...], threshold: float) -> list[Detection]:
        """One image's detections above ``threshold``, best first, in image pixels."""
        ids, scores, boxes = ids.reshape(-1), scores.reshape(-1), boxes.reshape(-1, 4)
        height, width = image_shape[:2]
        keep = (ids >= 0) & (scores >= threshold)
        scaled = boxes[keep] * np.array([width / input_shape[2], height / input_shape[1]] * 2)
        scaled = np.clip(scaled, 0, [width, height, width, height])
        order = np.argsort(-scores[keep], kind="stable")
        return [Detection(self.label(int(i)), float(s), tuple(float(v) for v in b))  # type: ignore[arg-type]
                for i, s, b in zip(ids[keep][order], scores[keep][order], scaled[order])]

    def label(self, class_id: int) -> str:
        """The name of ``class_id``."""
        return self.classes[class_id] if class_id < len(self.classes) else f"class {class_id}"

    def draw(self, image: np.ndarray, detections: Sequence[Detection], out: str) -> None:
        """Write ``image`` with its boxes, names and scores to ``out`` (as ``predict --out`` does)."""
        draw_detections(image, detections, self.classes, out)
