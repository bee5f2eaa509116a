"""The main job (README command 1) end to end: train, publish, serve, reload, evaluate, convert
to ONNX and get the same answers from the ONNX runner in a process without MXNet."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "main_job.py"


def test_main_job_reloads_its_published_weights_with_the_same_accuracy(tmp_path):
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--workdir", str(tmp_path / "job"), "--train-seconds", "8"],
        capture_output=True, text=True, timeout=600,
    )
    out = result.stdout
    assert result.returncode == 0, out[-3000:] + result.stderr[-3000:]
    assert "same accuracy as at the end of training: yes" in out
    assert "weights: REAL, trained here" in out
    # resnet50_v1d's weights are never downloaded, and the job must say which it used
    assert "RANDOMLY INITIALISED" in out or "REAL, GluonCV's published ImageNet weights" in out
    published = list((tmp_path / "job" / "mirror").glob("digits_cnn-*.params"))
    assert len(published) == 1
    cached = list((tmp_path / "job" / "cache").rglob("digits_cnn-*.params"))
    assert len(cached) == 1 and cached[0].read_bytes() == published[0].read_bytes()
    for number in range(1, 7):
        assert f"=== {number}." in out
    # the converted graph, published beside the weights and run by name without MXNet
    assert "same answers from ONNX as from MXNet: yes" in out
    assert "fresh process without MXNet (mxnet imported: False) loaded digits_cnn-" in out
    assert "classes all equal" in out
    converted = list((tmp_path / "job" / "mirror").glob("digits_cnn-*.onnx"))
    assert len(converted) == 1
    fetched = list((tmp_path / "job" / "cache" / "onnx").rglob("digits_cnn-*.onnx"))
    assert len(fetched) == 1 and fetched[0].read_bytes() == converted[0].read_bytes()
    # random weights are an option of predict, not a 100 MB file written on every run
    assert "RANDOMLY INITIALISED" not in out or "the weights are RANDOM" in result.stderr
    assert not list((tmp_path / "job").rglob("*random*"))
    # the mirror's own messages go to its log, not into the job's output
    assert "mirror stopped" not in out + result.stderr
    assert "GET /" not in out + result.stderr
    assert "mirror stopped" in (tmp_path / "job" / "mirror-server.log").read_text()
