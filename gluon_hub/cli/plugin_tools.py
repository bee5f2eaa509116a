"""``new-plugin`` and ``check-plugin``: start a third-party plugin, and check it before
publishing."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("new-plugin", help="write a new plugin project from the template")
    p.add_argument("name", help="distribution name of the project, e.g. gluon-hub-mymodels")
    p.add_argument("--dir", type=Path, default=Path("."), help="parent folder (default: here)")
    p.add_argument("--plugin", help="plugin (entry-point) name; default: from NAME")
    p.add_argument("--force", action="store_true", help="write into an existing folder")
    p.set_defaults(run=_new_plugin)

    p = subparsers.add_parser("check-plugin",
                              help="run the conformance kit over an installed plugin")
    p.add_argument("name", help="plugin name or distribution name")
    p.add_argument("--pattern", help="only entries whose name matches, e.g. 'resnet*'")
    p.add_argument("--limit", type=int, help="build at most N models")
    p.add_argument("--no-build", dest="build", action="store_false",
                   help="check metadata only; import no model code")
    p.add_argument("--batch-size", type=int, default=1, help="batch of the output-shape check")
    p.add_argument("--check-weights", action="store_true",
                   help="download every weight file and check its size, hash and fit")
    p.add_argument("--root", help="cache folder for --check-weights")
    p.add_argument("--strict", action="store_true", help="fail on warnings too")
    p.add_argument("--json", action="store_true", help="print the findings as JSON")
    p.set_defaults(run=_check_plugin)


def _new_plugin(args: argparse.Namespace) -> int:
    from .._scaffold import write_plugin_project

    target = write_plugin_project(args.name, args.dir, plugin=args.plugin, force=args.force)
    print(f"wrote {target}\nnext: cd {target} && pip install -e \".[test]\" && python -m pytest")
    return 0


def _check_plugin(args: argparse.Namespace) -> int:
    from ..testing import check_plugin

    report = check_plugin(args.name, pattern=args.pattern, limit=args.limit,
                          build_models=args.build, batch_size=args.batch_size,
                          check_weights=args.check_weights, root=args.root)
    if args.json:
        print(json.dumps({"plugin": report.plugin, "distribution": report.distribution,
                          "checked": report.checked, "ok": report.ok,
                          "findings": [asdict(f) for f in report.findings]}, indent=1))
    else:
        print(report)
    return 0 if report.ok and not (args.strict and report.warnings) else 1
