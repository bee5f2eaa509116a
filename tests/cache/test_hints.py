"""Every "prefetch this" and "install this" hint is a command that works, run as printed.

Offline and without the file, ``load``, ``load_dataset`` and a bare ``fetch`` say what to run
on a connected machine; each command is read from the error, run verbatim in a shell against
a loopback mirror, and the offline call then succeeds. Install hints for the first-party
distributions never send pip to a package index that lacks them (issue 29, item 11).
"""

from __future__ import annotations

import hashlib
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from gluon_hub import FileRef, _index
from gluon_hub.publishing import serve

from cachetestlib import installed_plugin

REPO = Path(__file__).resolve().parents[2]

PLUGIN = '''
import json
from pathlib import Path

from gluon_hub import DatasetSpec, FileRef, ModelSpec, WeightVariant, hookimpl

GLUON_HUB_API = ">=1,<2"
REFS = {k: FileRef(**v) for k, v in json.loads((Path(__file__).parent / "hintplug.json").read_text()).items()}


def hint_net():
    from gluon_hub.compat import mx

    return mx.gluon.nn.Dense(2, in_units=3)


def hint_data(segment="train", root=None):
    from gluon_hub.data import dataset_file

    return dataset_file(REFS["data"], root=root).read_text().split()


@hookimpl
def gluon_hub_models():
    return [ModelSpec(name="hint_net", factory="hintplug:hint_net", task="demo",
                      weights=(WeightVariant(tag="default", file=REFS["weights"]),
                               WeightVariant(tag="other", file=REFS["other"])))]


@hookimpl
def gluon_hub_datasets():
    return [DatasetSpec(name="hint_data", factory="hintplug:hint_data", task="demo",
                        segments=("train",), files=(REFS["data"],))]
'''


def _ref(path: Path, name: str) -> dict:
    return {"hash": "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest(),
            "size": path.stat().st_size, "filename": name}


@pytest.fixture
def world(tmp_path: Path):
    """A plugin installed on PYTHONPATH, its files on a loopback mirror, and two shells'
    environments: offline with an empty cache, and connected to the mirror."""
    from gluon_hub.compat import mx

    mirror = tmp_path / "mirror"
    mirror.mkdir()
    net = mx.gluon.nn.Dense(2, in_units=3)
    net.initialize(mx.init.Normal(1.0))
    net.save_parameters(str(mirror / "hint_net.params"))
    mx.nd.save(str(mirror / "other.params"), {"weight": mx.nd.ones((2, 3)), "bias": mx.nd.zeros((2,))})
    (mirror / "hint.txt").write_text("alpha beta gamma\n")
    (mirror / "blob.bin").write_bytes(b"a file no model or dataset names")
    refs = {"weights": _ref(mirror / "hint_net.params", "hint_net.params"),
            "other": _ref(mirror / "other.params", "other.params"),
            "data": _ref(mirror / "hint.txt", "hint.txt"),
            "blob": _ref(mirror / "blob.bin", "blob.bin")}
    base = installed_plugin(tmp_path, "hintplug", PLUGIN, refs)
    with serve(mirror) as server:
        yield {"offline": dict(base, GLUON_HUB_OFFLINE="1"),
               "online": dict(base, GLUON_HUB_MIRRORS=server.url), "refs": refs}


def _python(env: dict, code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)


def _suggested(stderr: str) -> str:
    found = re.search(r"on a machine with network access run: (.+?) ; then copy the cache", stderr)
    assert found, stderr
    return found.group(1)


CALLS = {  # what each call prints once its file is in the cache
    "model": ("import gluon_hub; print(gluon_hub.load('hint_net', pretrained='other').weight.data().sum().asscalar())",
              "gluon-hub cache prefetch hintplug/hint_net --tag other", "6.0"),
    "dataset": ("import gluon_hub; print(gluon_hub.load_dataset('hint_data'))",
                "gluon-hub cache prefetch --kind datasets hintplug/hint_data", "['alpha', 'beta', 'gamma']"),
    "file": (None, None, "a file no model or dataset names"),  # no registry entry names it
}


@pytest.mark.mxnet
@pytest.mark.parametrize("kind", CALLS)
def test_offline_hint_is_a_command_that_fetches_what_was_asked_for(world, kind):
    call, command, printed = CALLS[kind]
    if call is None:
        ref = FileRef(**world["refs"]["blob"])
        call = f"import gluon_hub; print(gluon_hub.fetch(gluon_hub.{ref!r}).read_text())"
    missing = _python(world["offline"], call)
    assert missing.returncode == 1, missing.stdout + missing.stderr
    suggested = _suggested(missing.stderr)
    if command is not None:
        assert suggested == command
    else:
        assert suggested.startswith("python -c ") and "gluon_hub.fetch(gluon_hub.FileRef(" in suggested
    ran = subprocess.run(["bash", "-c", suggested], env=world["online"], capture_output=True,
                         text=True, timeout=300)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    found = _python(world["offline"], call)
    assert found.returncode == 0, found.stderr
    assert found.stdout.strip() == printed


# the extras' packages it resolves offline (onnx, decord) are installed beside MXNet only
@pytest.mark.mxnet
def test_install_hints_never_send_pip_to_an_index_without_our_distributions(tmp_path):
    # no wheel and no checkout known: the checkout folder, with a comment that says so
    command = _index.install_command("gluon-cv-core", [], [])
    assert command.startswith("pip install ./plugins/gluon-cv-core  # ")
    assert "not on a package index" in command and "build-wheels.sh" in command
    assert _index.install_command("gluon-hub", [], []).startswith("pip install .  # ")
    # an extra names what it adds, from the installed metadata; ours by their folder
    assert _index.extra_command("gluon-hub", "onnxruntime") == "pip install onnxruntime Pillow"
    assert _index.extra_command("gluon-contrib", "text") == f"pip install {REPO / 'plugins' / 'gluon-nlp-core'}"
    assert "gluon-hub-deploy[" not in _index.extra_command("gluon-hub-deploy", "onnx")
    # the folder is the distribution (building it needs setuptools from the index, which
    # tests/core/test_install_hint.py does), and the extras' commands run: pip resolves them
    # here without any index, since everything they name is installed
    folder = REPO / command.partition("  #")[0].removeprefix("pip install ")
    assert 'name = "gluon-cv-core"' in (folder / "pyproject.toml").read_text()
    for hint in (_index.extra_command("gluon-hub-deploy", "onnx"), _index.extra_command("gluon-cv-core", "video")):
        pip = [sys.executable, "-m", "pip", "install", "--dry-run", "--no-index", "--no-deps", "-q",
               *shlex.split(hint.removeprefix("pip install "))]
        ran = subprocess.run(pip, cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert ran.returncode == 0, f"{hint}: {ran.stderr}"
