"""The weight and data cache: where it is, what it holds, and keeping it right.

Files are addressed by hash and verified before they are placed in the cache; see
``docs/cache.md`` for the layout, the trust model and the environment variables.

Examples
--------
>>> from gluon_hub import cache
>>> cache.cache_dir("/tmp/hub").as_posix()
'/tmp/hub'
"""

from __future__ import annotations

import contextlib
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from ._cache import _store
from ._cache._errors import (
    Attempt,
    CacheError,
    CacheNotWritableError,
    DiskFullError,
    DownloadError,
    OfflineMissError,
    ParamsFormatError,
    UnsafeArchiveError,
)
from ._cache._fetch import add_file, check_weights_file, fetch, fetch_params
from ._cache._hashing import hash_file
from ._cache._paramsfile import check_params_file
from ._cache._settings import settings
from ._config import config_path
from .specs import FILE_KINDS, HASH_LENGTHS, FileRef, ModelSpec

__all__ = [
    "Attempt",
    "CacheEntry",
    "CacheError",
    "CacheNotWritableError",
    "DiskFullError",
    "DownloadError",
    "ExtractedFolder",
    "OfflineMissError",
    "ParamsFormatError",
    "UnsafeArchiveError",
    "add_file",
    "cache_dir",
    "check_params_file",
    "check_weights_file",
    "config_path",
    "entries",
    "extracted",
    "extracted_dir",
    "fetch",
    "fetch_params",
    "FILE_KINDS",
    "files_of",
    "mirrors",
    "offline",
    "prefetch",
    "prefetch_command",
    "progress_setting",
    "purge",
    "purge_extracted",
    "verify",
    "VerifyResult",
]

@dataclass(frozen=True)
class CacheEntry:
    """One cached file: where it is, its hash and size, and whether its stamp vouches for it.

    ``stamped`` is False when the file changed since it was last verified (or was never
    stamped); :func:`verify` re-hashes it. ``shared`` marks a read-only shared cache.
    ``partial`` counts the bytes of unfinished downloads kept for resuming.
    """

    path: Path
    hash: str
    size: int
    stamped: bool
    shared: bool = False
    partial: int = 0

    @property
    def name(self) -> str:
        return self.path.name


def cache_dir(root: str | os.PathLike[str] | None = None) -> Path:
    """The cache directory in use: ``root``, ``GLUON_HUB_HOME``, the config file, or the
    platform's user cache directory."""
    return settings(root).home


def mirrors() -> tuple[str, ...]:
    """The mirror bases tried in order (``GLUON_HUB_MIRRORS``, the config file, or the default)."""
    return settings().mirrors


def progress_setting() -> bool | None:
    """Whether long work shows progress bars (``GLUON_HUB_PROGRESS``, then the config file);
    None leaves it to whether standard error is a terminal. Plugins' own bars follow it."""
    return settings().progress


@contextlib.contextmanager
def offline() -> Iterator[None]:
    """Within the block, files come only from the cache and local mirrors (``GLUON_HUB_OFFLINE=1``):
    a missing one raises :class:`OfflineMissError` instead of downloading. Commands use it to
    download only when the user asks."""
    previous = os.environ.get("GLUON_HUB_OFFLINE")
    os.environ["GLUON_HUB_OFFLINE"] = "1"
    try:
        yield
    finally:
        if previous is None:
            del os.environ["GLUON_HUB_OFFLINE"]
        else:
            os.environ["GLUON_HUB_OFFLINE"] = previous


def _entry_dirs(home: Path) -> Iterable[tuple[str, Path]]:
    base = home / "files"
    for algorithm in sorted(HASH_LENGTHS):
        folder = base / algorithm
        if not folder.is_dir():
            continue
        for child in sorted(folder.iterdir()):
            if child.is_dir() and len(child.name) == HASH_LENGTHS[algorithm]:
                yield f"{algorithm}:{child.name}", child


