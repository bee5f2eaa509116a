"""Lock files (issue 33, item 4): ``gluon-hub lock`` pins a throwaway plugin's weights and
dataset files; loads under the lock take the pinned tag from a loopback mirror, and refuse,
before any request reaches the mirror, once the installed spec drifts from the lock."""

from __future__ import annotations

import functools
import hashlib
import http.server
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import gluon_hub
from gluon_hub.errors import LockDriftError, LockError, LockFileError

HELPERS = Path(__file__).parent / "helpers"

#: A plugin whose specs come from a JSON file the test rewrites, as a new release would.
PLUGIN = '''
import json
from gluon_hub import hookimpl, DatasetSpec, EmbeddingSpec, FileRef, ModelSpec, VocabularySpec, WeightVariant

GLUON_HUB_API = ">=1,<2"


def _specs():
    with open({specs!r}) as f:
        return json.load(f)


@hookimpl
def gluon_hub_models():
    weights = tuple(WeightVariant(tag=tag, file=FileRef(**ref)) for tag, ref in _specs()["weights"])
    return [ModelSpec(name="lockable", factory="tests_core_models:dense_net", task="demo",
                      weights=weights)]


@hookimpl
def gluon_hub_datasets():
    files = tuple(FileRef(**ref) for ref in _specs()["files"])
    return [DatasetSpec(name="lockable_data", factory="tests_core_models:dense_net", files=files)]


@hookimpl
def gluon_hub_embeddings():
    return [EmbeddingSpec(name="lockable_vectors", factory="tests_core_models:text_table",
                          files=(FileRef(**_specs()["vectors"]),))]


@hookimpl
def gluon_hub_vocabularies():
    return [VocabularySpec(name="lockable_tokens", factory="tests_core_models:text_table",
                           files=(FileRef(**_specs()["vectors"]),))]
'''


