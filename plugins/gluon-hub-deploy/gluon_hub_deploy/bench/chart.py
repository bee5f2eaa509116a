"""The chart of ``gluon-hub bench``: throughput (x, log scale) against the accuracy the
registry reports for each model's published weights (y, with its source), circle area
proportional to peak memory, one colour per runtime, and a caption naming the machine, the
runtime versions and the date.

HTML is the SVG inline with a table (no script, no network: ``<title>`` elements give the
details on hover); PNG is drawn by matplotlib (the plugin's ``chart`` extra).
Models without a reported metric, or with another metric than the chart's, are listed in a
note, never placed at a made-up height.
"""

from __future__ import annotations

import math
import textwrap
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence
from xml.sax.saxutils import escape, quoteattr

__all__ = ["COLOURS", "draw", "require_matplotlib"]

#: One colour per runtime (matplotlib's first four, readable by most colour-blind readers).
COLOURS = {"mxnet": "#1f77b4", "optimize": "#ff7f0e", "int8": "#2ca02c", "onnx": "#d62728"}
#: The radius, in SVG pixels, of the circle of the largest peak memory.
_R_MAX = 22.0


@dataclass(frozen=True)
class _Point:
    row: dict[str, Any]
    accuracy: float

    @property
    def label(self) -> str:
        r = self.row
        return (f"{r['model']} ({r['runtime']}, batch {r['batch']}): {r['throughput']:g} items/s, "
                f"{r['latency_ms']:g} ms per batch, peak {r['peak_mb']:g} MB, accuracy {self.accuracy:g}")


@dataclass(frozen=True)
class _Chart:
    points: list[_Point]
    metric: str
    caption: list[str]
    notes: list[str]


def require_matplotlib() -> None:
    """Raise an ImportError naming the extra when matplotlib (needed for PNG only) is missing."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise ImportError("a PNG chart needs matplotlib: pip install 'gluon-hub-deploy[chart]' "
                          "(or pip install matplotlib); an .html or .svg chart needs nothing more") from None


def draw(path: str | Path, rows: Sequence[dict[str, Any]], skipped: Sequence[dict[str, Any]] = (),
         setting: str = "") -> Path:
    """Write the chart of ``rows`` (results of ``gluon-hub bench``) to ``path``: .html, .svg or
    .png; ``skipped`` cases are listed in a note, ``setting`` (such as the input size) in the caption."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".html", ".svg", ".png"):
        raise ValueError(f"{path}: a chart is written as .html, .svg or .png")
    chart = _prepare(rows, skipped, setting)
    path.parent.mkdir(parents=True, exist_ok=True)
    if suffix == ".png":
        _png(path, chart)
    elif suffix == ".svg":
        path.write_text(_svg(chart, standalone=True), encoding="utf-8")
    else:
        path.write_text(_html(chart, rows), encoding="utf-8")
    return path


def _headline(model: str) -> Any:
    """The first reported metric of the model's first published weights (top-1, mAP, mIoU ...)."""
    import gluon_hub

    spec = gluon_hub.info(model)
    for variant in spec.weights:
        if variant.metrics:
            return variant.metrics[0]
    return None


def _prepare(rows: Sequence[dict[str, Any]], skipped: Sequence[dict[str, Any]], setting: str) -> _Chart:
    if not rows:
        raise ValueError("no results to draw: every case was skipped or failed (see above)")
    metrics = {r["model"]: _headline(r["model"]) for r in rows}
    kinds = Counter((m.name, m.dataset, m.split) for m in metrics.values() if m is not None)
    notes = []
    points = []
    if kinds:
        (name, dataset, split), _ = kinds.most_common(1)[0]
        for r in rows:
            m = metrics[r["model"]]
            if m is not None and (m.name, m.dataset, m.split) == (name, dataset, split):
                points.append(_Point(r, m.value))
        sources = sorted({m.source for m in metrics.values() if m is not None and m.name == name and m.source})
        metric = f"{name} on {dataset} {split}, %, as reported by {', '.join(sources) or 'the registry'}"
        other = sorted({f"{k} ({m.name} on {m.dataset})" for k, m in metrics.items()
                        if m is not None and (m.name, m.dataset, m.split) != (name, dataset, split)})
        if other:
            notes.append(f"Another metric than the chart's, not plotted: {', '.join(other)}.")
    else:
        metric = "no reported metric"
    bare = sorted({k for k, m in metrics.items() if m is None})
    if bare:
        notes.append(f"No reported metric, not plotted: {', '.join(bare)}.")
    batches: dict[tuple[str, str, str], list[str]] = {}
    for s in skipped:  # one note per model, runtime and reason, whatever the batch sizes
        batches.setdefault((s["model"], s["runtime"], s["reason"]), []).append(str(s["batch"]))
    for (model, runtime, reason), sizes in batches.items():
        notes.append(f"Not plotted: {model} {runtime} (batch {', '.join(sizes)}): {reason}.")
    return _Chart(points, metric, _caption(rows, metric, setting), notes)


