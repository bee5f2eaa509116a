"""``gluon-hub deploy``: C++, Java and Clojure projects that run a model through MXNet's C
predict API, built and run here, and compared with the same model run in Python.

Each project is written and built once per session (the JVM and g++ are slow to start);
the models have random weights, saved once and deployed with ``--params``, so every
language runs the very network Python runs.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import gluon_hub
from gluon_hub.compat import mx
from gluon_hub_deploy import LANGUAGES, deploy

MODELS = ("resnet18_v1", "mobilenet1.0")
SHAPE = (1, 3, 224, 224)
JNA = Path("/usr/share/java/jna.jar")


def _tools_missing(lang: str) -> str | None:
    """What this machine lacks for ``lang`` (CI installs it all; see docs/deploy.md)."""
    needs = {"cpp": ["g++"], "java": ["javac", "java"], "clojure": ["clojure", "java"]}[lang]
    missing = [tool for tool in needs if shutil.which(tool) is None]
    if lang != "cpp" and not JNA.is_file():
        missing.append(str(JNA))
    return ", ".join(missing) or None


@pytest.fixture(scope="session")
def weights(tmp_path_factory) -> dict[str, tuple[object, Path]]:
    """Each model with random weights, and the .params file they are saved in."""
    folder = tmp_path_factory.mktemp("weights")
    nets = {}
    for name in MODELS:
        net = gluon_hub.load(name)
        # He initialisation: the default leaves mobilenet's logits all equal, a weak comparison.
        net.initialize(mx.init.Xavier(rnd_type="gaussian", factor_type="in", magnitude=2), force_reinit=True)
        net.hybridize()
        net(mx.nd.zeros(SHAPE))
        net.save_parameters(str(folder / f"{name}.params"))
        nets[name] = (net, folder / f"{name}.params")
    return nets


@pytest.fixture(scope="session")
def projects(tmp_path_factory, weights) -> dict[tuple[str, str], Path]:
    """Every (model, language) project, written and built; one through the CLI."""
    root = tmp_path_factory.mktemp("deploy")
    built = {}
    for name in MODELS:
        for lang in LANGUAGES:
            missing = _tools_missing(lang)
            if missing:
                pytest.fail(f"{lang} projects need {missing}; install them as docs/deploy.md says")
            out = root / f"{name}-{lang}"
            if (name, lang) == ("resnet18_v1", "cpp"):
                result = subprocess.run(
                    [sys.executable, "-m", "gluon_hub", "deploy", name, "--lang", lang, "-o", str(out),
                     "--params", str(weights[name][1])], capture_output=True, text=True)
                assert result.returncode == 0, result.stderr
                assert result.stdout.splitlines()[0] == str(out)
            else:
                deploy(name, out, lang, params=weights[name][1])
            build = subprocess.run([str(out / "build.sh")], capture_output=True, text=True)
            assert build.returncode == 0, build.stderr
            built[name, lang] = out
    return built


@pytest.fixture(scope="session")
def tensor(tmp_path_factory) -> tuple[np.ndarray, Path]:
    x = np.random.default_rng(0).standard_normal(SHAPE).astype("<f4")
    path = tmp_path_factory.mktemp("inputs") / "x.f32"
    x.tofile(path)
    return x, path


def _run(project: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(project / "run"), *map(str, args)], capture_output=True, text=True)


def _assert_same_outputs(stdout: str, net, x: np.ndarray) -> None:
    """The program's JSON equals Python's outputs (to 1e-5 of their scale) and top-5."""
    result = json.loads(stdout)
    expected = net(mx.nd.array(x)).asnumpy()
    (got,) = [np.asarray(o, dtype=np.float32) for o in result["outputs"]]
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5 * np.abs(expected).max())
    logits = expected[0].astype(np.float64)
    probs = np.exp(logits - logits.max())
    probs /= probs.sum()
    best = np.lexsort((np.arange(len(probs)), -probs))[:5]  # ties: the lower index first, as the programs
    assert [t["index"] for t in result["top5"]] == best.tolist()
    np.testing.assert_allclose([t["score"] for t in result["top5"]], probs[best], atol=1e-5)
    assert all(isinstance(t["label"], str) and t["label"] for t in result["top5"])


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("name", MODELS)
def test_raw_tensor_gives_pythons_outputs(projects, weights, tensor, name, lang):
    x, path = tensor
    result = _run(projects[name, lang], path)
    assert result.returncode == 0, result.stderr
    _assert_same_outputs(result.stdout, weights[name][0], x)


def test_manifest_and_labels(projects):
    project = projects["resnet18_v1", "cpp"]
    manifest = (project / "model.txt").read_text().splitlines()
    assert "input data 1 3 224 224" in manifest and "image 256 224" in manifest
    assert "output 0 1 1000" in manifest and "labels labels.txt" in manifest
    labels = (project / "labels.txt").read_text().splitlines()
    assert len(labels) == 1000 and labels[0] == "tench"


@pytest.fixture(scope="session")
def photo(tmp_path_factory) -> tuple[np.ndarray, dict[str, Path]]:
    """An RGB image of 301 x 407 pixels (shrunk, not by a factor of 2), as PNG and binary PPM."""
    rng = np.random.default_rng(1)
    smooth = np.kron(rng.integers(0, 256, (31, 41, 3)), np.ones((10, 10, 1)))[:301, :407]
    image = np.clip(smooth + rng.integers(-20, 21, smooth.shape), 0, 255).astype(np.uint8)
    folder = tmp_path_factory.mktemp("photo")
    for suffix in ("png", "ppm"):
        Image.fromarray(image).save(folder / f"photo.{suffix}")
    return image, {"png": folder / "photo.png", "ppm": folder / "photo.ppm"}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_image_preprocessing_is_the_python_presets(projects, weights, photo, lang, tmp_path):
    from gluon_cv_core.classification.transforms import eval_transform

    image, files = photo
    dump = tmp_path / "input.f32"
    # C++ decodes binary PPM only; Java and Clojure decode with ImageIO.
    result = _run(projects["resnet18_v1", lang], files["ppm" if lang == "cpp" else "png"], "--dump-input", dump)
    assert result.returncode == 0, result.stderr
    expected = eval_transform("resnet18_v1")(mx.nd.array(image, dtype="uint8")).asnumpy()
    got = np.fromfile(dump, "<f4").reshape(expected.shape)
    assert np.abs(got - expected).max() <= 1 / 255
    _assert_same_outputs(result.stdout, weights["resnet18_v1"][0], got[None])


@pytest.mark.parametrize("lang", LANGUAGES)
def test_bad_inputs_give_clear_errors(projects, lang, tmp_path):
    project = projects["mobilenet1.0", lang]
    short = tmp_path / "short.f32"
    np.zeros(10, "<f4").tofile(short)
    result = _run(project, short)
    assert result.returncode == 1
    assert "holds 40 bytes, but input 'data' of shape (1, 3, 224, 224) takes 150528 float32 values" in result.stderr
    if lang == "clojure":  # each JVM start costs seconds; one error is enough here
        return
    junk = tmp_path / "junk.png"
    junk.write_text("not an image")
    result = _run(project, junk)
    assert result.returncode == 1 and "cannot decode image" in result.stderr and str(junk) in result.stderr
    result = _run(project, tmp_path / "missing.f32")
    assert result.returncode == 1 and "cannot read" in result.stderr
    result = _run(project, short, short)
    assert result.returncode == 1 and "takes 1 input(s), one file each; got 2" in result.stderr
    moved = subprocess.run([str(project / "run"), str(short)], capture_output=True, text=True,
                           env={**os.environ, "MXNET_LIB_DIR": str(tmp_path / "nowhere")})
    assert moved.returncode == 1 and f"no libmxnet.so in {tmp_path / 'nowhere'}" in moved.stderr


class _TwoInTwoOut(mx.gluon.HybridBlock):
    """Several inputs and outputs, as a detector or BERT has."""

    def __init__(self) -> None:
        super().__init__()
        self.left = mx.gluon.nn.Dense(5, in_units=3)
        self.right = mx.gluon.nn.Dense(5, in_units=4)

    def hybrid_forward(self, F, a, b):
        mixed = self.left(a) + self.right(b)
        return F.softmax(mixed), F.sum(mixed * mixed, axis=1)


@pytest.mark.parametrize("lang", ["cpp", "java"])
def test_several_inputs_and_outputs(lang, tmp_path):
    net = _TwoInTwoOut()
    net.initialize(mx.init.Normal(1.0))
    out = deploy(net, tmp_path / "two", lang, input_shape=[(2, 3), (2, 4)])
    assert subprocess.run([str(out / "build.sh")], capture_output=True).returncode == 0
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((2, 3)).astype("<f4"), rng.standard_normal((2, 4)).astype("<f4")
    a.tofile(tmp_path / "a.f32")
    b.tofile(tmp_path / "b.f32")
    result = _run(out, tmp_path / "a.f32", tmp_path / "b.f32")
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert "top5" not in payload
    for got, expected in zip(payload["outputs"], net(mx.nd.array(a), mx.nd.array(b))):
        np.testing.assert_allclose(np.asarray(got, np.float32), expected.asnumpy(), rtol=1e-5, atol=1e-6)
    refused = _run(out, tmp_path / "a.png", tmp_path / "b.f32")
    assert refused.returncode == 1 and "takes no images; give a .f32 tensor of shape (2, 3)" in refused.stderr


class _PythonLayer(mx.gluon.Block):
    def forward(self, x):
        return x * float(x.asnumpy().mean())


def test_a_layer_that_does_not_hybridize_fails_at_deploy_time(tmp_path):
    net = mx.gluon.nn.Sequential()
    net.add(mx.gluon.nn.Dense(4, in_units=3), _PythonLayer())
    net.initialize()
    with pytest.raises(ValueError, match=r"layer '1' \(_PythonLayer\) is a plain Block, not a HybridBlock"):
        deploy(net, tmp_path / "p", "cpp", input_shape=(1, 3))
    assert not (tmp_path / "p" / "model-symbol.json").exists()


class _NumpyInside(mx.gluon.HybridBlock):
    def hybrid_forward(self, F, x):
        return x * float(x.asnumpy().mean())


def test_a_layer_that_fails_to_trace_is_named_at_deploy_time(tmp_path):
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Dense(4, in_units=3), _NumpyInside(prefix="numpy_inside_"))
    net.initialize()
    with pytest.raises(ValueError, match=r"failed while its graph was traced") as caught:
        deploy(net, tmp_path / "p", "java", input_shape=(1, 3))
    assert "layer 'numpy_inside' (_NumpyInside)" in str(caught.value)


def test_deploy_refuses_bad_requests(tmp_path):
    with pytest.raises(ValueError, match="unknown language 'go'; choose one of cpp, java, clojure"):
        deploy("resnet18_v1", tmp_path / "x", "go")
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="not empty and holds no earlier deploy project"):
        deploy("resnet18_v1", tmp_path / "busy", "cpp")
    with pytest.raises(ValueError, match="gives no fixed input shape"):
        deploy("bert_12_768_12", tmp_path / "bert", "cpp")
    assert not (tmp_path / "bert").exists()
    result = subprocess.run([sys.executable, "-m", "gluon_hub", "deploy", "resnet18_v1", "--lang", "cpp",
                             "-o", str(tmp_path / "y"), "--shape", "1,x"], capture_output=True, text=True)
    assert result.returncode == 1
    assert "gluon-hub: error: --shape '1,x' is not comma-separated integers" in result.stderr


def _assert_outputs_equal(payload: dict, expected: list[np.ndarray]) -> None:
    """Every output the program printed equals Python's, in order, to 1e-5 of its scale."""
    assert len(payload["outputs"]) == len(expected)
    for i, (got, want) in enumerate(zip(payload["outputs"], expected)):
        got = np.asarray(got, dtype=np.float32)
        assert got.shape == want.shape, f"output {i}"
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * max(np.abs(want).max(), 1.0),
                                   err_msg=f"output {i}")


