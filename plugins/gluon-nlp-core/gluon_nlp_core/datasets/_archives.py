"""Files that GluonNLP publishes inside a zip or ``.tar.gz`` with a sha1 of their own.

A dataset's ``members`` table (in its ``*_datasets.json``) gives each such file's ``path`` in
the archive (or only its base ``name``, found in whatever folder holds it) and its sha1.
Through the cache the archive is fetched once (its own sha1 checked) and each member is
kept in the cache's ``extracted/<dataset>/`` only after its sha1 is checked; a ``root``
directory may instead hold the member as GluonNLP unpacks it, the bare file, or the archive,
read as they are.
"""

from __future__ import annotations

import hashlib
import os
import tarfile
import zipfile
from pathlib import Path, PurePosixPath

from .._data_specs import _groups, dataset_files
from ._base import dataset_file


def archive_member(archive: Path, member: str) -> bytes:
    """The bytes of ``member`` of a zip or tar ``archive``: the file at that path or, for a
    bare name, the first file of that name in any folder."""
    bare = "/" not in member

    def matches(path: str) -> bool:
        path = path.removeprefix("./")
        return path == member or (bare and PurePosixPath(path).name == member)

    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as zf:
            for info in zf.infolist():
                if not info.is_dir() and matches(info.filename):
                    return zf.read(info)
    else:
        with tarfile.open(archive, "r:*") as tar:
            for info in tar:
                if info.isfile() and matches(info.name):
                    reader = tar.extractfile(info)
                    if reader is not None:
                        return reader.read()
    raise FileNotFoundError(f"{archive} holds no file {member!r}")


def extract_checked(archive: Path, member: str, sha1: str, dest: Path) -> Path:
    """Write ``member`` of ``archive`` to ``dest`` if its sha1 is the published ``sha1``.

    The file appears under its final name only once complete (written aside, then renamed),
    so a concurrent or interrupted extraction never leaves a partial file to be read later.
    """
    data = archive_member(archive, member)
    got = hashlib.sha1(data).hexdigest()
    if got != sha1:
        raise ValueError(
            f"{archive}: {member} has sha1 {got}, the published one is {sha1}; delete the "
            "archive from the cache and fetch it again"
        )
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = dest.with_name(f".{dest.name}.{os.getpid()}.part")
    partial.write_bytes(data)
    os.replace(partial, dest)
    return dest


def published_member(name: str, key: str, root: str | os.PathLike[str] | None) -> tuple[bytes, str]:
    """The bytes of dataset ``name``'s member ``key``, and the name errors give it."""
    member = _groups()[name]["members"][key]
    path, sha1 = member.get("path") or member["name"], member["sha1"]
    basename = PurePosixPath(path).name
    ref = dataset_files(name)["archive"]
    archive_name = PurePosixPath(ref.filename or ref.urls[0]).name
    if root is not None:
        folder = Path(root).expanduser()
        for candidate in dict.fromkeys((folder / path, folder / basename)):
            if candidate.is_file():
                return candidate.read_bytes(), str(candidate)
        if (folder / archive_name).is_file():
            return archive_member(folder / archive_name, path), f"{folder / archive_name}:{path}"
        beside = f" (nor {basename} beside it)" if basename != path else ""
        raise FileNotFoundError(
            f"{folder} holds neither {path}{beside} nor {archive_name}; put one there, or leave "
            f"root unset to download {name} through the cache"
        )
    from gluon_hub import cache

    target = cache.extracted_dir(name) / path
    if not target.is_file():
        extract_checked(dataset_file(ref, None, []), path, sha1, target)
    return target.read_bytes(), str(target)
