"""Pixel accuracy and mean IoU for semantic segmentation, as GluonCV 0.10 reports them.

Definitions (over every pixel seen since the last ``reset``, label ``-1`` ignored):

- ``pixAcc = correct / labeled``: ``labeled`` counts pixels whose label is not ignored,
  ``correct`` those among them predicted as their label.
- ``IoU_c = |pred = c and label = c| / |(pred = c or label = c) and label not ignored|``:
  predictions on ignored pixels count for nothing.
- ``mIoU`` is the mean of ``IoU_c`` over **all** ``num_class`` classes. A class absent from
  both labels and predictions has IoU 0 and still counts in the mean, as in GluonCV's
  ``SegmentationMetric`` (whose numbers the model zoo reports); :meth:`class_iou` gives NaN
  for such classes if you want to leave them out.

Both ratios divide by ``count + np.spacing(1)``, so they are exactly GluonCV's values
(checked against ``gluoncv.utils.metrics.SegmentationMetric`` on several batches with
ignored pixels and absent classes in ``tests/segmentation/test_segmentation_metrics.py``).
One ``np.bincount`` per batch builds the confusion matrix every figure comes from.

Unlike GluonCV, a label outside ``0 .. num_class - 1`` that is not the ignore label, or a
prediction map whose size differs from its label map, is an error naming the sample, never a
silently different score. Importing this module does not import MXNet.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

__all__ = ["IGNORE_LABEL", "SegmentationMetric", "confusion_matrix"]

#: the class id of pixels that are not scored (VOC's 255 border, ADE20K's 0, Cityscapes' void)
IGNORE_LABEL = -1


def _numpy(value: Any) -> np.ndarray:
    return value.asnumpy() if hasattr(value, "asnumpy") else np.asarray(value)


def _sample(names: Sequence[str] | None, index: int) -> str:
    return f"sample {index}" + (f" ({names[index]})" if names is not None and index < len(names) else "")


def confusion_matrix(labels: Any, preds: Any, num_class: int, names: Sequence[str] | None = None) -> np.ndarray:
    """``(num_class, num_class)`` pixel counts, row = label, column = predicted class.

    Parameters
    ----------
    labels : ``(N, H, W)`` (or ``(H, W)``) class ids; ``-1`` pixels are left out.
    preds : class scores ``(N, C, H, W)`` (arg-maxed over ``C``, as GluonCV does) or class
        ids of the labels' shape.
    num_class : number of classes ``C``.
    names : the samples' names (file names), used in error messages.

    Raises
    ------
    ValueError
        Mismatched shapes, scores with a channel count other than ``num_class``, or a label
        or predicted id outside ``0 .. num_class - 1`` (other than the ignore label).
    """
    target, output = _numpy(labels), _numpy(preds)
    if output.ndim == target.ndim + 1:
        if output.shape[1] != num_class:
            raise ValueError(f"predicted scores have {output.shape[1]} channels, the metric has {num_class} classes")
        output = output.argmax(axis=1)
    if output.shape != target.shape:
        raise ValueError(f"predictions of shape {output.shape} do not match labels of shape {target.shape}; "
                         "resize the predictions to the label size before scoring")
    target, output = target.astype(np.int64, copy=False), output.astype(np.int64, copy=False)
    batch = target.reshape(target.shape[0] if target.ndim > 2 else 1, -1)
    for what, array, allowed_ignore in (("label", batch, True), ("prediction", output.reshape(batch.shape), False)):
        bad = (array >= num_class) | (array < (IGNORE_LABEL if allowed_ignore else 0))
        if allowed_ignore:
            bad &= array != IGNORE_LABEL
        if bad.any():
            row = int(np.flatnonzero(bad.any(axis=1))[0])
            values = np.unique(array[row][bad[row]])
            raise ValueError(f"{_sample(names, row)}: {what} values {values[:10].tolist()} are outside "
                             f"0..{num_class - 1}" + (f" and not the ignore label {IGNORE_LABEL}" if allowed_ignore
                                                      else ""))
    scored = target != IGNORE_LABEL
    pairs = target[scored] * num_class + output[scored]
    return np.bincount(pairs, minlength=num_class * num_class).reshape(num_class, num_class)


class SegmentationMetric:
    """Running pixAcc and mIoU (see the module docstring), GluonCV's ``SegmentationMetric`` API.

    Examples
    --------
    >>> metric = SegmentationMetric(3)
    >>> metric.update(np.array([[[0, 1, -1, 2]]]), np.array([[[0, 1, 2, 1]]]))
    >>> [round(float(v), 4) for v in metric.get()]
    [0.6667, 0.5]
    """

    def __init__(self, num_class: int) -> None:
        if num_class < 1:
            raise ValueError(f"num_class must be >= 1, got {num_class}")
        self.num_class = int(num_class)
        self.reset()

    def reset(self) -> None:
        """Forget every pixel seen."""
        self.confusion = np.zeros((self.num_class, self.num_class), dtype=np.int64)

    def update(self, labels: Any, preds: Any, names: Sequence[str] | None = None) -> None:
        """Add a batch: arrays or ``NDArray`` (see :func:`confusion_matrix`), or lists of them
        (one per device, as GluonCV's takes); ``names`` are used in error messages."""
        if isinstance(preds, (list, tuple)):
            if not isinstance(labels, (list, tuple)) or len(labels) != len(preds):
                raise ValueError("labels and predictions must be lists of the same length")
            for label, pred in zip(labels, preds):
                self.confusion += confusion_matrix(label, pred, self.num_class, names)
        else:
            self.confusion += confusion_matrix(labels, preds, self.num_class, names)

    @property
    def total_correct(self) -> int:
        return int(np.trace(self.confusion))

    @property
    def total_label(self) -> int:
        return int(self.confusion.sum())

    @property
    def total_inter(self) -> np.ndarray:
        return np.diag(self.confusion).copy()

    @property
    def total_union(self) -> np.ndarray:
        return self.confusion.sum(axis=0) + self.confusion.sum(axis=1) - np.diag(self.confusion)

    def get(self) -> tuple[float, float]:
        """``(pixAcc, mIoU)``, GluonCV's formulas (0 before any labelled pixel)."""
        pix_acc = 1.0 * self.total_correct / (np.spacing(1) + self.total_label)
        iou = 1.0 * self.total_inter / (np.spacing(1) + self.total_union)
        return float(pix_acc), float(iou.mean())

    def class_iou(self) -> np.ndarray:
        """Per-class IoU, NaN for classes neither labelled nor predicted (on scored pixels)."""
        union = self.total_union
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(union > 0, self.total_inter / union, np.nan)
