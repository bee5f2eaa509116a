"""``gluon-hub lock``: pin models' weights and the files of datasets, embeddings and
vocabularies; ``--check`` reports drift for CI."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..specs import FILE_KINDS, SPEC_KINDS

#: The kinds pinned by ``--NOUN NAME`` (``--dataset``, ``--embedding``, ``--vocabulary``).
_FILES_ONLY = FILE_KINDS[1:]


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "lock", help="pin models' weights, datasets', embeddings' and vocabularies' files in a lock file; "
                     "--check reports drift",
        description="Write a lock file pinning, for each model (NAME or NAME:TAG), dataset, "
                    "embedding and vocabulary, the "
                    "providing plugin distribution and version, the weight tag and every file's "
                    "hash, size and URLs. Without names, the names already in the file are pinned "
                    "again. Loads and `cache prefetch` obey the file under GLUON_HUB_LOCK=FILE or "
                    "load(..., lock=FILE). "
                    "Nothing is downloaded. Format and a CI example: docs/lock.md.")
    p.add_argument("names", nargs="*", metavar="NAME[:TAG]",
                   help="models to pin, with their default weights or the tag given")
    for kind in _FILES_ONLY:
        noun = SPEC_KINDS[kind].noun
        p.add_argument(f"--{noun}", action="append", default=[], dest=kind, metavar="NAME",
                       help=f"a {noun} to pin (repeat for more)")
    p.add_argument("-o", "--file", dest="path", metavar="FILE",
                   help="the lock file to write or check (default: GLUON_HUB_LOCK, else "
                        "./gluon-hub.lock)")
    p.add_argument("--check", action="store_true",
                   help="write nothing; exit 1 and print each entry the installed plugins no "
                        "longer match")
    p.set_defaults(run=_lock)


def _requests(args: argparse.Namespace, path: Path) -> list[tuple[str, str, str | None]]:
    """(kind, name, tag) to pin: the arguments, else the entries of the existing file."""
    from .. import _lock

    wanted: list[tuple[str, str, str | None]] = []
    for argument in args.names:
        name, sep, tag = argument.partition(":")
        if sep and not tag:
            raise ValueError(f"{argument!r}: give a weight tag after ':' or none at all")
        wanted.append(("models", name, tag or None))
    wanted += [(kind, name, None) for kind in _FILES_ONLY for name in getattr(args, kind)]
    if wanted:
        return wanted
    if not path.exists():
        options = ", ".join(f"--{SPEC_KINDS[kind].noun}" for kind in _FILES_ONLY)
        raise ValueError(f"name the models (and {options}) to pin: {path} does not exist yet, "
                         f"e.g. `gluon-hub lock resnet50_v1d -o {path}`")
    return [(p.kind, p.name, p.tag) for p in _lock.read(path)]


def _lock(args: argparse.Namespace) -> int:
    from .. import _env, _lock

    path = Path(args.path or _env.lock_file() or _lock.DEFAULT_PATH)
    if args.check:
        if args.names or any(getattr(args, kind) for kind in _FILES_ONLY):
            raise ValueError("--check checks the whole lock file; give no names with it")
        pins = _lock.read(path)
        drifted = _lock.check(pins)
        for line in drifted:
            print(f"drift: {line}")
        if drifted:
            print(f"\n{path}: {len(drifted)} difference(s) from the installed plugins; loads under "
                  f"this lock fail until you reinstall the locked versions or lock again with "
                  f"`gluon-hub lock -o {path}`", file=sys.stderr)
            return 1
        print(f"{path}: all {len(pins)} entries match the installed plugins")
        return 0
    chosen: dict[tuple[str, str], _lock.Pin] = {}
    for kind, name, tag in _requests(args, path):
        pinned = _lock.resolve(kind, name, tag)
        chosen[pinned.key] = pinned  # one entry per name, whichever way it was written
    _lock.write(path, list(chosen.values()))
    for pinned in sorted(chosen.values(), key=lambda p: p.key):
        provider = f"{pinned.distribution} {pinned.version}" if pinned.distribution else "(no distribution)"
        tag = f" [{pinned.tag}]" if pinned.tag else ""
        print(f"{pinned.label}{tag}: {len(pinned.files)} file(s), from {provider}")
    print(f"\nwrote {os.fspath(path)}")
    return 0
