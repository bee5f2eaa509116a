"""The gluon-hub command line, run as users run it: a subprocess with real plugins."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HELPERS = Path(__file__).parent / "helpers"


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "gluon_hub.cli", *args],
        capture_output=True, text=True, env=full_env, timeout=120,
    )


def test_plugins_lists_the_first_party_plugins():
    result = run("plugins", "--json")
    assert result.returncode == 0, result.stderr
    infos = {p["name"]: p for p in json.loads(result.stdout)}
    assert {"hub", "cv", "nlp", "contrib"} <= set(infos)
    assert infos["cv"]["distribution"] == "gluon-cv-core"


def test_list_json_is_parseable_and_filtered():
    result = run("list", "*", "--json")
    assert result.returncode == 0, result.stderr
    specs = json.loads(result.stdout)
    assert specs and all({"name", "factory", "plugin"} <= set(s) for s in specs)


def test_unknown_model_exits_1_with_the_error_on_stderr():
    result = run("info", "no_such_model_anywhere")
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.startswith("gluon-hub: error: no model named 'no_such_model_anywhere'")


def test_bad_usage_exits_2():
    assert run("list", "--kind", "nonsense").returncode == 2
    assert run().returncode == 2


def test_search_shows_install_hint_for_uninstalled_plugins(tmp_path):
    index = {
        "schema": "gluon-hub-registry/1", "hub_api": "1.0",
        "plugins": [{"name": "geo", "distribution": "gluon-geo", "version": "0.3.0"}],
        "models": [{"name": "satnet", "factory": "gluon_geo.m:satnet", "plugin": "geo",
                    "task": "segmentation", "description": "satellite segmentation"}],
    }
    path = tmp_path / "index.json"
    path.write_text(json.dumps(index))
    result = run("search", "satellite", env={"GLUON_HUB_INDEX": str(path)})
    assert result.returncode == 0, result.stderr
    assert "geo/satnet" in result.stdout and "pip install gluon-geo" in result.stdout


def test_bad_index_from_environment_is_reported(tmp_path):
    path = tmp_path / "index.json"
    path.write_text("{broken")
    result = run("search", "x", env={"GLUON_HUB_INDEX": str(path)})
    assert result.returncode == 1
    assert "not valid JSON" in result.stderr


def test_registry_check_fails_on_a_stale_copy(tmp_path):
    stale = tmp_path / "registry.json"
    stale.write_text(json.dumps({"schema": "gluon-hub-registry/1", "plugins": []}))
    result = run("registry", "check", "--path", str(stale))
    assert result.returncode == 1
    assert "is stale; run 'gluon-hub registry build'" in result.stderr
    built = run("registry", "build", "--path", str(stale))
    assert built.returncode == 0, built.stderr
    assert run("registry", "check", "--path", str(stale)).returncode == 0


@pytest.mark.parametrize("disable", ["GLUON_HUB_DISABLE_PLUGIN_AUTOLOAD"])
def test_cli_honours_autoload_off(disable):
    result = run("plugins", "--json", env={disable: "1"})
    assert json.loads(result.stdout) == []


def test_a_reader_that_goes_away_is_not_an_error():
    """``gluon-hub list --json | head -1``: the pipe closes early, the command exits 0."""
    reader = "import subprocess, sys; p = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE);" \
             " p.stdout.readline(); p.stdout.close(); sys.exit(p.wait())"
    result = subprocess.run(
        [sys.executable, "-c", reader, sys.executable, "-m", "gluon_hub.cli", "list", "*", "--json"],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "Broken pipe" not in result.stderr and "Traceback" not in result.stderr


def test_registry_build_without_a_first_party_plugin_is_one_error_line(tmp_path):
    result = run("registry", "build", "--path", str(tmp_path / "r.json"),
                 env={"GLUON_HUB_DISABLE_PLUGINS": "nlp"})
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("gluon-hub: error: first-party plugins not loaded: gluon-nlp-core")
    assert not (tmp_path / "r.json").exists()
