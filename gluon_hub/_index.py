"""``registry.json``: the index of first-party plugins and everything they register.

It is generated from the installed plugins (``gluon-hub registry build``), checked in CI
(``gluon-hub registry check``), and read by the hub for ``pip install`` hints and for
``gluon-hub search`` over plugins that are not installed. Users may point the hub at
another index with ``GLUON_HUB_INDEX`` (a path or an http(s) URL).
"""

from __future__ import annotations

import json
import re
import shlex
from importlib import metadata
from pathlib import Path
from typing import Any, Iterable
from urllib.parse import urlparse
from urllib.request import url2pathname

from ._version import HUB_API_VERSION
from .errors import IndexFormatError
from .specs import SPEC_KINDS, URL_SCHEMES, url_scheme

SCHEMA = "gluon-hub-registry/1"
FIRST_PARTY = ("gluon-hub", "gluon-cv-core", "gluon-nlp-core", "gluon-contrib", "gluon-hub-deploy")
PACKAGED_INDEX = Path(__file__).with_name("registry.json")


#: A distribution name as PEP 508 allows it: the only thing an index may put into the
#: ``pip install`` command the hub prints.
_DISTRIBUTION_RE = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$")
#: Limits that keep a hostile or broken index from exhausting the stack or the memory:
#: a real index nests about 6 deep and holds a few thousand values.
MAX_DEPTH = 32
MAX_VALUES = 1_000_000
#: Problems listed in one error; the count of the rest follows.
MAX_LISTED = 20


class Index:
    """A validated registry index: plugins plus specs, as plain dicts."""

    def __init__(self, data: dict[str, Any], source: str) -> None:
        self.data = data
        self.source = source
        #: Whether this is the hub's own copy, whose hints need no attribution.
        self.packaged = source == str(PACKAGED_INDEX)
        self._names: dict[tuple[str, str], dict[str, Any]] = {}
        dists = {p["name"]: p["distribution"] for p in data["plugins"]}
        for kind in SPEC_KINDS:
            for entry in data.get(kind, []):
                self._names.setdefault(
                    (kind, entry["name"].lower()),
                    {"plugin": entry["plugin"], "distribution": dists.get(entry["plugin"], "?")},
                )

    def lookup(self, kind: str, bare_name: str) -> dict[str, Any] | None:
        """Which plugin and distribution provide a bare name, if the index knows it."""
        return self._names.get((kind, bare_name.lower()))

    def entries(self, kind: str) -> list[dict[str, Any]]:
        return self.data.get(kind, [])

    def distribution(self, plugin: str) -> str | None:
        for p in self.data["plugins"]:
            if p["name"] == plugin:
                return p["distribution"]
        return None

    def install_hint(self, what: str, distribution: str) -> str:
        """Why ``what`` is unavailable and the command that installs it, saying which index
        said so when it is not the hub's own (a remote index is a claim, not a fact)."""
        command = install_command(distribution)
        if self.packaged:
            return (
                f"{what} is provided by the {distribution} plugin, which is not installed; "
                f"run: {command}"
            )
        return (
            f"{what} is provided by the {distribution} plugin according to the registry "
            f"index {self.source}; it is not installed; run: {command}"
        )


def _shape_problem(data: Any) -> str | None:
    """Too deep or too large, found without recursion (a deep document would overflow it)."""
    stack: list[tuple[Any, int]] = [(data, 1)]
    count = 0
    while stack:
        value, depth = stack.pop()
        count += 1
        if depth > MAX_DEPTH:
            return f"values nest more than {MAX_DEPTH} levels deep"
        if count > MAX_VALUES:
            return f"more than {MAX_VALUES:,} values"
        if isinstance(value, dict):
            stack.extend((v, depth + 1) for v in value.values())
        elif isinstance(value, list):
            stack.extend((v, depth + 1) for v in value)
    return None


def _source_problem(source: Any) -> str | None:
    if not isinstance(source, str) or not source or source.startswith("/") or ".." in source.split("/"):
        return f"'source' must be a relative folder inside the checkout, got {source!r}"
    return None


