"""The ONNX runner of the top-down pose estimators: persons from a detector, then their keypoints, without MXNet.

``gluon_hub.runtime.load(name)`` builds :class:`PoseEstimator` for SimplePose, MobilePose and
AlphaPose (their specs name it as ``runner``). It follows ``gluon-hub predict``'s MXNet pipeline
(:mod:`.predict`) step by step, in numpy: the persons' boxes come from a detector runner (the
``person`` detections of an exported detector from ``gluon_hub.runtime.load``) or are given; each box is grown and cut at whole pixels as there (:func:`.predict.crop_windows`),
resized to the network's input with OpenCV's bicubic arithmetic
(:func:`gluon_hub.runtime.resize_cubic`, the pixels of MXNet's ``fixed_crop(..., interp=2)``),
scaled and normalised; the heatmaps' peaks are decoded as GluonCV's demos decode them
(:func:`.predict.decode_persons`, the MXNet path's own code). The crops equal MXNet's to the
bit, so only the network's float differences separate the answers.

The MXNet path resets its detector to the ``person`` class (as GluonCV's demos do), so only
persons compete for the detector's output slots. A detector exported with all its classes
finds the same persons except where other classes' boxes take those slots; export it after
``net.reset_class(["person"], reuse_weights=["person"])`` for the MXNet path's persons exactly.
"""

from __future__ import annotations

import os
from typing import Any, Sequence

import numpy as np

from gluon_hub.runtime import Session, read_image, resize_cubic

from .predict import Person, crop_windows, decode_persons, draw_poses

__all__ = ["PoseEstimator"]


class PoseEstimator:
    """An exported top-down pose network in an onnxruntime :class:`~gluon_hub.runtime.Session`."""

    def __init__(self, session: Session, spec: Any) -> None:
        outputs = session.session.get_outputs()
        if len(session.inputs) != 1 or len(outputs) != 1 or len(outputs[0].shape) != 4:
            raise ValueError(f"{str(session.path)!r} is not a pose graph of (person crops) -> (heatmaps); "
                             f"export {spec.name!r} again with gluon_hub.export(..., format=\"onnx\")")
        self.session = session
        self.spec = spec
        #: the ``(height, width)`` every person is resized to
        self.size: tuple[int, int] = (int(spec.input.shape[1]), int(spec.input.shape[2]))
        self.mean = np.asarray(spec.input.mean, np.float32)
        self.std = np.asarray(spec.input.std, np.float32)

    def to_input(self, image: np.ndarray, boxes: Any) -> tuple[np.ndarray, np.ndarray]:
        """``(crops, grown boxes)`` of the persons at ``boxes`` (``(x0, y0, x1, y1)`` in pixels of
        the ``HWC`` ``uint8`` RGB ``image``): the ``(N, 3, height, width)`` network input and the
        boxes the crops were cut from, which map the heatmaps back."""
        if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
            raise ValueError(f"expected an HWC uint8 RGB image, got shape {image.shape} and dtype {image.dtype}")
        grown, windows = crop_windows(boxes, image.shape)
        crops = np.empty((len(windows), 3, *self.size), np.float32)
        for row, (left, top, right, bottom) in enumerate(windows):
            resized = resize_cubic(np.ascontiguousarray(image[top:bottom, left:right]), *self.size)
            crops[row] = ((resized.astype(np.float32) / np.float32(255.0) - self.mean) / self.std).transpose(2, 0, 1)
        return crops, grown

    def estimate(self, image: np.ndarray, boxes: Any, scores: Sequence[float]) -> list[Person]:
        """The keypoints of the persons at ``boxes`` in ``image``, each with its detector score."""
        if len(scores) != len(boxes):
            raise ValueError(f"got {len(boxes)} boxes and {len(scores)} scores: one score per person")
        if not len(boxes):
            return []
        crops, grown = self.to_input(image, boxes)
        (heatmaps,) = self.session.run(crops)
        return decode_persons(heatmaps, grown, scores)

    def predict(self, images: Sequence[str | os.PathLike[str] | np.ndarray], detector: Any = None,
                threshold: float = 0.5, box: Sequence[float] | None = None) -> list[tuple[np.ndarray, list[Person]]]:
        """``(image, persons)`` of each image file or ``HWC`` ``uint8`` array.

        The persons are ``detector``'s ``person`` detections scoring at least ``threshold``, best
        first (``detector`` a detection runner from ``gluon_hub.runtime.load``), or the one person
        at ``box`` ``(x0, y0, x1, y1)`` in every image, with score 1.
        """
        if (detector is None) == (box is None):
            raise ValueError("pass a detector runner to find the persons, or the box of one person, not both")
        if box is not None:
            if len(box) != 4 or not (box[2] > box[0] and box[3] > box[1]):
                raise ValueError(f"box must be (x0, y0, x1, y1) with x1 > x0 and y1 > y0, got {tuple(box)}")
            pictures = [read_image(i) if not isinstance(i, np.ndarray) else i for i in images]
            return [(p, self.estimate(p, [tuple(box)], [1.0])) for p in pictures]
        if "person" not in getattr(detector, "classes", ()):
            raise ValueError(f"the detector {getattr(detector.spec, 'name', detector)!r} has no 'person' class; "
                             "use a COCO detector, e.g. yolo3_mobilenet1.0_coco")
        results = []
        for picture, detections in detector.detect(images, threshold):
            people = [d for d in detections if d.label == "person"]
            results.append((picture, self.estimate(picture, [d.box for d in people], [d.score for d in people])))
        return results

    def draw(self, image: np.ndarray, persons: Sequence[Person], out: str) -> None:
        """Write ``image`` with each person's box and skeleton to ``out`` (as ``predict --out`` does)."""
        draw_poses(image, persons, out)
