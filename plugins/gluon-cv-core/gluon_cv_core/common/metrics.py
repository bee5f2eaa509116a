"""Top-k accuracy, the metric every ImageNet and CIFAR result in the zoo reports."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

__all__ = ["topk_correct", "TopKAccuracy"]


def _numpy(value: Any) -> np.ndarray:
    return value.asnumpy() if hasattr(value, "asnumpy") else np.asarray(value)


def topk_correct(scores: Any, labels: Any, k: int) -> int:
    """How many rows of ``scores`` (batch, classes) rank their label among the ``k`` highest.

    Ties count against the label and a row holding a NaN is wrong, so that a network that
    outputs constants or NaN scores 0, not 100%.
    """
    scores, labels = _numpy(scores), _numpy(labels).reshape(-1).astype(np.int64)
    if scores.ndim != 2 or scores.shape[0] != labels.shape[0]:
        raise ValueError(f"scores must be (batch, classes) for {labels.shape[0]} labels, got {scores.shape}")
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    if labels.size and (labels.min() < 0 or labels.max() >= scores.shape[1]):
        raise ValueError(f"labels must be class indices in [0, {scores.shape[1]}), "
                         f"got {labels.min()}..{labels.max()}")
    # The label is in the top k when fewer than k other classes score at least as high:
    # exact, needs no sort, and puts the label last among classes tied with it.
    label_scores = scores[np.arange(labels.shape[0]), labels]
    rivals = (scores >= label_scores[:, None]).sum(axis=1) - 1
    finite = ~np.isnan(scores).any(axis=1)
    return int(((rivals < k) & finite).sum())


class TopKAccuracy:
    """Running top-k accuracies over batches.

    Examples
    --------
    >>> metric = TopKAccuracy(ks=(1, 2))
    >>> metric.update([0, 2], [[0.9, 0.1, 0.0], [0.5, 0.3, 0.2]])
    >>> metric.get()
    {'top1': 0.5, 'top2': 0.5}
    """

    def __init__(self, ks: Sequence[int] = (1, 5)) -> None:
        if not ks or any(int(k) < 1 for k in ks):
            raise ValueError(f"ks must be positive integers, got {ks!r}")
        self.ks = tuple(int(k) for k in ks)
        self.reset()

    def reset(self) -> None:
        self.count = 0
        self._correct = dict.fromkeys(self.ks, 0)

    def update(self, labels: Any, scores: Any) -> None:
        """Add a batch, or lists of per-device batches, of labels and class scores."""
        if isinstance(labels, (list, tuple)) and labels and hasattr(labels[0], "shape"):
            for label, score in zip(labels, scores):
                self.update(label, score)
            return
        scores_np = _numpy(scores)
        for k in self.ks:
            self._correct[k] += topk_correct(scores_np, labels, k)
        self.count += scores_np.shape[0]

    def get(self) -> dict[str, float]:
        """``{"top1": ..., "top5": ...}``; NaN before any update."""
        return {f"top{k}": (c / self.count if self.count else float("nan")) for k, c in self._correct.items()}
