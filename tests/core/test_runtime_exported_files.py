"""gluon_hub.runtime on ONNX files exported where MXNet runs: MXNet's answers without MXNet;
and what asking for MXNet says where it is missing (on Python 3.13 it cannot be installed).

``scripts/export_onnx_fixtures.py`` (``.ci/run``'s Python 3.11 leg) writes a classifier's ONNX
file, PNG images, MXNet's preprocessing of them and MXNet's outputs into a folder;
``GLUON_HUB_TEST_ONNX_DIR`` names it. These tests need no MXNet: on the Python 3.13 + numpy 2
leg they check that the runtime's numpy preprocessing and onnxruntime give MXNet's arrays and
``gluon-hub predict --runtime onnx`` its classes. Without the variable they are skipped.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gluon_hub import runtime

FOLDER = os.environ.get("GLUON_HUB_TEST_ONNX_DIR")
#: prepended to a child's code, makes ``import mxnet`` fail there
NO_MXNET = (Path(__file__).parent / "helpers" / "no_mxnet.py").read_text()


@pytest.fixture(scope="module")
def fixtures() -> dict[str, Any]:
    """The manifest, with the folder's paths made absolute."""
    if not FOLDER:
        pytest.skip("GLUON_HUB_TEST_ONNX_DIR is not set: point it at a folder written by "
                    "scripts/export_onnx_fixtures.py where MXNet is installed")
    folder = Path(FOLDER)
    manifest_file = folder / "manifest.json"
    if not manifest_file.is_file():  # set but wrong: an error, not a skip
        raise FileNotFoundError(f"GLUON_HUB_TEST_ONNX_DIR={FOLDER!r} has no manifest.json; write the folder with "
                                f"scripts/export_onnx_fixtures.py")
    manifest = json.loads(manifest_file.read_text())
    manifest["images"] = [str(folder / name) for name in manifest["images"]]
    for key in ("onnx", "inputs", "outputs"):
        manifest[key] = folder / manifest[key]
    manifest["shrunk"]["inputs"] = folder / manifest["shrunk"]["inputs"]
    return manifest


def test_preprocessing_equals_mxnets_to_the_bit(fixtures):
    for model, saved in ((fixtures["model"], fixtures["inputs"]),
                         (fixtures["shrunk"]["model"], fixtures["shrunk"]["inputs"])):
        ours = np.stack([runtime.preprocess(runtime.read_image(path), model) for path in fixtures["images"]])
        np.testing.assert_array_equal(ours, np.load(saved), err_msg=model)


def test_runner_gives_mxnets_outputs(fixtures):
    runner = runtime.load_onnx(fixtures["onnx"], fixtures["model"])
    expected = np.load(fixtures["outputs"])
    got = runner(np.load(fixtures["inputs"]))
    assert got.shape == expected.shape == (len(fixtures["images"]), 10)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5 * np.abs(expected).max())


def test_cli_prints_mxnets_classes_without_importing_mxnet(fixtures):
    code = ("import sys\nfrom gluon_hub.cli import main\nrc = main(sys.argv[1:])\n"
            "assert 'mxnet' not in sys.modules, 'the ONNX path imported mxnet'\nsys.exit(rc)\n")
    result = subprocess.run([sys.executable, "-c", code, "predict", fixtures["model"], *fixtures["images"],
                             "--runtime", "onnx", "--model-file", str(fixtures["onnx"]), "--json", "-k", "10"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [line["image"] for line in lines] == fixtures["images"]
    labels = runtime.load_onnx(fixtures["onnx"], fixtures["model"]).labels(10)
    # all ten classes, in the order of MXNet's outputs (He weights: logits tens apart, their
    # softmax saturated, so the ranking is what says the answers agree), with its softmax
    for line, logits in zip(lines, np.load(fixtures["outputs"])):
        assert [t["label"] for t in line["top"]] == [labels[i] for i in np.argsort(-logits)]
        probabilities = np.exp(logits - logits.max()) / np.exp(logits - logits.max()).sum()
        np.testing.assert_allclose([t["score"] for t in line["top"]], np.sort(probabilities)[::-1], atol=1e-5)


#: In a fresh interpreter, ``import mxnet`` fails as it does where MXNet is not installed (it
#: is not, on Python 3.13); then the library call and the CLI that need MXNet are tried.
WITHOUT_MXNET = NO_MXNET + """
import sys
import gluon_hub
from gluon_hub.cli import main
try:
    gluon_hub.load("cifar_resnet20_v1")
except ImportError as exc:
    print("load:", exc)
sys.exit(main(sys.argv[1:]))
"""


def test_asking_for_mxnet_without_it_names_the_onnx_runtime(tmp_path):
    from PIL import Image

    Image.new("RGB", (40, 30), (200, 100, 50)).save(tmp_path / "x.png")
    result = subprocess.run([sys.executable, "-c", WITHOUT_MXNET, "predict", "cifar_resnet20_v1",
                             str(tmp_path / "x.png")], capture_output=True, text=True, timeout=300)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr[-3000:]
    (error,) = result.stderr.strip().splitlines()
    assert error.startswith("gluon-hub: error: gluon_hub needs MXNet >= 1.9.1 to build, train or export models")
    assert result.stdout.startswith("load: " + error.removeprefix("gluon-hub: error: "))
    # what works instead, whatever the Python
    assert "--runtime onnx --model-file NAME.onnx" in error and 'pip install "gluon-hub[onnxruntime]"' in error
    if sys.version_info >= (3, 13):
        assert f"MXNet has no wheel for Python {sys.version_info[0]}.{sys.version_info[1]}" in error
    else:
        assert 'no mxnet module is installed; install the CPU build with pip install "mxnet==1.9.1"' in error


@pytest.mark.mxnet  # compat imports mxnet: where it is missing, the test above reads the message
def test_on_python_3_13_the_message_says_mxnet_has_no_wheel_there():
    from gluon_hub.compat import missing_mxnet_message

    message = missing_mxnet_message((3, 13, 0))
    assert "MXNet has no wheel for Python 3.13 (1.9.1 is published for Python 3.10-3.12, with numpy < 2)" in message
    assert "--runtime onnx --model-file NAME.onnx" in message and 'gluon_hub.export("NAME"' in message
    assert "no wheel" not in missing_mxnet_message((3, 12, 1))


def test_an_mxnet_of_the_2_0_line_is_refused_naming_hybrid_forward_and_onnx(tmp_path):
    """A module named mxnet with a 2.x version (the 2.0 line's Gluon has no hybrid_forward) stops
    the MXNet runtime with one message; the hub's models would otherwise fail at their first call."""
    from PIL import Image

    (tmp_path / "mxnet").mkdir()
    (tmp_path / "mxnet" / "__init__.py").write_text('__version__ = "2.0.0"\n')
    Image.new("RGB", (40, 30), (200, 100, 50)).save(tmp_path / "x.png")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")])))
    result = subprocess.run([sys.executable, "-m", "gluon_hub", "predict", "cifar_resnet20_v1", str(tmp_path / "x.png")],
                            capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr[-3000:]
    (error,) = result.stderr.strip().splitlines()
    assert error.startswith(f"gluon-hub: error: gluon_hub runs on MXNet 1.9 and the mxnet module at "
                            f"{tmp_path / 'mxnet' / '__init__.py'} is version 2.0.0")
    assert "MXNet 1.9.1's Gluon (HybridBlock.hybrid_forward), which the Gluon of MXNet 2.0 and its forks dropped" in error
    assert 'pip install "mxnet==1.9.1"' in error and "--runtime onnx --model-file NAME.onnx" in error
