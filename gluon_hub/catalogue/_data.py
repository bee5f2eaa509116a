"""What the catalogue shows, as plain JSON-ready dicts: no HTML here, and no MXNet.

Models, datasets, word embeddings and vocabularies (every kind with files, ``FILE_KINDS``) come from
:func:`gluon_hub.search` with an empty query, which is every entry of the installed plugins and of the
registry index, each marked installed or not.
Bench rows come from ``gluon-hub bench``'s cache, ``<cache root>/bench/results.jsonl``.
"""

from __future__ import annotations

import datetime
import json
import sys
from dataclasses import fields
from pathlib import Path
from typing import Any, Iterable

from .. import _api
from .._factory import import_object
from .._portability import is_current, is_portable, shapes_text
from .._version import __version__
from ..specs import FILE_KINDS, SPEC_KINDS, FileRef, ModelSpec, _to_jsonable

#: Keys of each line of ``results.jsonl`` the catalogue shows; other keys are ignored.
BENCH_KEYS = ("model", "runtime", "batch", "latency_ms", "throughput", "peak_mb", "machine", "versions",
              "measured_at")


def bench_file() -> Path:
    """Where ``gluon-hub bench`` caches its results: under the hub's cache root."""
    from .._cache._settings import settings

    return settings().home / "bench" / "results.jsonl"


def read_bench(path: Path) -> tuple[list[dict[str, Any]], int]:
    """The bench rows in ``path`` (none when it does not exist), and how many lines were
    skipped as unreadable: an interrupted bench run may leave a partial last line, which
    should not take the catalogue down."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return [], 0
    rows, skipped = [], 0
    for line in lines:
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError:
            row = None
        if not isinstance(row, dict) or not isinstance(row.get("model"), str):
            skipped += 1
            continue
        rows.append({key: row.get(key) for key in BENCH_KEYS})
    return rows, skipped


def _spec(cls: Any, row: dict[str, Any]) -> Any:
    """The spec behind a search row (which adds installed, distribution ... to its fields)."""
    names = {f.name for f in fields(cls)}
    return cls.from_dict({k: v for k, v in row.items() if k in names})


def _labels(path: str | None, installed: bool) -> list[str] | None:
    """The class names an installed plugin's ``labels`` path names; None where unknown."""
    if not path or not installed:
        return None
    try:
        return [str(n) for n in import_object(path, "labels")]
    except Exception:  # a plugin's broken labels module: the page shows the path instead
        return None


def _file(ref: FileRef, settings: Any) -> dict[str, Any]:
    from .._cache._fetch import sources

    return {"hash": ref.hash, "size": ref.size, "filename": ref.filename, "extract": ref.extract,
            "archive_hash": ref.archive_hash, "sources": sources(ref, settings)}


def _onnx(spec: ModelSpec) -> dict[str, Any] | None:
    row = spec.onnx
    if row is None:
        return None
    return {"status": row.status, "opset": row.opset, "inputs": shapes_text(row),
            "max_rel_diff": row.max_rel_diff, "blocker": row.blocker, "current": is_current(spec)}


def _top1(spec: ModelSpec) -> float | None:
    """Top-1 accuracy in percent (specs give a percentage or a fraction), for sorting."""
    for variant in spec.weights:
        for metric in variant.metrics:
            if metric.name.lower() in ("top-1", "top1", "accuracy"):
                return round(metric.value * 100 if metric.value <= 1 else metric.value, 2)
    return None


def _use_names(rows: list[dict[str, Any]]) -> dict[str, str]:
    """The name to write in code: bare, unless several plugins share it."""
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["name"].lower()] = counts.get(row["name"].lower(), 0) + 1
    return {f"{r['plugin']}/{r['name']}": r["name"] if counts[r["name"].lower()] == 1 else f"{r['plugin']}/{r['name']}"
            for r in rows}


#: The task shown for entries whose spec has none.
_KIND_TASKS = {"embeddings": "word-embedding", "vocabularies": "vocabulary"}


