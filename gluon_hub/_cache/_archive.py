"""Extract one member of a published zip safely, hashing it as it is written.

The whole archive is checked first: no absolute paths, no ``..``, no links, no member
larger than the limit, and no member compressed suspiciously well (a zip bomb). The
member is then streamed out with a byte count, since sizes in zip headers can lie.
"""

from __future__ import annotations

import os
import stat
import zipfile
from pathlib import Path

from ._download import CHUNK, check_disk_full
from ._errors import UnsafeArchiveError
from ._hashing import Hasher

MAX_MEMBERS = 10_000
#: Real weight files compress by a few percent; zeros compress about 1000-fold.
MAX_RATIO = 100
RATIO_CHECK_FROM = 1 << 20


def _check_name(archive: str, name: str) -> None:
    parts = name.replace("\\", "/").split("/")
    if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":") or ".." in parts:
        raise UnsafeArchiveError(f"{archive}: member {name!r} escapes the extraction folder")


def _check_member(archive: str, info: zipfile.ZipInfo, limit: int) -> None:
    _check_name(archive, info.filename)
    mode = info.external_attr >> 16
    if stat.S_ISLNK(mode):
        raise UnsafeArchiveError(f"{archive}: member {info.filename!r} is a symbolic link")
    if info.file_size > limit:
        raise UnsafeArchiveError(
            f"{archive}: member {info.filename!r} expands to {info.file_size} bytes, "
            f"over the limit of {limit} (the spec's size, else GLUON_HUB_MAX_EXTRACT_SIZE)"
        )
    if info.file_size > RATIO_CHECK_FROM and info.file_size > MAX_RATIO * max(info.compress_size, 1):
        raise UnsafeArchiveError(
            f"{archive}: member {info.filename!r} expands {info.file_size} bytes from "
            f"{info.compress_size}; refusing a likely zip bomb"
        )


def extract_member(
    archive: Path, member: str, dest: Path, algorithm: str, limit: int, name: str | None = None
) -> str:
    """Write ``member`` of ``archive`` to ``dest``; return its ``algorithm:hex`` hash.

    ``name`` is what errors call the archive (its URL, say): ``archive`` is usually a
    temp file whose name would mean nothing to the reader.
    """
    label = name or archive.name
    try:
        zf = zipfile.ZipFile(archive)
    except zipfile.BadZipFile as exc:
        raise UnsafeArchiveError(f"{label} is not a valid zip archive: {exc}") from None
    with zf:
        infos = zf.infolist()
        if len(infos) > MAX_MEMBERS:
            raise UnsafeArchiveError(f"{label} holds {len(infos)} members")
        for info in infos:
            _check_member(label, info, limit)
        matches = [i for i in infos if i.filename == member and not i.is_dir()]
        if not matches and "/" not in member:
            # Publishers' zips often hold the file inside a folder, which GluonNLP's and
            # GluonCV's readers flatten: take the one file of that name (its hash is checked).
            matches = [i for i in infos if not i.is_dir() and i.filename.rsplit("/", 1)[-1] == member]
            if len(matches) > 1:
                raise UnsafeArchiveError(f"{label} holds {member!r} in several folders: "
                                         + ", ".join(i.filename for i in matches[:10]))
        if not matches:
            names = ", ".join(i.filename for i in infos[:10])
            raise UnsafeArchiveError(f"{label} has no member {member!r}; it holds: {names}")
        hasher = Hasher(algorithm)
        try:
            with zf.open(matches[0]) as reader, open(dest, "wb") as writer:
                while chunk := reader.read(CHUNK):
                    if hasher.size + len(chunk) > limit:
                        raise UnsafeArchiveError(
                            f"{label}: member {member!r} expands beyond {limit} bytes"
                        )
                    writer.write(chunk)
                    hasher.update(chunk)
                writer.flush()
                os.fsync(writer.fileno())
        except OSError as exc:
            check_disk_full(exc, dest)
            raise
        except (zipfile.BadZipFile, EOFError) as exc:  # CRC errors, truncated data
            raise UnsafeArchiveError(f"{label}: member {member!r} is corrupt: {exc}") from None
    return hasher.value()
