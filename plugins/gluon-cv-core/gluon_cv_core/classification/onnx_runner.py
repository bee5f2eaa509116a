"""The ONNX runner of image classifiers: top-k classes with labels, without MXNet.

``gluon_hub.runtime.load(name)`` builds it for every classifier (the specs name
``Classifier`` as their ``runner``). Preprocessing is the evaluation preset of
``transforms.eval_transform`` done in numpy (:func:`gluon_hub.runtime.preprocess`, equal to
MXNet's to the bit); scores are softmax probabilities, as ``gluon-hub predict`` prints them.
Imports numpy (and Pillow to read files) only.
"""

from __future__ import annotations

import os
from typing import Any, Sequence

import numpy as np

from gluon_hub.runtime import Session, geometry, preprocess, read_image

__all__ = ["Classifier"]


class Classifier:
    """An exported image classifier in an onnxruntime :class:`~gluon_hub.runtime.Session`.

    Calling it runs a batch of preprocessed ``NCHW`` tensors and returns the logits;
    :meth:`classify` takes image files or arrays.
    """

    def __init__(self, session: Session, spec: Any) -> None:
        self.session = session
        self.spec = spec
        self.path = session.path
        self.geometry = geometry(spec)
        inputs = session.inputs
        expected = (self.geometry.channels, self.geometry.crop, self.geometry.crop)
        if not session.takes(expected):
            raise ValueError(
                f"{str(self.path)!r} takes {session.described_inputs()}, but {spec.qualified_name!r} is preprocessed to "
                f"(batch, {', '.join(map(str, expected))}): the file was exported from another model or "
                f"for another input size; export it again with gluon_hub.export({spec.name!r}, "
                f"{str(self.path)!r}, format=\"onnx\") (the spec's input shape is the default)"
            )
        if inputs[0].type != "tensor(float)":
            raise ValueError(f"{str(self.path)!r} takes {inputs[0].type} input; the ONNX runner feeds float32 images")
        #: The batch size fixed in the file, or None where the file leaves it free.
        batch = inputs[0].shape[0]
        self.batch: int | None = batch if isinstance(batch, int) else None
        self._labels: list[str] | None = None

    def __call__(self, batch: np.ndarray) -> np.ndarray:
        """The model's output (logits) for an ``NCHW`` ``float32`` batch."""
        batch = np.ascontiguousarray(batch, dtype=np.float32)
        if self.batch is None or len(batch) == self.batch:
            return self.session.run(batch)[0]
        outputs = []
        for start in range(0, len(batch), self.batch):  # the file's batch size, padded at the end
            chunk = batch[start : start + self.batch]
            padded = np.concatenate([chunk, np.zeros((self.batch - len(chunk), *chunk.shape[1:]), np.float32)])
            outputs.append(self.session.run(padded)[0][: len(chunk)])
        return np.concatenate(outputs)

    def classify(
        self, images: Sequence[str | os.PathLike[str] | np.ndarray], topk: int = 5, batch_size: int = 32
    ) -> list[list[tuple[str, float]]]:
        """The ``topk`` (label, softmax probability) pairs of each image, best first.

        ``images`` are files or ``HWC`` ``uint8`` RGB arrays. Labels are the spec's class
        names, or ``class <i>`` where the model has other classes.
        """
        if topk < 1 or batch_size < 1:
            raise ValueError("topk and batch_size must be at least 1")
        results: list[list[tuple[str, float]]] = []
        for start in range(0, len(images), batch_size):
            chunk = images[start : start + batch_size]
            tensors = [preprocess(read_image(i) if not isinstance(i, np.ndarray) else i, self.geometry)
                       for i in chunk]
            logits = self(np.stack(tensors)).astype(np.float64)
            probs = np.exp(logits - logits.max(axis=1, keepdims=True))
            probs /= probs.sum(axis=1, keepdims=True)
            labels = self.labels(probs.shape[1])
            for row in probs:
                best = row.argsort()[::-1][:topk]
                results.append([(labels[i], float(row[i])) for i in best])
        return results

    def labels(self, num_classes: int) -> list[str]:
        """The spec's class names when it has ``num_classes`` of them, else ``class <i>``."""
        if self._labels is None or len(self._labels) != num_classes:
            self._labels = self.spec.class_names(num_classes)
        return self._labels