@pytest.fixture
def mirror(tmp_path):
    """A real HTTP mirror on 127.0.0.1 serving ``tmp_path/mirror``, recording each request."""
    folder = tmp_path / "mirror"
    folder.mkdir()
    requests: list[str] = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def do_GET(self):
            requests.append(self.path)
            super().do_GET()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                             functools.partial(Handler, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield folder, f"http://127.0.0.1:{server.server_address[1]}/", requests
    server.shutdown()
    server.server_close()


def _ref(path: Path) -> dict:
    data = path.read_bytes()
    return {"hash": "sha256:" + hashlib.sha256(data).hexdigest(), "size": len(data),
            "filename": path.name}


@pytest.fixture
def plugin(fake_dist, only_fakes, mirror, tmp_path, monkeypatch):
    """The plugin ``lockplug`` (distribution fake-lockplug 1.2.3) with two published weight
    files ("first", "second") and a two-file dataset on the loopback mirror."""
    from tests_core_models import dense_net

    from gluon_hub.compat import mx

    folder, url, requests = mirror
    expected = {}
    for seed, tag in enumerate(("first", "second")):
        net = dense_net()
        net.initialize(mx.init.Normal(1.0))
        net(mx.nd.ones((1, 5)))
        mx.random.seed(seed)
        net.save_parameters(str(folder / f"lockable-{tag}.params"))
        expected[tag] = net(mx.nd.ones((1, 5))).asnumpy()
    for name in ("train.txt", "test.txt"):
        (folder / name).write_text(f"the {name} rows\n")
    (folder / "vectors.txt").write_text("hello 0.5 -0.25\n")
    specs = tmp_path / "specs.json"
    specs.write_text(json.dumps({
        "weights": [[tag, _ref(folder / f"lockable-{tag}.params")] for tag in ("first", "second")],
        "files": [{**_ref(folder / name), "urls": [url + name]} for name in ("train.txt", "test.txt")],
        "vectors": {**_ref(folder / "vectors.txt"), "urls": [url + "vectors.txt"]},
    }))
    fake_dist("lockplug", PLUGIN.format(specs=str(specs)), distribution="fake-lockplug")
    monkeypatch.setenv("GLUON_HUB_MIRRORS", url)
    monkeypatch.setenv("GLUON_HUB_CONFIG", str(tmp_path / "no-config.json"))
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    monkeypatch.delenv("GLUON_HUB_LOCK", raising=False)
    monkeypatch.delenv("GLUON_HUB_OFFLINE", raising=False)
    return {"specs": specs, "expected": expected, "requests": requests, "mirror": folder,
            "site": tmp_path / "site"}


def cli(plugin, *args: str, **env: str) -> subprocess.CompletedProcess:
    """``gluon-hub ARGS`` in a subprocess that finds the throwaway plugin, as a user runs it."""
    path = os.pathsep.join([str(plugin["site"]), str(HELPERS)])
    return subprocess.run([sys.executable, "-m", "gluon_hub.cli", *args], capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": path, **env}, timeout=120)


def republish(plugin, **changes) -> None:
    """Change the installed spec of the "second" weights, as a plugin release would."""
    data = json.loads(plugin["specs"].read_text())
    for tag, ref in data["weights"]:
        if tag == "second":
            ref.update(changes)
    plugin["specs"].write_text(json.dumps(data))
    gluon_hub.reset_hub()


def test_lock_pins_the_tag_files_and_distribution(plugin, tmp_path):
    lock = tmp_path / "gluon-hub.lock"
    result = cli(plugin, "lock", "lockable:second", "--dataset", "lockable_data", "-o", str(lock))
    assert result.returncode == 0, result.stderr
    assert "model 'lockplug/lockable' [second]: 1 file(s), from fake-lockplug 1.2.3" in result.stdout
    text = lock.read_text()
    second = _ref(plugin["mirror"] / "lockable-second.params")
    assert (f'[models."lockplug/lockable"]\ndistribution = "fake-lockplug"\n'
            f'distribution_version = "1.2.3"\ntag = "second"\n\n'
            f'[models."lockplug/lockable".file."{second["hash"]}"]\nsize = {second["size"]}\n'
            f'filename = "lockable-second.params"\n') in text
    assert text.count('[datasets."lockplug/lockable_data".file."sha256:') == 2
    assert 'urls = ["http://127.0.0.1:' in text
    assert "first" not in text and plugin["requests"] == []  # locking downloads nothing
    assert lock.read_bytes().count(b"\r") == 0


def test_load_under_the_lock_takes_the_pinned_tag_from_the_mirror(plugin, tmp_path, monkeypatch):
    from gluon_hub.compat import mx

    lock = tmp_path / "gluon-hub.lock"
    assert cli(plugin, "lock", "lockable:second", "-o", str(lock)).returncode == 0
    x = mx.nd.ones((1, 5))
    net = gluon_hub.load("lockable", pretrained=True, lock=lock)
    np.testing.assert_allclose(net(x).asnumpy(), plugin["expected"]["second"], rtol=1e-6)
    assert plugin["requests"] == ["/lockable-second.params"]
    monkeypatch.setenv("GLUON_HUB_LOCK", str(lock))
    net = gluon_hub.load("lockable", pretrained=True, root=str(tmp_path / "other-cache"))
    np.testing.assert_allclose(net(x).asnumpy(), plugin["expected"]["second"], rtol=1e-6)
    assert plugin["requests"] == ["/lockable-second.params"] * 2
    # without the lock the first tag is the default, as ever
    monkeypatch.delenv("GLUON_HUB_LOCK")
    net = gluon_hub.load("lockable", pretrained=True)
    np.testing.assert_allclose(net(x).asnumpy(), plugin["expected"]["first"], rtol=1e-6)


@pytest.mark.parametrize("change, words", [
    ({"size": 12}, ["weights 'second': size is 12, the lock has"]),
    ({"hash": "sha256:" + "ab" * 32},
     ["weights 'second': hash is sha256:abab", ", the lock has sha256:"]),
    ({"filename": "moved/lockable-second.params"},
     ["filename is moved/lockable-second.params, the lock has lockable-second.params"]),
])
def test_a_drifted_spec_fails_before_any_download(plugin, tmp_path, monkeypatch, change, words):
    lock = tmp_path / "gluon-hub.lock"
    assert cli(plugin, "lock", "lockable:second", "-o", str(lock)).returncode == 0
    republish(plugin, **change)
    monkeypatch.setenv("GLUON_HUB_LOCK", str(lock))
    with pytest.raises(LockDriftError) as caught:
        gluon_hub.load("lockable", pretrained=True)
    message = str(caught.value)
    for word in words + ["model 'lockplug/lockable' no longer matches the lock file", "Nothing was downloaded",
                         f"`gluon-hub lock -o {lock}`", "install fake-lockplug==1.2.3"]:
        assert word in message
    assert plugin["requests"] == []
    assert gluon_hub.cache.entries() == []


def test_check_reports_drift_for_ci(plugin, tmp_path):
    lock = tmp_path / "gluon-hub.lock"
    assert cli(plugin, "lock", "lockable:second", "--dataset", "lockable_data",
               "-o", str(lock)).returncode == 0
    # the check, as a CI job runs it, reading GLUON_HUB_LOCK; and never importing mxnet
    clean = cli(plugin, "lock", "--check", GLUON_HUB_LOCK=str(lock))
    assert clean.returncode == 0, clean.stderr
    assert f"{lock}: all 2 entries match the installed plugins" in clean.stdout
    light = subprocess.run(
        [sys.executable, "-c", "import sys; from gluon_hub.cli import main; "
         f"assert main(['lock', '--check', '-o', {str(lock)!r}]) == 0; "
         "assert 'mxnet' not in sys.modules, 'lock imported mxnet'"],
        capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(plugin["site"]), str(HELPERS)])})
    assert light.returncode == 0, light.stderr
    # a new release: another version, one weight file replaced, one dataset file dropped
    metadata = next(plugin["site"].glob("fake_lockplug-*.dist-info")) / "METADATA"
    metadata.write_text(metadata.read_text().replace("Version: 1.2.3", "Version: 1.3.0"))
    republish(plugin, hash="sha256:" + "cd" * 32)
    data = json.loads(plugin["specs"].read_text())
    dropped = data["files"].pop()["hash"]
    plugin["specs"].write_text(json.dumps(data))
    drift = cli(plugin, "lock", "--check", "-o", str(lock))
    assert drift.returncode == 1
    lines = drift.stdout.splitlines()
    assert ("drift: model 'lockplug/lockable': provided by fake-lockplug 1.3.0, "
            "the lock has fake-lockplug 1.2.3") in lines
    assert any(line.startswith("drift: model 'lockplug/lockable': weights 'second': hash is "
                               "sha256:cdcd") for line in lines)
    assert f"drift: dataset 'lockplug/lockable_data': file {dropped} is no longer in the spec" in lines
    assert f"`gluon-hub lock -o {lock}`" in drift.stderr
    # the fix the message names: lock again, and the check is clean
    relock = cli(plugin, "lock", "-o", str(lock))
    assert relock.returncode == 0, relock.stderr
    assert 'distribution_version = "1.3.0"' in lock.read_text() and dropped not in lock.read_text()
    assert cli(plugin, "lock", "--check", "-o", str(lock)).returncode == 0
    assert plugin["requests"] == []


