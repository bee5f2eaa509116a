"""Finding a dataset's files: in a directory the user already has, or through the cache.

A dataset plugin lists its files as :class:`~gluon_hub.FileRef` entries of its
:class:`~gluon_hub.DatasetSpec` and, in its factory, turns each into a path::

    def squad(segment="train", version="1.1", root=None):
        path = dataset_file(SQUAD_FILES[version, segment], root=root)
        ...

With ``root``, nothing is downloaded; without it the file comes through the hash-verified
cache, which explains offline misses with the command that prefetches the file.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath
from urllib.parse import urlparse

from gluon_hub._cache._hashing import hash_file
from gluon_hub.errors import HubError
from gluon_hub.specs import FileRef

__all__ = ["DatasetFileError", "dataset_file"]


class DatasetFileError(HubError, FileNotFoundError):
    """A dataset file is missing from the given directory, or its contents are not the expected ones."""


def _basename(ref: FileRef) -> str:
    if ref.filename:
        return PurePosixPath(ref.filename).name
    return PurePosixPath(urlparse(ref.urls[0]).path).name


def _verified(path: Path, expected: str, size: int | None) -> Path:
    if size is not None and path.stat().st_size != size:
        raise DatasetFileError(
            f"{path} has {path.stat().st_size} bytes, expected {size}: it is not the file the "
            "dataset expects (another version, or an interrupted copy); replace it, or pass "
            "root=None to download the right one"
        )
    actual = hash_file(path, expected.partition(":")[0])
    if actual != expected:
        raise DatasetFileError(
            f"{path} has hash {actual}, expected {expected}: it is not the file the dataset "
            "expects (another version, or a corrupted copy); replace it, or pass root=None to "
            "download the right one"
        )
    return path


def dataset_file(
    ref: FileRef,
    root: str | os.PathLike[str] | None = None,
    *,
    cache_root: str | os.PathLike[str] | None = None,
    progress: bool | None = None,
) -> Path:
    """The verified local path of one dataset file.

    Parameters
    ----------
    ref : the file, as listed in the dataset's spec.
    root : a directory that already holds the file, under the basename of
        ``ref.filename`` (or of its URL); where ``ref.extract`` names a member of an
        archive, the extracted member may be there instead of the archive. Nothing is
        downloaded. Default: fetch the file through the cache.
    cache_root : the cache directory, instead of ``GLUON_HUB_HOME``.
    progress : show a download progress bar (default: the cache's setting).

    Raises
    ------
    DatasetFileError
        With ``root``: the file is not there, or its size or hash is wrong.
    OSError
        Without ``root``: the cache could not deliver it; offline, the message gives the
        command that prefetches it.

    Examples
    --------
    >>> import hashlib, pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "train.txt").write_text("hello")
    >>> digest = hashlib.sha256(b"hello").hexdigest()
    >>> ref = FileRef(hash=f"sha256:{digest}", filename="toy/train.txt")
    >>> dataset_file(ref, root=folder).name
    'train.txt'
    """
    if not isinstance(ref, FileRef):
        raise TypeError(f"dataset_file() takes a gluon_hub.FileRef, got {type(ref).__name__}")
    if root is None:
        from gluon_hub.cache import fetch

        return fetch(ref, root=cache_root, progress=progress)
    folder = Path(root).expanduser()
    if not folder.is_dir():
        raise DatasetFileError(
            f"root={str(root)!r} is not a directory; give the folder that holds the dataset's files"
        )
    if ref.extract:
        member = folder / PurePosixPath(ref.extract).name
        if member.is_file():
            return _verified(member, ref.hash, ref.size)
    archive = folder / _basename(ref)
    if not archive.is_file():
        wanted = _basename(ref)
        if ref.extract:
            wanted += f" (or its member {PurePosixPath(ref.extract).name})"
        raise DatasetFileError(
            f"{wanted} is not in {folder}; put it there, or pass root=None to download it "
            "through the cache"
        )
    if not ref.extract:
        return _verified(archive, ref.hash, ref.size)
    if ref.archive_hash is not None:
        _verified(archive, ref.archive_hash, None)
    from gluon_hub.cache import add_file

    return add_file(ref, archive, root=cache_root)