def _common(row: dict[str, Any], spec: Any, kind: str, use: str) -> dict[str, Any]:
    qualified = f"{spec.plugin}/{spec.name}"
    return {"id": qualified, "kind": kind, "name": spec.name, "use": use, "plugin": spec.plugin,
            "task": getattr(spec, "task", "") or _KIND_TASKS.get(kind, ""),
            "description": spec.description, "license": spec.license, "paper": spec.paper,
            "installed": row["installed"], "status": row["status"], "install": row["install"],
            "distribution": row["distribution"], "page": f"{kind}/{spec.plugin}/{spec.name}.html"}


def _model(row: dict[str, Any], use: str, settings: Any, bench: list[dict[str, Any]]) -> dict[str, Any]:
    spec: ModelSpec = _spec(ModelSpec, row)
    data = _common(row, spec, "models", use)
    inputs = [spec.input, *spec.extra_inputs] if spec.input is not None else list(spec.extra_inputs)
    data.update({
        "tags": list(spec.tags), "num_params": spec.num_params, "pretrained": spec.pretrained,
        "portable": is_portable(spec), "onnx": _onnx(spec), "top1": _top1(spec),
        "output_shape": list(spec.output_shape) if spec.output_shape is not None else None,
        "inputs": [_to_jsonable(i) for i in inputs],
        "labels": _labels(spec.input.labels if spec.input else None, row["installed"]),
        "runner": spec.runner,
        "weights": [{"tag": w.tag, "description": w.description, "file": _file(w.file, settings),
                     "metrics": [vars(m) for m in w.metrics]} for w in spec.weights],
        "bench": [b for b in bench if b["model"] in (spec.name, use, data["id"])],
    })
    return data


def _files_entry(kind: str, row: dict[str, Any], use: str, settings: Any) -> dict[str, Any]:
    """A dataset, an embedding or a vocabulary: its files, and its segments, or family and size
    (an embedding's vector length, a vocabulary's token count)."""
    spec = _spec(SPEC_KINDS[kind], row)
    data = _common(row, spec, kind, use)
    count = getattr(spec, "count", None)
    data.update({"tags": list(getattr(spec, "tags", ())), "segments": list(getattr(spec, "segments", ())),
                 "family": getattr(spec, "family", None), "size_name": count,
                 "size": getattr(spec, count) if count else None,
                 "files": [_file(f, settings) for f in spec.files]})
    return data


def gather(bench_path: Path | None = None) -> dict[str, Any]:
    """Everything the site shows: the entries of every kind with files, plugins and bench rows.

    ``bench_path`` defaults to :func:`bench_file`; a missing file means no bench results.
    """
    from .._cache._settings import settings as read_settings

    settings = read_settings()
    path = bench_file() if bench_path is None else Path(bench_path)
    bench, skipped = read_bench(path)
    rows = {kind: _api.search("", kind=kind) for kind in FILE_KINDS}
    names = {kind: _use_names(found) for kind, found in rows.items()}
    return {
        "hub_version": __version__,
        "python": sys.version.split()[0],
        "generated": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "mirrors": list(settings.mirrors),
        "bench_file": str(path),
        "bench_skipped": skipped,
        "kinds": list(FILE_KINDS),
        "plugins": [vars(p) for p in _api.plugins()],
        "models": _with_int8([_model(r, names["models"][f"{r['plugin']}/{r['name']}"], settings, bench)
                              for r in rows["models"]]),
        **{kind: [_files_entry(kind, r, names[kind][f"{r['plugin']}/{r['name']}"], settings) for r in rows[kind]]
           for kind in FILE_KINDS if kind != "models"},
    }


def _with_int8(models: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each model's int8 relation: the ``NAME_int8`` entry of its plugin that quantizes it
    (gluon-hub-deploy, at load), or for that entry the float model it comes from."""
    ids = {m["id"] for m in models}
    for m in models:
        int8 = f"{m['id']}_int8"
        m["int8"] = int8 if int8 in ids else None
        source = m["id"][:-len("_int8")] if m["id"].endswith("_int8") else None
        m["int8_of"] = source if source in ids else None
    return models


def summary(entries: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The fields the index page searches and filters on, one small dict per entry."""
    keys = ("id", "kind", "name", "plugin", "task", "description", "tags", "installed", "pretrained", "portable",
            "num_params", "top1", "page")
    return [{k: e.get(k) for k in keys} for e in entries]