def test_the_file_is_byte_identical_when_regenerated(plugin, tmp_path):
    one, two = tmp_path / "one.lock", tmp_path / "two.lock"
    assert cli(plugin, "lock", "lockable:second", "--dataset", "lockable_data", "-o", str(one)).returncode == 0
    first = one.read_bytes()
    assert cli(plugin, "lock", "-o", str(one)).returncode == 0  # again, from the names it holds
    assert one.read_bytes() == first
    assert cli(plugin, "lock", "--dataset", "lockable_data", "lockplug/lockable:second",
               "-o", str(two)).returncode == 0
    assert two.read_bytes() == first


def test_loads_ask_only_for_what_the_lock_pins(plugin, tmp_path):
    lock = tmp_path / "gluon-hub.lock"
    assert cli(plugin, "lock", "--dataset", "lockable_data", "-o", str(lock)).returncode == 0
    with pytest.raises(LockError, match=r"'lockplug/lockable' is not in the lock file .* add it: "
                                        r"`gluon-hub lock -o .* --dataset lockplug/lockable_data lockplug/lockable`"):
        gluon_hub.load("lockable", pretrained=True, lock=lock)
    gluon_hub.load("lockable", pretrained=False, lock=lock)  # random weights download nothing
    assert cli(plugin, "lock", "lockable", "-o", str(lock)).returncode == 0
    with pytest.raises(LockError, match="pins the 'first' weights of model 'lockplug/lockable', not 'second'"):
        gluon_hub.load("lockable", pretrained="second", lock=lock)
    assert cli(plugin, "lock", "--dataset", "lockable_data", "-o", str(lock)).returncode == 0
    data = json.loads(plugin["specs"].read_text())
    data["files"][0]["urls"] = ["https://example.org/elsewhere.txt"]
    plugin["specs"].write_text(json.dumps(data))
    gluon_hub.reset_hub()
    with pytest.raises(LockDriftError, match=r"dataset 'lockplug/lockable_data' no longer matches.*"
                                             r"urls is https://example.org/elsewhere.txt, the lock has http://127"):
        gluon_hub.load_dataset("lockable_data", lock=lock)
    assert plugin["requests"] == []