def _caption(rows: Sequence[dict[str, Any]], metric: str, setting: str) -> list[str]:
    machines = {(r["machine"]["cpu"], r["machine"]["cores"], r["machine"]["gpu"]) for r in rows}
    where = "; ".join(f"{cpu} ({cores} cores{f', GPU {gpu} unused' if gpu else ''})"
                      for cpu, cores, gpu in sorted(machines, key=str))
    dates = sorted(r["measured_at"][:10] for r in rows)
    when = dates[0] if dates[0] == dates[-1] else f"{dates[0]} to {dates[-1]}"

    def seen(key: str) -> str:
        return ", ".join(sorted({str(r["versions"][key]) for r in rows if r["versions"].get(key)})) or "not installed"

    return [
        f"Measured {when} on the CPU: {where}{f'; {setting}' if setting else ''}.",
        f"MXNet {seen('mxnet')}, onnxruntime {seen('onnxruntime')}, gluon_hub {seen('gluon_hub')}; "
        f"models from {seen('plugin')}.",
        "Random weights time the models; y is the accuracy reported for the published weights: "
        f"{metric}. One circle per model, runtime and batch size "
        f"({', '.join(str(b) for b in sorted({r['batch'] for r in rows}))}); its area is proportional to the "
        "peak memory (RSS) of the process that measured it.",
    ]


def _wrapped(lines: Sequence[str], width: int) -> list[str]:
    return [part for line in lines for part in textwrap.wrap(line, width, subsequent_indent="  ")]


def _ticks(lo: float, hi: float) -> list[float]:
    step = 10 ** math.floor(math.log10(max(hi - lo, 1e-9)))
    for factor in (1, 2, 5, 10):
        if (hi - lo) / (step * factor) <= 8:
            step *= factor
            break
    first = math.ceil(lo / step) * step
    return [round(first + i * step, 10) for i in range(int((hi - first) / step + 1e-9) + 1)]


