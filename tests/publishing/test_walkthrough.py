"""The publishing walk-through, step by step as an author runs it, each step a real process.

``docs/plugins.md`` and ``docs/publishing.md`` together: ``gluon-hub new-plugin``, train and
``gluon-hub publish`` the weights, ship ``weights.json`` in the plugin (step 2), install the
plugin, serve the folder on loopback with ``gluon-hub serve`` and point ``GLUON_HUB_MIRRORS``
at it (step 3), then ``gluon-hub check-plugin --check-weights``. The file has a name and no
URL (no ``--base-url``); one that ``--check-weights`` fetched and verified from the mirror is
a warning, not an error (issue 29, item 10).

The plugin is installed from its wheel into a fresh venv that reaches this environment's
packages through a ``.pth`` file (as ``tests/plugin_template`` does), so this environment
never sees it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pytest

NAME, PACKAGE, MODEL = "gluon-hub-mymodels", "gluon_hub_mymodels", "mymodels_tiny_cnn"

# Step 2 of docs/publishing.md applied to the template's _specs.py: read the shipped index.
SPECS_IMPORT = ("from importlib.resources import files\n\n"
                "from gluon_hub import InputSpec, ModelSpec\n"
                "from gluon_hub.publishing import weights_from_index\n")
SPECS_READ = f'    weights = weights_from_index(files("{PACKAGE}") / "weights.json")\n    return [\n'
SPECS_FIELD = f'tags=("demo", "cnn"),\n            weights=weights.get("{MODEL}", ()),'


@pytest.fixture
def author(tmp_path: Path) -> dict[str, str]:
    """The author's shell: a venv whose ``gluon-hub`` sees what is installed into it."""
    env_dir = tmp_path / "env"
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--without-pip", str(env_dir)], check=True)
    python = env_dir / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    ours = sysconfig.get_paths()["purelib"]
    Path(site, "_reuse_test_env.pth").write_text(f"import site; site.addsitedir({ours!r})\n")
    launcher = env_dir / "bin" / "gluon-hub"  # what pip's console script does, for this venv
    launcher.write_text(f"#!/bin/sh\nexec {python} -m gluon_hub \"$@\"\n")
    launcher.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GLUON_HUB_")}
    env.update(PATH=f"{env_dir / 'bin'}{os.pathsep}{env['PATH']}", GLUON_HUB_HOME=str(tmp_path / "home"),
               GLUON_HUB_CONFIG=str(tmp_path / "no-config.json"), GLUON_HUB_PROGRESS="0")
    return env


def _sh(env: dict[str, str], cwd: Path, *args: str, ok: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    if ok:
        assert result.returncode == 0, f"{args}\n{result.stdout}\n{result.stderr}"
    return result


@pytest.mark.mxnet
def test_publishing_walkthrough_passes_check_plugin_with_check_weights(tmp_path, author):
    _sh(author, tmp_path, "gluon-hub", "new-plugin", NAME)
    project = tmp_path / NAME
    # "net = train_my_...()": the template's model, initialised, saved as a user would
    _sh(author, project, "python", "-c",
        f"from {PACKAGE}.models import {MODEL}\n"
        f"net = {MODEL}(); net.initialize(); net.save_parameters('tiny.params')")
    published = _sh(author, project, "gluon-hub", "publish", "tiny.params", "--name", MODEL,
                    "--out", "site/", "--metric", "accuracy=0.9@mnist:test", "--source", "my run")
    entry = json.loads(published.stdout)
    assert entry["file"]["urls"] == []  # no --base-url: users find it through a mirror

    # step 2: ship the index in the plugin, as package data
    (project / PACKAGE / "weights.json").write_bytes((project / "site" / "weights.json").read_bytes())
    specs = project / PACKAGE / "_specs.py"
    text = specs.read_text()
    for old, new in [("from gluon_hub import InputSpec, ModelSpec\n", SPECS_IMPORT),
                     ("    return [\n", SPECS_READ), ('tags=("demo", "cnn"),', SPECS_FIELD)]:
        assert text.count(old) == 1, f"the template's _specs.py changed: {old!r}"
        text = text.replace(old, new)
    specs.write_text(text)
    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('= ["py.typed"]', '= ["py.typed", "weights.json"]'))
    _sh(author, project, "python", "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
        "--no-index", "-q", "-w", str(tmp_path / "dist"), ".")
    wheel, = (tmp_path / "dist").glob("gluon_hub_mymodels-*.whl")
    _sh(author, project, "python", "-m", "pip", "install", "--no-deps", "--no-index", "-q", str(wheel))

    # without a mirror, the file would be looked for where it is not: still an error
    offline = dict(author, GLUON_HUB_OFFLINE="1")
    unserved = _sh(offline, project, "gluon-hub", "check-plugin", NAME, "--check-weights", ok=False)
    assert unserved.returncode == 1, unserved.stdout
    assert "has no URL, so it would be looked for on the default public mirror" in unserved.stdout

    # step 3: a loopback mirror, started the way docs/publishing.md's script does
    log = (project / "serve.log").open("w")
    server = subprocess.Popen(["gluon-hub", "serve", "site/", "--port", "0"], cwd=project, env=author,
                              stdout=log, stderr=subprocess.STDOUT)
    try:
        for _ in range(300):
            first = (project / "serve.log").read_text().partition("\n")[0]
            if first.startswith("Serving"):
                break
            assert server.poll() is None, (project / "serve.log").read_text()
            time.sleep(0.1)
        mirror = dict(author, GLUON_HUB_MIRRORS=first.rpartition(" at ")[2])
        checked = _sh(mirror, project, "gluon-hub", "check-plugin", NAME, "--check-weights", ok=False)
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert "checked 1 model, 1 weight file, 1 built" in checked.stdout
        assert "conforms: 0 errors, 1 warning" in checked.stdout
        assert "has no URL; --check-weights verified it" in checked.stdout
        assert "users will need such a mirror in GLUON_HUB_MIRRORS" in checked.stdout
        # and a user with that mirror loads the published weights, verified, by name
        loaded = _sh(dict(mirror, GLUON_HUB_HOME=str(tmp_path / "user-home")), tmp_path, "python", "-c",
                     "import gluon_hub, numpy as np\n"
                     f"net = gluon_hub.load({MODEL!r}, pretrained=True)\n"
                     "print(float(net[0].weight.data().abs().sum().asscalar()))")
    finally:
        server.terminate()
        assert server.wait(timeout=30) == 0
        log.close()
    from gluon_hub.compat import mx

    saved = mx.nd.load(str(project / "tiny.params"))
    assert float(loaded.stdout) == pytest.approx(float(saved["0.weight"].abs().sum().asscalar()), rel=1e-6)
