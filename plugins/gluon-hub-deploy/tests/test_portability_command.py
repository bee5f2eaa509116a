"""``gluon-hub portability``: measures a plugin's models in a real subprocess, stores the
rows beside the plugin module, and the hub then shows and filters on them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

PLUGIN = '''
from gluon_hub import InputSpec, ModelSpec, hookimpl

GLUON_HUB_API = ">=1,<2"

@hookimpl
def gluon_hub_models():
    image = InputSpec(shape=(3, 64, 64))
    return [ModelSpec(name="porta_conv", factory="porta_models:conv_net", task="demo", input=image,
                      description="a small convolutional classifier"),
            ModelSpec(name="porta_dcn", factory="porta_models:dcn_net", task="demo", input=image,
                      description="a deformable convolution"),
            ModelSpec(name="porta_chaos", factory="porta_models:chaos_net", task="demo", input=image,
                      description="outputs that float32 rounding of the input already moves"),
            ModelSpec(name="porta_huge", factory="porta_models:conv_net", task="demo", input=image,
                      num_params=600_000_000, description="a model declaring 2.2 GiB of float32 parameters"),
            ModelSpec(name="porta_crash", factory="porta_models:crash", task="demo", input=image,
                      description="a factory whose process dies, as one out of memory does")]
'''

MODELS = '''
from mxnet import gluon
from mxnet.gluon.contrib.cnn import DeformableConvolution

def conv_net():
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Conv2D(8, 3, strides=2, padding=1), gluon.nn.BatchNorm(), gluon.nn.Activation("relu"),
            gluon.nn.GlobalAvgPool2D(), gluon.nn.Dense(5))
    return net

class _Chaos(gluon.HybridBlock):
    def __init__(self):
        super().__init__()
        self.conv = gluon.nn.Conv2D(8, 3)  # oneDNN and onnxruntime sum in other orders

    def hybrid_forward(self, F, x):
        return F.sin(self.conv(x) * 1e7)  # one float32 step of a sum moves the phase by about 0.3

def chaos_net():
    return _Chaos()

def crash():
    import os, signal
    os.kill(os.getpid(), signal.SIGKILL)

def too_large(net, x):
    """A trained-like hook that fails as MXNet does on an input its anchors do not cover."""
    from mxnet.base import MXNetError
    raise MXNetError("Check failed: ishape[axis] >= from_shape[axis] (128 vs. 150): Slice axis 2")

def dcn_net():
    net = gluon.nn.HybridSequential()
    net.add(DeformableConvolution(4, kernel_size=(3, 3), padding=(1, 1)))
    return net
'''


@pytest.fixture
def site(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    site.mkdir()
    (site / "porta_plugin.py").write_text(textwrap.dedent(PLUGIN))
    (site / "porta_models.py").write_text(textwrap.dedent(MODELS))
    info = site / "porta_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: porta-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[gluon_hub]\nporta = porta_plugin\n")
    return site


def hub(site: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
           "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-m", "gluon_hub.cli", *args], capture_output=True, text=True,
                          env=env, timeout=300)


def test_measure_write_show_and_filter(site: Path):
    run = hub(site, "portability", "porta_conv", "porta_dcn", "--write")
    assert run.returncode == 1, run.stderr  # one model is blocked
    assert "porta/porta_conv: exportable (?x3x?x?, max relative difference" in run.stdout
    assert "porta/porta_dcn: blocked:" in run.stdout and "DeformableConvolution" in run.stdout
    assert "1 exportable, 1 blocked" in run.stdout

    rows = json.loads((site / "portability.json").read_text())["models"]
    assert rows["porta_conv"]["status"] == "exportable"
    assert rows["porta_conv"]["input_shapes"] == [[None, 3, None, None]]
    assert 0 <= rows["porta_conv"]["max_rel_diff"] <= 1e-4
    assert rows["porta_dcn"]["status"] == "blocked"

    info = hub(site, "info", "porta_conv")
    assert "exportable, opset 13, inputs ?x3x?x? ('?' is dynamic)" in info.stdout, info.stderr
    listed = hub(site, "list", "--portable", "--plugin", "porta")
    assert "porta_conv" in listed.stdout and "porta_dcn" not in listed.stdout

    resumed = hub(site, "portability", "porta_conv", "porta_dcn", "--missing")
    assert resumed.returncode == 0 and "every selected model has a row" in resumed.stdout


def test_unknown_name_is_a_clear_error(site: Path):
    run = hub(site, "portability", "porta_nothing")
    assert run.returncode == 1
    assert "no model named 'porta_nothing'" in run.stderr


def test_a_model_whose_process_dies_costs_only_its_row(site: Path):
    run = hub(site, "portability", "porta_crash", "porta_conv", "--write")
    assert run.returncode == 1
    assert "porta/porta_crash: not measured: the measuring process ended with killed by signal 9" in run.stdout
    assert "porta/porta_conv: exportable" in run.stdout
    assert "1 exportable, 0 blocked, 1 not measured" in run.stdout
    assert list(json.loads((site / "portability.json").read_text())["models"]) == ["porta_conv"]


def test_a_trained_like_hook_failing_in_mxnet_blocks_the_row(site: Path, monkeypatch: pytest.MonkeyPatch):
    """The hook runs the network, so MXNet's own failure there is the row's blocker (it
    ended the measurement with a traceback: custom_mask_rcnn_fpn at 600x600)."""
    import gluon_hub
    from gluon_hub_deploy import _measure

    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setitem(_measure.TRAINED_LIKE, "porta_models:conv_net", "porta_models:too_large")
    gluon_hub.reset_hub()
    row = _measure.measure("porta/porta_conv")
    assert row.status == "blocked"
    assert row.blocker.startswith("MXNet itself failed at [(1, 3, 64, 64)]: MXNetError: Check failed")


def test_outputs_mxnet_itself_cannot_reproduce_are_not_called_a_converter_difference(site: Path,
                                                                                   monkeypatch: pytest.MonkeyPatch):
    """Where moving the input by 1e-7 already moves MXNet's outputs beyond the tolerance (deep
    networks with random weights: ResNeSt-101 by 0.46), the row says so instead of blaming the
    converter for onnxruntime's difference."""
    import gluon_hub
    from gluon_hub._portability import blocker_class
    from gluon_hub_deploy import _measure

    monkeypatch.syspath_prepend(str(site))
    gluon_hub.reset_hub()
    row = _measure.measure("porta/porta_chaos")
    assert row.status == "blocked"
    assert row.blocker.startswith("not comparable with random weights: MXNet's own outputs move by "), row.blocker
    assert blocker_class(row.blocker) == "random_weights"
    assert _measure.measure("porta/porta_conv").status == "exportable"  # a stable network is compared as before


