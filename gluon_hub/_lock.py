"""Lock files: what a project's loads may download, pinned, and checked before any download.

A lock file pins, for each model (one weight tag), dataset and embedding, the plugin distribution
and version that provides it and every file's hash, size, mirror filename and URLs. With a
lock in force (``GLUON_HUB_LOCK`` or ``load(..., lock=...)``) a load or a prefetch takes the
pinned tag and compares the installed spec with the lock first: any difference is an error naming it, so
nothing that was not pinned is ever fetched. ``docs/lock.md`` documents the format, a TOML
subset written in one fixed order (no timestamps) so that regenerating it changes no byte
and a diff shows exactly what moved. Python 3.10 has no ``tomllib``, and the parser needs
line numbers for its errors, so the subset is read here.

Imports nothing heavy: ``gluon-hub lock`` and ``--check`` never import mxnet.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any, Iterable, Sequence

from . import _env
from ._hub import get_hub
from .errors import HubError, LockDriftError, LockError, LockFileError
from .specs import SPEC_KINDS, FileRef

#: The format's version, written first; a reader refuses a version it does not know.
FORMAT_VERSION = 1
DEFAULT_PATH = "gluon-hub.lock"
HEADER = (
    "# gluon-hub lock file: written by `gluon-hub lock`, checked by `gluon-hub lock --check`.\n"
    "# Regenerate it rather than editing it; the format is described in docs/lock.md.\n"
)

#: The spec kinds that have files to pin: those whose spec holds ``weights`` or ``files``.
LOCKABLE = tuple(
    kind for kind, cls in SPEC_KINDS.items()
    if {f.name for f in dataclasses.fields(cls)} & {"weights", "files"}
)

#: Keys of an entry's table and of a file's table, in the order they are written.
_ENTRY_KEYS = ("distribution", "distribution_version", "tag")
_FILE_KEYS = ("size", "filename", "extract", "archive_hash", "urls")


@dataclasses.dataclass(frozen=True)
class Pin:
    """One locked entry: its kind and qualified name, who provides it, its tag and files."""

    kind: str
    name: str
    distribution: str | None
    version: str | None
    tag: str | None
    files: tuple[FileRef, ...]

    @property
    def key(self) -> tuple[str, str]:
        return self.kind, self.name.lower()

    @property
    def label(self) -> str:
        return f"{SPEC_KINDS[self.kind].noun} {self.name!r}"

    @property
    def argument(self) -> str:
        """How ``gluon-hub lock`` names this entry again (``NAME:TAG``, ``--dataset NAME``,
        ``--embedding NAME``)."""
        if self.kind == "models":
            return f"{self.name}:{self.tag}"
        return f"--{SPEC_KINDS[self.kind].noun} {self.name}"


# -- pinning what is installed --------------------------------------------------------------


def pin(spec: Any, tag: str | None = None) -> Pin:
    """The pin of an installed spec now: a model's weights ``tag`` (default: the first), or
    a dataset's files; raises :class:`LockError` for an entry with nothing to download."""
    if spec.kind not in LOCKABLE:
        raise LockError(f"{spec.noun} {spec.qualified_name!r} has no files; only "
                        f"{' and '.join(LOCKABLE)} can be locked")
    if spec.kind == "models":
        if not spec.weights:
            raise LockError(f"model {spec.qualified_name!r} has no published weights, so there is "
                            "nothing to pin (load(..., pretrained=False) downloads nothing)")
        variant = spec.weight(True if tag is None else tag)
        tag, files = variant.tag, (variant.file,)
    else:
        if tag is not None:
            raise LockError(f"{spec.noun} {spec.qualified_name!r} has no weight tags; name it "
                            "without ':TAG'")
        files = tuple(spec.files)
        if not files:
            raise LockError(f"{spec.noun} {spec.qualified_name!r} declares no files, so there is "
                            "nothing to pin")
    info = get_hub().manager.info(spec.plugin)
    return Pin(spec.kind, spec.qualified_name, info.distribution if info else None,
               info.version if info else None, tag, tuple(sorted(files, key=lambda f: f.hash)))


def resolve(kind: str, name: str, tag: str | None = None) -> Pin:
    """The pin of the entry ``name`` of ``kind`` resolves to among the installed plugins."""
    return pin(get_hub().lookup(kind, name), tag)


# -- the text format ---------------------------------------------------------------------


