"""The process-wide hub: one plugin manager, its catalogs and the registry index, built lazily."""

from __future__ import annotations

import dataclasses
import difflib
import sys
import threading
import warnings
from pathlib import Path
from types import FrameType
from typing import Any, Sequence

from . import _env, _index
from ._catalog import Catalog
from ._manager import DISABLED, LOADED, PluginManager
from .errors import (
    AmbiguousNameError,
    HubError,
    IndexFormatError,
    PluginError,
    PluginNotInstalledError,
    PluginWarning,
    UnknownNameError,
)
from .specs import SPEC_KINDS, PluginInfo

_PACKAGE = str(Path(__file__).resolve().parent)


def _outside_stacklevel() -> int:
    """The ``stacklevel`` of the first caller outside gluon_hub, so a warning points at
    the user's line rather than at the hub's internals."""
    frame: FrameType | None = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    return level


def _warning_text(info: PluginInfo) -> str:
    where = f"distribution {info.distribution or info.module or '?'} {info.version or ''}".rstrip()
    if info.status == DISABLED:
        return (
            f"plugin {info.name!r} ({where}) is disabled by GLUON_HUB_DISABLE_PLUGINS; its "
            "names are unavailable until it is removed from that variable"
        )
    return (
        f"plugin {info.name!r} ({where}) is {info.status}: {info.error}; its names are "
        f"unavailable. Fix or uninstall it, or skip it with GLUON_HUB_DISABLE_PLUGINS={info.name}"
    )