def _build_project(out: Path) -> Path:
    build = subprocess.run([str(out / "build.sh")], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    return out


DETECTOR = "ssd_300_mobilenet0.25_voc"  # the cheapest registered detector that exports
DETECTOR_SHAPE = (1, 3, 128, 128)  # SSD's anchors follow the feature maps: any size runs


@pytest.fixture(scope="session")
def detector(tmp_path_factory) -> tuple[object, Path, np.ndarray, Path]:
    """The SSD with random weights, its .params file, and one raw input as array and .f32."""
    folder = tmp_path_factory.mktemp("detector")
    net = gluon_hub.load(DETECTOR)
    net.initialize(mx.init.Xavier(rnd_type="gaussian", factor_type="in", magnitude=2), force_reinit=True)
    net.hybridize()  # Python runs the graph that is exported
    x = np.random.default_rng(4).standard_normal(DETECTOR_SHAPE).astype("<f4")
    net(mx.nd.array(x))
    net.save_parameters(str(folder / "ssd.params"))
    x.tofile(folder / "x.f32")
    return net, folder / "ssd.params", x, folder / "x.f32"


@pytest.mark.parametrize("lang", ["cpp", "java"])
def test_detector_outputs_equal_pythons(detector, lang, tmp_path):
    net, params, x, path = detector
    out = tmp_path / "ssd"
    shape = ",".join(map(str, DETECTOR_SHAPE))
    if lang == "cpp":  # through the CLI, with --shape for a size the spec does not give
        result = subprocess.run([sys.executable, "-m", "gluon_hub", "deploy", DETECTOR, "--lang", lang, "-o",
                                 str(out), "--params", str(params), "--shape", shape], capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
    else:
        deploy(DETECTOR, out, lang, params=params, input_shape=DETECTOR_SHAPE)
    manifest = (out / "model.txt").read_text().splitlines()
    assert "input data 1 3 128 128" in manifest and "outputs 3" in manifest
    assert not any(line.startswith(("image ", "labels ")) for line in manifest)
    result = _run(_build_project(out), path)
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert "top5" not in payload
    ids, scores, boxes = (o.asnumpy() for o in net(mx.nd.array(x)))
    assert ids.shape == (1, 100, 1) and boxes.shape == (1, 100, 4)
    assert (ids >= 0).sum() >= 10 and len(np.unique(ids[ids >= 0])) >= 3  # real detections to compare
    _assert_outputs_equal(payload, [ids, scores, boxes])
    np.testing.assert_array_equal(np.asarray(payload["outputs"][0]), ids)  # class ids exactly


BERT_ARCH = dict(vocab_size=50, num_layers=2, units=16, hidden_size=32, num_heads=2, max_length=16)
BERT_SHAPES = [(2, 8), (2, 8), (2,), (2, 3)]  # token ids, segment ids, valid length, masked positions


@pytest.fixture(scope="session")
def tiny_bert(tmp_path_factory) -> tuple[object, Path, list[np.ndarray], list[Path]]:
    """A 2-layer BERT (32 kB of random weights) with its four heads, and its four inputs as float32."""
    folder = tmp_path_factory.mktemp("bert")
    net = gluon_hub.load("bert_12_768_12", **BERT_ARCH)
    net.initialize(mx.init.Normal(0.5), force_reinit=True)
    net.hybridize()
    rng = np.random.default_rng(5)
    tokens = rng.integers(0, BERT_ARCH["vocab_size"], BERT_SHAPES[0]).astype("<f4")
    segments = np.repeat((np.arange(8) >= 5)[None], 2, axis=0).astype("<f4")
    valid = np.array([8, 5], "<f4")  # the second sequence is padded: the mask must reach the program
    masked = rng.integers(0, 5, BERT_SHAPES[3]).astype("<f4")
    inputs = [tokens, segments, valid, masked]
    net(*map(mx.nd.array, inputs))
    net.save_parameters(str(folder / "bert.params"))
    paths = []
    for name, array in zip(("tokens", "segments", "valid", "masked"), inputs):
        array.tofile(folder / f"{name}.f32")
        paths.append(folder / f"{name}.f32")
    return net, folder / "bert.params", inputs, paths


@pytest.mark.parametrize("lang", ["cpp", "java"])
def test_bert_several_inputs_equal_pythons(tiny_bert, lang, tmp_path):
    net, params, inputs, paths = tiny_bert
    out = deploy("bert_12_768_12", tmp_path / "bert", lang, params=params, input_shape=BERT_SHAPES, **BERT_ARCH)
    manifest = (out / "model.txt").read_text().splitlines()
    assert ["input data0 2 8", "input data1 2 8", "input data2 2", "input data3 2 3"] == [
        line for line in manifest if line.startswith("input ")]
    assert "outputs 4" in manifest and not (out / "labels.txt").exists()
    expected = [o.asnumpy() for o in net(*map(mx.nd.array, inputs))]
    # Each input changes the outputs, so a program that dropped or swapped one could not pass:
    # (input, another value for it, the output it moves; masked positions move the masked-LM scores).
    tokens, segments, _, masked = inputs
    for i, other, watched in [(0, tokens[:, ::-1], 0), (1, 1 - segments, 0),
                              (2, np.array([8, 8], "<f4"), 0), (3, masked[:, ::-1], 3)]:
        moved = net(*map(mx.nd.array, [*inputs[:i], np.ascontiguousarray(other), *inputs[i + 1:]]))
        assert not np.allclose(moved[watched].asnumpy(), expected[watched], atol=1e-3), f"input {i}"
    result = _run(_build_project(out), *paths)
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert "top5" not in payload
    _assert_outputs_equal(payload, expected)
    refused = _run(out, *paths[:3])
    assert refused.returncode == 1 and "takes 4 input(s), one file each; got 3" in refused.stderr
