"""``gluon-hub new-plugin`` writes a project that builds, installs, loads and uninstalls.

The project is built into a wheel and installed into a fresh virtual environment, as a
third party's user would install it. Creating a full venv with mxnet would take minutes,
so the venv is made without pip and reaches this environment's packages (mxnet, pip,
gluon_hub and its editable first-party plugins) through a ``.pth`` file that calls
``site.addsitedir``: a plain path line would not run the editable installs' own ``.pth``
hooks. Only the generated plugin is installed into the venv itself, so uninstalling it
there must make it vanish while this environment never sees it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

import gluon_hub
from gluon_hub.cli import main as hub_main

NAME = "gluon-hub-tmplcheck"
PLUGIN, MODEL = "tmplcheck", "tmplcheck_tiny_cnn"

PROBE = textwrap.dedent(f"""
    import json, sys
    import gluon_hub

    info = {{p.name: p for p in gluon_hub.plugins()}}.get({PLUGIN!r})
    result = {{"models": gluon_hub.list_models(plugin={PLUGIN!r}), "info": info and info.__dict__}}
    if info is not None:
        from gluon_hub.compat import mx
        from gluon_hub.testing import check_plugin
        import {PLUGIN.join(("gluon_hub_", ""))}.plugin as module
        result["module"] = module.__file__
        result["output"] = list(gluon_hub.load({MODEL!r})(mx.nd.zeros((2, 1, 28, 28))).shape)
        result["conforms"] = check_plugin({NAME!r}).ok
    else:
        try:
            gluon_hub.load({MODEL!r})
        except gluon_hub.UnknownNameError as exc:
            result["error"] = str(exc)
    print(json.dumps(result))
""")


def _run(*args: str, cwd: Path | None = None) -> str:
    result = subprocess.run(args, cwd=cwd, capture_output=True, text=True)
    assert result.returncode == 0, f"{args}\n{result.stdout}\n{result.stderr}"
    return result.stdout


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    """A fresh venv without pip that sees this environment's packages after its own."""
    root = tmp_path_factory.mktemp("venv") / "env"
    base = getattr(sys, "_base_executable", sys.executable)
    _run(base, "-m", "venv", "--without-pip", str(root))
    python = root / "bin" / "python"
    site = Path(_run(str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").strip())
    ours = sysconfig.get_paths()["purelib"]
    (site / "_reuse_test_env.pth").write_text(f"import site; site.addsitedir({ours!r})\n")
    return python


def test_generated_plugin_installs_loads_and_uninstalls(tmp_path, venv, capsys):
    assert hub_main(["new-plugin", NAME, "--dir", str(tmp_path)]) == 0
    project = tmp_path / NAME
    pyproject = (project / "pyproject.toml").read_text()
    assert '[project.entry-points.gluon_hub]\ntmplcheck = "gluon_hub_tmplcheck.plugin"' in pyproject
    assert '"gluon-hub~=0.1"' in pyproject
    assert 'GLUON_HUB_API = ">=1,<2"' in (project / "gluon_hub_tmplcheck" / "plugin.py").read_text()
    assert (project / "README.md").is_file() and (project / "tests" / "test_plugin.py").is_file()

    _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
         "-q", "-w", str(tmp_path / "dist"), str(project))
    wheel, = (tmp_path / "dist").glob("gluon_hub_tmplcheck-0.1.0-*.whl")
    _run(str(venv), "-m", "pip", "install", "--no-deps", "--no-index", "-q", str(wheel))

    installed = json.loads(_run(str(venv), "-c", PROBE, cwd=tmp_path))
    assert installed["models"] == [MODEL]
    assert installed["info"]["status"] == "loaded" and installed["info"]["distribution"] == NAME
    assert str(venv.parent.parent) in installed["module"]  # the wheel's copy, not the source
    assert installed["output"] == [2, 10]
    assert installed["conforms"] is True
    # the generated project's own test suite passes against the installed wheel, run as its
    # README says, and a new author sees no warnings of MXNet's
    readme = (project / "README.md").read_text()
    assert 'pip install -e ".[test]"' in readme and "python -m pytest" in readme
    out = _run(str(venv), "-m", "pytest", "-q", "-p", "no:cacheprovider", cwd=project)
    assert "passed" in out and "warning" not in out, out

    gluon_hub.reset_hub()
    assert PLUGIN not in {p.name for p in gluon_hub.plugins()}  # this environment is untouched

    _run(str(venv), "-m", "pip", "uninstall", "-y", "-q", NAME)
    removed = json.loads(_run(str(venv), "-c", PROBE, cwd=tmp_path))
    assert removed["models"] == [] and removed["info"] is None
    assert MODEL in removed["error"]


def test_new_plugin_refuses_bad_names_and_occupied_folders(tmp_path, capsys):
    assert hub_main(["new-plugin", "-bad name", "--dir", str(tmp_path)]) != 0
    assert hub_main(["new-plugin", "9lives", "--dir", str(tmp_path)]) == 1
    assert "start it with a letter" in capsys.readouterr().err
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "file").write_text("mine")
    assert hub_main(["new-plugin", "taken", "--dir", str(tmp_path)]) == 1
    assert "--force" in capsys.readouterr().err
    assert (tmp_path / "taken" / "file").read_text() == "mine"
