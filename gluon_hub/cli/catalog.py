"""``list``, ``info``, ``plugins`` and ``search``: what is installed and what could be."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .._portability import BLOCKER_CLASSES, SummaryRow, is_current, is_portable, shapes_text, summarize
from ._table import format_table, human_count, human_size, plural

KINDS = ("models", "datasets", "embeddings", "vocabularies", "losses", "batchify")
#: The count column of the kinds listed by family: vector length, number of tokens.
_COUNTS = {"embeddings": "dim", "vocabularies": "tokens"}


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("list", help="list installed models (or datasets, losses ...)")
    p.add_argument("pattern", nargs="?", default=None, help="shell-style pattern, e.g. 'resnet*'")
    p.add_argument("--kind", choices=KINDS, default="models")
    p.add_argument("--task", help="only this task (models and datasets)")
    p.add_argument("--plugin", help="only this plugin's entries")
    group = p.add_mutually_exclusive_group()
    group.add_argument("--pretrained", dest="pretrained", action="store_true", default=None,
                       help="only models with published weights")
    group.add_argument("--no-pretrained", dest="pretrained", action="store_false")
    p.add_argument("--portable", action="store_true",
                   help="only models measured to export to ONNX with MXNet's outputs")
    p.add_argument("--index", action="store_true",
                   help="list the registry index's entries (registry.json or GLUON_HUB_INDEX) "
                        "instead of the installed plugins'")
    p.add_argument("--portability-summary", action="store_true",
                   help="count the models by their stored ONNX rows (exportable, blocked by class, "
                        "not yet measured, largest difference from MXNet); measures nothing")
    p.add_argument("--by", choices=("task", "family"), default=None,
                   help="with --portability-summary: one row per task (default) or per family "
                        "(models sharing a factory)")
    p.add_argument("--format", choices=("text", "markdown"), default=None,
                   help="with --portability-summary: a terminal table (default) or README's markdown")
    p.add_argument("--json", action="store_true", help="print the full specs (or the summary) as JSON")
    p.set_defaults(run=_list)

    p = subparsers.add_parser("info", help="show a model's (or dataset's, embedding's, vocabulary's ...) "
                                               "metadata, files and metrics")
    p.add_argument("name")
    p.add_argument("--kind", choices=KINDS, default=None,
                   help="what NAME is (default: the first of these that knows it)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=_info)

    p = subparsers.add_parser("plugins", help="show each plugin with its version and status")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=_plugins)

    p = subparsers.add_parser("search", help="search installed plugins and the registry index")
    p.add_argument("query", nargs="+")
    p.add_argument("--kind", choices=KINDS, default=None, help="only this kind (default: every kind)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=_search)


def _top1(spec) -> str | None:
    """Top-1 accuracy in percent. Specs report it as a percentage (GluonCV's tables) or
    as a fraction (the main job's 0.97); an accuracy is never 1% or less, so a value of at
    most 1 is a fraction."""
    for variant in getattr(spec, "weights", ()):
        for metric in variant.metrics:
            if metric.name.lower() in ("top-1", "top1", "accuracy"):
                value = metric.value * 100 if metric.value <= 1 else metric.value
                return f"{value:.2f}"
    return None


def _list(args: argparse.Namespace) -> int:
    from .._catalog import Catalog
    from .._hub import get_hub
    from ..specs import SPEC_KINDS

    if (args.by or args.format) and not args.portability_summary:
        print("gluon-hub: error: --by and --format apply to --portability-summary only", file=sys.stderr)
        return 2
    if args.portability_summary and args.kind != "models":
        print("gluon-hub: error: --portability-summary applies to models only", file=sys.stderr)
        return 2
    filters = {"task": args.task} if args.kind in ("models", "datasets") else {}
    hub = get_hub()
    if args.index:  # the rows as `registry build` copied them, with or without the plugins
        cls = SPEC_KINDS[args.kind]
        catalog = Catalog(args.kind, [cls.from_dict(e) for e in hub.index().entries(args.kind)])
    else:
        catalog = hub.catalog(args.kind)
    specs = catalog.select(args.pattern, args.plugin, **filters)
    if args.kind == "models" and args.pretrained is not None:
        specs = [s for s in specs if s.pretrained == args.pretrained]
    if args.portable:
        if args.kind != "models":
            print("gluon-hub: error: --portable applies to models only", file=sys.stderr)
            return 2
        specs = [s for s in specs if is_portable(s)]
    if args.portability_summary:
        return _portability_summary(specs, args.by or "task", args.format or "text", args.json)
    if args.json:
        print(json.dumps([s.to_dict() for s in specs], indent=1))
        return 0
    if args.kind == "models":
        rows: list[tuple[Any, ...]] = [
            (s.qualified_name, s.task, human_count(s.num_params), _top1(s),
             ",".join(w.tag for w in s.weights) or None)
            for s in specs
        ]
        print(format_table(("NAME", "TASK", "PARAMS", "TOP-1 %", "WEIGHTS"), rows))
    elif args.kind in _COUNTS:
        count = _COUNTS[args.kind]
        rows = [(s.qualified_name, s.family, getattr(s, count), human_size(sum(f.size or 0 for f in s.files))
                 if all(f.size for f in s.files) else None, s.description) for s in specs]
        print(format_table(("NAME", "FAMILY", count.upper(), "SIZE", "DESCRIPTION"), rows))
    else:
        rows = [(s.qualified_name, getattr(s, "task", None), s.description) for s in specs]
        print(format_table(("NAME", "TASK", "DESCRIPTION"), rows))
    print(f"\n{plural(len(specs), SPEC_KINDS[args.kind].noun)}")
    return 0


_LABELS = {key: label for key, label, *_ in BLOCKER_CLASSES}


def _blocked_cell(row: SummaryRow) -> str:
    """``15 (beyond tolerance 11, int8 operators 4)``: the blocked models by class."""
    total = sum(row.blocked.values())
    parts = [f"{_LABELS[key]} {row.blocked[key]}" for key in _LABELS if key in row.blocked]
    return f"{total} ({', '.join(parts)})" if parts else "0"


def _not_measured_cell(row: SummaryRow) -> str:
    return f"{row.not_measured} ({row.stale} on an older spec)" if row.stale else str(row.not_measured)


def _portability_summary(specs: list[Any], by: str, form: str, as_json: bool) -> int:
    """Print the portability matrix summed up by task or family: ``--format markdown`` is
    README's table (``scripts/portability_table.py`` writes it there)."""
    rows = summarize(specs, by)
    if as_json:
        print(json.dumps([r.to_dict() for r in rows], indent=1))
        return 0
    cells: list[list[Any]] = []
    for r in rows:
        tasks = ("" if r is rows[-1] else ", ".join(r.tasks) if len(r.tasks) <= 2 else f"{len(r.tasks)} tasks")
        cells.append([r.group, *([tasks] if by == "family" else []), r.models, r.exportable, _blocked_cell(r),
                      _not_measured_cell(r), None if r.max_rel_diff is None else f"{r.max_rel_diff:.1e}"])
    headers = [by, *(["task"] if by == "family" else []), "models", "exportable", "blocked",
               "not yet measured", "largest relative difference"]
    if form == "text":
        print(format_table([h.upper() for h in headers], cells))
        print("\nnot yet measured: no row, or a row measured on an older spec; 'gluon-hub portability "
              "--missing --write' (gluon-hub-deploy) measures them")
        return 0
    print("| " + " | ".join(headers) + " |")
    print("|" + "---|" * len(headers))
    cells[-1][0] = "**all**"
    for line in cells:
        print("| " + " | ".join("" if c is None else str(c) for c in line) + " |")
    print()
    print("Blocked: " + "; ".join(f"*{label}*: {meaning}" for _, label, meaning, _ in BLOCKER_CLASSES) + ".")
    return 0


def _info(args: argparse.Namespace) -> int:
    from .._hub import get_hub

    hub = get_hub()
    spec = hub.find(args.name, KINDS) if args.kind is None else hub.lookup(args.kind, args.name)
    if args.json:
        print(json.dumps(spec.to_dict(), indent=1))
        return 0
    data = spec.to_dict()
    weights = data.pop("weights", [])
    files = data.pop("files", [])
    data.pop("onnx", None)  # printed in words below
    print(f"{'kind':>12}: {spec.noun}")
    for key, value in data.items():
        if value not in (None, "", [], {}):
            print(f"{key:>12}: {value}")
    for f in files:
        print(f"{'file':>12}: {f['filename'] or f['urls'][0]} ({human_size(f['size'])}, {f['hash']})")
    if files:
        from ..cache import prefetch_command

        print(f"{'prefetch':>12}: {prefetch_command(spec)}")
    for variant in weights:
        f = variant["file"]
        print(f"{'weights':>12}: [{variant['tag']}] {f['filename'] or f['urls'][0]} "
              f"({human_size(f['size'])}, {f['hash']})")
        for m in variant["metrics"]:
            print(f"{'':>14}{m['name']} {m['value']} on {m['dataset']} {m['split']}"
                  + (f" (source: {m['source']})" if m["source"] else ""))
    if spec.kind == "models":
        print(f"{'onnx':>12}: {_onnx_line(spec)}")
    return 0


def _onnx_line(spec: Any) -> str:
    """The model's row of the portability matrix, in words."""
    row = spec.onnx
    if row is None:
        return "not measured (gluon-hub portability NAME, from gluon-hub-deploy, measures it)"
    shapes = shapes_text(row)
    if row.status == "blocked":
        text = f"blocked by {row.blocker}"
    else:
        text = (f"exportable, opset {row.opset}, inputs {shapes} ('?' is dynamic), "
                f"max relative difference from MXNet {row.max_rel_diff:.1e} (random weights)")
    if not is_current(spec):
        text += "; measured on an older spec: run 'gluon-hub portability NAME --write' again"
    return text


def _plugins(args: argparse.Namespace) -> int:
    from .._api import plugins

    infos = plugins()
    commands = _commands_by_plugin()
    if args.json:
        print(json.dumps([{**i.__dict__, "commands": commands.get(i.name, [])} for i in infos],
                         indent=1))
        return 0
    rows = [(i.name, i.version, i.distribution, i.status, ", ".join(commands.get(i.name, [])) or None,
             i.error) for i in infos]
    print(format_table(("PLUGIN", "VERSION", "DISTRIBUTION", "STATUS", "COMMANDS", "ERROR"), rows))
    return 0


def _commands_by_plugin() -> dict[str, list[str]]:
    """The ``gluon-hub`` commands each plugin adds (``predict`` ...), by plugin name."""
    from .._hub import get_hub

    commands: dict[str, list[str]] = {}
    for spec in get_hub().catalog("commands").select():
        commands.setdefault(spec.plugin, []).append(spec.name)
    return commands


def _search_status(row: dict) -> str:
    from .._index import PACKAGED_INDEX

    # Hints from another index are that index's claim: say whose it is.
    told = "" if row["index"] in (None, str(PACKAGED_INDEX)) else f" (per {row['index']})"
    if not row["installed"]:
        return f"{row['install']}{told}"
    if row["status"] == "not in installed version":
        return f"not in the installed {row['distribution']}{told}"
    if row["status"] != "loaded":
        return f"plugin {row['plugin']} {row['status']} (gluon-hub plugins says why)"
    return "installed"


def _search(args: argparse.Namespace) -> int:
    from .._api import search

    query = " ".join(args.query)
    kinds = KINDS if args.kind is None else (args.kind,)
    rows = [{**r, "kind": kind} for kind in kinds for r in search(query, kind=kind)]
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    table = [(f"{r['plugin']}/{r['name']}", r["kind"], r.get("task") or r.get("family"), _search_status(r))
             for r in rows]
    print(format_table(("NAME", "KIND", "TASK", "STATUS"), table))
    print(f"\n{len(rows)} found")
    return 0
