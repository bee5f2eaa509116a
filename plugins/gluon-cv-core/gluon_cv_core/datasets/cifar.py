"""CIFAR-10 and CIFAR-100 read from their binary archives, ``cifar-1*-binary.tar.gz``.

The binary format (Krizhevsky, *Learning Multiple Layers of Features from Tiny Images*,
2009) is a flat run of records: the label byte(s), then 3072 pixel bytes, the red,
green and blue 32x32 planes in turn, rows first. CIFAR-10 has one label byte, CIFAR-100
two (coarse, then fine). Records are read straight from the gzipped tar, so nothing is
extracted; a folder the user extracted is read as well.
"""

from __future__ import annotations

import os
import tarfile
from pathlib import Path
from typing import Any

import numpy as np

from gluon_hub.compat import mx

__all__ = ["CIFAR10", "CIFAR100", "read_records"]

_PIXELS = 3 * 32 * 32


def read_records(buffer: bytes, label_bytes: int, label_index: int) -> tuple[np.ndarray, np.ndarray]:
    """Images ``(n, 32, 32, 3)`` ``uint8`` and labels ``(n,)`` ``int32`` from binary records."""
    record = label_bytes + _PIXELS
    if len(buffer) % record:
        raise ValueError(
            f"CIFAR batch of {len(buffer)} bytes is not a whole number of {record}-byte records; "
            "the file is truncated or not the binary version of the dataset"
        )
    rows = np.frombuffer(buffer, dtype=np.uint8).reshape(-1, record)
    images = rows[:, label_bytes:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)
    return np.ascontiguousarray(images), rows[:, label_index].astype(np.int32)


def _read_members(source: Path, names: tuple[str, ...], what: str) -> dict[str, bytes]:
    """The named files (by base name) of an extracted folder or a ``.tar.gz``."""
    found: dict[str, bytes] = {}
    if source.is_dir():
        for name in names:
            if (source / name).is_file():
                found[name] = (source / name).read_bytes()
    else:
        with tarfile.open(source, "r:gz") as tar:
            for member in tar:
                name = member.name.rsplit("/", 1)[-1]
                if member.isfile() and name in names:
                    found[name] = tar.extractfile(member).read()  # type: ignore[union-attr]
    missing = sorted(set(names) - set(found))
    if missing:
        raise ValueError(f"{source} is not {what}: it lacks {', '.join(missing)}")
    return found


class _CIFAR(mx.gluon.data.Dataset):
    _dataset = ""
    _folder = ""
    _members: dict[str, tuple[str, ...]] = {}
    _label_bytes = 1
    _label_index = 0
    _names_file = ""

    def __init__(self, segment: str = "train", root: str | os.PathLike[str] | None = None,
                 source: str | os.PathLike[str] | None = None) -> None:
        if root is not None and source is not None:
            raise ValueError("give root (checked against the published hash) or source, not both")
        self._load(Path(source).expanduser() if source is not None else self._locate(root), segment)

    def _locate(self, root: str | os.PathLike[str] | None) -> Path:
        """An extracted folder under ``root``, else the hash-verified archive."""
        from gluon_hub.data.files import dataset_file

        from .specs import archive

        if root is not None and (Path(root).expanduser() / self._folder).is_dir():
            return Path(root).expanduser() / self._folder
        return Path(dataset_file(archive(self._dataset), root=root))

    def _load(self, source: Path, segment: str) -> None:
        if segment not in self._members:
            raise ValueError(f"{self._dataset} has segments {', '.join(self._members)}; got {segment!r}")
        self.segment = segment
        names = self._members[segment]
        files = _read_members(source, (*names, self._names_file), f"the binary {self._dataset} dataset")
        parts = [read_records(files[name], self._label_bytes, self._label_index) for name in names]
        self.data = np.concatenate([p[0] for p in parts])
        self.labels = np.concatenate([p[1] for p in parts])
        self.classes = [line.strip() for line in files[self._names_file].decode().splitlines() if line.strip()]

    def __len__(self) -> int:
        return int(self.labels.shape[0])

    def __getitem__(self, index: int) -> tuple[Any, int]:
        return mx.nd.array(self.data[index], dtype=np.uint8), int(self.labels[index])


class CIFAR10(_CIFAR):
    """CIFAR-10: 50,000 training and 10,000 test images of 32x32 pixels in 10 classes.

    Items are ``(image, label)``: an ``HWC`` ``uint8`` ``NDArray`` and an ``int``;
    ``data`` and ``labels`` hold the whole segment as numpy arrays, ``classes`` the names.

    Parameters
    ----------
    segment : ``"train"`` or ``"test"``.
    root : a folder that already holds ``cifar-10-binary.tar.gz`` (its hash is checked)
        or the extracted ``cifar-10-batches-bin/`` (read as it is). Default: the archive
        comes through the hash-verified cache.
    source : an archive or extracted folder in the same format, read as it is, without
        a hash check (a copy you made or converted yourself).
    """

    _dataset = "cifar10"
    _folder = "cifar-10-batches-bin"
    _members = {"train": tuple(f"data_batch_{i}.bin" for i in range(1, 6)), "test": ("test_batch.bin",)}
    _names_file = "batches.meta.txt"


class CIFAR100(_CIFAR):
    """CIFAR-100: 32x32 images in 100 fine classes grouped into 20 coarse ones.

    Parameters
    ----------
    segment : ``"train"`` (50,000 images) or ``"test"`` (10,000).
    root : a folder that already holds ``cifar-100-binary.tar.gz`` (its hash is checked)
        or the extracted ``cifar-100-binary/`` (read as it is). Default: through the cache.
    source : an archive or extracted folder read as it is, without a hash check.
    fine_label : the 100 fine classes (the default, what CIFAR-100 models predict), or
        ``False`` for the 20 coarse superclasses.
    """

    _dataset = "cifar100"
    _folder = "cifar-100-binary"
    _members = {"train": ("train.bin",), "test": ("test.bin",)}
    _label_bytes = 2

    def __init__(self, segment: str = "train", root: str | os.PathLike[str] | None = None,
                 source: str | os.PathLike[str] | None = None, fine_label: bool = True) -> None:
        self.fine_label = bool(fine_label)
        self._label_index = 1 if self.fine_label else 0
        self._names_file = "fine_label_names.txt" if self.fine_label else "coarse_label_names.txt"
        super().__init__(segment, root, source)
