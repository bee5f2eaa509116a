"""``registry build`` and ``registry check``: keep registry.json in step with the plugins."""

from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path

from .. import _index
from ..errors import HubError


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("registry", help="build or check registry.json from the plugins")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    for name, run, help_ in (
        ("build", _build, "write the index of the installed first-party plugins"),
        ("check", _check, "exit 1 if the index differs from what build would write"),
    ):
        a = actions.add_parser(name, help=help_)
        a.add_argument("--path", type=Path, default=_index.PACKAGED_INDEX.resolve(),
                       help="index file (default: the hub's own registry.json)")
        a.set_defaults(run=run)


def _generate() -> str:
    from .._api import plugins
    from .._hub import get_hub
    from ..specs import SPEC_KINDS

    infos = plugins()
    missing = set(_index.FIRST_PARTY) - {i.distribution for i in infos if i.status == "loaded"}
    if missing:
        broken = [f"{i.name}: {i.error}" for i in infos if i.status != "loaded"]
        raise HubError(
            f"first-party plugins not loaded: {', '.join(sorted(missing))}; install them "
            f"(pip install -e plugins/<name>) before building the index. {'; '.join(broken)}"
        )
    hub = get_hub()
    return _index.build(infos, {kind: list(hub.catalog(kind)) for kind in SPEC_KINDS})


def _build(args: argparse.Namespace) -> int:
    text = _generate()
    tmp = args.path.with_name(args.path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(args.path)
    print(f"wrote {args.path}")
    return 0


def _stale_portability() -> list[str]:
    """Models whose ONNX row was measured on a spec that has changed since."""
    from .._hub import get_hub
    from .._portability import is_current

    return [s.qualified_name for s in get_hub().catalog("models")
            if s.onnx is not None and not is_current(s)]


def _check(args: argparse.Namespace) -> int:
    stale = _stale_portability()
    if stale:
        print(f"gluon-hub: error: the ONNX portability rows of {', '.join(stale)} were measured "
              "on an older spec; run 'gluon-hub portability --write "
              f"{' '.join(stale)}' (gluon-hub-deploy), then 'gluon-hub registry build'",
              file=sys.stderr)
        return 1
    expected = _generate()
    try:
        current = args.path.read_text(encoding="utf-8")
    except OSError as exc:
        print(f"gluon-hub: error: cannot read {args.path}: {exc.strerror}", file=sys.stderr)
        return 1
    if current == expected:
        print(f"{args.path} is up to date")
        return 0
    diff = list(difflib.unified_diff(current.splitlines(), expected.splitlines(),
                                     "registry.json", "generated", lineterm="", n=1))
    sys.stderr.write("\n".join(diff[:60]) + ("\n..." if len(diff) > 60 else "") + "\n")
    print(f"gluon-hub: error: {args.path} is stale; run 'gluon-hub registry build'",
          file=sys.stderr)
    return 1