def _quote(value: str) -> str:
    # A JSON string in ASCII is a TOML basic string: the same escapes, \uXXXX included.
    return json.dumps(value)


def dumps(pins: Iterable[Pin]) -> str:
    """The lock file's text: entries sorted by kind and name, files by hash, fixed key order."""
    lines = [HEADER + f"version = {FORMAT_VERSION}"]
    for p in sorted(pins, key=lambda p: p.key):
        table = f"{p.kind}.{_quote(p.name)}"
        entry = [f"[{table}]"]
        for key, value in zip(_ENTRY_KEYS, (p.distribution, p.version, p.tag)):
            if value is not None:
                entry.append(f"{key} = {_quote(value)}")
        lines.append("\n".join(entry))
        for f in p.files:
            block = [f"[{table}.file.{_quote(f.hash)}]"]
            for key in _FILE_KEYS:
                value = getattr(f, key)
                if value is None or value == ():
                    continue
                if key == "size":
                    block.append(f"size = {value}")
                elif key == "urls":
                    block.append("urls = [" + ", ".join(_quote(u) for u in value) + "]")
                else:
                    block.append(f"{key} = {_quote(value)}")
            lines.append("\n".join(block))
    return "\n\n".join(lines) + "\n"


_HEADER_RE = re.compile(r'^\[([a-z]+)\.("(?:[^"\\]|\\.)*")(?:\.file\.("(?:[^"\\]|\\.)*"))?\]$')
_PAIR_RE = re.compile(r"^([a-z_]+)\s*=\s*([^=\s].*)$")


def _value(raw: str) -> Any:
    """A string, an integer or an array of strings, as the writer writes them."""
    if re.fullmatch(r"0|[1-9][0-9]*", raw):
        return int(raw)
    value = json.loads(raw)  # a basic string or a one-line array: JSON's syntax here
    if isinstance(value, str) or (isinstance(value, list) and all(isinstance(v, str) for v in value)):
        return value
    raise ValueError("not a string, an integer or an array of strings")


def loads(text: str, source: str = "<lock>") -> list[Pin]:
    """Parse a lock file; any line that does not fit the format raises :class:`LockFileError`
    with ``source:line``."""
    pins: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    current: dict[str, Any] | None = None  # the table key/value lines go into
    version = None

    def fail(lineno: int, message: str) -> LockFileError:
        return LockFileError(f"{source}:{lineno}: {message}; the format is in docs/lock.md, and "
                             "`gluon-hub lock -o FILE NAME...` writes a valid file")

    for lineno, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            match = _HEADER_RE.match(line)
            if match is None:
                raise fail(lineno, f"{line!r} is not a table header such as "
                                   '[models."plugin/name"] or [models."plugin/name".file."sha256:..."]')
            if version is None:
                raise fail(lineno, f"'version = {FORMAT_VERSION}' must come before the first table")
            kind, name, file_hash = match.group(1), json.loads(match.group(2)), match.group(3)
            if kind not in LOCKABLE:
                raise fail(lineno, f"unknown kind {kind!r}; the kinds are {', '.join(LOCKABLE)}")
            if file_hash is None:
                if (kind, name.lower()) in seen:
                    raise fail(lineno, f"{kind} {name!r} is locked twice")
                seen.add((kind, name.lower()))
                current = {"kind": kind, "name": name, "files": {}, "line": lineno, "pairs": {}}
                pins.append(current)
                continue
            owner = pins[-1] if pins else None
            if owner is None or (owner["kind"], owner["name"]) != (kind, name):
                raise fail(lineno, f"the file table of {kind} {name!r} must follow that entry's "
                                   f'own [{kind}.{_quote(name)}] table')
            file_hash = json.loads(file_hash)
            if file_hash in owner["files"]:
                raise fail(lineno, f"file {file_hash} of {kind} {name!r} is listed twice")
            current = {"hash": file_hash, "line": lineno, "pairs": {}}
            owner["files"][file_hash] = current
            continue
        match = _PAIR_RE.match(line)
        if match is None:
            raise fail(lineno, f"{line!r} is neither 'key = value', a [table] nor a # comment")
        key, raw = match.groups()
        if current is None and (key != "version" or version is not None):
            raise fail(lineno, f"{key!r} outside a table; only 'version' comes before the tables")
        allowed = _FILE_KEYS if current is not None and "hash" in current else _ENTRY_KEYS
        if current is not None and key not in allowed:
            raise fail(lineno, f"unknown key {key!r} here; the keys are {', '.join(allowed)}")
        try:
            value = _value(raw.strip())
        except ValueError as exc:
            raise fail(lineno, f"the value of {key!r} is not valid ({exc})") from None
        if current is None:
            if value != FORMAT_VERSION:
                raise fail(lineno, f"lock format version {value!r} is not known to this gluon-hub "
                                   f"(it reads version {FORMAT_VERSION}); upgrade gluon-hub or lock again")
            version = value
            continue
        if key in current["pairs"]:
            raise fail(lineno, f"{key!r} is given twice in this table")
        if (key == "size") != isinstance(value, int) or (key == "urls") != isinstance(value, list):
            raise fail(lineno, f"{key!r} must be " + {"size": "an integer", "urls": "an array of strings"}
                       .get(key, "a string"))
        current["pairs"][key] = value
    if version is None:
        raise LockFileError(f"{source}: no 'version = {FORMAT_VERSION}' line: not a gluon-hub lock "
                            "file (write one with `gluon-hub lock -o FILE NAME...`)")
    return [_pin_of(entry, fail) for entry in pins]


