"""``publish``, ``serve``, ``bundle`` and ``import``: put weights where others can load them.

Scripts parse these commands' stdout: ``publish`` prints the index entry as JSON, and
``serve`` prints ``Serving DIR at URL`` as its first line. Notes go to stderr.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import warnings
from pathlib import Path

from ._table import format_table, human_size, plural


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "publish", help="write a .params file named by its hash and its weights.json entry",
        description="Copy a .params file (checked to be an MXNet NDArray file) to "
        "OUT/NAME-<sha256[:12]>.params and add its entry to OUT/weights.json, replacing an "
        "entry with the same tag. Upload OUT to any static host, or 'gluon-hub serve' it.",
    )
    p.add_argument("params", type=Path, metavar="PARAMS_FILE", help="written by net.save_parameters (or a .safetensors or .onnx file, "
                   "as gluon-hub convert writes them, under a tag of its own)")
    p.add_argument("--name", required=True, help="the model name the plugin registers")
    p.add_argument("--out", required=True, type=Path, metavar="DIR", help="output (mirror) folder")
    p.add_argument("--tag", default="default", help="weight tag (default: %(default)s)")
    p.add_argument("--metric", action="append", default=[], metavar="NAME=VALUE@DATASET[:SPLIT]",
                   help="a reported result, e.g. top-1=0.93@imdb:test; repeatable")
    p.add_argument("--source", default="", help="who measured the metrics (a paper, a URL ...)")
    p.add_argument("--description", default="", help="how the weights were trained")
    p.add_argument("--base-url", metavar="URL",
                   help="where OUT will be served from; the entry then carries the file's URL. "
                   "Asked for on a terminal when not given; without it the file is found only "
                   "through mirrors (GLUON_HUB_MIRRORS), never on the default public mirror")
    p.set_defaults(run=_publish)

    p = subparsers.add_parser(
        "serve", help="serve a folder as a read-only mirror over HTTP (Ctrl-C stops)",
        description="Serve DIR's files (GET, HEAD, byte ranges, ETag) for GLUON_HUB_MIRRORS, and the "
        "catalogue of every model, dataset and embedding beside them at URL/catalogue/ (written on start, or "
        "--catalogue). The first line printed is 'Serving DIR at URL'.",
    )
    p.add_argument("directory", type=Path, metavar="DIR")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default: %(default)s, this machine only)")
    p.add_argument("--port", type=int, default=0, help="0 picks a free port (default)")
    p.add_argument("--verbose", action="store_true", help="log each request to stderr")
    group = p.add_mutually_exclusive_group()
    group.add_argument("--catalogue", type=Path, metavar="CATALOGUE_DIR",
                       help="serve this 'gluon-hub catalogue' output instead of writing one on start")
    group.add_argument("--no-catalogue", action="store_true", help="serve the mirror only")
    p.set_defaults(run=_serve)

    p = subparsers.add_parser(
        "bundle", help="pack models' weights and a checked manifest into one tar file",
        description="Write the weight files of the named models (fetched through the cache, "
        "or taken from --from-dir) and a manifest into FILE, for 'gluon-hub import' elsewhere.",
    )
    p.add_argument("models", nargs="+", metavar="MODEL",
                   help="NAME (default weights) or NAME:TAG; an embedding's or dataset's NAME bundles its files")
    p.add_argument("-o", "--output", required=True, type=Path, metavar="FILE",
                   help="the bundle to write (.tar, or .tar.gz to compress)")
    p.add_argument("--from-dir", type=Path, metavar="DIR",
                   help="take the files from DIR (e.g. publish's output) instead of the cache")
    p.add_argument("--all-tags", action="store_true", help="every weight tag of untagged models")
    p.set_defaults(run=_bundle)

    p = subparsers.add_parser(
        "import", help="verify a bundle and add its weight files to the cache",
        description="Check FILE completely (paths, sizes, every hash) and only then add its "
        "files to the cache (GLUON_HUB_HOME); a damaged bundle changes nothing.",
    )
    p.add_argument("archive", type=Path, metavar="FILE")
    p.set_defaults(run=_import)


def _publish(args: argparse.Namespace) -> int:
    from ..publishing import parse_metric, publish
    from ..specs import _to_jsonable

    metrics = [parse_metric(m, source=args.source) for m in args.metric]
    base_url = args.base_url
    if base_url is None and sys.stdin.isatty():
        base_url = input(f"URL that {args.out} will be served from (empty: none, only mirrors "
                         "will find the file): ").strip() or None
    if base_url is None:
        print("gluon-hub: note: no --base-url: the entry has a file name but no URL, so users "
              "find the file only on a mirror they configure (GLUON_HUB_MIRRORS), and "
              "'gluon-hub check-plugin' reports the model until its spec gives a URL",
              file=sys.stderr)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        variant = publish(args.params, args.name, args.out, tag=args.tag, metrics=metrics,
                          description=args.description, base_url=base_url)
    for warning in caught:
        print(f"gluon-hub: note: {warning.message}", file=sys.stderr)
    print(f"published {args.name}:{variant.tag} as {args.out / variant.file.filename} "
          f"({human_size(variant.file.size)}); entry added to {args.out / 'weights.json'}",
          file=sys.stderr)
    print(json.dumps({"name": args.name, **_to_jsonable(variant)}, indent=2))
    return 0


def _serve(args: argparse.Namespace) -> int:
    import tempfile

    with tempfile.TemporaryDirectory(prefix="gluon-hub-catalogue-") as scratch:
        catalogue = args.catalogue
        if catalogue is None and not args.no_catalogue:
            from ..catalogue import write

            catalogue = write(scratch).parent
        return _serve_until_stopped(args, catalogue)


def _serve_until_stopped(args: argparse.Namespace, catalogue: Path | None) -> int:
    from ..publishing._mirror_server import MirrorServer

    server = MirrorServer(args.directory, args.host, args.port, verbose=args.verbose, catalogue=catalogue)

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, stop)  # `kill PID` stops it as cleanly as Ctrl-C
    try:
        print(f"Serving {server.root} at {server.url}", flush=True)
        if server.catalogue_url:
            print(f"gluon-hub: the catalogue is at {server.catalogue_url}", file=sys.stderr, flush=True)
        server.serve_forever()
    except KeyboardInterrupt:
        print("gluon-hub: mirror stopped", file=sys.stderr)
    finally:
        signal.signal(signal.SIGTERM, previous)
        server.server_close()
    return 0


def _bundle(args: argparse.Namespace) -> int:
    from ..publishing import bundle

    files = bundle(args.models, args.output, from_dir=args.from_dir, all_tags=args.all_tags)
    rows = [(f.path, human_size(f.size), f.sha256[:19] + "...", ", ".join(f.models)) for f in files]
    print(format_table(("FILE", "SIZE", "HASH", "MODELS"), rows))
    print(f"\nwrote {args.output}: {plural(len(files), 'file')}, {human_size(sum(f.size for f in files))}")
    return 0


def _import(args: argparse.Namespace) -> int:
    from ..publishing import import_bundle

    imported = import_bundle(args.archive)
    rows = [(Path(f.path).name, human_size(f.size), ", ".join(f.models), str(path))
            for f, path in imported]
    print(format_table(("FILE", "SIZE", "MODELS", "CACHED AT"), rows))
    total = sum(f.size for f, _ in imported)
    print(f"\nimported {plural(len(imported), 'file')}, {human_size(total)}, all hashes verified")
    return 0
