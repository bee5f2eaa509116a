"""Pretrained word vectors from local text files, and embedding matrices aligned with a Vocab.

GloVe files hold one ``word v1 v2 ...`` line per word; word2vec's text format adds a first
line ``count dimension``, which is detected. Only the vectors of the words asked for are
parsed and kept, so a file of millions of words costs one pass and little memory. Nothing
here imports mxnet: the matrix is numpy, ready for ``embedding.weight.set_data``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from .vocab import Vocab

__all__ = ["read_word_vectors", "embedding_matrix"]


def read_word_vectors(
    path: str | Path, words: Iterable[str] | None = None
) -> dict[str, np.ndarray]:
    """The ``float32`` vectors of ``words`` (every word when ``None``) in a GloVe or word2vec
    text file.

    A word listed twice keeps its first vector. Lines of words not asked for are checked for
    their field count only, so that the numbers of unused words are never parsed.

    Raises
    ------
    FileNotFoundError : ``path`` is not a file.
    ValueError : a line is malformed (the message gives ``file:line``) or the file holds no
        vectors.

    Examples
    --------
    >>> import tempfile, os
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "vectors.txt")
    ...     _ = open(path, "w").write("2 3\\ncat 1 2 3\\ndog 4 5 6\\n")
    ...     read_word_vectors(path, ["dog", "fish"])
    {'dog': array([4., 5., 6.], dtype=float32)}
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"word vector file {str(path)!r} does not exist")
    wanted = None if words is None else set(words)
    vectors: dict[str, np.ndarray] = {}
    dim: int | None = None
    seen_vector = False
    # Undecodable bytes become U+FFFD: such a word never equals a vocabulary token, so it is
    # skipped instead of stopping a multi-gigabyte read (GloVe 840B has a few).
    with path.open(encoding="utf-8", errors="replace") as lines:
        for number, line in enumerate(lines, 1):
            parts = line.rstrip("\r\n ").split(" ")
            if number == 1 and len(parts) == 2 and parts[0].isdigit() and parts[1].isdigit():
                dim = int(parts[1])  # word2vec header: count, dimension
                if dim < 1:
                    raise ValueError(f"{path}:1: word2vec header gives dimension {dim}")
                continue
            if parts == [""]:
                continue
            if dim is None:
                dim = len(parts) - 1
            if dim < 1 or len(parts) < dim + 1:
                raise ValueError(
                    f"{path}:{number}: expected a word and {dim or 'some'} numbers, "
                    f"got {len(parts)} field(s)"
                )
            seen_vector = True
            word = " ".join(parts[: len(parts) - dim])  # a few GloVe words contain spaces
            if word in vectors or (wanted is not None and word not in wanted):
                continue
            try:
                vectors[word] = np.asarray(parts[len(parts) - dim :], dtype=np.float32)
            except ValueError:
                raise ValueError(f"{path}:{number}: the vector of {word!r} is not numeric") from None
    if not seen_vector:
        raise ValueError(f"{path} holds no word vectors")
    return vectors


def embedding_matrix(
    path: str | Path, tokens: Vocab | Sequence[str], scale: float = 0.25, seed: int = 0
) -> tuple[np.ndarray, int]:
    """A ``(len(tokens), dim)`` matrix of pretrained vectors, and how many tokens were found.

    Row ``i`` belongs to ``tokens[i]``; for a :class:`Vocab` that is ``vocab.idx_to_token``,
    so ``matrix[vocab[token]]`` is the vector of ``token``. Tokens missing from the file get
    vectors drawn from U[-scale, scale] with ``seed`` (Kim, 2014, uses 0.25 so that they have
    about the variance of pretrained ones); set special rows such as padding yourself.

    Examples
    --------
    >>> import tempfile, os
    >>> vocab = Vocab({"cat": 2, "dog": 1}, bos_token=None, eos_token=None)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "glove.txt")
    ...     _ = open(path, "w").write("cat 1 2\\nbird 3 4\\n")
    ...     matrix, found = embedding_matrix(path, vocab)
    >>> matrix.shape, found, matrix[vocab["cat"]].tolist()
    ((4, 2), 1, [1.0, 2.0])
    """
    if isinstance(tokens, Vocab):
        tokens = tokens.idx_to_token
    elif isinstance(tokens, str) or not isinstance(tokens, Sequence):
        raise TypeError(
            f"tokens must be a Vocab or a sequence of tokens in row order, got {type(tokens).__name__}"
        )
    if not tokens:
        raise ValueError("tokens is empty: the matrix would have no rows")
    if not scale >= 0:
        raise ValueError(f"scale must be non-negative, got {scale!r}")
    found = read_word_vectors(path, tokens)
    if not found:
        raise ValueError(
            f"none of the {len(tokens)} tokens is in {path} (do the file's words and the "
            "tokens agree on case?)"
        )
    dim = len(next(iter(found.values())))
    rng = np.random.RandomState(seed)
    matrix = rng.uniform(-scale, scale, (len(tokens), dim)).astype(np.float32)
    hits = 0
    for row, token in enumerate(tokens):
        vector = found.get(token)
        if vector is not None:
            matrix[row] = vector
            hits += 1
    return matrix, hits