def _pin_of(entry: dict[str, Any], fail: Any) -> Pin:
    files = []
    for f in entry["files"].values():
        pairs = f["pairs"]
        try:
            files.append(FileRef(hash=f["hash"], urls=tuple(pairs.get("urls", ())),
                                 **{k: v for k, v in pairs.items() if k != "urls"}))
        except ValueError as exc:
            raise fail(f["line"], str(exc)) from None
    if not files:
        raise fail(entry["line"], f"{entry['kind']} {entry['name']!r} pins no file: each entry "
                                  "is followed by one [... .file.\"HASH\"] table per file")
    pairs = entry["pairs"]
    if (entry["kind"] == "models") != ("tag" in pairs):
        raise fail(entry["line"], "a model's entry pins its weight 'tag'; other entries have none")
    return Pin(entry["kind"], entry["name"], pairs.get("distribution"),
               pairs.get("distribution_version"), pairs.get("tag"),
               tuple(sorted(files, key=lambda f: f.hash)))


def read(path: str | os.PathLike[str]) -> list[Pin]:
    """The pins of the lock file at ``path``."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise LockError(f"lock file {os.fspath(path)} does not exist; write it with "
                        f"`gluon-hub lock NAME... -o {os.fspath(path)}`") from None
    except UnicodeDecodeError as exc:
        raise LockFileError(f"{os.fspath(path)}: not UTF-8 text ({exc}); not a gluon-hub lock file") from None
    return loads(text, os.fspath(path))


def write(path: str | os.PathLike[str], pins: Sequence[Pin]) -> None:
    """Write the lock file through a temp file and a rename: a failed run leaves the old one."""
    target = Path(path)
    handle, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent or ".")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as out:
            out.write(dumps(pins))
        os.replace(temp, target)
    except BaseException:
        os.unlink(temp)
        raise


# -- drift ---------------------------------------------------------------------------------


def _shown(value: Any) -> str:
    if value is None or value == ():
        return "none"
    return ", ".join(value) if isinstance(value, tuple) else str(value)


def drift(locked: Pin, current: Pin) -> list[str]:
    """What differs between a locked entry and the installed one, one phrase each."""
    found = []
    if locked.name != current.name:
        found.append(f"it now resolves to {current.name!r}")
    if (locked.distribution, locked.version) != (current.distribution, current.version):
        found.append(f"provided by {_shown(current.distribution)} {_shown(current.version)}, "
                     f"the lock has {_shown(locked.distribution)} {_shown(locked.version)}")
    if locked.kind == "models" and len(locked.files) == len(current.files) == 1:
        pairs = [(locked.files[0], current.files[0])]
    else:
        now = {f.hash: f for f in current.files}
        before = {f.hash: f for f in locked.files}
        found += [f"file {h} is no longer in the spec" for h in before if h not in now]
        found += [f"file {h} is new in the spec" for h in now if h not in before]
        pairs = [(before[h], now[h]) for h in before if h in now]
    for old, new in pairs:
        what = f"weights {locked.tag!r}" if locked.tag else f"file {old.hash}"
        for key in ("hash", *_FILE_KEYS):
            if getattr(old, key) != getattr(new, key):
                found.append(f"{what}: {key} is {_shown(getattr(new, key))}, the lock has "
                             f"{_shown(getattr(old, key))}")
    return found


def check(pins: Sequence[Pin]) -> list[str]:
    """Each locked entry that the installed plugins no longer match, as ``label: drift`` lines."""
    lines = []
    for locked in pins:
        try:
            current = resolve(locked.kind, locked.name, locked.tag)
        except (HubError, KeyError, ValueError) as exc:
            message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
            lines.append(f"{locked.label}: cannot be pinned now: {message}")
            continue
        lines += [f"{locked.label}: {d}" for d in drift(locked, current)]
    return lines


# -- loads under a lock -----------------------------------------------------------------------


def lock_path(lock: str | os.PathLike[str] | None) -> Path | None:
    """The lock file in force: ``lock``, else ``GLUON_HUB_LOCK``, else none."""
    chosen = lock if lock is not None else _env.lock_file()
    return None if chosen is None else Path(chosen)


def _relock(path: Path) -> str:
    return f"`gluon-hub lock -o {path}`"


def checked_pin(spec: Any, path: Path, tag: bool | str = True) -> Pin:
    """The locked entry of ``spec`` after checking that the installed spec still matches it;
    raises before anything is downloaded when it does not, or when the lock lacks it."""
    pins = read(path)
    by_key = {p.key: p for p in pins}
    locked = by_key.get((spec.kind, spec.qualified_name.lower()))
    if locked is None:
        others = [p.name for p in pins if p.kind == spec.kind and
                  p.name.rpartition("/")[2].lower() == spec.name.lower()]
        if others:
            raise LockDriftError(
                f"{spec.noun} {spec.name!r} now resolves to {spec.qualified_name!r}, but the lock "
                f"file {path} pins {others[0]!r}; nothing was downloaded. Name the locked one "
                f"({others[0]!r}), or lock the new one with {_relock(path)} "
                f"{spec.qualified_name} ...")
        raise LockError(f"{spec.noun} {spec.qualified_name!r} is not in the lock file {path}, so "
                        "it may not download anything; add it: `gluon-hub lock -o "
                        f"{path} {' '.join(p.argument for p in sorted(pins, key=lambda p: p.key))} "
                        f"{'' if spec.kind == 'models' else f'--{spec.noun} '}{spec.qualified_name}`")
    if tag is not True and tag != locked.tag:
        raise LockError(f"the lock file {path} pins the {locked.tag!r} weights of model "
                        f"{spec.qualified_name!r}, not {tag!r}: pass pretrained=True, or lock that "
                        f"tag with `gluon-hub lock -o {path} {spec.qualified_name}:{tag} ...`")
    try:
        current = pin(spec, locked.tag)
    except (KeyError, LockError) as exc:
        found = [str(exc.args[0] if exc.args else exc)]
    else:
        found = drift(locked, current)
    if found:
        provider = f"{locked.distribution}=={locked.version}" if locked.distribution else None
        raise LockDriftError(
            f"{spec.noun} {spec.qualified_name!r} no longer matches the lock file {path}: "
            + "; ".join(found) + ". Nothing was downloaded. If the change is intended, lock again "
            f"with {_relock(path)}" + (f"; otherwise install {provider}" if provider else "") + ".")
    return locked


def weight_variant(spec: Any, pretrained: Any, lock: str | os.PathLike[str] | None) -> Any:
    """The weights ``load(..., pretrained=True | TAG)`` takes: under a lock, the pinned tag,
    checked. (``Any``: ``load`` has already told a tag from the file path it also accepts.)"""
    path = lock_path(lock)
    if path is None:
        return spec.weight(pretrained)
    return spec.weight(checked_pin(spec, path, pretrained).tag)


def check_files(spec: Any, lock: str | os.PathLike[str] | None) -> None:
    """Under a lock, refuse a dataset or embedding whose files are not the pinned ones (before
    any download)."""
    path = lock_path(lock)
    if path is not None and spec.files:
        checked_pin(spec, path)


def files_to_fetch(spec: Any, tag: str | None, lock: str | os.PathLike[str] | None) -> list[FileRef] | None:
    """Under a lock, the files a prefetch of ``spec`` may download (a model's pinned tag, after
    the drift check); ``None`` when no lock is in force."""
    path = lock_path(lock)
    if path is None:
        return None
    locked = checked_pin(spec, path, True if tag is None else tag)
    if spec.kind == "models":
        return [spec.weight(locked.tag).file]
    return list(spec.files)
