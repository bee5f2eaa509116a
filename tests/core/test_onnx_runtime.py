"""gluon_hub.runtime and ``gluon-hub predict --runtime onnx``: an exported classifier run in
onnxruntime with the model's preprocessing, with MXNet's answers and without MXNet."""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
from pathlib import Path

import numpy as np
import pytest
from matplotlib import cbook
from PIL import Image

import gluon_hub
from gluon_hub import runtime
from gluon_hub.compat import mx

#: A real photograph that ships with matplotlib (600 x 512).
PHOTO = Path(cbook.get_sample_data("grace_hopper.jpg", asfileobj=False))
MODEL = "cifar_resnet20_v1"


def _mxnet_preprocessing(name, image):
    from gluon_cv_core.classification.transforms import eval_transform

    return eval_transform(name)(mx.nd.array(image, dtype="uint8")).asnumpy()


@pytest.fixture(scope="module")
def images(tmp_path_factory) -> list[str]:
    """The photograph, and two PNG crops of it of other sizes and aspect ratios."""
    folder = tmp_path_factory.mktemp("images")
    photo = np.asarray(Image.open(PHOTO).convert("RGB"))
    paths = [str(PHOTO)]
    for name, (top, left, height, width) in {"face.png": (40, 100, 300, 260), "wide.png": (300, 0, 180, 512)}.items():
        Image.fromarray(photo[top : top + height, left : left + width]).save(folder / name)
        paths.append(str(folder / name))
    return paths


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """The CIFAR ResNet-20 with He weights: its params file, and ONNX files of batch 1 and free batch."""
    folder = tmp_path_factory.mktemp("onnx")
    net = gluon_hub.load(MODEL)
    net.initialize(mx.init.Xavier(rnd_type="gaussian", factor_type="in", magnitude=2), force_reinit=True)
    net(mx.nd.zeros((1, 3, 32, 32)))
    net.save_parameters(str(folder / "r20.params"))
    (fixed,) = gluon_hub.export(net, folder / "r20.onnx", format="onnx", input_shape=(1, 3, 32, 32))
    (free,) = gluon_hub.export(net, folder / "r20-any.onnx", format="onnx", input_shape=(1, 3, 32, 32),
                               dynamic_batch=True)
    return net, folder / "r20.params", fixed, free


def test_preprocessing_is_mxnets_to_the_bit(images):
    for path in images:
        image = runtime.read_image(path)
        np.testing.assert_array_equal(image, mx.image.imread(path, to_rgb=True).asnumpy())
        for name in ("resnet50_v1d", MODEL):  # shrinking to 256 then cropping 224; to 32, no crop
            np.testing.assert_array_equal(runtime.preprocess(image, name), _mxnet_preprocessing(name, image))
    small = np.asarray(Image.open(images[1]).resize((150, 200)))  # enlarged to 256 x 341
    np.testing.assert_array_equal(runtime.preprocess(small, "resnet50_v1d"),
                                  _mxnet_preprocessing("resnet50_v1d", small))


@pytest.mark.parametrize("which", ["batch 1", "free batch"])
def test_runner_gives_mxnets_outputs(exported, images, which):
    net, _, fixed, free = exported
    runner = runtime.load_onnx(fixed if which == "batch 1" else free, MODEL)
    assert runner.batch == (1 if which == "batch 1" else None)
    batch = np.stack([_mxnet_preprocessing(MODEL, runtime.read_image(p)) for p in images])
    expected = net(mx.nd.array(batch)).asnumpy()
    got = runner(batch)  # three images through a batch-1 file are run one at a time
    assert got.shape == expected.shape == (3, 10)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5 * np.abs(expected).max())
    top = runner.classify(images, topk=5)
    assert [label for label, _ in top[0]][:1] == [runner.labels(10)[int(expected[0].argmax())]]
    assert runner.labels(10)[0] == "airplane"  # the spec's CIFAR-10 names


def _cli(*args: str, check_no_mxnet: bool = False, python: str = sys.executable) -> subprocess.CompletedProcess:
    """``gluon-hub ARGS`` in a fresh process; optionally asserting that it never imported MXNet."""
    code = ("import sys\nfrom gluon_hub.cli import main\nrc = main(sys.argv[1:])\n"
            + ("assert 'mxnet' not in sys.modules, 'the ONNX path imported mxnet'\n" if check_no_mxnet else "")
            + "sys.exit(rc)\n")
    return subprocess.run([python, "-c", code, *args], capture_output=True, text=True, timeout=600)


