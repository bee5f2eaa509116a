"""The hub's configuration file: where it lives, which keys it may hold, and reading it.

Environment variables (read in :mod:`gluon_hub._env`) win over the file. The cache reads its
locations and limits from here (:mod:`gluon_hub._cache._settings`), the hub its plugin
preferences; neither owns the file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from . import _env

APP_NAME = "gluon_hub"

#: The cache's limits and timeouts, settable in the file (and by ``GLUON_HUB_*`` variables).
CACHE_NUMBER_DEFAULTS: dict[str, float] = {
    "lock_timeout": 600.0,
    "connect_timeout": 10.0,
    "read_timeout": 60.0,
    "retries": 3.0,
    "max_extract_size": float(16 << 30),
    "max_download_size": float(16 << 30),
    "download_deadline": 3600.0,
    # registry.json is about 0.65 MB; eight MiB leaves room to grow a dozen-fold while a
    # wrong URL (a video, a disk image) is cut off after a few MB.
    "max_index_size": float(8 << 20),
}
#: Every key the file may hold: the cache's, and ``prefer_plugins`` (which plugin wins a
#: bare name), read by the hub.
CONFIG_KEYS = frozenset({"home", "shared_caches", "mirrors", "offline", "progress", "prefer_plugins",
                         *CACHE_NUMBER_DEFAULTS})


def config_path() -> Path:
    """The config file: ``GLUON_HUB_CONFIG`` or the platform's user config dir."""
    configured = _env.cache_config()
    if configured:
        return Path(configured).expanduser()
    import platformdirs

    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False)) / "config.json"


def read_config() -> dict[str, Any]:
    """The config file's settings; {} when it does not exist."""
    path = config_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise ValueError(f"cannot read the gluon_hub config file {path}: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: the config file must hold a JSON object")
    unknown = set(data) - CONFIG_KEYS
    if unknown:
        raise ValueError(f"{path}: unknown keys {sorted(unknown)}; known: {sorted(CONFIG_KEYS)}")
    return data


def preferred_plugins() -> tuple[list[str], str]:
    """Plugins preferred for bare names, in order, and where a user would set that.

    ``GLUON_HUB_PREFER_PLUGINS`` wins over the config file's ``prefer_plugins``.
    """
    where = str(config_path())
    names = _env.preferred_plugins()
    if names is not None:
        return names, where
    value = read_config().get("prefer_plugins", [])
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{where}: 'prefer_plugins' must be a list of plugin names")
    return [v.strip() for v in value if v.strip()], where
