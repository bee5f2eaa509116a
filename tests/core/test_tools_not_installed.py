"""Without gluon-hub-deploy, the hub's names for its tools say how to install it.

Each check runs in a real interpreter whose site-packages is this one's minus
gluon-hub-deploy: a folder of links to every entry but the distribution's own (its package
finder, ``.pth`` file and metadata), added with ``site.addsitedir`` under ``python -S``. So
the package cannot be imported and its entry point and metadata are absent, as where it was
never installed; the other distributions (and their editable installs) work as they do here.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

DEPLOY_PACKAGE = "gluon_hub_deploy"
#: The hint's command: the plugin's folder in this checkout, or a wheel of it built there.
INSTALL = r"run: pip install \S*(plugins/gluon-hub-deploy|/gluon_hub_deploy-[^ /]+\.whl)$"


def site_packages(folder: Path, *, hide: bool) -> Path:
    """Links to this interpreter's site-packages entries, without gluon-hub-deploy's if ``hide``."""
    folder.mkdir()
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if not (hide and DEPLOY_PACKAGE in entry.name):
            (folder / entry.name).symlink_to(entry)
    return folder


def python(site: Path, code: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GLUON_HUB_", "PYTHON"))}
    env.update(GLUON_HUB_HOME=str(cwd / "hub-home"), GLUON_HUB_STRICT_PLUGINS="1", OMP_NUM_THREADS="1")
    prelude = f"import site, sys; site.addsitedir({str(site)!r})\n"
    return subprocess.run([sys.executable, "-S", "-c", prelude + code, *args], capture_output=True,
                          text=True, timeout=300, cwd=cwd, env=env)


PROBE = """
import importlib.util
from importlib import metadata
print("package", importlib.util.find_spec("gluon_hub_deploy") is not None)
print("metadata", any(d.metadata["Name"] == "gluon-hub-deploy" for d in metadata.distributions()))
import gluon_hub
from gluon_hub import *  # noqa: F403 (every public name exists, with or without the tools)
print("plugins", sorted(p.name for p in gluon_hub.plugins()))
for name in ("export", "optimize", "quantize"):
    try:
        print(name, getattr(gluon_hub, name).__module__)
    except Exception as exc:
        print(name, "RAISED", type(exc).__name__, exc)
"""


@pytest.mark.parametrize("hide", [False, True], ids=["installed", "not installed"])
def test_the_hidden_site_lacks_only_the_tools(tmp_path, hide):
    result = python(site_packages(tmp_path / "site", hide=hide), PROBE, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[:2] == [f"package {not hide}", f"metadata {not hide}"]
    assert lines[2] == f"plugins {['contrib', 'cv'] + ([] if hide else ['deploy']) + ['hub', 'nlp']}"
    for line, name in zip(lines[3:], ("export", "optimize", "quantize")):  # the stand-in is the hub's
        assert line == f"{name} {'gluon_hub._tools' if hide else 'gluon_hub_deploy._' + name}"


CALLS = """
import gluon_hub
from gluon_hub.errors import MissingDistributionError
calls = {
    "export": lambda: gluon_hub.export("cifar_resnet20_v1", "out"),
    "optimize": lambda: gluon_hub.optimize(None, None),
    "quantize": lambda: gluon_hub.quantize(None),
    "load optimize": lambda: gluon_hub.load("cifar_resnet20_v1", optimize=True),
    "int8": lambda: gluon_hub.load("mobilenet1.0_int8"),
}
for what, call in calls.items():
    try:
        call()
        print(what, "no error")
    except MissingDistributionError as exc:
        print(what, "|", isinstance(exc, ImportError), "|", exc)
"""


def test_each_tool_raises_the_install_hint(tmp_path):
    result = python(site_packages(tmp_path / "site", hide=True), CALLS, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    needs = "needs the gluon-hub-deploy distribution, which is not installed; "
    expected = {
        "export": "gluon_hub.export ", "optimize": "gluon_hub.optimize ", "quantize": "gluon_hub.quantize ",
        "load optimize": "load('cifar_resnet20_v1', optimize=True) ",
        "int8": "model 'cv/mobilenet1.0_int8' (plugin 'cv' from gluon-cv-core ",
    }
    assert len(lines) == len(expected), result.stdout
    for line, (what, subject) in zip(lines, expected.items()):
        assert line.startswith(f"{what} | True | {subject}") and needs in line, line
        assert re.search(INSTALL, line), line


CLI = "from gluon_hub.cli import main; sys.exit(main(sys.argv[1:]))"


def test_the_deploy_command_names_the_distribution_to_install(tmp_path):
    site = site_packages(tmp_path / "site", hide=True)
    result = python(site, CLI, "deploy", "resnet18_v1", "--lang", "cpp", "-o", str(tmp_path / "p"), cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    [line] = result.stderr.splitlines()
    assert line.startswith("gluon-hub: error: command 'deploy' is provided by the gluon-hub-deploy plugin, "
                           "which is not installed; "), line
    assert re.search(INSTALL, line), line
    assert not (tmp_path / "p").exists()
    listed = python(site, CLI, "--help", cwd=tmp_path)
    assert listed.returncode == 0 and "deploy" not in listed.stdout
    installed = python(site_packages(tmp_path / "all", hide=False), CLI, "--help", cwd=tmp_path)
    assert "  deploy " in installed.stdout and "(plugin deploy)" in installed.stdout