def validate(data: Any, source: str) -> dict[str, Any]:
    """Check an index against the schema; raise :class:`IndexFormatError` listing every
    bad entry at once (as pip lists every hash mismatch), not only the first."""
    problems: list[str] = []

    def fail() -> None:
        listed = problems[:MAX_LISTED]
        more = len(problems) - len(listed)
        raise IndexFormatError(
            f"registry index {source} (expected schema {SCHEMA!r}; regenerate it with "
            f"'gluon-hub registry build') has {len(problems)} problem"
            f"{'s' if len(problems) != 1 else ''}:\n  "
            + "\n  ".join(listed)
            + (f"\n  ... and {more} more" if more else "")
        )

    shape = _shape_problem(data)
    if shape is not None:
        problems.append(f"top level: {shape}")
        fail()
    if not isinstance(data, dict):
        problems.append(f"top level: expected an object, got {type(data).__name__}")
        fail()
    if data.get("schema") != SCHEMA:
        problems.append(f"'schema': is {data.get('schema')!r}")
        fail()  # another schema: its entries mean something else
    plugins = data.get("plugins")
    if not isinstance(plugins, list):
        problems.append("'plugins': missing or not a list")
        plugins = []
    known_plugins = set()
    for i, plugin in enumerate(plugins):
        if not isinstance(plugin, dict) or not all(
            isinstance(plugin.get(k), str) for k in ("name", "distribution", "version")
        ):
            problems.append(f"plugins[{i}]: needs string fields name, distribution and version")
            continue
        if not _DISTRIBUTION_RE.match(plugin["distribution"]):
            problems.append(
                f"plugins[{i}]: distribution {plugin['distribution']!r} is not a valid "
                "distribution name"
            )
        if "source" in plugin and _source_problem(plugin["source"]):
            problems.append(f"plugins[{i}]: {_source_problem(plugin['source'])}")
        known_plugins.add(plugin["name"])
    for kind, spec_type in SPEC_KINDS.items():
        entries = data.get(kind, [])
        if not isinstance(entries, list):
            problems.append(f"{kind!r}: not a list")
            continue
        for i, entry in enumerate(entries):
            try:
                spec = spec_type.from_dict(entry)
            except (TypeError, ValueError) as exc:
                problems.append(f"{kind}[{i}]: {exc}")
                continue
            if spec.plugin not in known_plugins:
                problems.append(f"{kind}[{i}] ({spec.name}): plugin {spec.plugin!r} is not in 'plugins'")
    if problems:
        fail()
    return data


