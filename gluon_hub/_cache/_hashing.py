"""The one place that hashes bytes: downloads, cache hits, extraction, datasets, bundles, publishing.

Hashes are written ``"<algorithm>:<hex digest>"``. Keeping every stream-and-hash loop
here means one chunk size, one spelling of the result and one algorithm check, so that a
file hashed while it downloads and the same file hashed again by ``cache verify``,
``dataset_file(root=...)`` or ``gluon-hub bundle`` can never disagree on form.
"""

from __future__ import annotations

import hashlib
import os
from typing import BinaryIO, Iterable

#: Bytes read per step when hashing a file.
CHUNK = 1 << 20


class Hasher:
    """A running hash of the bytes fed to it, and their count."""

    def __init__(self, algorithm: str) -> None:
        self.algorithm = algorithm
        self._hash = hashlib.new(algorithm)
        self.size = 0

    def update(self, chunk: bytes) -> None:
        self._hash.update(chunk)
        self.size += len(chunk)

    def value(self) -> str:
        """The hash so far, as ``algorithm:hex``."""
        return f"{self.algorithm}:{self._hash.hexdigest()}"


def hash_stream(stream: BinaryIO, algorithms: Iterable[str]) -> tuple[dict[str, str], int]:
    """``{algorithm: "algorithm:hex"}`` of everything left in ``stream``, and its size."""
    hashers = [Hasher(a) for a in dict.fromkeys(algorithms)]
    size = 0
    while chunk := stream.read(CHUNK):
        for hasher in hashers:
            hasher.update(chunk)
        size += len(chunk)
    return {h.algorithm: h.value() for h in hashers}, size


def hash_file_sized(path: str | os.PathLike[str], algorithms: Iterable[str]) -> tuple[dict[str, str], int]:
    """Every hash in ``algorithms`` of one file, read once, and its size."""
    with open(path, "rb") as stream:
        return hash_stream(stream, algorithms)


def hash_file(path: str | os.PathLike[str], algorithm: str) -> str:
    """The ``algorithm:hex`` hash of a file."""
    return hash_file_sized(path, [algorithm])[0][algorithm]


def hash_bytes(data: bytes, algorithm: str = "sha256") -> str:
    """The ``algorithm:hex`` hash of bytes already in memory."""
    hasher = Hasher(algorithm)
    hasher.update(data)
    return hasher.value()
