"""The cache's layout on disk, verified stamps, per-process temp files, atomic placement, locks.

Layout under the cache home (``GLUON_HUB_HOME``)::

    files/<algorithm>/<hex digest>/<name>        the verified file, never anything else
    files/<algorithm>/<hex digest>/.stamp.json   size, mtime and hash seen when verified
    files/<algorithm>/<hex digest>/.lock         held while one process downloads
    files/<algorithm>/<hex digest>/.<name>.<host>.<pid>.<rand>.part (+ .json)
                                                 an unfinished download and its validator
    files/<algorithm>/<hex digest>/.<name>.<host>.<pid>.<rand>.tmp
                                                 an extraction or copy in progress

Correctness does not rest on the lock (file locks silently fail on some network
filesystems): every process writes its own temp file and renames it into place only
after the hash matched, so the final path never holds unverified bytes. The lock only
spares duplicate downloads.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import re
import secrets
import socket
import threading
import time
from pathlib import Path
from typing import Iterator

from ..specs import FileRef
from ._hashing import hash_file

log = logging.getLogger("gluon_hub.cache")

STAMP = ".stamp.json"
LOCK = ".lock"
#: A partial download from another host counts as abandoned after this long untouched.
STALE_PARTIAL_S = 300.0
_SAFE_NAME = re.compile(r"[^A-Za-z0-9_.\-]+")
_HOST = _SAFE_NAME.sub("_", socket.gethostname())[:40] or "host"

#: Files verified in this process whose stamp could not be written (a read-only cache).
_memo: dict[tuple[str, int, int], str] = {}


def entry_dir(home: Path, file_hash: str) -> Path:
    algorithm, digest = file_hash.split(":", 1)
    return home / "files" / algorithm / digest


def _basename(value: str) -> str:
    name = value.rstrip("/").rsplit("/", 1)[-1].split("?", 1)[0]
    name = _SAFE_NAME.sub("_", name).lstrip(".")
    return name or "file"


def delivered_name(ref: FileRef) -> str:
    """The file name the cache gives the delivered file."""
    if ref.extract:
        return _basename(ref.extract)
    return _basename(ref.filename or ref.urls[0])


def download_name(ref: FileRef) -> str:
    """The name of the published file (the archive when ``extract`` is set)."""
    return _basename(ref.filename or ref.urls[0])


def visible_file(directory: Path) -> Path | None:
    """The one non-hidden file of an entry directory, if any."""
    try:
        names = sorted(n for n in os.listdir(directory) if not n.startswith("."))
    except (FileNotFoundError, NotADirectoryError):
        return None
    return directory / names[0] if names else None


def read_stamp(path: Path) -> dict | None:
    try:
        data = json.loads((path.parent / STAMP).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("name") == path.name else None


def stamp_matches(path: Path, file_hash: str, stat: os.stat_result) -> bool:
    """Whether the stamp (or this process's memory) vouches for the file as it is now."""
    stamp = read_stamp(path)
    if stamp is not None and (stamp.get("hash"), stamp.get("size"), stamp.get("mtime_ns")) == (
        file_hash, stat.st_size, stat.st_mtime_ns,
    ):
        return True
    return _memo.get((str(path), stat.st_size, stat.st_mtime_ns)) == file_hash


def write_stamp(path: Path, file_hash: str, source: str = "") -> None:
    """Record that ``path`` had ``file_hash`` at its current size and mtime.

    Where the directory is read-only the verification is remembered in this process only.
    """
    stat = path.stat()
    _memo[(str(path), stat.st_size, stat.st_mtime_ns)] = file_hash
    stamp = {
        "name": path.name, "hash": file_hash, "size": stat.st_size,
        "mtime_ns": stat.st_mtime_ns, "verified_at": time.time(), "source": source,
    }
    tmp = path.parent / f"{STAMP}.{_HOST}.{os.getpid()}.{secrets.token_hex(4)}"
    try:
        tmp.write_text(json.dumps(stamp), encoding="utf-8")
        os.replace(tmp, path.parent / STAMP)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()


def check_entry(path: Path, ref: FileRef, rehash: bool = False) -> bool | None:
    """True when ``path`` holds ``ref``'s bytes, False when it does not, None when absent.

    A matching stamp is trusted unless ``rehash``; otherwise the file is hashed in full
    and, when it matches, stamped again.
    """
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    if ref.size is not None and stat.st_size != ref.size:
        return False
    if not rehash and stamp_matches(path, ref.hash, stat):
        return True
    if hash_file(path, ref.algorithm) != ref.hash:
        return False
    write_stamp(path, ref.hash)
    return True


def remove_entry_file(path: Path) -> None:
    """Remove a cached file and its stamp (a corrupted or purged entry)."""
    for victim in (path, path.parent / STAMP):
        with contextlib.suppress(FileNotFoundError):
            victim.unlink()


def fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def place(tmp: Path, final: Path, file_hash: str, source: str) -> Path:
    """Move a verified, fsynced temp file into place atomically and stamp it."""
    os.replace(tmp, final)
    fsync_dir(final.parent)
    write_stamp(final, file_hash, source)
    return final


def _token() -> str:
    return f"{_HOST}.{os.getpid()}.{secrets.token_hex(4)}"


def new_temp(directory: Path, name: str) -> Path:
    """A temp path no other process will use, in ``directory`` (same filesystem)."""
    return directory / f".{name}.{_token()}.tmp"


def meta_path(part: Path) -> Path:
    return part.with_name(part.name + ".json")


#: Names of the partial files this process is writing now. A partial of this process that
#: is not among them was left by an earlier, failed attempt and may be resumed; one that
#: is belongs to another thread, whose download is still running.
_LIVE_PARTIALS: set[str] = set()
_LIVE_LOCK = threading.Lock()


def _abandoned(part: Path, name: str) -> bool:
    """Whether the process that wrote ``part`` is gone (so its bytes may be resumed)."""
    rest = part.name[len(name) + 2 : -len(".part")]
    host, _, tail = rest.rpartition(".")  # tail is the random token
    host, _, pid = host.rpartition(".")
    if host == _HOST and pid.isdigit():
        if int(pid) == os.getpid():
            return part.name not in _LIVE_PARTIALS
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            return True
        except OSError:
            return False
        return False
    with contextlib.suppress(OSError):
        return time.time() - part.stat().st_mtime > STALE_PARTIAL_S
    return False


def claim_partial(directory: Path, name: str) -> Path:
    """This process's partial-download path, adopting an abandoned one when there is one.

    Adoption is an atomic rename, so two processes never write the same partial file.
    """
    mine = directory / f".{name}.{_token()}.part"
    candidates = sorted(directory.glob(f".{glob_escape(name)}.*.part"), key=_size, reverse=True)
    with _LIVE_LOCK:
        _LIVE_PARTIALS.add(mine.name)
        for part in candidates:
            if not _abandoned(part, name):
                continue
            try:
                os.rename(part, mine)
            except FileNotFoundError:
                continue  # another process adopted it first
            with contextlib.suppress(OSError):
                os.rename(meta_path(part), meta_path(mine))
            break
    return mine


def release_partial(part: Path) -> None:
    """Say this process no longer writes ``part`` (placed, discarded or kept to resume)."""
    with _LIVE_LOCK:
        _LIVE_PARTIALS.discard(part.name)


def glob_escape(name: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", name)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return -1


def discard(*paths: Path) -> None:
    """Remove temp files, ignoring those already gone."""
    for path in paths:
        for victim in (path, meta_path(path)):
            with contextlib.suppress(FileNotFoundError):
                victim.unlink()


def temp_files(directory: Path) -> list[Path]:
    """Partial downloads and temp files of an entry directory."""
    return [p for p in directory.glob(".*") if p.name.endswith((".part", ".part.json", ".tmp"))]


@contextlib.contextmanager
def locked(directory: Path, timeout: float) -> Iterator[bool]:
    """Hold the entry's lock; yields False when it could not be had in ``timeout``.

    A lock held by a killed process is released by the kernel; a lock that cannot be had
    (a hung network filesystem, a stuck process) delays a download by ``timeout`` at
    most: the download then goes ahead, still safe through temp files and rename.
    """
    import filelock

    lock = filelock.FileLock(str(directory / LOCK), timeout=timeout)
    try:
        lock.acquire()
    except filelock.Timeout:
        log.warning("lock %s still held after %.0f s; downloading without it", lock.lock_file, timeout)
        yield False
        return
    except OSError as exc:
        if exc.errno not in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS):
            raise
        log.warning("cannot lock %s (%s); downloading without a lock", directory, exc)
        yield False
        return
    try:
        yield True
    finally:
        lock.release()