def test_cli_onnx_prints_the_top5_of_the_mxnet_path_without_importing_mxnet(exported, images):
    _, params, fixed, _ = exported
    # all ten classes: with random weights two scores may tie within float noise, and a top 5
    # cut between them could rank them either way; every class's score must agree
    by_mxnet = _cli("predict", MODEL, *images, "--params", str(params), "--json", "-k", "10")
    by_onnx = _cli("predict", MODEL, *images, "--runtime", "onnx", "--model-file", str(fixed), "--json",
                   "-k", "10", check_no_mxnet=True)
    assert by_mxnet.returncode == 0, by_mxnet.stderr[-3000:]
    assert by_onnx.returncode == 0, by_onnx.stderr[-3000:]
    want = [json.loads(line) for line in by_mxnet.stdout.splitlines()]
    got = [json.loads(line) for line in by_onnx.stdout.splitlines()]
    assert [g["image"] for g in got] == images and len(want) == 3
    for w, g in zip(want, got):
        assert len(g["top"]) == len(w["top"]) == 10
        scores = {t["label"]: t["score"] for t in w["top"]}
        assert {t["label"] for t in g["top"]} == scores.keys()
        np.testing.assert_allclose([t["score"] for t in g["top"]], [scores[t["label"]] for t in g["top"]],
                                   atol=1e-5)
        assert [t["score"] for t in g["top"]] == sorted((t["score"] for t in g["top"]), reverse=True)
    text = _cli("predict", MODEL, images[0], "--runtime", "onnx", "--model-file", str(fixed), "-k", "2")
    assert text.returncode == 0 and text.stdout.splitlines()[1].lstrip().startswith(f"1. {want[0]['top'][0]['label']}")


def test_a_missing_file_says_how_to_make_it(tmp_path, images):
    with pytest.raises(FileNotFoundError, match=r"ONNX file .*nope\.onnx' does not exist; write it where MXNet is "
                       r"installed with gluon_hub\.export\('cifar_resnet20_v1', .*format=\"onnx\"\)"):
        runtime.load_onnx(tmp_path / "nope.onnx", MODEL)
    result = _cli("predict", MODEL, images[0], "--runtime", "onnx", "--model-file", str(tmp_path / "nope.onnx"))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "gluon-hub: error: ONNX file" in result.stderr


def test_a_file_for_another_input_shape_is_refused(tmp_path):
    net = gluon_hub.load(MODEL)
    (path,) = gluon_hub.export(net, tmp_path / "r20-48.onnx", format="onnx", input_shape=(1, 3, 48, 48))
    with pytest.raises(ValueError, match=r"takes data \(1, 3, 48, 48\), but 'cv/cifar_resnet20_v1' is preprocessed "
                       r"to \(batch, 3, 32, 32\): the file was exported from another model or for another input size"):
        runtime.load_onnx(path, MODEL)
    with pytest.raises(ValueError, match=r"but 'cv/resnet18_v1' is preprocessed to \(batch, 3, 224, 224\)"):
        runtime.load_onnx(path, "resnet18_v1")


def test_cli_refuses_mixed_runtime_options(exported, images):
    _, params, fixed, _ = exported
    mixed = _cli("predict", MODEL, images[0], "--runtime", "onnx", "--model-file", str(fixed), "--params", str(params))
    assert mixed.returncode == 1
    assert "--params apply to the MXNet runtime; with --runtime onnx the weights" in mixed.stderr
    no_file = _cli("predict", MODEL, images[0], "--runtime", "onnx")
    assert "--runtime onnx needs --model-file FILE.onnx" in no_file.stderr
    no_runtime = _cli("predict", MODEL, images[0], "--model-file", str(fixed))
    assert "--model-file is the exported file that --runtime onnx runs; add --runtime onnx" in no_runtime.stderr


def _venv_without(folder: Path, *missing: str) -> str:
    """A real venv that sees this one's packages except the distributions ``missing``.

    Its site-packages links every entry of ours but those, so the editable installs and
    entry points work as they do here, while ``import onnxruntime`` (or mxnet) fails.
    """
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--without-pip", str(folder)], check=True, timeout=300)
    python = folder / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    ours = Path(sysconfig.get_paths()["purelib"])
    for entry in ours.iterdir():
        if not entry.name.lower().startswith(missing) and not (site / entry.name).exists():
            (site / entry.name).symlink_to(entry)
    return str(python)


def test_without_mxnet_the_onnx_path_runs(exported, images, tmp_path):
    net, _, fixed, _ = exported
    python = _venv_without(tmp_path / "env", "mxnet")
    assert subprocess.run([python, "-c", "import mxnet"], capture_output=True).returncode == 1
    result = _cli("predict", MODEL, images[0], "--runtime", "onnx", "--model-file", str(fixed), "--json",
                  python=python)
    assert result.returncode == 0, result.stderr[-3000:]
    (line,) = result.stdout.splitlines()
    expected = net(mx.nd.array(_mxnet_preprocessing(MODEL, runtime.read_image(images[0]))[None])).asnumpy()[0]
    assert json.loads(line)["top"][0]["label"] == runtime.load_onnx(fixed, MODEL).labels(10)[int(expected.argmax())]


def test_without_onnxruntime_the_error_names_the_extra(exported, images, tmp_path):
    _, _, fixed, _ = exported
    python = _venv_without(tmp_path / "env", "onnxruntime")
    result = _cli("predict", MODEL, images[0], "--runtime", "onnx", "--model-file", str(fixed), python=python)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert ("gluon-hub: error: running ONNX models needs onnxruntime: pip install onnxruntime Pillow"
            in result.stderr)
    code = "import sys, gluon_hub.runtime; print('onnxruntime' in sys.modules, 'mxnet' in sys.modules)"
    imported = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=300)
    assert imported.stdout.split() == ["False", "False"], imported.stderr  # importing the runner is cheap
