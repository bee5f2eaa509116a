"""Name resolution over the specs of every loaded plugin.

Names are case-insensitive (as in GluonCV) and may be qualified as ``plugin/name``. A bare
name registered by two plugins is ambiguous; a name a plugin registered twice, or that
belongs to a plugin that failed, raises only when it is asked for.
"""

from __future__ import annotations

import difflib
import fnmatch
import re
from typing import Any, Callable

from . import _env
from .errors import (
    AmbiguousNameError,
    IndexFormatError,
    PluginError,
    PluginNotInstalledError,
    UnknownNameError,
)

_SINGULAR = {
    "models": "model",
    "datasets": "dataset",
    "losses": "loss",
    "batchify": "batchify function",
    "commands": "command",
}


class Catalog:
    """The specs of one kind, indexed by qualified and by bare name."""

    def __init__(
        self,
        kind: str,
        specs: list[Any],
        plugin_errors: Callable[[str], str | None],
        index_lookup: Callable[[str, str], dict[str, Any] | None],
    ) -> None:
        self.kind = kind
        self._plugin_errors = plugin_errors
        self._index_lookup = index_lookup
        self._by_qualified: dict[str, Any] = {}
        self._by_bare: dict[str, list[str]] = {}
        self._duplicates: dict[str, str] = {}
        for spec in specs:
            key = spec.qualified_name.lower()
            if key in self._by_qualified:
                error = (
                    f"plugin {spec.plugin!r} registers the {_SINGULAR[kind]} {spec.name!r} "
                    "more than once; report this to the plugin's authors"
                )
                if _env.strict_plugins():
                    raise PluginError(error)
                self._duplicates[key] = error
                continue
            self._by_qualified[key] = spec
            self._by_bare.setdefault(spec.name.lower(), []).append(key)

    def __iter__(self):
        """The usable specs: a name its plugin registered twice is left out."""
        return (s for k, s in self._by_qualified.items() if k not in self._duplicates)

    def __len__(self) -> int:
        return len(self._by_qualified) - len(self._duplicates)

    def duplicate_errors(self) -> dict[str, list[str]]:
        """Errors about names registered twice, by plugin, for ``plugins()`` to show."""
        errors: dict[str, list[str]] = {}
        for key, error in self._duplicates.items():
            errors.setdefault(self._by_qualified[key].plugin, []).append(error)
        return errors

    def get(self, name: str) -> Any:
        """The spec for ``name`` or ``plugin/name``; raises with the fix when there is none."""
        if not isinstance(name, str) or not name:
            raise TypeError(f"a {_SINGULAR[self.kind]} name must be a non-empty string, got {name!r}")
        key = name.strip().lower()
        if "/" in key:
            if key not in self._by_qualified:
                plugin, bare = key.split("/", 1)
                self._raise_missing(name, bare, plugin)
        else:
            candidates = self._by_bare.get(key, [])
            if not candidates:
                self._raise_missing(name, key, None)
            if len(candidates) > 1:
                qualified = [self._by_qualified[c].qualified_name for c in sorted(candidates)]
                raise AmbiguousNameError(
                    f"{_SINGULAR[self.kind]} {name!r} is provided by several plugins: "
                    f"{', '.join(qualified)}; ask for one of these qualified names"
                )
            key = candidates[0]
        if key in self._duplicates:
            raise PluginError(self._duplicates[key])
        return self._by_qualified[key]

    def _raise_missing(self, name: str, bare: str, plugin: str | None) -> None:
        what = _SINGULAR[self.kind]
        try:
            indexed = self._index_lookup(self.kind, bare)
            index_note = ""
        except IndexFormatError as exc:  # keep the "unknown name" error; say why no hint
            indexed, index_note = None, f"; the registry index could not be read: {exc}"
        if indexed is not None and (plugin is None or plugin == indexed["plugin"].lower()):
            error = self._plugin_errors(indexed["plugin"])
            if error is not None:
                raise PluginError(
                    f"{what} {name!r} comes from plugin {indexed['plugin']!r}, which is not "
                    f"usable: {error}"
                )
            raise PluginNotInstalledError(
                f"{what} {name!r} is provided by the {indexed['distribution']} plugin, which is "
                f"not installed; run: pip install {indexed['distribution']}"
            )
        if plugin is not None:
            error = self._plugin_errors(plugin)
            if error is not None:
                raise PluginError(f"plugin {plugin!r} is not usable: {error}")
        names = [s.name.lower() for s in self] + [s.qualified_name.lower() for s in self]
        close = difflib.get_close_matches(name.lower(), names, n=5, cutoff=0.6)
        hint = f"; did you mean: {', '.join(close)}?" if close else ""
        raise UnknownNameError(
            f"no {what} named {name!r}{hint} (gluon-hub list or gluon-hub search shows "
            f"what is available){index_note}"
        )

    def select(self, pattern: str | None = None, plugin: str | None = None, **equal: Any) -> list[Any]:
        """Specs whose name or qualified name matches a shell-style ``pattern``, sorted."""
        match = re.compile(fnmatch.translate((pattern or "*").lower())).match
        wanted_plugin = plugin.lower() if plugin is not None else None
        filters = [(k, v) for k, v in equal.items() if v is not None]
        chosen = []
        for spec in self:
            if wanted_plugin is not None and spec.plugin.lower() != wanted_plugin:
                continue
            if pattern and not (match(spec.name.lower()) or match(spec.qualified_name.lower())):
                continue
            if any(getattr(spec, k) != value for k, value in filters):
                continue
            chosen.append(spec)
        return sorted(chosen, key=lambda s: (s.name.lower(), s.plugin))