class Hub:
    """Discovers plugins on first use and answers lookups across them.

    Safe to share between threads: discovery and each catalog are built once, under a
    lock, however many threads ask first.
    """

    def __init__(self, autoload: bool = True) -> None:
        self.manager = PluginManager()
        self._autoload = autoload
        self._discovered = False
        self._catalogs: dict[str, Catalog] = {}
        self._index: _index.Index | None = None
        self._index_location: str | None = None
        self._lock = threading.RLock()
        #: Plugins already warned about (one warning per plugin and process).
        self._warned: set[str] = set()
        self._statuses_changed = False

    def _ensure_discovered(self) -> None:
        if self._discovered:
            return
        with self._lock:
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
        """The specs of one kind (a key of :data:`SPEC_KINDS`: ``"models"`` ...)."""
        catalog = self._catalogs.get(kind)
        if catalog is None:
            catalog = self._build_catalog(kind)
        if self._statuses_changed:
            self._warn_unusable()
        return catalog

    def _build_catalog(self, kind: str) -> Catalog:
        if kind not in SPEC_KINDS:
            raise ValueError(f"unknown kind {kind!r}; kinds: {', '.join(SPEC_KINDS)}")
        self._ensure_discovered()
        with self._lock:
            catalog = self._catalogs.get(kind)
            if catalog is None:
                catalog = Catalog(kind, self.manager.specs(kind))
                self._catalogs[kind] = catalog
                self._statuses_changed = True  # calling the hooks may mark plugins failed
            return catalog

    def _warn_unusable(self) -> None:
        """One :class:`PluginWarning` per failed, incompatible or disabled plugin."""
        with self._lock:
            self._statuses_changed = False
            fresh = [i for i in self.manager.unusable() if i.name not in self._warned]
            self._warned.update(i.name for i in fresh)
        for info in fresh:
            warnings.warn(_warning_text(info), PluginWarning, stacklevel=_outside_stacklevel())

    def plugins(self) -> list[PluginInfo]:
        """Every plugin's status; reports failures itself, so it warns about none."""
        duplicates: dict[str, list[str]] = {}
        for kind in self.manager.HOOK_KINDS:  # calling the hooks may mark a plugin failed
            for plugin, errors in self._build_catalog(kind).duplicate_errors().items():
                duplicates.setdefault(plugin, []).extend(errors)
        infos = self.manager.infos()
        return [
            dataclasses.replace(i, error="; ".join(filter(None, [i.error, *duplicates[i.name]])))
            if i.name in duplicates else i
            for i in infos
        ]

    def register(self, plugin: Any, name: str | None = None, **meta: Any) -> PluginInfo:
        self._ensure_discovered()
        with self._lock:
            info = self.manager.register(plugin, name, **meta)
            self._catalogs.clear()
        return info

    def unregister(self, name: str) -> None:
        self._ensure_discovered()
        with self._lock:
            self.manager.unregister(name)
            self._catalogs.clear()

    # -- lookups -------------------------------------------------------------------
    def lookup(self, kind: str, name: str) -> Any:
        """The spec of one kind for ``name`` or ``plugin/name``; a missing name raises with
        the fix: the distribution to install (from the registry index), the plugin that
        failed, or the close matches."""
        catalog = self.catalog(kind)
        try:
            return catalog.get(name)
        except AmbiguousNameError:
            raise
        except UnknownNameError as exc:
            raise self._missing(catalog, name, str(exc)) from None

    def find(self, name: str, kinds: Sequence[str]) -> Any:
        """The spec of the first of ``kinds`` that knows ``name`` (the CLI's ``info`` and
        ``cache prefetch`` without ``--kind``); when none does, one error with every kind's
        close matches, or the first kind's hint where it is more than "unknown"."""
        errors: list[UnknownNameError] = []
        for kind in kinds:
            try:
                return self.lookup(kind, name)
            except UnknownNameError as exc:
                if type(exc) is not UnknownNameError:  # ambiguous, or a plugin to install
                    raise
                errors.append(exc)
        if len(errors) == 1:
            raise errors[0]
        others = [SPEC_KINDS[k].noun for k in kinds[1:]]
        nor = f"{', '.join(others[:-1])} or {others[-1]}" if len(others) > 1 else others[0]
        scored = [(difflib.SequenceMatcher(None, name.lower(), m).ratio(), f"{m} ({SPEC_KINDS[k].noun})")
                  for k in kinds for m in self.catalog(k).close_matches(name)]
        close = [label for _, label in sorted(scored, key=lambda pair: -pair[0])]
        hint = f"; did you mean: {', '.join(close[:5])}?" if close else ""
        raise UnknownNameError(f"no {SPEC_KINDS[kinds[0]].noun} named {name!r} (nor a {nor}){hint} "
                               "(gluon-hub list --kind KIND or gluon-hub search shows what is available)")

    def _missing(self, catalog: Catalog, name: str, unknown: str) -> HubError:
        """Why ``name`` is not in ``catalog``, as the error to raise; ``unknown`` is the
        catalog's own message (with its close matches)."""
        what = f"{catalog.noun} {name!r}"
        key = name.strip().lower()
        wanted, bare = key.split("/", 1) if "/" in key else (None, key)
        try:
            index = self.index()
            indexed = index.lookup(catalog.kind, bare)
            note = ""
        except IndexFormatError as exc:  # keep the "unknown name" error; say why no hint
            index, indexed, note = None, None, f"; the registry index could not be read: {exc}"
        if index is not None and indexed is not None and wanted in (None, indexed["plugin"].lower()):
            installed = self.manager.info(indexed["plugin"])
            if installed is None:
                return PluginNotInstalledError(index.install_hint(what, indexed["distribution"]))
            error = self.plugin_error(indexed["plugin"])
            if error is not None:
                return PluginError(f"{what} comes from plugin {indexed['plugin']!r}, which is not usable: {error}")
            # The plugin is installed and loaded without this name: what is installed wins
            # over what an index claims, so no install command, only the fact.
            source = "" if index.packaged else f" {index.source}"
            note = (
                f"; the registry index{source} lists it under plugin {indexed['plugin']!r}, "
                f"but the installed {installed.distribution or indexed['plugin']} "
                f"{installed.version or ''} does not provide it"
            )
        if wanted is not None:
            error = self.plugin_error(wanted)
            if error is not None:
                return PluginError(f"plugin {wanted!r} is not usable: {error}")
        unusable = [i for i in self.manager.unusable() if wanted in (None, i.name.lower())]
        if unusable:
            listed = ", ".join(f"{i.name} ({i.status})" for i in unusable)
            note += (
                f"; plugins that could not be loaded might provide it: {listed} "
                "(gluon-hub plugins says why)"
            )
        return UnknownNameError(unknown + note)

    # -- index -----------------------------------------------------------------------
    def set_index(self, location: str | None) -> _index.Index:
        """Use another registry index (path or URL); validated now, so errors show at once.

        ``None`` goes back to ``GLUON_HUB_INDEX`` or, without it, the hub's own index.
        """
        index = _index.read(location or _env.index_location())
        self._index, self._index_location = index, location
        return index

    def index(self) -> _index.Index:
        if self._index is None:
            self._index = _index.read(self._index_location or _env.index_location())
        return self._index

    def plugin_error(self, plugin: str) -> str | None:
        """Why an installed plugin is unusable, or None (also when it is not installed)."""
        info = self.manager.info(plugin)
        if info is None:
            return None
        if info.status != LOADED:
            return f"{info.status}: {info.error}"
        errors = [e for (kind, p), e in self.manager.hook_errors.items() if p == plugin]
        return "; ".join(errors) or None


_default: Hub | None = None
_default_lock = threading.Lock()


def get_hub() -> Hub:
    """The process-wide hub, created on first use (once, however many threads ask)."""
    global _default
    hub = _default
    if hub is None:
        with _default_lock:
            if _default is None:
                _default = Hub()
            hub = _default
    return hub


def reset_hub(autoload: bool = True) -> Hub:
    """Forget every plugin and start again (tests, notebooks after ``pip install``)."""
    global _default
    with _default_lock:
        _default = Hub(autoload=autoload)
        return _default
