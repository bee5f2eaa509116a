"""The hash-verified file cache's machinery (private; the public API is :mod:`gluon_hub.cache`).

One job per module: ``_settings`` (locations, mirrors, limits), ``_download`` (HTTP
streaming, resume, retries, limits), ``_hashing`` (every file hash), ``_store`` (layout,
stamps, temp files, locks), ``_archive`` (safe zip extraction), ``_paramsfile`` (NDArray
file validation), ``_fetch`` (putting them together), ``_remote_index`` (a registry index
fetched over http). The layout and trust model are documented in ``docs/cache.md``.

Nothing is re-exported here: import from :mod:`gluon_hub.cache`.
"""

from __future__ import annotations