def test_a_model_beyond_onnxs_2_gib_is_blocked_before_it_is_built(site: Path, monkeypatch: pytest.MonkeyPatch):
    """big_rnn_lm_2048_512 (3.1 GiB) was killed for memory while being measured; the row now
    says why it cannot become one ONNX file, from its spec alone."""
    import gluon_hub
    from gluon_hub_deploy import _measure

    monkeypatch.syspath_prepend(str(site))
    gluon_hub.reset_hub()
    row = _measure.measure("porta/porta_huge")
    assert row.status == "blocked"
    assert row.blocker.startswith("its float32 parameters (2.2 GiB) exceed ONNX's 2 GiB protobuf limit"), row.blocker


def test_detections_that_cannot_be_paired_are_weighed_against_mxnets_own(monkeypatch: pytest.MonkeyPatch):
    """Unpaired detections (the ResNeSt R-CNNs: a detection without a counterpart) block the row
    as a converter difference only where MXNet keeps its own detections when its input moves by
    1e-7; where those change too, the row says the comparison is not possible with random
    weights, and names what differed."""
    from gluon_hub._portability import blocker_class
    from gluon_hub_deploy import _measure

    missing = "MXNet's detection of class 46 scoring 0.443616 has no counterpart in onnxruntime's"
    monkeypatch.setattr(_measure, "_noise_floor", lambda *args: float("inf"))
    text = _measure._differing(None, [], [], True, missing)
    assert text == ("not comparable with random weights: MXNet's own detections change (another count, or one "
                    "without a counterpart) when its input moves by 1e-7 (float32 rounding grows through this "
                    f"network with random weights), onnxruntime's differ: {missing}")
    assert blocker_class(text) == "random_weights"
    monkeypatch.setattr(_measure, "_noise_floor", lambda *args: 3e-6)
    assert _measure._differing(None, [], [], True, missing) == f"onnxruntime's outputs differ from MXNet's: {missing}"
    assert _measure._differing(None, [], [], False, 2e-3, "at [(1, 3, 96, 96)]") == (
        "at [(1, 3, 96, 96)] onnxruntime's outputs differ from MXNet's by 2.0e-03 of their scale (tolerance 1e-04)")
