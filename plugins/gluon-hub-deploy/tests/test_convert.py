"""``gluon-hub convert``: ONNX and safetensors files published by hash, found by model name
where MXNet is not installed (issue 31, section 3).

One small model (cifar_resnet20_v1, 32x32 inputs) with weights generated here: the CLI runs
as a real subprocess, the mirror is a real HTTP server, and the MXNet-free side is a fresh
venv with the core installed from the working tree and no MXNet.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import resource
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import gluon_hub
from gluon_hub import ModelSpec, hookimpl
from gluon_hub.compat import mx
from gluon_hub.publishing import fetch_converted, serve
from gluon_hub_deploy._convert import convert

pytestmark = pytest.mark.portability  # whole models against MXNet: the 3.11 leg (pyproject.toml)

MODEL = "cifar_resnet20_v1"
ROOT = Path(__file__).resolve().parents[3]
CLI = Path(sys.executable).parent / "gluon-hub"


def _cli(*args: str | Path, limit: int | None = None, **env: str) -> subprocess.CompletedProcess:
    """Run ``gluon-hub`` in a new process; ``limit`` caps the size of any file it writes (Python
    ignores SIGXFSZ, so a write past it fails with EFBIG)."""
    def cap() -> None:
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "OMP_NUM_THREADS": "1", **env}, preexec_fn=cap)


@pytest.fixture(scope="module")
def weights(tmp_path_factory) -> tuple[Path, np.ndarray, np.ndarray]:
    """A ``.params`` file of random weights, an input batch of 2 and MXNet's output for it."""
    folder = tmp_path_factory.mktemp("weights")
    net = gluon_hub.load(MODEL)
    x = np.random.RandomState(0).uniform(-1, 1, (2, 3, 32, 32)).astype(np.float32)
    y = net(mx.nd.array(x)).asnumpy()
    net.save_parameters(str(folder / "w.params"))
    return folder / "w.params", x, y


@pytest.fixture(scope="module")
def converted(weights, tmp_path_factory) -> Path:
    """``gluon-hub convert MODEL --params FILE -o DIR``, run once."""
    out = tmp_path_factory.mktemp("converted") / "site"
    result = _cli("convert", MODEL, "--params", weights[0], "-o", out)
    assert result.returncode == 0, result.stderr[-3000:]
    return out


def test_the_onnx_file_is_named_by_its_hash_listed_in_the_index_and_runs_as_mxnet(converted, weights):
    (onnx_file,) = converted.glob("*.onnx")
    digest = hashlib.sha256(onnx_file.read_bytes()).hexdigest()
    assert onnx_file.name == f"{MODEL}-{digest[:12]}.onnx"
    index = json.loads((converted / "weights.json").read_text())
    (entry,) = index["models"][MODEL]
    assert entry["tag"] == "default.onnx"
    assert entry["file"]["hash"] == f"sha256:{digest}" and entry["file"]["filename"] == onnx_file.name
    assert entry["file"]["size"] == onnx_file.stat().st_size
    assert sorted(p.name for p in converted.iterdir()) == sorted([onnx_file.name, "weights.json"])  # no temp left

    import onnxruntime

    session = onnxruntime.InferenceSession(str(onnx_file), providers=["CPUExecutionProvider"])
    got = session.run(None, {session.get_inputs()[0].name: weights[1]})[0]  # batch 2: the batch axis is free
    np.testing.assert_allclose(got, weights[2], rtol=1e-4, atol=1e-5)


def test_the_served_folder_delivers_the_onnx_file_by_model_name(converted, tmp_path, monkeypatch):
    with serve(converted) as server:
        monkeypatch.setenv("GLUON_HUB_MIRRORS", server.url)
        path = fetch_converted(MODEL, index=converted / "weights.json", root=tmp_path / "home")
    (original,) = converted.glob("*.onnx")
    assert path.read_bytes() == original.read_bytes() and path.is_relative_to(tmp_path / "home")
    with pytest.raises(KeyError, match=f"no safetensors file is known for model '{MODEL}'.*gluon-hub convert"):
        fetch_converted(MODEL, format="safetensors", index=converted, root=tmp_path / "home")


