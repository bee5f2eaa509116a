"""Every environment variable the hub reads, in one place, read at call time.

=====================================  ==================================================
``GLUON_HUB_DISABLE_PLUGIN_AUTOLOAD``  ``1`` turns entry-point discovery off.
``GLUON_HUB_DISABLE_PLUGINS``          Comma-separated plugin names to skip.
``GLUON_HUB_STRICT_PLUGINS``           ``1`` re-raises plugin errors (the project's CI).
``GLUON_HUB_PREFER_PLUGINS``           Comma-separated plugin names, in order, that win a
                                       bare name several plugins provide (config key
                                       ``prefer_plugins``).
``GLUON_HUB_INDEX``                    Path or http(s) URL of another ``registry.json``.
``GLUON_HUB_DEBUG``                    ``1`` makes ``gluon-hub`` print the traceback of every
                                       error, as ``--debug`` does.
``GLUON_HUB_HOME``                     Cache directory (default: the platform's user cache
                                       directory, ``platformdirs.user_cache_dir``).
``GLUON_HUB_SHARED_CACHE``             Read-only caches searched after ``GLUON_HUB_HOME``
                                       (``os.pathsep`` or comma separated).
``GLUON_HUB_MIRRORS``                  Ordered mirror bases: http(s)://, file:// or plain
                                       directories (comma or whitespace separated).
``GLUON_HUB_CONFIG``                   The cache's JSON config file (default
                                       ``platformdirs.user_config_dir/config.json``).
``GLUON_HUB_OFFLINE``                  ``1`` never touches the network.
``GLUON_HUB_LOCK``                     A lock file (``gluon-hub lock``) that every load
                                       obeys: pinned weight tags, and no download when an
                                       installed spec drifted from it (``docs/lock.md``).
``GLUON_HUB_LOCK_TIMEOUT``             Seconds to wait for another process's download
                                       before downloading anyway (default 600).
``GLUON_HUB_CONNECT_TIMEOUT``          HTTP connect timeout in seconds (default 10).
``GLUON_HUB_READ_TIMEOUT``             HTTP read timeout in seconds (default 60).
``GLUON_HUB_RETRIES``                  Retries per URL on connection errors, 408, 429 and
                                       5xx (default 3).
``GLUON_HUB_PROGRESS``                 ``0`` hides, ``1`` forces download progress bars
                                       (default: shown on a terminal).
``GLUON_HUB_MAX_EXTRACT_SIZE``         Largest archive member extracted, in bytes, when the
                                       spec gives no size (default 16 GiB).
``GLUON_HUB_MAX_DOWNLOAD_SIZE``        Largest download, in bytes, when the spec gives no
                                       size (always for a zip, whose size specs do not
                                       give; default 16 GiB).
``GLUON_HUB_DOWNLOAD_DEADLINE``        Seconds one download from one source may take in
                                       all, retries included (default 3600).
``GLUON_HUB_MAX_INDEX_SIZE``           Largest registry index read, in bytes (default
                                       8 MiB).
``GLUON_HUB_MAX_SYMBOL_SIZE``          Largest symbol JSON read from a user (``deploy
                                       --symbol``), in bytes (default 64 MiB).
=====================================  ==================================================

The cache's variables are explained with it in ``docs/cache.md``; each also has a key
in the cache's config file, which the variable overrides.
"""

from __future__ import annotations

import os

_TRUE = {"1", "true", "yes", "on"}


def flag(name: str) -> bool:
    """Whether a boolean variable is set to a true value."""
    return os.environ.get(name, "").strip().lower() in _TRUE


def names(name: str) -> frozenset[str]:
    """A comma-separated list variable as a set of stripped, non-empty names."""
    return frozenset(n.strip() for n in os.environ.get(name, "").split(",") if n.strip())


def text(name: str) -> str | None:
    """A string variable, or None when unset or empty."""
    value = os.environ.get(name, "").strip()
    return value or None


def autoload_disabled() -> bool:
    return flag("GLUON_HUB_DISABLE_PLUGIN_AUTOLOAD")


def disabled_plugins() -> frozenset[str]:
    return names("GLUON_HUB_DISABLE_PLUGINS")


def strict_plugins() -> bool:
    return flag("GLUON_HUB_STRICT_PLUGINS")


def preferred_plugins() -> list[str] | None:
    """``GLUON_HUB_PREFER_PLUGINS`` in order, or None when unset (the config file decides)."""
    value = text("GLUON_HUB_PREFER_PLUGINS")
    return None if value is None else [n.strip() for n in value.split(",") if n.strip()]


def index_location() -> str | None:
    return text("GLUON_HUB_INDEX")


def debug() -> bool:
    return flag("GLUON_HUB_DEBUG")


def number(name: str) -> float | None:
    """A numeric variable, or None when unset; a non-number raises naming the variable."""
    value = text(name)
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        raise ValueError(f"{name}={value!r} is not a number") from None


def lock_file() -> str | None:
    return text("GLUON_HUB_LOCK")


def cache_home() -> str | None:
    return text("GLUON_HUB_HOME")


def shared_caches() -> str | None:
    return text("GLUON_HUB_SHARED_CACHE")


def mirrors() -> str | None:
    return text("GLUON_HUB_MIRRORS")


def cache_config() -> str | None:
    return text("GLUON_HUB_CONFIG")


def offline() -> bool | None:
    """``GLUON_HUB_OFFLINE`` as a bool, or None when unset (the config file decides)."""
    return flag("GLUON_HUB_OFFLINE") if text("GLUON_HUB_OFFLINE") is not None else None


def cache_numbers() -> dict[str, float | None]:
    """The cache's numeric settings, keyed as in its config file."""
    return {
        "lock_timeout": number("GLUON_HUB_LOCK_TIMEOUT"),
        "connect_timeout": number("GLUON_HUB_CONNECT_TIMEOUT"),
        "read_timeout": number("GLUON_HUB_READ_TIMEOUT"),
        "retries": number("GLUON_HUB_RETRIES"),
        "max_extract_size": number("GLUON_HUB_MAX_EXTRACT_SIZE"),
        "max_download_size": number("GLUON_HUB_MAX_DOWNLOAD_SIZE"),
        "download_deadline": number("GLUON_HUB_DOWNLOAD_DEADLINE"),
        "max_index_size": number("GLUON_HUB_MAX_INDEX_SIZE"),
    }


def max_symbol_size() -> float | None:
    return number("GLUON_HUB_MAX_SYMBOL_SIZE")


def progress() -> bool | None:
    """``GLUON_HUB_PROGRESS`` as a bool, or None when unset (show on a terminal)."""
    return flag("GLUON_HUB_PROGRESS") if text("GLUON_HUB_PROGRESS") is not None else None
