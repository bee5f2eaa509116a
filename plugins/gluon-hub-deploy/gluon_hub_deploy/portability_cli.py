"""``gluon-hub portability``: measure the ONNX rows of the portability matrix and, with
``--write``, store them in each model's plugin (``portability.json`` beside its plugin
module, which ``registry build`` then copies into ``registry.json``).

Each model is written as soon as it is measured, so an interrupted run keeps what it
measured and ``--missing`` goes on from there.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from typing import Any, Sequence

__all__ = ["main"]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="gluon-hub portability",
        description="Export models to ONNX with random weights, run them in onnxruntime and MXNet "
        "at two input sizes, and print (or --write) each model's row: exportable with the largest "
        "relative difference, or blocked with the operator. See docs/onnx.md.",
    )
    p.add_argument("names", nargs="*", metavar="NAME", help="models to measure (default: all installed)")
    p.add_argument("--task", help="only this task's models")
    p.add_argument("--plugin", help="only this plugin's models")
    p.add_argument("--per-family", action="store_true",
                   help="only the smallest model of each family (models sharing a factory)")
    p.add_argument("--missing", action="store_true",
                   help="only models without a row measured on their current spec (resume a run)")
    p.add_argument("--write", action="store_true",
                   help="store the rows in each model's plugin (its portability.json)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the plugin command; returns the exit code (1 if any model is blocked or
    could not be measured)."""
    args = build_parser().parse_args(argv)
    specs = _selected(args)
    if not specs and args.missing:
        print("every selected model has a row measured on its current spec")
        return 0
    if not specs:
        raise ValueError("no model matches; see 'gluon-hub list'")
    from gluon_hub.portability import shapes_text, store

    blocked = failed = 0
    for index, spec in enumerate(specs, 1):
        start = time.perf_counter()
        try:
            row = _measure_apart(spec.qualified_name)
        except RuntimeError as error:  # one model's failure must not end a long run
            failed += 1
            print(f"[{index}/{len(specs)}] {spec.qualified_name}: not measured: {error}", flush=True)
            continue
        took = time.perf_counter() - start
        if row.status == "blocked":
            blocked += 1
            text = f"blocked: {row.blocker}"
        else:
            shapes = shapes_text(row)
            text = f"exportable ({shapes}, max relative difference {row.max_rel_diff:.1e})"
        print(f"[{index}/{len(specs)}] {spec.qualified_name}: {text} [{took:.1f} s]", flush=True)
        if args.write:
            store(spec, row)
    print(f"{len(specs) - blocked - failed} exportable, {blocked} blocked"
          + (f", {failed} not measured (errors above)" if failed else "")
          + ("" if args.write else " (not stored: add --write)"))
    if args.write:
        print("now run 'gluon-hub registry build' to copy the rows into registry.json")
    return 1 if blocked or failed else 0


def _measure_apart(name: str) -> Any:
    """Measure ``name`` in a process of its own, so that a model which exhausts memory or
    crashes inside MXNet or onnxruntime costs only its own row."""
    from gluon_hub.specs import OnnxPortability, _from_jsonable

    child = subprocess.run([sys.executable, "-m", "gluon_hub_deploy._measure", name],
                           capture_output=True, text=True)
    if child.returncode != 0:
        died = (f"killed by signal {-child.returncode}" + (" (out of memory?)" if child.returncode == -9 else "")
                if child.returncode < 0 else f"exit code {child.returncode}")
        last = (child.stderr.strip().splitlines() or ["no message"])[-1]
        raise RuntimeError(f"the measuring process ended with {died}: {last}")
    return _from_jsonable(OnnxPortability, json.loads(child.stdout.strip().splitlines()[-1]))


def _selected(args: argparse.Namespace) -> list[Any]:
    import gluon_hub
    from gluon_hub.portability import is_current

    if args.names:
        specs = [gluon_hub.info(name) for name in args.names]
    else:
        specs = [gluon_hub.info(name) for name in gluon_hub.list_models(task=args.task, plugin=args.plugin)]
    if args.names and (args.task or args.plugin):
        specs = [s for s in specs if (not args.task or s.task == args.task)
                 and (not args.plugin or s.plugin == args.plugin)]
    if args.missing:
        specs = [s for s in specs if not is_current(s)]
    if args.per_family:
        smallest: dict[str, Any] = {}
        for s in specs:
            best = smallest.get(s.factory)
            if best is None or (s.num_params or 0) < (best.num_params or 0):
                smallest[s.factory] = s
        specs = [s for s in specs if smallest[s.factory] is s]
    return specs