@pytest.mark.parametrize("line, words", [
    ('sise = 12', "unknown key 'sise' here; the keys are size, filename, extract, archive_hash, urls"),
    ('size = "12"', "'size' must be an integer"),
    ('[models.lockable]', "is not a table header"),
    ('size = 12 # bytes', "the value of 'size' is not valid"),
])
def test_a_malformed_lock_file_names_its_line(plugin, tmp_path, line, words):
    lock = tmp_path / "gluon-hub.lock"
    assert cli(plugin, "lock", "lockable", "-o", str(lock)).returncode == 0
    lines = lock.read_text().splitlines()
    at = lines.index("size = " + str(_ref(plugin["mirror"] / "lockable-first.params")["size"]))
    lines[at] = line
    lock.write_text("\n".join(lines) + "\n")
    with pytest.raises(LockFileError) as caught:
        gluon_hub.load("lockable", pretrained=True, lock=lock)
    assert f"{lock}:{at + 1}: " in str(caught.value) and words in str(caught.value)
    result = cli(plugin, "lock", "--check", "-o", str(lock))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert f"gluon-hub: error: {lock}:{at + 1}: " in result.stderr and "docs/lock.md" in result.stderr
    assert plugin["requests"] == []


def test_a_lock_file_that_is_not_one(plugin, tmp_path):
    missing = tmp_path / "nowhere.lock"
    result = cli(plugin, "lock", "--check", "-o", str(missing))
    assert result.returncode == 1
    assert f"lock file {missing} does not exist; write it with `gluon-hub lock NAME... -o {missing}`" in result.stderr
    other = tmp_path / "requirements.txt"
    other.write_text("numpy==1.26\n")
    with pytest.raises(LockFileError, match=r"requirements.txt:1: 'numpy==1.26' is neither"):
        gluon_hub.load("lockable", pretrained=True, lock=other)
    other.write_text("# nothing\n")
    with pytest.raises(LockFileError, match="no 'version = 1' line: not a gluon-hub lock file"):
        gluon_hub.load("lockable", pretrained=True, lock=other)


def test_prefetch_under_the_lock_fetches_the_pinned_tag_only(plugin, tmp_path):
    lock = tmp_path / "gluon-hub.lock"
    assert cli(plugin, "lock", "lockable:second", "-o", str(lock)).returncode == 0
    result = cli(plugin, "cache", "prefetch", "lockable", "--lock", str(lock), "--quiet")
    assert result.returncode == 0, result.stderr
    assert plugin["requests"] == ["/lockable-second.params"]  # not the default 'first' too
    republish(plugin, size=12)
    drifted = cli(plugin, "cache", "prefetch", "lockable", "--quiet", GLUON_HUB_LOCK=str(lock),
                  GLUON_HUB_HOME=str(tmp_path / "fresh-cache"))
    assert drifted.returncode == 1 and "Traceback" not in drifted.stderr
    assert "no longer matches the lock file" in drifted.stderr
    assert "weights 'second': size is 12" in drifted.stderr
    assert plugin["requests"] == ["/lockable-second.params"]  # nothing more was downloaded
    unlocked = cli(plugin, "cache", "prefetch", "lockable", "--tag", "first", "--quiet")
    assert unlocked.returncode == 0, unlocked.stderr  # without a lock, as before


@pytest.mark.parametrize("kind, noun, name", [("embeddings", "embedding", "lockable_vectors"),
                                              ("vocabularies", "vocabulary", "lockable_tokens")])
def test_an_embedding_or_vocabulary_is_locked_and_loads_under_the_lock(plugin, tmp_path, kind, noun, name):
    lock = tmp_path / "gluon-hub.lock"
    load = getattr(gluon_hub, f"load_{noun}")
    with pytest.raises(LockError, match=rf"add it: `gluon-hub lock -o .* --{noun} lockplug/{name}`"):
        assert cli(plugin, "lock", "lockable", "-o", str(lock)).returncode == 0
        load(name, lock=lock)
    written = cli(plugin, "lock", f"--{noun}", name, "-o", str(lock))
    assert written.returncode == 0, written.stderr
    assert f'[{kind}."lockplug/{name}".file."sha256:' in lock.read_text()
    assert load(name, lock=lock) == "hello 0.5 -0.25\n"
    data = json.loads(plugin["specs"].read_text())
    data["vectors"]["urls"] = ["https://example.org/moved.txt"]
    plugin["specs"].write_text(json.dumps(data))
    gluon_hub.reset_hub()
    with pytest.raises(LockDriftError, match=rf"{noun} 'lockplug/{name}' no longer matches"):
        load(name, lock=lock, root=str(tmp_path / "other"))
    assert plugin["requests"] == ["/vectors.txt"]
    check = cli(plugin, "lock", "--check", "-o", str(lock))
    assert check.returncode == 1 and "urls is https://example.org/moved.txt" in check.stdout
