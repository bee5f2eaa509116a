"""The hash-verified file cache (private; the public helpers are in :mod:`gluon_hub.cache`).

One job per module: ``_config`` (locations, mirrors, settings), ``_download`` (HTTP
streaming, resume, retries), ``_store`` (layout, stamps, temp files, locks), ``_archive``
(safe zip extraction), ``_paramsfile`` (NDArray file validation), ``_fetch`` (putting
them together). The layout and trust model are documented in ``docs/cache.md``.
"""

from __future__ import annotations

from ._errors import (
    Attempt,
    CacheError,
    CacheNotWritableError,
    DiskFullError,
    DownloadError,
    OfflineMissError,
    ParamsFormatError,
    UnsafeArchiveError,
)
from ._fetch import add_file, fetch, fetch_params
from ._paramsfile import check_params_file

__all__ = [
    "Attempt",
    "CacheError",
    "CacheNotWritableError",
    "DiskFullError",
    "DownloadError",
    "OfflineMissError",
    "ParamsFormatError",
    "UnsafeArchiveError",
    "add_file",
    "check_params_file",
    "fetch",
    "fetch_params",
]
