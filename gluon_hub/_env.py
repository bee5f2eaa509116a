"""Every environment variable the hub reads, in one place, read at call time.

=====================================  ==================================================
``GLUON_HUB_DISABLE_PLUGIN_AUTOLOAD``  ``1`` turns entry-point discovery off.
``GLUON_HUB_DISABLE_PLUGINS``          Comma-separated plugin names to skip.
``GLUON_HUB_STRICT_PLUGINS``           ``1`` re-raises plugin errors (the project's CI).
``GLUON_HUB_INDEX``                    Path or http(s) URL of another ``registry.json``.
=====================================  ==================================================

The cache's variables are documented with it in :mod:`gluon_hub._cache`; they are read
here as well so that there is one list.
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


def index_location() -> str | None:
    return text("GLUON_HUB_INDEX")