def parse(text: str, source: str) -> Index:
    """Parse and validate index text."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise IndexFormatError(
            f"registry index {source} is not valid JSON: {exc.msg} at line {exc.lineno}, "
            f"column {exc.colno}"
        ) from None
    except RecursionError:
        raise IndexFormatError(
            f"registry index {source}: values nest more than {MAX_DEPTH} levels deep"
        ) from None
    except ValueError as exc:  # a number too long to convert, for one
        raise IndexFormatError(f"registry index {source} is not usable JSON: {exc}") from None
    return Index(validate(data, source), source)


# -- install hints -------------------------------------------------------------------------


def _checkouts_and_wheel_folders() -> tuple[list[Path], list[Path]]:
    """Where this hub came from: the checkout it runs from or was installed from, and the
    folder of the wheel it was installed from (pip records that in ``direct_url.json``)."""
    checkouts: list[Path] = []
    wheel_folders: list[Path] = []
    here = Path(__file__).resolve().parents[1]
    if (here / "pyproject.toml").is_file() and (here / "plugins").is_dir():
        checkouts.append(here)
    try:
        direct = json.loads(metadata.distribution("gluon-hub").read_text("direct_url.json") or "{}")
    except (metadata.PackageNotFoundError, ValueError):
        direct = {}
    url = direct.get("url", "") if isinstance(direct, dict) else ""
    if url.startswith("file://"):
        path = Path(url2pathname(urlparse(url).path))
        if "dir_info" in direct and path not in checkouts:
            checkouts.append(path)
        elif path.suffix == ".whl":
            wheel_folders.append(path.parent)
    wheel_folders += [c / "dist" for c in checkouts]
    return checkouts, wheel_folders


def _best_wheel(folder: Path, distribution: str) -> Path | None:
    """The newest wheel of ``distribution`` in ``folder`` that this interpreter can install."""
    from packaging.tags import sys_tags
    from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename

    wanted, supported = canonicalize_name(distribution), set(sys_tags())
    best = None
    for path in folder.glob("*.whl"):
        try:
            name, version, _, tags = parse_wheel_filename(path.name)
        except InvalidWheelFilename:
            continue
        if name == wanted and tags & supported and (best is None or version > best[0]):
            best = (version, path)
    return best[1] if best else None


def install_command(
    distribution: str,
    checkouts: list[Path] | None = None,
    wheel_folders: list[Path] | None = None,
) -> str:
    """A command that installs ``distribution`` into the environment the hub runs in.

    The first-party plugins are not on a package index, so for them this names a wheel
    built by ``scripts/build-wheels.sh`` (beside the wheel the hub was installed from, or
    in the checkout's ``dist/``), else the plugin's folder in the hub's checkout; other
    distributions install from the user's package index. Never ``pip install`` of a
    first-party name, which would send pip to an index that does not have it. ``checkouts`` and
    ``wheel_folders`` default to where this hub came from.
    """
    if distribution not in FIRST_PARTY:
        return f"pip install {distribution}"
    if checkouts is None or wheel_folders is None:
        found_checkouts, found_folders = _checkouts_and_wheel_folders()
        checkouts = found_checkouts if checkouts is None else checkouts
        wheel_folders = found_folders if wheel_folders is None else wheel_folders
    for folder in wheel_folders:
        wheel = _best_wheel(folder, distribution) if folder.is_dir() else None
        if wheel is not None:
            return f"pip install {shlex.quote(str(wheel))}"
    source = source_folder(distribution)
    for checkout in checkouts:
        if (checkout / source / "pyproject.toml").is_file():
            return f"pip install {shlex.quote(str(checkout / source))}"
    # no checkout or wheel known here: the command to run in one (a shell comment says so)
    where = "." if source == "." else f"./{source}"
    return (f"pip install {where}  # in a gluon_hub checkout, or a wheel that "
            f"scripts/build-wheels.sh builds there: {distribution} is not on a package index")


def extra_command(distribution: str, extra: str) -> str:
    """The ``pip install`` of what ``distribution``'s ``extra`` adds, for this Python.

    Our distributions are not on a package index, so ``pip install "gluon-hub-deploy[onnx]"``
    would send pip looking for one; the extra's own requirements are all on the user's index.
    They are read from the installed metadata, so the hint never drifts from the pins; a
    first-party requirement gets :func:`install_command`'s wheel or checkout folder.
    """
    from packaging.requirements import Requirement

    try:
        requires = metadata.requires(distribution) or []
    except metadata.PackageNotFoundError:
        requires = []
    wanted = []
    for line in requires:
        requirement = Requirement(line)
        if requirement.marker is not None and requirement.marker.evaluate({"extra": extra}) \
                and not requirement.marker.evaluate({"extra": ""}):
            requirement.marker = None
            if requirement.name in FIRST_PARTY:
                command = install_command(requirement.name).partition("  #")[0]
                wanted.append(command.removeprefix("pip install "))
            else:
                wanted.append(shlex.quote(str(requirement)))
    if not wanted:
        return f"install the [{extra}] extra of {distribution} (pip install '.[{extra}]' in its folder)"
    return f"pip install {' '.join(wanted)}"


def source_folder(distribution: str) -> str:
    """Where a first-party distribution lives in the checkout, as ``registry.json`` records it."""
    return "." if distribution == "gluon-hub" else f"plugins/{distribution}"


def read(location: str | Path | None = None) -> Index:
    """Read an index from a path or an http(s) URL (default: the hub's own copy)."""
    location = str(location) if location is not None else str(PACKAGED_INDEX)
    scheme = url_scheme(location)
    if scheme not in ("", *URL_SCHEMES):
        raise IndexFormatError(
            f"registry index {location!r}: scheme {scheme!r} is not supported; the supported "
            f"schemes are {', '.join(URL_SCHEMES)} (or a plain path)"
        )
    if scheme in ("http", "https"):
        # Bounded, cached and offline-safe like every download: see docs/cache.md.
        from ._cache._remote_index import read_remote

        return read_remote(location, parse)
    path = Path(location.removeprefix("file://"))
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise IndexFormatError(f"could not read registry index {path}: {exc.strerror}") from None
    return parse(text, str(path))


def build(plugins: Iterable[Any], specs_by_kind: dict[str, list[Any]]) -> str:
    """Index text for the first-party plugins, deterministic so that it can be diffed."""
    first_party = {p.name: p for p in plugins if p.distribution in FIRST_PARTY}
    data: dict[str, Any] = {
        "schema": SCHEMA,
        "hub_api": HUB_API_VERSION,
        "plugins": [
            {"name": p.name, "distribution": p.distribution, "version": p.version,
             "source": source_folder(p.distribution)}
            for p in sorted(first_party.values(), key=lambda p: p.name)
        ],
    }
    for kind, specs in specs_by_kind.items():
        chosen = [s for s in specs if s.plugin in first_party]
        data[kind] = [s.to_dict() for s in sorted(chosen, key=lambda s: (s.plugin, s.name))]
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"
