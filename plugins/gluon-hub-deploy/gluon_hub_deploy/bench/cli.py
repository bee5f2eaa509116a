"""``gluon-hub bench [NAME... | --task T] [--runtime R,...] [--batch B,...] [--quick] [-o FILE]
[--chart FILE]``: measure, cache, write and draw.

Each (model, runtime, batch) runs in a child process (:mod:`._child`) whose peak RSS the
parent reads from ``os.wait4``. Results are appended, one JSON object a line, to
``<cache>/bench/results.jsonl`` as soon as each is measured, so an interrupted run keeps them
and the next run goes on from there; a result is reused only when the machine and the
versions it was measured with are this run's. ``--quick`` and ``--size`` results go to files
of their own (``results-quick.jsonl``, ``results-size64.jsonl`` ...): ``results.jsonl`` holds
only full measurements at each model's declared input, which the catalogue shows.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any, Sequence

from .._progress import ProgressBar

__all__ = ["RUNTIMES", "RESULT_KEYS", "main", "machine", "results_file", "versions"]

#: The runtimes a case can be measured in, in the order they are run and drawn.
RUNTIMES = ("mxnet", "optimize", "int8", "onnx")
#: The keys of every line of the results file (the catalogue reads them).
RESULT_KEYS = ("model", "runtime", "batch", "latency_ms", "throughput", "peak_mb", "machine", "versions",
               "measured_at")
#: What every output says once: the numbers time random weights.
WEIGHTS_NOTE = ("random weights (no pretrained weights are needed to time a model); accuracy is the "
                "registry's reported value for the published weights")
#: The length of a free axis (a text model's sequence length).
_FREE = 16
#: (warm-up calls, timed calls) of a full and of a --quick run.
_REPEATS = {False: (2, 7), True: (1, 3)}


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="gluon-hub bench",
        description="Measure latency, throughput and peak memory of models on this machine (CPU, random "
        "weights), cache each (model, runtime, batch) result so an interrupted run resumes, write CSV or "
        "JSON and draw throughput against the registry's reported accuracy. See docs/bench.md.",
    )
    p.add_argument("names", nargs="*", metavar="NAME", help="models to measure")
    p.add_argument("--task", help="every model of this task (instead of NAMEs)")
    p.add_argument("--runtime", default="mxnet",
                   help=f"comma-separated runtimes among {','.join(RUNTIMES)} (default: mxnet)")
    p.add_argument("--batch", default="1", help="comma-separated batch sizes (default: 1)")
    p.add_argument("--size", type=int, help="height and width of image inputs instead of the spec's")
    p.add_argument("--quick", action="store_true", help="one warm-up and three timed calls (smoke tests)")
    p.add_argument("--fresh", action="store_true", help="measure again even where a cached result fits")
    p.add_argument("-o", "--output", type=Path, help="write the results to FILE.csv or FILE.json")
    p.add_argument("--chart", type=Path, help="draw the chart into FILE.html, FILE.svg or FILE.png")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the plugin command; returns 1 if any case could not be measured."""
    args = build_parser().parse_args(argv)
    runtimes = _runtimes(args.runtime)
    batches = _batches(args.batch)
    for path, allowed in ((args.output, (".csv", ".json")), (args.chart, (".html", ".svg", ".png"))):
        if path is not None and path.suffix.lower() not in allowed:
            raise ValueError(f"{path}: the file name must end in {' or '.join(allowed)}")
    if args.size is not None and args.size < 1:
        raise ValueError(f"--size must be a positive number of pixels, got {args.size}")
    if args.chart is not None and args.chart.suffix.lower() == ".png":
        from .chart import require_matplotlib

        require_matplotlib()  # before minutes of measuring, not after
    specs = _selected(args.names, args.task)
    cases = [(spec, runtime, batch) for spec in specs for runtime in runtimes for batch in batches]
    cache = results_file(quick=args.quick, size=args.size)
    here, now_versions = machine(), {}
    cached = {} if args.fresh else _read_cache(cache)
    print(f"gluon-hub bench: {len(cases)} cases on {here['cpu']} ({here['cores']} cores); "
          f"{WEIGHTS_NOTE}; cache {cache}", flush=True)
    rows: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    failed = 0
    with tempfile.TemporaryDirectory(prefix="gluon-hub-bench-") as tmp, ProgressBar(len(cases), "case") as bar:
        exported: dict[str, str | Exception] = {}
        for spec, runtime, batch in cases:
            label = f"{spec.qualified_name} {runtime} batch {batch}"
            bar.step(label)
            if spec.plugin not in now_versions:
                now_versions[spec.plugin] = versions(spec.plugin)
            found = cached.get((spec.qualified_name, runtime, batch))
            if found and found["machine"] == here and found["versions"] == now_versions[spec.plugin]:
                rows.append(found)
                bar.write(f"{label}: {_numbers(found)} (cached, measured {found['measured_at']})")
                bar.done()
                continue
            reason = _not_applicable(spec, runtime)
            if reason:
                skipped.append({"model": spec.qualified_name, "runtime": runtime, "batch": batch, "reason": reason})
                bar.write(f"{label}: skipped: {reason}")
                bar.done()
                continue
            try:
                row = _measure(spec, runtime, batch, args, Path(tmp), exported)
            except RuntimeError as error:  # one case's failure must not end a long run
                failed += 1
                skipped.append({"model": spec.qualified_name, "runtime": runtime, "batch": batch,
                                "reason": str(error)})
                bar.write(f"{label}: not measured: {error}")
                bar.done()
                continue
            row.update(machine=here, versions=now_versions[spec.plugin],
                       measured_at=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"))
            _append(cache, row)
            rows.append(row)
            bar.write(f"{label}: {_numbers(row)}")
            bar.done()
    if args.output is not None:
        _write_results(args.output, rows, skipped)
        print(f"results written to {args.output}")
    if args.chart is not None:
        from .chart import draw

        setting = ", ".join(([f"input {args.size}x{args.size}"] if args.size else [])
                            + (["--quick (few repetitions)"] if args.quick else []))
        draw(args.chart, rows, skipped, setting)
        print(f"chart written to {args.chart}")
    return 1 if failed else 0


def _runtimes(text: str) -> list[str]:
    chosen = [r.strip() for r in text.split(",") if r.strip()]
    unknown = [r for r in chosen if r not in RUNTIMES]
    if unknown or not chosen:
        raise ValueError(f"unknown runtime {', '.join(map(repr, unknown)) or repr(text)}; "
                         f"--runtime takes a comma-separated list of {', '.join(RUNTIMES)}")
    return [r for r in RUNTIMES if r in chosen]


def _batches(text: str) -> list[int]:
    try:
        batches = [int(b) for b in text.split(",")]
    except ValueError:
        batches = []
    if not batches or any(b < 1 for b in batches):
        raise ValueError(f"--batch takes positive whole numbers separated by commas (such as 1,8), got {text!r}")
    return sorted(set(batches))


def _selected(names: Sequence[str], task: str | None) -> list[Any]:
    import gluon_hub

    if names and task:
        raise ValueError("give model NAMEs or --task, not both")
    if names:
        return [gluon_hub.info(name) for name in names]
    if not task:
        raise ValueError("name the models to measure (gluon-hub bench NAME...) or a task (--task TASK); "
                         "see 'gluon-hub list'")
    # the int8 entries are measured as the int8 runtime of their float32 model
    specs = [s for s in map(gluon_hub.info, gluon_hub.list_models(task=task)) if "int8" not in s.tags]
    if not specs:
        tasks = sorted({s.task for s in map(gluon_hub.info, gluon_hub.list_models()) if s.task})
        raise ValueError(f"no model has the task {task!r}; tasks: {', '.join(tasks)}")
    return specs


def _not_applicable(spec: Any, runtime: str) -> str | None:
    """Why ``runtime`` cannot run ``spec`` (known before measuring), or None."""
    import importlib.util

    if spec.input is None or spec.input.shape is None:
        return "the spec declares no input shape to feed"
    if runtime == "int8" and _int8_name(spec) is None:
        return f"not applicable: the registry has no int8 variant of {spec.name} (no {spec.name}_int8)"
    if runtime == "onnx":
        if spec.onnx is not None and spec.onnx.status == "blocked":
            return f"not portable to ONNX: {spec.onnx.blocker}"
        if spec.export_graphs:
            return f"exports to ONNX as several graphs ({spec.export_graphs}), not one to time"
        if importlib.util.find_spec("onnxruntime") is None:
            return "onnxruntime is not installed (pip install onnxruntime)"
    return None


def _int8_name(spec: Any) -> str | None:
    import gluon_hub
    from gluon_hub.errors import UnknownNameError

    try:
        return str(gluon_hub.info(f"{spec.qualified_name}_int8").qualified_name)
    except UnknownNameError:
        return None


def _shapes(spec: Any, batch: int, size: int | None) -> tuple[list[list[int]], list[str]]:
    """Every input's shape with the batch axis (``--size`` for the height and width), and dtypes."""
    from gluon_hub.testing import _example_shape

    inputs = [spec.input, *spec.extra_inputs]
    shapes = []
    for index, input_spec in enumerate(inputs):
        if size is not None and index == 0:
            layout = input_spec.layout.replace("N", "")
            if "H" not in layout or "W" not in layout:
                raise ValueError(f"--size sets the height and width of an image input, but {spec.qualified_name}'s "
                                 f"input has the layout {input_spec.layout!r}")
            shape = list(input_spec.shape)
            shape[layout.index("H")] = shape[layout.index("W")] = size
            input_spec = replace(input_spec, shape=tuple(shape))
        shapes.append(list(_example_shape(input_spec, batch, _FREE)))
    return shapes, [i.dtype or "float32" for i in inputs]


def _measure(spec: Any, runtime: str, batch: int, args: argparse.Namespace, tmp: Path,
             exported: dict[str, str | Exception]) -> dict[str, Any]:
    warmup, repeat = _REPEATS[args.quick]
    shapes, dtypes = _shapes(spec, batch, args.size)
    job: dict[str, Any] = {"action": "measure", "model": spec.qualified_name, "runtime": runtime,
                           "shapes": shapes, "dtypes": dtypes, "warmup": warmup, "repeat": repeat}
    if runtime == "onnx":
        if spec.qualified_name not in exported:  # one file, with a free batch axis, serves every batch
            path = str(tmp / f"{spec.name}.onnx")
            try:
                _child({"action": "export", "model": spec.qualified_name, "shapes": shapes, "path": path})
                exported[spec.qualified_name] = path
            except RuntimeError as error:
                exported[spec.qualified_name] = RuntimeError(f"ONNX export failed: {error}")
        done = exported[spec.qualified_name]
        if isinstance(done, Exception):
            raise done
        job["onnx"] = done
    result, peak_kb = _child(job)
    median = statistics.median(result["times_s"])
    return {"model": spec.qualified_name, "runtime": runtime, "batch": batch,
            "latency_ms": round(median * 1e3, 3), "throughput": round(batch / median, 2),
            "peak_mb": round(peak_kb / 1024, 1)}


def _child(job: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """Run one job in a child process; its last stdout line and its own peak RSS in KiB.

    ``os.wait4`` gives this child's resource usage alone, where ``RUSAGE_CHILDREN`` keeps the
    largest of every child waited for so far."""
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([sys.executable, "-m", "gluon_hub_deploy.bench._child", json.dumps(job)],
                                stdout=subprocess.PIPE, stderr=err)
        try:
            out = proc.stdout.read()  # type: ignore[union-attr]
            _, status, usage = os.wait4(proc.pid, 0)
        except BaseException:  # Ctrl-C: leave no process measuring behind
            proc.kill()
            proc.wait()
            raise
        proc.returncode = os.waitstatus_to_exitcode(status)
        proc.stdout.close()  # type: ignore[union-attr]
        if proc.returncode != 0:
            err.seek(0)
            lines = err.read().decode(errors="replace").strip().splitlines()
            died = (f"killed by signal {-proc.returncode}" + (" (out of memory?)" if proc.returncode == -9 else "")
                    if proc.returncode < 0 else f"exit code {proc.returncode}")
            raise RuntimeError(f"the measuring process ended with {died}: {(lines or ['no message'])[-1]}")
    kib = usage.ru_maxrss // 1024 if sys.platform == "darwin" else usage.ru_maxrss  # bytes on macOS
    return json.loads(out.decode().strip().splitlines()[-1]), kib


def results_file(quick: bool = False, size: int | None = None) -> Path:
    """The JSON-lines cache of results: ``<cache>/bench/results.jsonl`` for full measurements
    at the declared input, a file of its own for ``--quick`` and each ``--size``."""
    from gluon_hub.cache import cache_dir

    suffix = (f"-size{size}" if size is not None else "") + ("-quick" if quick else "")
    return cache_dir() / "bench" / f"results{suffix}.jsonl"


def _read_cache(path: Path) -> dict[tuple[str, str, int], dict[str, Any]]:
    """The latest line per (model, runtime, batch); a line cut short by a kill is skipped."""
    found: dict[tuple[str, str, int], dict[str, Any]] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return found
    for line in lines:
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict) and set(row) == set(RESULT_KEYS):
            found[(row["model"], row["runtime"], row["batch"])] = row
    return found


def _append(path: Path, row: dict[str, Any]) -> None:
    """One line, written whole in one call (``O_APPEND``), as soon as it is measured."""
    path.parent.mkdir(parents=True, exist_ok=True)
    line = json.dumps({k: row[k] for k in RESULT_KEYS}) + "\n"
    with open(path, "a", encoding="utf-8") as f:
        f.write(line)


def machine() -> dict[str, Any]:
    """The CPU model, core count and GPU (``nvidia-smi``'s first, else None) of this machine."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    gpu = None
    if shutil.which("nvidia-smi"):
        try:
            names = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                                   capture_output=True, text=True, timeout=20).stdout.strip().splitlines()
            gpu = names[0].strip() if names else None
        except (OSError, subprocess.SubprocessError):
            gpu = None
    return {"cpu": cpu, "cores": os.cpu_count(), "gpu": gpu}


def versions(plugin: str) -> dict[str, str | None]:
    """MXNet's, onnxruntime's and gluon_hub's versions and the model's plugin (``dist version``),
    read from package metadata without importing them."""
    from importlib import metadata

    import gluon_hub

    providers = metadata.packages_distributions()

    def version(module: str) -> str | None:
        for dist in providers.get(module, []):
            try:
                return metadata.version(dist)
            except metadata.PackageNotFoundError:
                continue
        return None

    info = next((p for p in gluon_hub.plugins() if p.name == plugin), None)
    provider = f"{info.distribution} {info.version}" if info and info.distribution else plugin or None
    return {"mxnet": version("mxnet"), "onnxruntime": version("onnxruntime"),
            "gluon_hub": gluon_hub.__version__, "plugin": provider}


def _numbers(row: dict[str, Any]) -> str:
    return f"{row['latency_ms']:.2f} ms, {row['throughput']:.1f}/s, peak {row['peak_mb']:.0f} MB"


def _write_results(path: Path, rows: list[dict[str, Any]], skipped: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix.lower() == ".json":
        path.write_text(json.dumps({"weights": WEIGHTS_NOTE, "results": rows, "skipped": skipped}, indent=1) + "\n",
                        encoding="utf-8")
        return
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["model", "runtime", "batch", "latency_ms", "throughput", "peak_mb", "cpu", "cores", "gpu",
                         "mxnet", "onnxruntime", "gluon_hub", "plugin", "measured_at"])
        for r in rows:
            m, v = r["machine"], r["versions"]
            writer.writerow([r["model"], r["runtime"], r["batch"], r["latency_ms"], r["throughput"], r["peak_mb"],
                             m["cpu"], m["cores"], m["gpu"], v["mxnet"], v["onnxruntime"], v["gluon_hub"],
                             v["plugin"], r["measured_at"]])
