"""Intrinsic evaluation of word embeddings: word similarity and analogies, in numpy.

Checked against GluonNLP 0.10's ``gluonnlp.embedding.evaluation`` (``CosineSimilarity``,
``ThreeCosAdd``, ``ThreeCosMul``) on generated tables in ``tests/test_embedding_evaluation.py``:
same normalization (``x / sqrt(sum(x**2) + eps)``), same scores, and the question words
excluded the same way (their score set to 0, not to minus infinity).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

__all__ = ["cosine_similarity", "three_cos_add", "three_cos_mul"]


def _normalize(x: np.ndarray, eps: float) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    return x / np.sqrt((x * x).sum(axis=-1, keepdims=True) + eps)


def cosine_similarity(x: np.ndarray, y: np.ndarray, eps: float = 1e-10) -> np.ndarray:
    """Row-wise cosine similarity of two ``(batch, dim)`` arrays, shape ``(batch,)``.

    Examples
    --------
    >>> [round(float(v), 4) for v in cosine_similarity(np.array([[1.0, 0.0]]), np.array([[1.0, 1.0]]))]
    [0.7071]
    """
    return (_normalize(x, eps) * _normalize(y, eps)).sum(axis=-1)


def _check(idx_to_vec: np.ndarray, k: int, *words: Sequence[int]) -> list[np.ndarray]:
    if idx_to_vec.ndim != 2:
        raise ValueError(f"idx_to_vec must be 2-D (tokens, dim), got shape {idx_to_vec.shape}")
    if not 1 <= k <= idx_to_vec.shape[0]:
        raise ValueError(f"k must be in 1..{idx_to_vec.shape[0]}, got {k}")
    arrays = [np.asarray(w, dtype=np.int64).reshape(-1) for w in words]
    if len({a.size for a in arrays}) != 1:
        raise ValueError(f"words1, words2 and words3 differ in length: {[a.size for a in arrays]}")
    for a in arrays:
        if a.size and (a.min() < 0 or a.max() >= idx_to_vec.shape[0]):
            raise IndexError(f"word index out of range for a table of {idx_to_vec.shape[0]} rows")
    return arrays


def _top(scores: np.ndarray, words: list[np.ndarray], k: int, exclude: bool) -> np.ndarray:
    if exclude:
        rows = np.arange(scores.shape[0])
        for w in words:
            scores[rows, w] = 0.0
    # A stable sort of the negated scores: ties go to the lower index.
    return np.argsort(-scores, axis=1, kind="stable")[:, :k]


def three_cos_add(
    idx_to_vec: np.ndarray,
    words1: Sequence[int],
    words2: Sequence[int],
    words3: Sequence[int],
    k: int = 1,
    normalize: bool = True,
    exclude_question_words: bool = True,
    eps: float = 1e-10,
) -> np.ndarray:
    """Indices ``(batch, k)`` of the best answers to ``words1 : words2 :: words3 : ?`` by
    3CosAdd: argmax over ``b*`` of ``cos(b*, words3) - cos(b*, words1) + cos(b*, words2)``
    (Levy & Goldberg, 2014); with ``normalize=False`` the dot product with
    ``words3 - words1 + words2`` instead.
    """
    w1, w2, w3 = _check(idx_to_vec, k, words1, words2, words3)
    table = _normalize(idx_to_vec, eps) if normalize else np.asarray(idx_to_vec, np.float32)
    if normalize:
        scores = table[w3] @ table.T - table[w1] @ table.T + table[w2] @ table.T
    else:
        scores = (table[w3] - table[w1] + table[w2]) @ table.T
    return _top(scores, [w1, w2, w3], k, exclude_question_words)


def three_cos_mul(
    idx_to_vec: np.ndarray,
    words1: Sequence[int],
    words2: Sequence[int],
    words3: Sequence[int],
    k: int = 1,
    exclude_question_words: bool = True,
    eps: float = 1e-10,
) -> np.ndarray:
    """Indices ``(batch, k)`` of the best answers to ``words1 : words2 :: words3 : ?`` by
    3CosMul: argmax of ``cos(b*, words2) cos(b*, words3) / (cos(b*, words1) + eps)`` with
    cosines shifted to [0, 1] (Levy & Goldberg, 2014).
    """
    w1, w2, w3 = _check(idx_to_vec, k, words1, words2, words3)
    table = _normalize(idx_to_vec, eps)
    s1, s2, s3 = ((table[w] @ table.T + 1) / 2 for w in (w1, w2, w3))
    scores = (s2 * s3) / (s1 + eps)
    return _top(scores, [w1, w2, w3], k, exclude_question_words)
