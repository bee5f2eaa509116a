"""The hint for a model whose plugin is missing is a command that installs it, here.

Run as a user meets it: wheels built by ``scripts/build-wheels.sh``, a fresh venv (no
system site-packages) with the core really pip-installed, the hint read from the CLI and
run verbatim in a shell, then the model loaded. Only mxnet and numpy come from the outer
environment, through a folder of links on a ``.pth`` file, to keep the test fast; a pip
constraint keeps that numpy's version, as pip keeps the numpy an MXNet environment already
has (newer pips do not count a ``.pth`` folder as installed and would bring numpy 2).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy

from gluon_hub import _index

REPO = Path(__file__).resolve().parents[2]


def run(args, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(args, capture_output=True, text=True, timeout=300, **kwargs)


def link_heavy_dependencies(venv: Path, folder: Path) -> None:
    """Make the outer mxnet and numpy (only those) importable in ``venv``."""
    folder.mkdir()
    outer = Path(numpy.__file__).resolve().parents[1]
    for entry in outer.iterdir():
        if entry.name.split("-")[0] in ("mxnet", "numpy", "numpy.libs"):
            (folder / entry.name).symlink_to(entry)
    [site] = venv.glob("lib/python3*/site-packages")
    (site / "outer_mxnet_numpy.pth").write_text(f"{folder}\n")


def test_printed_command_installs_the_plugin_in_a_fresh_venv(tmp_path):
    wheels, venv = tmp_path / "wheels", tmp_path / "venv"
    built = run(["bash", str(REPO / "scripts" / "build-wheels.sh"), "-o", str(wheels),
                 "gluon-hub", "gluon-cv-core"], env={**os.environ, "PYTHON": sys.executable})
    assert built.returncode == 0, built.stderr
    assert run([sys.executable, "-m", "venv", str(venv)]).returncode == 0
    link_heavy_dependencies(venv, tmp_path / "heavy")
    python = venv / "bin" / "python"
    constraint = tmp_path / "outer-numpy.txt"
    constraint.write_text(f"numpy=={numpy.__version__}\n")
    [core] = wheels.glob("gluon_hub-*.whl")
    installed = run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                     str(core)], env={**os.environ, "PIP_CONSTRAINT": str(constraint)})
    assert installed.returncode == 0, installed.stderr

    env = {"PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}", "HOME": str(tmp_path),
           "GLUON_HUB_HOME": str(tmp_path / "cache"), "PIP_DISABLE_PIP_VERSION_CHECK": "1",
           "PIP_CONSTRAINT": str(constraint)}
    hint = run(["gluon-hub", "info", "resnet18_v1"], env=env, cwd=tmp_path)
    assert hint.returncode == 1, hint.stdout + hint.stderr
    assert "gluon-cv-core plugin, which is not installed; run: pip install " in hint.stderr
    command = hint.stderr.split("run: ", 1)[1].strip()

    result = run(command, shell=True, env=env, cwd=tmp_path)  # verbatim, as a user would
    assert result.returncode == 0, f"{command}\n{result.stdout}{result.stderr}"
    loaded = run([str(python), "-c",
                  "import gluon_hub; from gluon_hub.compat import mx; "
                  "net = gluon_hub.load('resnet18_v1'); "
                  "print(net(mx.nd.ones((1, 3, 32, 32))).shape); "
                  "print(sorted(p.distribution for p in gluon_hub.plugins()))"],
                 env=env, cwd=tmp_path)
    assert loaded.returncode == 0, loaded.stderr
    assert loaded.stdout.splitlines() == ["(1, 1000)", "['gluon-cv-core', 'gluon-hub']"]


def test_hint_prefers_a_built_wheel_then_the_checkout_folder(tmp_path):
    checkout, dist = tmp_path / "checkout", tmp_path / "checkout" / "dist"
    (checkout / "plugins" / "gluon-contrib").mkdir(parents=True)
    (checkout / "plugins" / "gluon-contrib" / "pyproject.toml").write_text("[project]\n")
    assert _index.install_command("gluon-contrib", [checkout], [dist]) == (
        f"pip install {checkout / 'plugins' / 'gluon-contrib'}"
    )
    dist.mkdir()
    for name in ("gluon_contrib-0.1.0-py3-none-any.whl", "gluon_contrib-0.2.0-py3-none-any.whl",
                 "gluon_contrib-9.0.0-cp27-cp27m-win32.whl", "gluon_cv_core-5.0-py3-none-any.whl"):
        (dist / name).write_bytes(b"")
    assert _index.install_command("gluon-contrib", [checkout], [dist]) == (
        f"pip install {dist / 'gluon_contrib-0.2.0-py3-none-any.whl'}"  # newest this Python takes
    )
    # not first-party: the user's own package index provides it
    assert _index.install_command("gluon-geo", [checkout], [dist]) == "pip install gluon-geo"


def test_running_from_this_checkout_the_hint_names_it():
    command = _index.install_command("gluon-nlp-core")
    assert command.startswith("pip install ") and str(REPO) in command, command
