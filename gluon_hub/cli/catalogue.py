"""``catalogue``: write the browsable, offline site of every model, dataset and embedding."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "catalogue", help="write a static site of every model, dataset and embedding, searchable offline",
        description="Write DIR/index.html and a page per model, dataset and embedding of the installed plugins "
                    "and the registry index: search, filters, weights with hashes and sources, metrics, "
                    "portability, usage and 'gluon-hub bench' results. Open DIR/index.html from disk, "
                    "or 'gluon-hub serve MIRROR --catalogue DIR'. Nothing is fetched. See docs/catalogue.md.")
    p.add_argument("-o", "--output", required=True, type=Path, metavar="DIR", help="folder to write (created)")
    p.add_argument("--bench", type=Path, metavar="FILE",
                   help="bench results to show (default: results.jsonl under the cache's bench/ folder)")
    p.set_defaults(run=_catalogue)


def _catalogue(args: argparse.Namespace) -> int:
    from ..catalogue import write

    if args.bench is not None and not args.bench.is_file():
        raise FileNotFoundError(f"--bench {args.bench}: no such file; 'gluon-hub bench' writes one, "
                                "or leave --bench out to use the cache's")
    index = write(args.output, bench_path=args.bench)
    print(f"wrote {index}; open it in a browser (file://{index.resolve()})")
    return 0
