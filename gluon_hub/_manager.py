"""Plugin discovery and isolation.

Each entry point is checked and loaded on its own, and each plugin's hooks are called on
their own, so that one broken, incompatible or disabled plugin is recorded with its error
and never takes the hub down (pluggy's ``load_setuptools_entrypoints`` has no such
isolation). ``GLUON_HUB_STRICT_PLUGINS=1`` re-raises instead, for plugin developers' CI.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import traceback
import warnings
from importlib import metadata
from typing import Any, Iterable

import pluggy

from . import _env, _portability, hookspecs
from ._version import HUB_API_VERSION, __version__
from .errors import PluginError, PluginWarning
from .specs import SPEC_KINDS, PluginInfo

ENTRY_POINT_GROUP = "gluon_hub"
CORE_DISTRIBUTION = "gluon-hub"

LOADED, FAILED, INCOMPATIBLE, DISABLED = "loaded", "failed", "incompatible", "disabled"


def _describe(exc: BaseException) -> str:
    """One line naming the exception and where it was raised."""
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" ({frames[-1].filename}:{frames[-1].lineno})" if frames else ""
    return f"{type(exc).__name__}: {exc}{where}"


@functools.lru_cache(maxsize=None)
def _version_in(version: str, specifier: str) -> bool:
    from packaging.specifiers import SpecifierSet

    return SpecifierSet(specifier).contains(version, prereleases=True)


_CORE_REQUIREMENT = re.compile(r"^gluon[-_.]hub\s*(?:\[[^\]]*\])?\s*\(?([^;()]*)\)?\s*$", re.I)


def _read_headers(dist: metadata.Distribution) -> tuple[str | None, str | None, str | None]:
    """Name, version and the specifier on ``gluon-hub`` from a distribution's METADATA.

    A line scan of the header block: ``Distribution.metadata`` parses the whole file with
    the email package, which made listing with 100 plugins several times slower.
    """
    name = version = required = None
    # Wheels and .dist-info folders hold METADATA; .egg-info folders (a source checkout
    # on sys.path after an editable install) hold the same headers as PKG-INFO.
    text = dist.read_text("METADATA") or dist.read_text("PKG-INFO") or ""
    for line in text.splitlines():
        if not line.strip():
            break  # the headers end at the first blank line; the long description follows
        key, _, value = line.partition(":")
        value = value.strip()
        if key == "Name":
            name = value
        elif key == "Version":
            version = value
        elif key == "Requires-Dist" and required is None:
            match = _CORE_REQUIREMENT.match(value)  # lines with markers do not match
            if match:
                required = match.group(1).replace(" ", "") or None
    return name, version, required


def _with_plugin(spec: Any, plugin: str) -> Any:
    """A copy of a validated spec with its plugin name set.

    ``dataclasses.replace`` would validate every spec a second time; the copy shares the
    plugin's (immutable) field values and leaves the plugin's own object untouched.
    """
    copy = object.__new__(type(spec))
    copy.__dict__.update(spec.__dict__)
    copy.__dict__["plugin"] = plugin
    return copy


class PluginManager:
    """Finds plugins, records a :class:`PluginInfo` for each, and collects their specs."""

    HOOK_KINDS = tuple(hookspecs.HOOK_FOR_KIND)

    def __init__(self) -> None:
        self._pm = pluggy.PluginManager(hookspecs.PROJECT)
        self._pm.add_hookspecs(hookspecs)
        self._infos: dict[str, PluginInfo] = {}
        self._specs: dict[str, list[Any]] = {}
        #: (kind, plugin) -> error, for hooks that raised or returned bad specs.
        self.hook_errors: dict[tuple[str, str], str] = {}

    # -- discovery -------------------------------------------------------------------
    def load_entry_points(self) -> None:
        """Load every ``gluon_hub`` entry point, each in isolation, unless disabled."""
        if _env.autoload_disabled():
            return
        disabled = _env.disabled_plugins()
        for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
            dist = getattr(ep, "dist", None)
            dist_name, dist_version, required = _read_headers(dist) if dist else (None,) * 3
            base = PluginInfo(
                name=ep.name,
                status=LOADED,
                distribution=dist_name,
                version=dist_version,
                module=ep.value,
            )
            if ep.name in self._infos:
                other = self._infos[ep.name]
                self._record_failure(
                    base,
                    FAILED,
                    f"plugin name {ep.name!r} is already used by distribution "
                    f"{other.distribution or other.module!r}; one of the two must be uninstalled",
                    keep_existing=True,
                )
                continue
            if ep.name in disabled:
                self._infos[ep.name] = dataclasses.replace(
                    base, status=DISABLED, error="disabled by GLUON_HUB_DISABLE_PLUGINS"
                )
                continue
            if required and not _version_in(__version__, required):
                self._record_failure(
                    base,
                    INCOMPATIBLE,
                    f"requires gluon-hub{required} but gluon-hub {__version__} is installed",
                )
                continue
            try:
                plugin = ep.load()
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # sys.exit() or anything else at import
                self._record_failure(base, FAILED, f"import failed: {_describe(exc)}", exc)
                continue
            self._register(plugin, base)

    def register(
        self,
        plugin: Any,
        name: str | None = None,
        *,
        distribution: str | None = None,
        version: str | None = None,
    ) -> PluginInfo:
        """Register a plugin object in-process (notebooks, tests); returns its status."""
        name = name or getattr(plugin, "__name__", None) or type(plugin).__name__
        if name in self._infos and self._infos[name].status == LOADED:
            raise PluginError(
                f"a plugin named {name!r} is already registered; unregister it first "
                "or register this one under another name"
            )
        info = PluginInfo(
            name=name,
            status=LOADED,
            distribution=distribution,
            version=version,
            module=getattr(plugin, "__name__", type(plugin).__name__),
        )
        self._register(plugin, info)
        return self._infos[name]

    def unregister(self, name: str) -> None:
        """Remove a plugin and forget its specs."""
        if name not in self._infos:
            raise PluginError(f"no plugin named {name!r}; registered: {sorted(self._infos)}")
        if self._pm.has_plugin(name):
            self._pm.unregister(name=name)
        del self._infos[name]
        self._invalidate()

    def _register(self, plugin: Any, info: PluginInfo) -> None:
        declared = getattr(plugin, "GLUON_HUB_API", None)
        if not isinstance(declared, str):
            self._record_failure(
                info,
                INCOMPATIBLE,
                "does not declare the hub API versions it supports: set "
                "GLUON_HUB_API (for example '>=1,<2') in the plugin module",
            )
            return
        try:
            compatible = _version_in(HUB_API_VERSION, declared)
        except Exception as exc:
            self._record_failure(info, INCOMPATIBLE, f"bad GLUON_HUB_API {declared!r}: {exc}")
            return
        if not compatible:
            self._record_failure(
                info,
                INCOMPATIBLE,
                f"supports hub API {declared} but this hub offers API {HUB_API_VERSION}",
            )
            return
        error: BaseException | None = None
        try:
            self._pm.register(plugin, name=info.name)
            problem = self._unknown_hooks(plugin)
        except pluggy.PluginValidationError as exc:  # a hookimpl takes arguments its spec lacks
            problem, error = f"registration failed: {exc}".replace("\n", "; "), exc
        except Exception as exc:
            problem, error = f"registration failed: {_describe(exc)}", exc
        if problem is not None:
            # pluggy before 1.6 kept what it registered before it refused a hook: remove it all.
            if self._pm.is_registered(plugin):
                self._pm.unregister(plugin)
            self._record_failure(info, FAILED, problem, error)
            return
        self._infos[info.name] = info
        self._invalidate()

    def _unknown_hooks(self, plugin: Any) -> str | None:
        """An error naming the plugin's hookimpls that match no hook spec (a typo such as
        ``gluon_hub_modelz``), which pluggy would otherwise accept and never call.

        ``@hookimpl(optionalhook=True)`` opts out, for a hook of a newer hub API.
        """
        unknown = sorted(
            caller.name
            for caller in self._pm.get_hookcallers(plugin) or ()
            if not caller.has_spec()
            and any(i.plugin is plugin and not i.optionalhook for i in caller.get_hookimpls())
        )
        if not unknown:
            return None
        return (
            f"unknown hook(s) {', '.join(unknown)}: the hooks are "
            f"{', '.join(hookspecs.HOOK_FOR_KIND.values())}"
        )

    def _record_failure(
        self,
        info: PluginInfo,
        status: str,
        error: str,
        exc: BaseException | None = None,
        keep_existing: bool = False,
    ) -> None:
        if _env.strict_plugins():
            raise PluginError(f"plugin {info.name!r}: {error}") from exc
        failed = dataclasses.replace(info, status=status, error=error)
        if keep_existing:
            key = f"{info.name} ({info.distribution})"
            self._infos[key] = dataclasses.replace(failed, name=key)
        else:
            self._infos[info.name] = failed

    def _invalidate(self) -> None:
        self._specs.clear()
        self.hook_errors.clear()

    # -- queries ---------------------------------------------------------------------
    def infos(self) -> list[PluginInfo]:
        """Status of every plugin seen, sorted by name."""
        return [self._infos[k] for k in sorted(self._infos)]

    def info(self, name: str) -> PluginInfo | None:
        return self._infos.get(name)

    def unusable(self) -> list[PluginInfo]:
        """Plugins that are installed but failed, are incompatible or are disabled."""
        return [i for i in self.infos() if i.status != LOADED]

    def specs(self, kind: str) -> list[Any]:
        """All specs of one kind (``"models"`` ...), each with its plugin name filled in."""
        if kind not in self._specs:
            self._specs[kind] = list(self._collect(kind))
        return self._specs[kind]

    def _collect(self, kind: str) -> Iterable[Any]:
        spec_type = SPEC_KINDS[kind]
        caller = getattr(self._pm.hook, hookspecs.HOOK_FOR_KIND[kind])
        for impl in caller.get_hookimpls():
            try:
                returned = list(impl.function() or ())
                for spec in returned:
                    if not isinstance(spec, spec_type):
                        raise TypeError(
                            f"{hookspecs.HOOK_FOR_KIND[kind]} returned {type(spec).__name__}, "
                            f"expected {spec_type.__name__}"
                        )
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # a hook may call sys.exit() too
                error = f"{hookspecs.HOOK_FOR_KIND[kind]} failed: {_describe(exc)}"
                if _env.strict_plugins():
                    raise PluginError(f"plugin {impl.plugin_name!r}: {error}") from exc
                self.hook_errors[(kind, impl.plugin_name)] = error
                info = self._infos[impl.plugin_name]
                self._infos[impl.plugin_name] = dataclasses.replace(
                    info, status=FAILED, error=error
                )
                continue
            copies = [_with_plugin(spec, impl.plugin_name) for spec in returned]
            if kind == "models":
                _portability.attach(copies, self._portability_rows(impl.plugin_name))
            yield from copies

    def _portability_rows(self, plugin: str) -> dict[str, Any]:
        """The plugin's measured ONNX rows; a broken file is warned about and ignored (the
        models stay usable, only unmeasured)."""
        info = self._infos.get(plugin)
        path = _portability.rows_file(info.module) if info is not None and info.module else None
        if path is None:
            return {}
        try:
            return _portability.read_rows(path)
        except ValueError as exc:
            warnings.warn(f"plugin {plugin!r}: {exc}", PluginWarning, stacklevel=2)
            return {}