def _venv_without_mxnet(folder: Path) -> Path:
    """A fresh venv holding the core, built from the working tree and installed with --no-deps,
    and only the packages it and onnxruntime need (this environment's versions, from pip's cache)."""
    checkout = folder / "checkout"  # a copy: building leaves the working tree alone
    shutil.copytree(ROOT / "gluon_hub", checkout / "gluon_hub",
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    for name in ("pyproject.toml", "setup.py", "_gluon_hub_mxnet_aliases.py", "README.md"):
        shutil.copy2(ROOT / name, checkout / name)
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--without-pip", str(folder / "env")], check=True, timeout=300)
    python = folder / "env" / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
           "--disable-pip-version-check"]
    needed = ["numpy", "pluggy", "packaging", "requests", "urllib3", "idna", "charset-normalizer", "certifi",
              "filelock", "tqdm", "platformdirs", "onnxruntime", "flatbuffers", "protobuf"]
    for args in ([str(checkout), "--no-deps"],
                 [f"{n}=={importlib.metadata.version(n)}" for n in needed] + ["--no-deps"]):
        result = subprocess.run(pip + args, capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, result.stderr[-3000:]
    return python


@pytest.mark.slow
def test_bundle_then_import_without_mxnet_finds_the_onnx_file_by_name_offline(converted, weights, tmp_path):
    archive = tmp_path / "carry" / "converted.tar"
    result = _cli("bundle", f"{MODEL}:default.onnx", "--from-dir", converted, "-o", archive)
    assert result.returncode == 0, result.stderr[-3000:]

    python = _venv_without_mxnet(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GLUON_HUB_", "PYTHONPATH"))}
    env["GLUON_HUB_HOME"] = str(tmp_path / "offline-home")
    assert subprocess.run([python, "-c", "import mxnet"], capture_output=True, env=env).returncode == 1
    imported = subprocess.run([python.parent / "gluon-hub", "import", archive], capture_output=True,
                              text=True, env=env, timeout=300)
    assert imported.returncode == 0, imported.stderr[-3000:]

    np.save(tmp_path / "x.npy", weights[1])
    script = textwrap.dedent(f"""
        import sys, numpy, onnxruntime
        from gluon_hub.publishing import fetch_converted
        path = fetch_converted({MODEL!r})
        session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        x = numpy.load({str(tmp_path / "x.npy")!r})
        numpy.save({str(tmp_path / "y.npy")!r}, session.run(None, {{session.get_inputs()[0].name: x}})[0])
        print(path.name, "mxnet" in sys.modules)
    """)
    ran = subprocess.run([python, "-c", script], capture_output=True, text=True, timeout=300,
                         env={**env, "GLUON_HUB_OFFLINE": "1"})
    assert ran.returncode == 0, ran.stderr[-3000:]
    (onnx_file,) = converted.glob("*.onnx")
    assert ran.stdout.split() == [onnx_file.name, "False"]
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), weights[2], rtol=1e-4, atol=1e-5)


class _Published:
    """A plugin naming the model's factory with the weights of a ``weights.json``."""

    GLUON_HUB_API = ">=1,<2"

    def __init__(self, index: Path, spec: ModelSpec) -> None:
        self.index, self.spec = index, spec

    @hookimpl
    def gluon_hub_models(self):
        from gluon_hub.publishing import weights_from_index

        weights = weights_from_index(self.index)[MODEL]
        return [ModelSpec(name="converted_resnet20", factory=self.spec.factory, task="image-classification",
                          kwargs=self.spec.kwargs, weights=weights)]


