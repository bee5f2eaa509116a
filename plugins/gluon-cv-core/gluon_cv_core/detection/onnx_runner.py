"""The ONNX runners of the detectors and of Mask R-CNN: boxes (and masks) in image pixels and
their picture, without MXNet.

``gluon_hub.runtime.load(name)`` builds :class:`Detector` for every object detector (SSD, YOLOv3,
CenterNet, the Faster R-CNNs) and :class:`InstanceSegmenter` for Mask R-CNN (their specs name
them as ``runner``). The exported graphs end in the decoded, suppressed boxes (Mask R-CNN's also
in each box's mask), so what is left is ``predict``'s recipe in numpy: the shorter side to the
model's input side, the longer within ``MAX_SIZE`` (Mask R-CNN: its network's ``max_size``),
OpenCV's bicubic resize (:func:`gluon_hub.runtime.resize_cubic`, the pixels of MXNet's
``imresize(..., interp=2)``), ``to_tensor`` and the model's mean/std; then the boxes mapped back
to the image and clipped, kept above the threshold, best first, and Mask R-CNN's masks pasted
onto the image by the MXNet path's own code (:func:`.instance_predict.instances`). Same answers
as ``gluon-hub predict`` on MXNet: the network's own float differences (about 1e-6 of each
output's scale, the ONNX portability rows) are all that separate them.
"""

from __future__ import annotations

import os
from typing import Any, Sequence

import numpy as np

from gluon_hub.runtime import Session, read_image, resize_cubic

from .instance_predict import Instance, draw_instances, instances, rcnn_max_size
from .predict import MAX_SIZE, Detection, draw_detections

__all__ = ["Detector", "InstanceSegmenter", "resized_size"]


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
    """An exported object detector in an onnxruntime :class:`~gluon_hub.runtime.Session`."""

    #: what the graph returns for each image, in order
    outputs: tuple[str, ...] = ("class ids", "scores", "boxes")

    def __init__(self, session: Session, spec: Any) -> None:
        if len(session.inputs) != 1 or len(session.session.get_outputs()) != len(self.outputs):
            raise ValueError(f"{str(session.path)!r} is not a graph of (image) -> ({', '.join(self.outputs)}) "
                             f"as {spec.qualified_name!r} exports; export it again with gluon_hub.export(..., "
                             "format=\"onnx\")")
        self.session = session
        self.spec = spec
        self.short = int(spec.input.shape[-1])
        #: the cap on the resized image's longer side (``gluon-hub predict``'s for this model)
        self.max_size = MAX_SIZE
        self.mean = np.asarray(spec.input.mean, np.float32)
        self.std = np.asarray(spec.input.std, np.float32)
        count = spec.input.num_classes
        #: Class names by class id: the spec's, or ``class <i>`` where it names none.
        self.classes: list[str] = spec.class_names(count) if count else []

    def to_input(self, image: np.ndarray, max_size: int | None = None) -> np.ndarray:
        """The ``(3, h, w)`` network input of an ``HWC`` ``uint8`` RGB image (the longer side
        at most ``max_size``, default :attr:`max_size`)."""
        if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
            raise ValueError(f"expected an HWC uint8 RGB image, got shape {image.shape} and dtype {image.dtype}")
        size = resized_size(image.shape[0], image.shape[1], self.short, max_size or self.max_size)
        resized = resize_cubic(image, *size)
        tensor = (resized.astype(np.float32) / np.float32(255.0) - self.mean) / self.std
        return np.ascontiguousarray(tensor.transpose(2, 0, 1))

    def detect(self, images: Sequence[str | os.PathLike[str] | np.ndarray], threshold: float = 0.5,
               batch_size: int = 1, max_size: int | None = None) -> list[tuple[np.ndarray, list[Detection]]]:
        """``(image, detections)`` of each image file or ``HWC`` ``uint8`` array, best first.

        Consecutive images of the same network input size run together, ``batch_size`` at a time.
        """
        return self._each(images, threshold, batch_size, max_size)

    def _each(self, images: Sequence[str | os.PathLike[str] | np.ndarray], threshold: float, batch_size: int,
              max_size: int | None) -> list[tuple[np.ndarray, list]]:
        """``(image, self._rows(...))`` of each image, consecutive ones of one input size batched."""
        if not 0 <= threshold <= 1:
            raise ValueError(f"threshold must be between 0 and 1, got {threshold}")
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        pictures = [read_image(i) if not isinstance(i, np.ndarray) else i for i in images]
        inputs = [self.to_input(p, max_size) for p in pictures]
        results: list[tuple[np.ndarray, list]] = []
        start = 0
        while start < len(inputs):
            end = start + 1
            while end < len(inputs) and end - start < batch_size and inputs[end].shape == inputs[start].shape:
                end += 1
            outputs = self.session.run(np.stack(inputs[start:end]))
            for k in range(start, end):
                results.append((pictures[k], self._rows([o[k - start] for o in outputs], inputs[k].shape,
                                                        pictures[k].shape, threshold)))
            start = end
        return results

    def _rows(self, outputs: list[np.ndarray], input_shape: tuple[int, ...], image_shape: tuple[int, ...],
              threshold: float) -> list:
        """One image's detections above ``threshold``, best first, in image pixels."""
        ids, scores, boxes = outputs[0].reshape(-1), outputs[1].reshape(-1), outputs[2].reshape(-1, 4)
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


class InstanceSegmenter(Detector):
    """An exported Mask R-CNN in an onnxruntime :class:`~gluon_hub.runtime.Session`: instances with
    their masks on the image, as ``gluon-hub predict`` finds them on MXNet.

    ``max_size`` caps the resized image's longer side as the network's ``max_size`` does on
    MXNet: default GluonCV's 1333 of its COCO configurations, 512 for ``custom_mask_rcnn_fpn``
    (:func:`~.instance_predict.rcnn_max_size`).
    """

    outputs = ("class ids", "scores", "boxes", "masks")

    def __init__(self, session: Session, spec: Any, max_size: int | None = None) -> None:
        if max_size is not None and max_size < 1:
            raise ValueError(f"max_size must be a positive number of pixels, got {max_size}")
        super().__init__(session, spec)
        self.max_size = max_size or rcnn_max_size(spec)

    def segment(self, images: Sequence[str | os.PathLike[str] | np.ndarray], threshold: float = 0.5,
                batch_size: int = 1) -> list[tuple[np.ndarray, list[Instance]]]:
        """``(image, instances)`` of each image file or ``HWC`` ``uint8`` array, best first; each
        :class:`~.instance_predict.Instance` has its ``(H, W)`` binary mask on the image."""
        return self._each(images, threshold, batch_size, None)

    def _rows(self, outputs: list[np.ndarray], input_shape: tuple[int, ...], image_shape: tuple[int, ...],
              threshold: float) -> list:
        ids, scores, boxes, masks = outputs
        return instances(ids, scores, boxes, masks, input_shape[1:], image_shape[:2], self.classes, threshold)

    def draw(self, image: np.ndarray, found: Sequence[Any], out: str) -> None:
        """Write ``image`` with its masks, boxes, names and scores to ``out`` (as ``predict --out``)."""
        draw_instances(image, found, self.classes, out)
