"""Reading pretrained word vectors from a local text file (GloVe or word2vec text format).

GloVe files hold one ``word v1 v2 ...`` line per word; word2vec's text format adds a first
line ``count dimension``. Only the vectors of the words asked for are kept, so a large
file costs one pass and little memory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

import numpy as np

__all__ = ["read_word_vectors", "embedding_matrix"]


def read_word_vectors(path: str | Path, words: Iterable[str] | None = None) -> dict[str, np.ndarray]:
    """The vectors of ``words`` (all words when ``None``) found in the file at ``path``."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"word vector file {str(path)!r} does not exist")
    wanted = None if words is None else set(words)
    vectors: dict[str, np.ndarray] = {}
    dim = None
    with path.open(encoding="utf-8", errors="replace") as lines:
        for number, line in enumerate(lines, 1):
            parts = line.rstrip("\n\r ").split(" ")
            if number == 1 and len(parts) == 2 and all(p.isdigit() for p in parts):
                dim = int(parts[1])  # word2vec header: count, dimension
                continue
            if len(parts) < 2:
                continue
            if dim is None:
                dim = len(parts) - 1
            if len(parts) < dim + 1:
                raise ValueError(
                    f"{path}:{number}: expected a word and {dim} numbers, got {len(parts)} fields"
                )
            word = " ".join(parts[: len(parts) - dim])  # a few GloVe words contain spaces
            if wanted is not None and word not in wanted:
                continue
            try:
                vectors[word] = np.asarray(parts[len(parts) - dim:], dtype=np.float32)
            except ValueError:
                raise ValueError(f"{path}:{number}: the vector of {word!r} is not numeric") from None
    if dim is None:
        raise ValueError(f"{path} holds no word vectors")
    return vectors


def embedding_matrix(
    path: str | Path, tokens: list[str], scale: float = 0.25, seed: int = 0
) -> tuple[np.ndarray, int]:
    """A ``(len(tokens), dim)`` matrix of pretrained vectors, with the number found.

    Tokens missing from the file get vectors drawn from U[-scale, scale] (Kim, 2014, uses
    0.25 so that they have about the variance of the pretrained ones).
    """
    found = read_word_vectors(path, tokens)
    if not found:
        raise ValueError(f"none of the {len(tokens)} vocabulary words is in {path}")
    dim = len(next(iter(found.values())))
    matrix = np.random.RandomState(seed).uniform(-scale, scale, (len(tokens), dim)).astype(np.float32)
    for i, token in enumerate(tokens):
        if token in found:
            matrix[i] = found[token]
    return matrix, sum(t in found for t in tokens)
