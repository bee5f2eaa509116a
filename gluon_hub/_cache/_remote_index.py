"""A registry index at an http(s) URL (``GLUON_HUB_INDEX``): bounded, cached, never fetched offline.

The index is fetched like a download (same timeouts, retries, redirect rules and
deadline) and capped at ``max_index_size`` bytes. A copy that parsed is kept under
``<cache home>/index/`` with its ``ETag``/``Last-Modified``, so that later reads ask the
server whether it changed, offline mode reads the copy without any connection, and a
server that is down does not take the hints and search with it.

A process fetches each index URL at most once: the text it read is kept in memory, so
that a new hub (``reset_hub``), ``set_index`` and the CLI's several reads cost no request.
``forget()`` drops it, for a process that wants a newer index.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
import time
from pathlib import Path
from typing import Callable, Mapping, TypeVar

from ..errors import IndexFormatError
from ._download import SourceFailed, get_bytes
from ._hashing import hash_bytes
from ._settings import settings
from ._store import new_temp

log = logging.getLogger("gluon_hub.cache")

T = TypeVar("T")

#: URL -> the index text this process read (fetched, or the kept copy), parsed once already.
_READ: dict[str, str] = {}
_READ_LOCK = threading.Lock()


def forget() -> None:
    """Drop the indexes read in this process, so that the next read asks the server again."""
    with _READ_LOCK:
        _READ.clear()


def _copy_paths(home: Path, url: str) -> tuple[Path, Path]:
    key = hash_bytes(url.encode("utf-8")).partition(":")[2][:32]
    folder = home / "index"
    return folder / f"{key}.json", folder / f"{key}.meta.json"


def _read_copy(text_path: Path, meta_path: Path, url: str) -> tuple[str, dict] | None:
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        text = text_path.read_text(encoding="utf-8")
    except (OSError, ValueError):
        return None
    if not isinstance(meta, dict) or meta.get("url") != url:
        return None
    return text, meta


def _write(path: Path, text: str) -> None:
    tmp = new_temp(path.parent, path.name)
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def _keep_copy(text_path: Path, meta_path: Path, url: str, text: str, headers: Mapping[str, str]) -> None:
    """Store the index text and its validators; a cache that cannot be written keeps none."""
    meta = {"url": url, "etag": headers.get("ETag"), "last_modified": headers.get("Last-Modified"),
            "fetched_at": time.time()}
    try:
        text_path.parent.mkdir(parents=True, exist_ok=True)
        _write(text_path, text)
        _write(meta_path, json.dumps(meta))
    except OSError as exc:
        log.warning("could not keep a copy of registry index %s in %s: %s", url, text_path.parent, exc)


def read_remote(url: str, parse: Callable[[str, str], T]) -> T:
    """``parse(text, url)`` of the index at ``url``: read before in this process, else
    fetched, else from the kept copy."""
    with _READ_LOCK:
        text = _READ.get(url)
    if text is not None:
        return parse(text, url)
    index, text = _fetch_remote(url, parse)
    with _READ_LOCK:
        _READ[url] = text
    return index


def _fetch_remote(url: str, parse: Callable[[str, str], T]) -> tuple[T, str]:
    """The parsed index and its text, fetched or from the kept copy."""
    cfg = settings()
    text_path, meta_path = _copy_paths(cfg.home, url)
    copy = _read_copy(text_path, meta_path, url)
    if cfg.offline:
        if copy is None:
            raise IndexFormatError(
                f"registry index {url} has not been fetched yet and GLUON_HUB_OFFLINE=1 forbids "
                "fetching it; read it once online, or point GLUON_HUB_INDEX at a local copy"
            )
        return parse(copy[0], url), copy[0]
    headers: dict[str, str] = {}
    if copy is not None:
        if copy[1].get("etag"):
            headers["If-None-Match"] = copy[1]["etag"]
        if copy[1].get("last_modified"):
            headers["If-Modified-Since"] = copy[1]["last_modified"]
    try:
        status, answer, body = get_bytes(url, cfg, cfg.max_index_size,
                                         " (GLUON_HUB_MAX_INDEX_SIZE)", headers)
        if status == 304 and copy is not None:
            return parse(copy[0], url), copy[0]
        if status != 200:
            raise SourceFailed(f"HTTP {status}")
    except SourceFailed as exc:
        if copy is None:
            raise IndexFormatError(f"could not fetch registry index {url}: {exc}") from None
        fetched = time.strftime("%Y-%m-%d %H:%M", time.localtime(copy[1].get("fetched_at", 0)))
        log.warning("could not fetch registry index %s (%s); using the copy fetched %s",
                    url, exc, fetched)
        return parse(copy[0], url), copy[0]
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise IndexFormatError(f"registry index {url} is not UTF-8 text: {exc}") from None
    index = parse(text, url)  # an index that does not parse never replaces a good copy
    _keep_copy(text_path, meta_path, url, text, answer)
    return index, text