def test_safetensors_round_trip_by_path_and_by_tag_through_the_cache(weights, tmp_path, monkeypatch):
    params, x, y = weights
    out = tmp_path / "site"
    (variant,) = convert([MODEL], out, params=params, format="safetensors", progress=False)
    file = out / variant.file.filename
    assert variant.tag == "default.safetensors" and file.suffix == ".safetensors"
    assert variant.file.hash == "sha256:" + hashlib.sha256(file.read_bytes()).hexdigest()
    from safetensors.numpy import load_file

    saved = gluon_hub.load(MODEL, pretrained=params)._collect_params_with_prefix()
    assert sorted(load_file(str(file))) == sorted(saved)  # the names save_parameters gives them

    by_path = gluon_hub.load(MODEL, pretrained=file)(mx.nd.array(x)).asnumpy()
    assert np.array_equal(by_path, y)

    gluon_hub.register_plugin(_Published(out / "weights.json", gluon_hub.info(MODEL)), name="converted")
    with serve(out) as server:
        monkeypatch.setenv("GLUON_HUB_MIRRORS", server.url)
        by_tag = gluon_hub.load("converted_resnet20", pretrained=True)(mx.nd.array(x)).asnumpy()
        assert np.array_equal(by_tag, y)
        cached = next((tmp_path / "hub-home" / "files").rglob(variant.file.filename))
        cached.chmod(0o644)
        cached.write_bytes(cached.read_bytes()[:-4] + b"\0\0\0\0")  # a changed file is fetched again
        os.utime(cached, ns=(0, 0))
        assert np.array_equal(gluon_hub.load("converted_resnet20", pretrained=True)(mx.nd.array(x)).asnumpy(), y)
        (out / variant.file.filename).write_bytes(b"\0" * variant.file.size)  # and the mirror serves junk
        shutil.rmtree(tmp_path / "hub-home" / "files")
        with pytest.raises(gluon_hub.cache.DownloadError, match="expected sha256:"):
            gluon_hub.load("converted_resnet20", pretrained=True)


def _error(pretrained: Path) -> str:
    with pytest.raises(gluon_hub.ModelBuildError) as caught:
        gluon_hub.load(MODEL, pretrained=pretrained)
    return str(caught.value).replace(str(pretrained), "FILE")


def test_a_misnamed_or_misshapen_safetensors_file_gets_the_params_file_error(weights, tmp_path):
    from safetensors.numpy import save_file

    arrays = {k: p.data().asnumpy() for k, p in gluon_hub.load(MODEL, pretrained=weights[0])
              ._collect_params_with_prefix().items()}
    first = sorted(arrays)[0]
    cases = {
        "renamed": {("renamed." + k if k == first else k): v for k, v in arrays.items()},
        "misshapen": {k: (v[:1] if k == first else v) for k, v in arrays.items()},
    }
    for case, changed in cases.items():
        save_file(changed, str(tmp_path / f"{case}.safetensors"))
        # in the order safetensors keeps (sorted), which MXNet's message lists the file's names in
        mx.nd.save(str(tmp_path / f"{case}.params"), {k: mx.nd.array(changed[k]) for k in sorted(changed)})
        from_safetensors = _error(tmp_path / f"{case}.safetensors")
        assert from_safetensors == _error(tmp_path / f"{case}.params"), case
        assert first in from_safetensors and "gluon-hub-safetensors" not in from_safetensors
    assert "expects shape" in _error(tmp_path / "misshapen.safetensors")
    (tmp_path / "truncated.safetensors").write_bytes((tmp_path / "renamed.safetensors").read_bytes()[:-8])
    with pytest.raises(gluon_hub.cache.ParamsFormatError, match="not a valid safetensors file: tensor .* outside the"):
        gluon_hub.load(MODEL, pretrained=tmp_path / "truncated.safetensors")


@pytest.mark.parametrize("fmt", ["safetensors", "onnx"])
def test_a_failed_conversion_leaves_no_file_under_a_final_name(weights, tmp_path, fmt):
    out = tmp_path / "site"
    out.mkdir()
    # The model's files are over 1 MB: every write stops at 256 kB (EFBIG), in the middle of the output.
    result = _cli("convert", MODEL, "--params", weights[0], "-o", out, "--format", fmt, limit=256 << 10)
    assert result.returncode == 1
    if fmt == "safetensors":  # the write that fails is convert's own (ONNX fails inside MXNet's export)
        assert "gluon-hub: error: writing the safetensors file into" in result.stderr, result.stderr[-2000:]
    assert list(out.iterdir()) == []  # no file under a final name, no index, and the temp file is gone
