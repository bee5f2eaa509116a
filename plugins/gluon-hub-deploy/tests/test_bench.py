"""``gluon-hub bench`` through the real CLI in subprocesses: measured numbers, the results
cache (reused, resumed after a kill, re-measured when the versions differ), the three chart
formats, and clear errors. Small inputs (``--size 64``) and ``--quick`` keep it fast."""

from __future__ import annotations

import csv
import json
import math
import os
import signal
import subprocess
import sys
import time
from html.parser import HTMLParser
from pathlib import Path
from xml.etree import ElementTree

import pytest

import gluon_hub
from gluon_hub_deploy.bench.cli import RESULT_KEYS, _not_applicable, machine

pytestmark = pytest.mark.mxnet

SMALL = ("mobilenet0.25", "resnet18_v1")
FAST = ("--quick", "--size", "64")


def bench(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "GLUON_HUB_PROGRESS": "0"}
    return subprocess.run([sys.executable, "-m", "gluon_hub.cli", "bench", *args], capture_output=True,
                          text=True, env=env, timeout=600, cwd=cwd)


def cache_lines() -> list[dict]:
    path = Path(os.environ["GLUON_HUB_HOME"]) / "bench" / "results-size64-quick.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_measures_caches_and_draws(tmp_path: Path):
    out = tmp_path / "results.csv"
    first = bench(*SMALL, "--runtime", "mxnet,int8,onnx", *FAST, "-o", str(out))
    assert first.returncode == 0, first.stderr
    assert "random weights" in first.stdout
    assert "cv/mobilenet0.25 int8 batch 1: skipped: not applicable" in first.stdout
    rows = list(csv.DictReader(out.open()))
    assert [(r["model"], r["runtime"]) for r in rows] == [
        ("cv/mobilenet0.25", "mxnet"), ("cv/mobilenet0.25", "onnx"), ("cv/resnet18_v1", "mxnet"),
        ("cv/resnet18_v1", "onnx")]
    for r in rows:
        latency, throughput, peak = float(r["latency_ms"]), float(r["throughput"]), float(r["peak_mb"])
        assert 0 < latency < 5000 and throughput == pytest.approx(1000 / latency, rel=0.01)
        assert 20 < peak < 8000, r  # a Python process with a model: tens of MB at least
        assert r["cores"] == str(os.cpu_count()) and r["mxnet"] and r["onnxruntime"]
    by = {(r["model"], r["runtime"]): float(r["peak_mb"]) for r in rows}
    # the onnx process imports onnxruntime only, the mxnet one MXNet: their peaks are their own
    assert by[("cv/resnet18_v1", "onnx")] < by[("cv/resnet18_v1", "mxnet")]

    lines = cache_lines()
    assert len(lines) == 4 and all(tuple(line) == RESULT_KEYS for line in lines)
    assert set(lines[0]["machine"]) == {"cpu", "cores", "gpu"}
    assert set(lines[0]["versions"]) == {"mxnet", "onnxruntime", "gluon_hub", "plugin"}

    start = time.perf_counter()
    again = bench(*SMALL, "--runtime", "mxnet,onnx", *FAST, "-o", str(tmp_path / "results.json"))
    took = time.perf_counter() - start
    assert again.returncode == 0, again.stderr
    assert again.stdout.count("(cached, measured") == 4 and len(cache_lines()) == 4
    assert took < 20, again.stdout  # nothing measured: no model built, no ONNX exported
    saved = json.loads((tmp_path / "results.json").read_text())
    assert [r["latency_ms"] for r in saved["results"]] == [float(r["latency_ms"]) for r in rows]

    # charts from the cached results: circles whose area follows the peak memory
    html = tmp_path / "chart.html"
    assert bench(*SMALL, "--runtime", "mxnet,onnx", *FAST, "--chart", str(html)).returncode == 0
    circles = _html_circles(html.read_text())
    svg = tmp_path / "chart.svg"
    assert bench(*SMALL, "--runtime", "mxnet,onnx", *FAST, "--chart", str(svg)).returncode == 0
    root = ElementTree.parse(svg).getroot()
    svg_circles = [c.attrib for c in root.iter("{http://www.w3.org/2000/svg}circle") if c.get("class") == "point"]
    for found in (circles, svg_circles):
        assert len(found) == 4
        assert {c["data-runtime"] for c in found} == {"mxnet", "onnx"}
        assert len({c["fill"] for c in found}) == 2  # one colour per runtime
        base = found[0]
        for c in found:  # r^2 / memory is one constant
            ratio = float(c["r"]) ** 2 / float(c["data-peak-mb"])
            assert math.isclose(ratio, float(base["r"]) ** 2 / float(base["data-peak-mb"]), rel_tol=0.01)
    text = svg.read_text()
    # which CPU, which versions, when
    assert f"{machine()['cpu']} ({os.cpu_count()} cores" in text and lines[0]["measured_at"][:10] in text
    assert f"MXNet {lines[0]['versions']['mxnet']}, onnxruntime {lines[0]['versions']['onnxruntime']}" in text
    assert "https://cv.gluon.ai/model_zoo/classification.html" in text  # the metric's source
    assert "<title>cv/mobilenet0.25 (onnx, batch 1)" in html.read_text()
    assert "http" not in html.read_text().replace("https://cv.gluon.ai/model_zoo/classification.html", "") \
        .replace("http://www.w3.org/2000/svg", "")  # nothing fetched from the network

    pytest.importorskip("matplotlib")
    from PIL import Image

    png = tmp_path / "chart.png"
    assert bench(*SMALL, "--runtime", "mxnet,onnx", *FAST, "--chart", str(png)).returncode == 0
    image = Image.open(png).convert("L")
    low, high = image.getextrema()
    assert image.width >= 800 and high - low > 100  # drawn, not blank
    colours = Image.open(png).convert("RGB").getcolors(1 << 20)
    assert colours is not None and len(colours) > 50


