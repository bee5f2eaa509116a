"""``gluon-hub cache ls | verify | purge | prefetch | dir``: inspect and fill the file cache."""

from __future__ import annotations

import argparse

from ..specs import FILE_KINDS
from ._table import format_table, human_size


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("cache", help="list, verify, purge or prefetch cached files")
    sub = p.add_subparsers(dest="cache_command", metavar="ACTION", required=True)

    q = sub.add_parser("ls", help="list cached files with sizes and a total")
    q.add_argument("names", nargs="*", metavar="NAME",
                   help="only these: file names, full hashes, model, dataset, embedding or vocabulary names")
    q.set_defaults(run=_ls)

    q = sub.add_parser("verify", help="re-hash cached files; changed ones are removed")
    q.add_argument("names", nargs="*", metavar="NAME")
    q.add_argument("--keep", action="store_true", help="report changed files but keep them")
    q.set_defaults(run=_verify)

    q = sub.add_parser("purge", help="remove cached files and unpacked datasets (all of them without NAME)")
    q.add_argument("names", nargs="*", metavar="NAME")
    q.set_defaults(run=_purge)

    q = sub.add_parser("prefetch", help="fetch everything models, datasets, embeddings or "
                         "vocabularies need, for offline use")
    q.add_argument("names", nargs="+", metavar="NAME")
    q.add_argument("--kind", choices=FILE_KINDS, default=None,
                   help="what NAME is (default: the first of these that knows it)")
    q.add_argument("--tag", help="only this weight variant (default: every variant; under a lock "
                                 "file, the pinned one)")
    q.add_argument("--lock", metavar="FILE",
                   help="fetch only what this lock file pins, after checking the installed plugins "
                        "still match it (default: GLUON_HUB_LOCK, if set)")
    q.add_argument("--quiet", action="store_true", help="no progress bars")
    q.set_defaults(run=_prefetch)

    q = sub.add_parser("dir", help="print the cache directory, mirrors and config file")
    q.set_defaults(run=_dir)


def _ls(args: argparse.Namespace) -> int:
    from .. import cache

    found = cache.entries(args.names)
    rows = [
        (e.name if e.size or not e.partial else "(partial download)",
         e.hash[:20] + "...", human_size(e.size + e.partial),
         "yes" if e.stamped else "no", "shared" if e.shared else "user")
        for e in found
    ]
    unpacked = cache.extracted(args.names)
    rows += [(f"extracted/{f.dataset}/", "(unpacked archives)", human_size(f.size), "-", "user")
             for f in unpacked]
    print(format_table(("FILE", "HASH", "SIZE", "STAMPED", "CACHE"), rows))
    total = sum(e.size + e.partial for e in found) + sum(f.size for f in unpacked)
    folders = f" and {len(unpacked)} unpacked dataset folders" if unpacked else ""
    print(f"\n{len(found)} files{folders}, {human_size(total)} in {cache.cache_dir()}")
    return 0


def _verify(args: argparse.Namespace) -> int:
    from .. import cache

    results = cache.verify(args.names, remove=not args.keep)
    rows = []
    for r in results:
        note = {"ok": "ok", "partial": "partial download"}.get(r.status)
        if note is None:
            note = f"CHANGED (now {r.actual}); " + (
                "kept" if args.keep or r.entry.shared else "removed, refetched on next use"
            )
        rows.append((r.entry.name, human_size(r.entry.size), note))
    print(format_table(("FILE", "SIZE", "STATUS"), rows))
    bad = sum(r.status == "changed" for r in results)
    checked = sum(r.entry.size for r in results)
    print(f"\n{len(results)} files, {human_size(checked)} checked, {bad} changed")
    return 1 if bad else 0


def _purge(args: argparse.Namespace) -> int:
    from .. import cache

    removed = cache.purge(args.names)
    for entry in removed:
        print(f"removed {entry.name} ({human_size(entry.size + entry.partial)})")
    unpacked = cache.purge_extracted(args.names)
    for folder in unpacked:
        print(f"removed extracted/{folder.dataset}/ ({human_size(folder.size)})")
    freed = sum(e.size + e.partial for e in removed) + sum(f.size for f in unpacked)
    folders = f" and {len(unpacked)} unpacked dataset folders" if unpacked else ""
    print(f"{len(removed)} files{folders} removed, {human_size(freed)} freed from {cache.cache_dir()}")
    return 0


def _prefetch(args: argparse.Namespace) -> int:
    from .. import cache

    paths = cache.prefetch(args.names, kind=args.kind, tag=args.tag,
                           progress=False if args.quiet else None, lock=args.lock)
    rows = [(p.name, human_size(p.stat().st_size), str(p.parent)) for p in paths]
    print(format_table(("FILE", "SIZE", "FOLDER"), rows))
    total = sum(p.stat().st_size for p in paths)
    print(f"\n{len(paths)} files, {human_size(total)} ready in the cache")
    return 0


def _dir(args: argparse.Namespace) -> int:
    from .. import cache
    from .._cache._settings import settings

    cfg = settings()
    print(f"cache:   {cfg.home}")
    for shared in cfg.shared:
        print(f"shared:  {shared}")
    for mirror in cfg.mirrors:
        print(f"mirror:  {mirror}")
    print(f"config:  {cache.config_path()}")
    print(f"offline: {'yes' if cfg.offline else 'no'}")
    return 0
