"""``registry.json``: the index of first-party plugins and everything they register.

It is generated from the installed plugins (``gluon-hub registry build``), checked in CI
(``gluon-hub registry check``), and read by the hub for ``pip install`` hints and for
``gluon-hub search`` over plugins that are not installed. Users may point the hub at
another index with ``GLUON_HUB_INDEX`` (a path or an http(s) URL).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable

from ._version import HUB_API_VERSION
from .errors import IndexFormatError
from .specs import SPEC_KINDS

SCHEMA = "gluon-hub-registry/1"
FIRST_PARTY = ("gluon-hub", "gluon-cv-core", "gluon-nlp-core", "gluon-contrib")
PACKAGED_INDEX = Path(__file__).with_name("registry.json")


class Index:
    """A validated registry index: plugins plus specs, as plain dicts."""

    def __init__(self, data: dict[str, Any], source: str) -> None:
        self.data = data
        self.source = source
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


def validate(data: Any, source: str) -> dict[str, Any]:
    """Check an index against the schema; raise :class:`IndexFormatError` saying where."""

    def fail(where: str, problem: str) -> None:
        raise IndexFormatError(
            f"registry index {source}: {where}: {problem} (expected schema {SCHEMA!r}; "
            "regenerate it with 'gluon-hub registry build')"
        )

    if not isinstance(data, dict):
        fail("top level", f"expected an object, got {type(data).__name__}")
    if data.get("schema") != SCHEMA:
        fail("'schema'", f"is {data.get('schema')!r}")
    plugins = data.get("plugins")
    if not isinstance(plugins, list):
        fail("'plugins'", "missing or not a list")
    for i, plugin in enumerate(plugins):
        if not isinstance(plugin, dict) or not all(
            isinstance(plugin.get(k), str) for k in ("name", "distribution", "version")
        ):
            fail(f"plugins[{i}]", "needs string fields name, distribution and version")
    known_plugins = {p["name"] for p in plugins}
    for kind, spec_type in SPEC_KINDS.items():
        entries = data.get(kind, [])
        if not isinstance(entries, list):
            fail(f"{kind!r}", "not a list")
        for i, entry in enumerate(entries):
            try:
                spec = spec_type.from_dict(entry)
            except (TypeError, ValueError) as exc:
                fail(f"{kind}[{i}]", str(exc))
            if spec.plugin not in known_plugins:
                fail(f"{kind}[{i}] ({spec.name})", f"plugin {spec.plugin!r} is not in 'plugins'")
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
    return Index(validate(data, source), source)


def read(location: str | Path | None = None) -> Index:
    """Read an index from a path or an http(s) URL (default: the hub's own copy)."""
    location = str(location) if location is not None else str(PACKAGED_INDEX)
    if location.startswith(("http://", "https://")):
        import requests

        try:
            response = requests.get(location, timeout=(5, 30))
            response.raise_for_status()
        except requests.RequestException as exc:
            raise IndexFormatError(f"could not fetch registry index {location}: {exc}") from None
        return parse(response.text, location)
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
            {"name": p.name, "distribution": p.distribution, "version": p.version}
            for p in sorted(first_party.values(), key=lambda p: p.name)
        ],
    }
    for kind, specs in specs_by_kind.items():
        chosen = [s for s in specs if s.plugin in first_party]
        data[kind] = [s.to_dict() for s in sorted(chosen, key=lambda s: (s.plugin, s.name))]
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"