def _svg(chart: _Chart, standalone: bool) -> str:
    width, left, right, top, plot_h = 980, 70, 150, 50, 420
    lines = _wrapped(chart.caption + chart.notes, 150)
    height = top + plot_h + 50 + 16 * len(lines) + 10
    plot_w = width - left - right
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">']
    if standalone:
        out.append("<title>gluon-hub bench: throughput against reported accuracy</title>")
    out.append(f'<rect width="{width}" height="{height}" fill="white"/>')
    out.append(f'<text x="{left}" y="24" font-size="16" font-weight="bold">Throughput against reported '
               f'accuracy, measured on this machine</text>')
    out.append(f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#888"/>')
    points = chart.points
    if points:
        xs = [p.row["throughput"] for p in points]
        ys = [p.accuracy for p in points]
        x_lo, x_hi = math.floor(math.log10(min(xs) / 1.5)), math.ceil(math.log10(max(xs) * 1.5))
        y_lo, y_hi = math.floor(min(ys) - 2), math.ceil(max(ys) + 2)
        peak = max(p.row["peak_mb"] for p in points)

        def px(v: float) -> float:
            return left + (math.log10(v) - x_lo) / (x_hi - x_lo) * plot_w

        def py(v: float) -> float:
            return top + plot_h - (v - y_lo) / (y_hi - y_lo) * plot_h

        for decade in range(x_lo, x_hi + 1):
            x = px(10 ** decade)
            out.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{top + plot_h}" stroke="#ddd"/>')
            out.append(f'<text x="{x:.1f}" y="{top + plot_h + 16}" text-anchor="middle">{10 ** decade:g}</text>')
        for tick in _ticks(y_lo, y_hi):
            y = py(tick)
            out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + plot_w}" y2="{y:.1f}" stroke="#eee"/>')
            out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{tick:g}</text>')
        # the largest circles first, so that small ones stay on top and hoverable
        for p in sorted(points, key=lambda p: -p.row["peak_mb"]):
            r = p.row
            radius = _R_MAX * math.sqrt(r["peak_mb"] / peak) if peak > 0 else _R_MAX
            out.append(f'<circle class="point" cx="{px(r["throughput"]):.2f}" cy="{py(p.accuracy):.2f}" '
                       f'r="{radius:.3f}" fill="{COLOURS[r["runtime"]]}" fill-opacity="0.55" stroke="#333" '
                       f'stroke-width="0.6" data-model={quoteattr(r["model"])} data-runtime="{r["runtime"]}" '
                       f'data-batch="{r["batch"]}" data-peak-mb="{r["peak_mb"]}">'
                       f'<title>{escape(p.label)}</title></circle>')
        labelled: dict[str, _Point] = {}
        for p in points:  # each model named once, beside its fastest point
            if p.row["model"] not in labelled or p.row["throughput"] > labelled[p.row["model"]].row["throughput"]:
                labelled[p.row["model"]] = p
        for model, p in sorted(labelled.items()):
            out.append(f'<text x="{px(p.row["throughput"]) + 8:.1f}" y="{py(p.accuracy) - 8:.1f}" font-size="11" '
                       f'fill="#222">{escape(model.split("/")[-1])}</text>')
    out.append(f'<text x="{left + plot_w / 2}" y="{top + plot_h + 34}" text-anchor="middle">throughput '
               f'(items per second, log scale)</text>')
    out.append(f'<text transform="translate(18 {top + plot_h / 2}) rotate(-90)" text-anchor="middle">'
               f'{escape(chart.metric.split(",")[0])}</text>')
    for i, runtime in enumerate(r for r in COLOURS if any(p.row["runtime"] == r for p in points)):
        y = top + 14 + 22 * i
        out.append(f'<circle cx="{left + plot_w + 20}" cy="{y}" r="7" fill="{COLOURS[runtime]}" '
                   f'fill-opacity="0.55" stroke="#333" stroke-width="0.6"/>')
        out.append(f'<text x="{left + plot_w + 32}" y="{y + 4}">{runtime}</text>')
    for i, line in enumerate(lines):
        out.append(f'<text x="{left}" y="{top + plot_h + 58 + 16 * i}" font-size="11" fill="#333">{escape(line)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _html(chart: _Chart, rows: Sequence[dict[str, Any]]) -> str:
    body = [f"<tr><td>{escape(r['model'])}</td><td>{r['runtime']}</td><td>{r['batch']}</td>"
            f"<td>{r['latency_ms']:g}</td><td>{r['throughput']:g}</td><td>{r['peak_mb']:g}</td></tr>" for r in rows]
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8"><title>gluon-hub bench</title>',
        "<style>body{font-family:sans-serif;margin:1.5em}circle.point:hover{stroke-width:2;fill-opacity:.9}"
        "table{border-collapse:collapse}td,th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:right}"
        "td:first-child,td:nth-child(2){text-align:left}</style></head><body>",
        _svg(chart, standalone=False),
        "<p>Hover over a circle for its numbers.</p>",
        "<table><tr><th>model</th><th>runtime</th><th>batch</th><th>latency (ms)</th><th>throughput (/s)</th>"
        "<th>peak memory (MB)</th></tr>", *body, "</table>",
        "</body></html>",
    ]) + "\n"


def _png(path: Path, chart: _Chart) -> None:
    require_matplotlib()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lines = _wrapped(chart.caption + chart.notes, 170)
    fig = plt.figure(figsize=(10, 6.2 + 0.2 * len(lines)), dpi=100)
    bottom = (0.75 + 0.2 * len(lines)) / (6.2 + 0.2 * len(lines))
    ax = fig.add_axes((0.08, bottom, 0.8, 0.9 - bottom))
    peak = max((p.row["peak_mb"] for p in chart.points), default=1.0)
    for runtime, colour in COLOURS.items():
        mine = [p for p in chart.points if p.row["runtime"] == runtime]
        if mine:
            ax.scatter([p.row["throughput"] for p in mine], [p.accuracy for p in mine],
                       s=[900 * p.row["peak_mb"] / peak for p in mine], c=colour, alpha=0.55,
                       edgecolors="#333", linewidths=0.6, label=runtime)
    labelled: dict[str, _Point] = {}
    for p in chart.points:
        if p.row["model"] not in labelled or p.row["throughput"] > labelled[p.row["model"]].row["throughput"]:
            labelled[p.row["model"]] = p
    for model, p in labelled.items():
        ax.annotate(model.split("/")[-1], (p.row["throughput"], p.accuracy), xytext=(8, 6),
                    textcoords="offset points", fontsize=8)
    ax.set_xscale("log")
    ax.set_xlabel("throughput (items per second, log scale)")
    ax.set_ylabel(chart.metric.split(",")[0])
    ax.grid(True, which="major", color="#ddd")
    if chart.points:
        legend = ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), title="runtime", markerscale=0.5)
        for handle in legend.legend_handles:
            handle.set_sizes([60])  # type: ignore[union-attr]
    ax.set_title("Throughput against reported accuracy, measured on this machine")
    for i, line in enumerate(lines):
        fig.text(0.01, (0.2 * (len(lines) - i)) / (6.2 + 0.2 * len(lines)), line, fontsize=7.5)
    fig.savefig(path, format="png")
    plt.close(fig)