class _Circles(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[dict] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        attributes = dict(attrs)
        if tag == "circle" and attributes.get("class") == "point":
            self.found.append(attributes)


def _html_circles(text: str) -> list[dict]:
    parser = _Circles()
    parser.feed(text)
    return parser.found


def test_interrupted_run_resumes_and_other_versions_measure_again():
    args = ["-m", "gluon_hub.cli", "bench", SMALL[0], "--batch", "1,2", *FAST]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "GLUON_HUB_PROGRESS": "0"}
    proc = subprocess.Popen([sys.executable, *args], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, env=env, start_new_session=True)
    try:
        for line in proc.stdout:  # type: ignore[union-attr]
            if " ms, " in line:
                break
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the command and the child measuring the next case
        proc.wait()
    kept = cache_lines()
    assert len(kept) == 1  # the next case was still measuring

    resumed = bench(SMALL[0], "--batch", "1,2", *FAST)
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.count("(cached, measured") == len(kept)
    assert len(cache_lines()) == 2

    # a result measured with another MXNet is not this machine's answer: measured again
    path = Path(os.environ["GLUON_HUB_HOME"]) / "bench" / "results-size64-quick.jsonl"
    lines = cache_lines()
    lines[0]["versions"]["mxnet"] = "0.0.1"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    again = bench(SMALL[0], "--batch", "1", *FAST)
    assert again.returncode == 0 and "(cached" not in again.stdout, again.stdout


@pytest.mark.parametrize("args, message", [
    (["mobilenet0.25", "--runtime", "tensorrt"], "unknown runtime 'tensorrt'; --runtime takes"),
    (["mobilenet0.25", "--batch", "1,x"], "--batch takes positive whole numbers"),
    (["mobilenet0.25", "--batch", "0"], "--batch takes positive whole numbers"),
    (["no_such_model_xyz"], "no_such_model_xyz"),
    ([], "name the models to measure"),
    (["--task", "no-such-task"], "no model has the task 'no-such-task'; tasks:"),
    (["mobilenet0.25", "--chart", "chart.pdf"], "must end in .html or .svg or .png"),
    (["mobilenet0.25", "-o", "out.txt"], "must end in .csv or .json"),
])
def test_bad_input_is_named(args: list[str], message: str, tmp_path: Path):
    run = bench(*args, cwd=tmp_path)
    assert run.returncode != 0
    assert message in run.stderr, run.stderr
    assert "Traceback" not in run.stderr


def test_onnx_blocked_model_is_skipped_with_its_reason(tmp_path: Path):
    out = tmp_path / "r.json"
    run = bench("mobilenet1.0_int8", "--runtime", "onnx", "--quick", "-o", str(out))
    assert run.returncode == 0, run.stderr
    assert "skipped: not portable to ONNX: cv/mobilenet1.0_int8 cannot be exported" in run.stdout
    saved = json.loads(out.read_text())
    assert saved["results"] == [] and saved["skipped"][0]["runtime"] == "onnx"


def test_a_model_exported_as_several_graphs_is_not_timed_as_one_onnx_file():
    """SiamRPN leaves MXNet as its template and search graphs: the onnx runtime says so, naming them."""
    reason = _not_applicable(gluon_hub.info("siamrpn_alexnet_v2_otb15"), "onnx")
    assert reason == ("exports to ONNX as several graphs (gluon_cv_core.tracking.export_graphs:siamrpn_graphs), "
                      "not one to time")
    assert _not_applicable(gluon_hub.info("siamrpn_alexnet_v2_otb15"), "mxnet") is None