def _scan(home: Path, shared: bool) -> list[CacheEntry]:
    found = []
    for file_hash, directory in _entry_dirs(home):
        partial = sum(p.stat().st_size for p in _store.temp_files(directory) if p.exists())
        path = _store.visible_file(directory)
        if path is None:
            if partial:
                found.append(CacheEntry(directory, file_hash, 0, False, shared, partial))
            continue
        stat = path.stat()
        found.append(CacheEntry(
            path, file_hash, stat.st_size, _store.stamp_matches(path, file_hash, stat),
            shared, partial,
        ))
    return found


def entries(
    names: Sequence[str] | None = None,
    root: str | os.PathLike[str] | None = None,
    shared: bool = True,
) -> list[CacheEntry]:
    """The cached files (and those of the shared caches unless ``shared=False``).

    ``names`` selects by file name, full hash (a prefix never matches) or model or
    dataset name; all files when empty.
    """
    cfg = settings(root)
    found = _scan(cfg.home, False)
    if shared:
        for home in cfg.shared:
            found += _scan(home, True)
    return _select(found, names)


def files_of(name: str, kind: str | None = "models", tag: str | None = None) -> list[FileRef]:
    """The files a model's weights (every variant, or ``tag``), a dataset, an embedding or a
    vocabulary need; ``kind=None`` takes the first of :data:`FILE_KINDS` that knows ``name``."""
    from ._hub import get_hub

    if kind is not None and kind not in FILE_KINDS:
        raise ValueError(f"kind must be one of {', '.join(FILE_KINDS)}, got {kind!r}")
    spec = get_hub().find(name, FILE_KINDS if kind is None else (kind,))
    if spec.kind != "models":
        if tag is not None:
            raise ValueError(f"{spec.noun} {spec.qualified_name!r} has no weight tags; leave out --tag")
        return list(spec.files)
    if not spec.weights:
        raise ValueError(f"model {spec.qualified_name!r} has no published weights to fetch")
    variants = [spec.weight(tag)] if tag is not None else list(spec.weights)
    return [v.file for v in variants]


def _select(found: list[CacheEntry], names: Sequence[str] | None) -> list[CacheEntry]:
    """Entries named by full hash, file name, or model/dataset name (never a hash prefix)."""
    if not names:
        return found
    from .errors import UnknownNameError

    chosen: dict[Path, CacheEntry] = {}
    for name in names:
        matches = [e for e in found if name in (e.hash, e.name)]
        if not matches:
            hashes: set[str] = set()
            for kind in FILE_KINDS:
                try:
                    hashes |= {ref.hash for ref in files_of(name, kind)}
                except (UnknownNameError, ValueError):
                    continue
            if not hashes:
                raise KeyError(
                    f"{name!r} is neither a cached file name, a full hash, nor a model, "
                    "dataset, embedding or vocabulary; 'gluon-hub cache ls' lists the cache"
                )
            matches = [e for e in found if e.hash in hashes]
        chosen.update((e.path, e) for e in matches)
    return list(chosen.values())


@dataclass(frozen=True)
class VerifyResult:
    """The outcome of re-hashing one entry: ``ok``, ``changed`` (removed) or ``partial``."""

    entry: CacheEntry
    status: str
    actual: str | None = None


def verify(
    names: Sequence[str] | None = None,
    root: str | os.PathLike[str] | None = None,
    remove: bool = True,
) -> list[VerifyResult]:
    """Re-hash cached files in full and refresh their stamps.

    A file whose bytes changed is reported as ``changed`` and, unless ``remove=False``,
    removed from the user's cache so that the next load fetches it again (files in a
    shared cache are only reported).
    """
    results = []
    for entry in entries(names, root):
        if not entry.path.is_file():
            results.append(VerifyResult(entry, "partial"))
            continue
        algorithm = entry.hash.split(":", 1)[0]
        actual = hash_file(entry.path, algorithm)
        if actual == entry.hash:
            _store.write_stamp(entry.path, entry.hash)
            results.append(VerifyResult(entry, "ok", actual))
            continue
        if remove and not entry.shared:
            _store.remove_entry_file(entry.path)
        results.append(VerifyResult(entry, "changed", actual))
    return results


