"""Name resolution over the specs of every loaded plugin.

Names are case-insensitive (as in GluonCV) and may be qualified as ``plugin/name``. A bare
name registered by two plugins is ambiguous unless the user prefers one of them
(``GLUON_HUB_PREFER_PLUGINS`` or the config key ``prefer_plugins``); a name a plugin
registered twice raises only when asked for. A catalog knows only its specs: the hub, which
knows the plugins and the registry index, explains a missing name (:meth:`Hub.lookup`).
"""

from __future__ import annotations

import difflib
import fnmatch
import re
from typing import Any, Iterator

from . import _env
from ._config import preferred_plugins
from .errors import AmbiguousNameError, PluginError, UnknownNameError
from .specs import SPEC_KINDS


class Catalog:
    """The specs of one kind, indexed by qualified and by bare name."""

    def __init__(self, kind: str, specs: list[Any]) -> None:
        self.kind = kind
        self.noun = SPEC_KINDS[kind].noun
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
        """The spec for ``name`` or ``plugin/name``; an unknown name raises with close matches."""
        if not isinstance(name, str) or not name:
            raise TypeError(f"a {self.noun} name must be a non-empty string, got {name!r}")
        key = name.strip().lower()
        if "/" in key:
            if key not in self._by_qualified:
                self._raise_missing(name)
        else:
            candidates = self._by_bare.get(key, [])
            if not candidates:
                self._raise_missing(name)
            key = candidates[0] if len(candidates) == 1 else self._preferred(name, candidates)
        if key in self._duplicates:
            raise PluginError(self._duplicates[key])
        return self._by_qualified[key]

    def _preferred(self, name: str, candidates: list[str]) -> str:
        """The candidate of the first preferred plugin; ambiguous when none is preferred."""
        by_plugin = {self._by_qualified[c].plugin.lower(): c for c in candidates}
        preferred, where = preferred_plugins()
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

    def close_matches(self, name: str) -> list[str]:
        """The names most like ``name``, best first: what an unknown name suggests."""
        names = [s.name.lower() for s in self] + [s.qualified_name.lower() for s in self]
        return difflib.get_close_matches(name.lower(), names, n=5, cutoff=0.6)

    def _raise_missing(self, name: str) -> None:
        close = self.close_matches(name)
        hint = f"; did you mean: {', '.join(close)}?" if close else ""
        raise UnknownNameError(
            f"no {self.noun} named {name!r}{hint} (gluon-hub list or gluon-hub search shows "
            "what is available)"
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
