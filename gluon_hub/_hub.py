"""The process-wide hub: one plugin manager, its catalogs and the registry index, built lazily."""

from __future__ import annotations

import dataclasses
from typing import Any

from . import _env, _index
from ._catalog import Catalog
from ._manager import LOADED, PluginManager
from .specs import PluginInfo


class Hub:
    """Discovers plugins on first use and answers lookups across them."""

    def __init__(self, autoload: bool = True) -> None:
        self.manager = PluginManager()
        self._autoload = autoload
        self._discovered = False
        self._catalogs: dict[str, Catalog] = {}
        self._index: _index.Index | None = None
        self._index_location: str | None = None

    def _ensure_discovered(self) -> None:
        if self._discovered:
            return
        if self._autoload:
            try:
                self.manager.load_entry_points()
            except BaseException:
                # Strict mode raised part-way: start afresh next time rather than answer
                # from a half-discovered set of plugins.
                self.manager = PluginManager()
                raise
        self._discovered = True

    def catalog(self, kind: str) -> Catalog:
        self._ensure_discovered()
        catalog = self._catalogs.get(kind)
        if catalog is None:
            catalog = Catalog(kind, self.manager.specs(kind), self._plugin_error, self._index_lookup)
            self._catalogs[kind] = catalog
        return catalog

    def plugins(self) -> list[PluginInfo]:
        self._ensure_discovered()
        duplicates: dict[str, list[str]] = {}
        for kind in self.manager.HOOK_KINDS:  # calling the hooks may mark a plugin failed
            for plugin, errors in self.catalog(kind).duplicate_errors().items():
                duplicates.setdefault(plugin, []).extend(errors)
        infos = self.manager.infos()
        return [
            dataclasses.replace(i, error="; ".join(filter(None, [i.error, *duplicates[i.name]])))
            if i.name in duplicates else i
            for i in infos
        ]

    def register(self, plugin: Any, name: str | None = None, **meta: Any):
        self._ensure_discovered()
        info = self.manager.register(plugin, name, **meta)
        self._catalogs.clear()
        return info

    def unregister(self, name: str) -> None:
        self._ensure_discovered()
        self.manager.unregister(name)
        self._catalogs.clear()

    # -- index -----------------------------------------------------------------------
    def set_index(self, location: str | None) -> _index.Index:
        """Use another registry index (path or URL); validated now, so errors show at once."""
        index = _index.read(location)
        self._index, self._index_location = index, location
        return index

    def index(self) -> _index.Index:
        if self._index is None:
            self._index = _index.read(self._index_location or _env.index_location())
        return self._index

    def _index_lookup(self, kind: str, bare: str) -> dict[str, Any] | None:
        return self.index().lookup(kind, bare)

    def _plugin_error(self, plugin: str) -> str | None:
        info = self.manager.info(plugin)
        if info is None:
            return None
        if info.status != LOADED:
            return f"{info.status}: {info.error}"
        errors = [e for (kind, p), e in self.manager.hook_errors.items() if p == plugin]
        return "; ".join(errors) or None


_default: Hub | None = None


def get_hub() -> Hub:
    """The process-wide hub, created on first use."""
    global _default
    if _default is None:
        _default = Hub()
    return _default


def reset_hub(autoload: bool = True) -> Hub:
    """Forget every plugin and start again (tests, notebooks after ``pip install``)."""
    global _default
    _default = Hub(autoload=autoload)
    return _default