def purge(names: Sequence[str] | None = None, root: str | os.PathLike[str] | None = None) -> list[CacheEntry]:
    """Remove cached files (all of them when ``names`` is empty) with their partial
    downloads; returns what was removed. Shared caches are never touched."""
    removed = []
    for entry in entries(names, root, shared=False):
        directory = entry.path if entry.path.is_dir() else entry.path.parent
        shutil.rmtree(directory, ignore_errors=False)
        removed.append(entry)
    return removed


@dataclass(frozen=True)
class ExtractedFolder:
    """A dataset's archives as a plugin unpacked them (``extracted/<dataset>``); rebuilt
    from the cached archives on next use when removed."""

    dataset: str
    path: Path
    size: int


def extracted_dir(dataset: str, root: str | os.PathLike[str] | None = None) -> Path:
    """The folder where a plugin unpacks ``dataset``'s archives, so that ``cache ls`` and
    ``cache purge`` account for it. Hash-verified files stay in ``files/``; this is derived data."""
    if not dataset or dataset in (".", "..") or "/" in dataset or "\\" in dataset:
        raise ValueError(f"a dataset name without path separators is needed, got {dataset!r}")
    return cache_dir(root) / "extracted" / dataset


def extracted(names: Sequence[str] | None = None, root: str | os.PathLike[str] | None = None) -> list[ExtractedFolder]:
    """The unpacked dataset folders (only those of the datasets in ``names`` when given)."""
    base = cache_dir(root) / "extracted"
    if not base.is_dir():
        return []
    folders = sorted(p for p in base.iterdir() if p.is_dir() and (not names or p.name in names))
    return [ExtractedFolder(p.name, p, sum(f.stat().st_size for f in p.rglob("*") if f.is_file()))
            for p in folders]


def purge_extracted(names: Sequence[str] | None = None,
                    root: str | os.PathLike[str] | None = None) -> list[ExtractedFolder]:
    """Remove unpacked dataset folders (all of them when ``names`` is empty)."""
    removed = extracted(names, root)
    for folder in removed:
        shutil.rmtree(folder.path)
    return removed


def prefetch_command(spec: Any, tag: str | None = None) -> str:
    """The ``gluon-hub cache prefetch`` command that fetches a model's weights (``tag``, named
    when there are several) or a dataset's or embedding's files: what an offline miss tells
    the user to run."""
    if not isinstance(spec, ModelSpec):
        return f"gluon-hub cache prefetch --kind {spec.kind} {spec.qualified_name}"
    option = f" --tag {tag}" if tag is not None and len(spec.weights) > 1 else ""
    return f"gluon-hub cache prefetch {spec.qualified_name}{option}"


def prefetch(
    names: Sequence[str],
    kind: str | None = "models",
    tag: str | None = None,
    root: str | os.PathLike[str] | None = None,
    progress: bool | None = None,
    lock: str | os.PathLike[str] | None = None,
) -> list[Path]:
    """Fetch every file the named models (or datasets, embeddings, vocabularies) need, for use offline
    later; ``kind=None`` takes each name as the first of :data:`FILE_KINDS` that knows it.
    Under a lock file (``lock`` or ``GLUON_HUB_LOCK``) a model's pinned tag only, and every
    name is checked against the lock before anything is downloaded."""
    from . import _lock
    from ._hub import get_hub

    specs = [get_hub().find(name, FILE_KINDS if kind is None else (kind,)) for name in names]
    pinned = [_lock.files_to_fetch(spec, tag, lock) for spec in specs]
    paths = []
    for name, spec, locked in zip(names, specs, pinned):
        for ref in files_of(name, spec.kind, tag) if locked is None else locked:
            try:
                path = fetch(ref, root=root, progress=progress)
            except OfflineMissError as miss:  # this very command, to run where the network is
                raise miss.with_command(prefetch_command(spec, tag)) from None
            if spec.kind == "models":
                check_params_file(path)
            paths.append(path)
    return paths

