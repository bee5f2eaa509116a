"""Name resolution over the specs of every loaded plugin.

Names are case-insensitive (as in GluonCV) and may be qualified as ``plugin/name``. A bare
name registered by two plugins is ambiguous unless the user prefers one of them
(``GLUON_HUB_PREFER_PLUGINS`` or the config key ``prefer_plugins``); a name a plugin
registered twice, or that belongs to a plugin that failed, raises only when asked for.
"""

from __future__ import annotations

import difflib
import fnmatch
import re
from typing import TYPE_CHECKING, Any, Iterator

from . import _env
from .errors import (
    AmbiguousNameError,
    IndexFormatError,
    PluginError,
    PluginNotInstalledError,
    UnknownNameError,
)
from .specs import SPEC_KINDS

if TYPE_CHECKING:
    from ._hub import Hub


class Catalog:
    """The specs of one kind, indexed by qualified and by bare name."""

    def __init__(self, kind: str, specs: list[Any], hub: Hub) -> None:
        self.kind = kind
        self.noun = SPEC_KINDS[kind].noun
        self._hub = hub
        self._by_qualified: dict[str, Any] = {}
        self._by_bare: dict[str, list[str]] = {}
        self._duplicates: dict[str, str] = {}
        for spec in specs:
            key = spec.qualified_name.lower()
            if key in self._by_qualified:
                error = (
                    f"plugin {spec.plugin!r} registers the {self.noun} {spec.name!r} "
                    "more than once; report this to the plugin's authors"
                )
                if _env.strict_plugins():
                    raise PluginError(error)
                self._duplicates[key] = error
                continue
            self._by_qualified[key] = spec
            self._by_bare.setdefault(spec.name.lower(), []).append(key)

    def __iter__(self) -> Iterator[Any]:
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
            raise TypeError(f"a {self.noun} name must be a non-empty string, got {name!r}")
        key = name.strip().lower()
        if "/" in key:
            if key not in self._by_qualified:
                plugin, bare = key.split("/", 1)
                self._raise_missing(name, bare, plugin)
        else:
            candidates = self._by_bare.get(key, [])
            if not candidates:
                self._raise_missing(name, key, None)
            key = candidates[0] if len(candidates) == 1 else self._preferred(name, candidates)
        if key in self._duplicates:
            raise PluginError(self._duplicates[key])
        return self._by_qualified[key]

    def _preferred(self, name: str, candidates: list[str]) -> str:
        """The candidate of the first preferred plugin; ambiguous when none is preferred."""
        by_plugin = {self._by_qualified[c].plugin.lower(): c for c in candidates}
        preferred, where = self._hub.preferred_plugins()
        for plugin in preferred:
            if plugin.lower() in by_plugin:
                return by_plugin[plugin.lower()]
        qualified = [self._by_qualified[c].qualified_name for c in sorted(candidates)]
        first = self._by_qualified[sorted(candidates)[0]].plugin
        raise AmbiguousNameError(
            f"{self.noun} {name!r} is provided by several plugins: {', '.join(qualified)}; "
            f"ask for one of these qualified names, or prefer one plugin for bare names with "
            f"GLUON_HUB_PREFER_PLUGINS={first} (or \"prefer_plugins\": [\"{first}\"] in {where})"
        )

    def _raise_missing(self, name: str, bare: str, plugin: str | None) -> None:
        what = f"{self.noun} {name!r}"
        try:
            index = self._hub.index()
            indexed = index.lookup(self.kind, bare)
            note = ""
        except IndexFormatError as exc:  # keep the "unknown name" error; say why no hint
            index, indexed, note = None, None, f"; the registry index could not be read: {exc}"
        if index is not None and indexed is not None and plugin in (None, indexed["plugin"].lower()):
            installed = self._hub.manager.info(indexed["plugin"])
            if installed is None:
                raise PluginNotInstalledError(index.install_hint(what, indexed["distribution"]))
            error = self._hub.plugin_error(indexed["plugin"])
            if error is not None:
                raise PluginError(
                    f"{what} comes from plugin {indexed['plugin']!r}, which is not usable: {error}"
                )
            # The plugin is installed and loaded without this name: what is installed wins
            # over what an index claims, so no install command, only the fact.
            source = "" if index.packaged else f" {index.source}"
            note = (
                f"; the registry index{source} lists it under plugin {indexed['plugin']!r}, "
                f"but the installed {installed.distribution or indexed['plugin']} "
                f"{installed.version or ''} does not provide it"
            )
        if plugin is not None:
            error = self._hub.plugin_error(plugin)
            if error is not None:
                raise PluginError(f"plugin {plugin!r} is not usable: {error}")
        names = [s.name.lower() for s in self] + [s.qualified_name.lower() for s in self]
        close = difflib.get_close_matches(name.lower(), names, n=5, cutoff=0.6)
        hint = f"; did you mean: {', '.join(close)}?" if close else ""
        unusable = [i for i in self._hub.manager.unusable() if plugin in (None, i.name.lower())]
        if unusable:
            listed = ", ".join(f"{i.name} ({i.status})" for i in unusable)
            note += (
                f"; plugins that could not be loaded might provide it: {listed} "
                "(gluon-hub plugins says why)"
            )
        raise UnknownNameError(
            f"no {self.noun} named {name!r}{hint} (gluon-hub list or gluon-hub search shows "
            f"what is available){note}"
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
