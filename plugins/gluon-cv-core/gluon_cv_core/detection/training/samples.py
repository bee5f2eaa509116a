"""Training labels checked before they reach a loss.

A box with a NaN corner, a class id the network does not have, or an image with no object
left gives a NaN or meaningless loss many steps later, far from its cause. GluonCV's
scripts trusted their datasets; here every training sample goes through
:class:`TrainingSamples`, which

* **fails**, naming the sample (and its file where the dataset knows it), on a label that
  is not an ``(N, 5+)`` array, a non-finite coordinate, a class id outside the network's
  classes, and on an image that is not ``HWC`` with 3 channels or is empty;
* **repairs with a warning** a box that reaches outside its image (clipped to it) and drops
  a box that is empty after clipping (zero or negative width or height);
* **skips with a warning** an image left without objects, since every family's targets
  need at least one box (this is GluonCV's ``skip_empty`` for COCO, applied to all).

Labels are scanned once at construction (``dataset.label(i)`` where the dataset has it,
which reads no image), so a bad annotation fails before the first step.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np

from gluon_hub.compat import mx

__all__ = ["TrainingSamples", "TrainingLabelWarning"]


class TrainingLabelWarning(UserWarning):
    """A training label was repaired or its image skipped."""


class TrainingSamples(mx.gluon.data.Dataset):
    """``dataset`` items ``(HWC uint8 image, label)`` checked for training, then ``transform``\\ ed.

    Parameters
    ----------
    dataset : a detection dataset (VOC, COCO, ``.lst``, RecordIO, or any with the same items).
    num_classes : the network's number of foreground classes.
    transform : the family's training transform, applied to the checked sample.
    """

    def __init__(self, dataset: Any, num_classes: int,
                 transform: Callable[[Any, np.ndarray], Any] | None = None) -> None:
        self._dataset, self._num_classes, self._transform = dataset, num_classes, transform
        self._labels: dict[int, np.ndarray] = {}
        self.indices: list[int] = []
        skipped = []
        for index in range(len(dataset)):
            label = self._checked_label(index, self._raw_label(index))
            if label.shape[0] == 0:
                skipped.append(index)
                continue
            self._labels[index] = label
            self.indices.append(index)
        if skipped:
            shown = ", ".join(self._where(i) for i in skipped[:5]) + (" ..." if len(skipped) > 5 else "")
            warnings.warn(f"skipped {len(skipped)} training image(s) without objects: {shown}",
                          TrainingLabelWarning, stacklevel=2)
        if not self.indices:
            raise ValueError(f"none of the {len(dataset)} training images has an object; detectors "
                             "train on images with at least one box")

    def _raw_label(self, index: int) -> Any:
        label = getattr(self._dataset, "label", None)
        return label(index) if callable(label) else self._dataset[index][1]

    def _where(self, index: int) -> str:
        path = getattr(self._dataset, "image_path", None)
        return f"sample {index} ({path(index)})" if callable(path) else f"sample {index}"

    def _checked_label(self, index: int, raw: Any) -> np.ndarray:
        label = np.asarray(raw.asnumpy() if hasattr(raw, "asnumpy") else raw, dtype=np.float64)
        if label.ndim != 2 or label.shape[1] < 5:
            raise ValueError(f"{self._where(index)}: a detection label is an (N, 5+) array "
                             f"[xmin, ymin, xmax, ymax, class_id, ...]; got shape {label.shape}")
        if not np.isfinite(label[:, :5]).all():
            raise ValueError(f"{self._where(index)}: the label has a NaN or infinite box or class id: "
                             f"{label[~np.isfinite(label[:, :5]).all(axis=1), :5].tolist()}")
        ids = label[:, 4]
        bad = (ids < 0) | (ids >= self._num_classes) | (ids != np.round(ids))
        if bad.any():
            raise ValueError(f"{self._where(index)}: class id(s) {sorted(set(ids[bad].tolist()))} are not "
                             f"among the network's {self._num_classes} classes (0 to {self._num_classes - 1}); "
                             "reset the network's classes or fix the label")
        return label

    def _fitted(self, index: int, label: np.ndarray, width: int, height: int) -> np.ndarray:
        """Clip the boxes to the image and drop the empty ones, warning about each change."""
        clipped = label.copy()
        clipped[:, (0, 2)] = clipped[:, (0, 2)].clip(0, width - 1)
        clipped[:, (1, 3)] = clipped[:, (1, 3)].clip(0, height - 1)
        empty = (clipped[:, 2] <= clipped[:, 0]) | (clipped[:, 3] <= clipped[:, 1])
        moved = (clipped[:, :4] != label[:, :4]).any(axis=1) & ~empty
        if moved.any():
            warnings.warn(f"{self._where(index)}: clipped {int(moved.sum())} box(es) reaching outside the "
                          f"{width}x{height} image: {label[moved, :4].tolist()}", TrainingLabelWarning, stacklevel=3)
        if empty.any():
            warnings.warn(f"{self._where(index)}: dropped {int(empty.sum())} empty box(es) "
                          f"(no width or height inside the image): {label[empty, :4].tolist()}",
                          TrainingLabelWarning, stacklevel=3)
        return clipped[~empty]

    def __len__(self) -> int:
        return len(self.indices)

    def __getitem__(self, position: int) -> Any:
        index = self.indices[position]
        image, _ = self._dataset[index]
        shape = tuple(image.shape)
        if len(shape) != 3 or shape[2] != 3 or 0 in shape:
            raise ValueError(f"{self._where(index)}: a training image is an HWC array with 3 channels; "
                             f"got shape {shape}")
        label = self._fitted(index, self._labels[index], shape[1], shape[0])
        if label.shape[0] == 0:
            raise ValueError(f"{self._where(index)}: no box of this image lies inside it "
                             f"({shape[1]}x{shape[0]}); fix the label or remove the image")
        label = label.astype(np.float32)
        return self._transform(image, label) if self._transform is not None else (image, label)
