"""The portability matrix as data: a plugin's portability.json reaches its specs, `info`,
`list --portable`, `list_models(portable=...)` and `registry check` (stale rows)."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

import gluon_hub
from gluon_hub._portability import read_rows, spec_fingerprint, write_rows
from gluon_hub.specs import OnnxPortability

HELPERS = Path(__file__).parent / "helpers"


def _write(site: Path, rows: dict) -> None:
    (site / "portability.json").write_text(json.dumps({"schema": "gluon-hub-portability/1", "models": rows}))


def _row(fingerprint: str, **fields) -> dict:
    return {"status": "exportable", "fingerprint": fingerprint, "opset": 13,
            "input_shapes": [[None, 7]], "max_rel_diff": 3e-7, **fields}


@pytest.fixture
def two_models(fake_dist, only_fakes, tmp_path):
    """A plugin with a measured exportable model, a blocked one and an unmeasured one."""
    fake_dist("alpha", models=[("good_net", "demo"), ("dcn_net", "demo"), ("new_net", "demo")])
    specs = {s.name: s for s in (gluon_hub.info(n) for n in ("good_net", "dcn_net", "new_net"))}
    site = tmp_path / "site"
    _write(site, {
        "good_net": _row(spec_fingerprint(specs["good_net"])),
        "dcn_net": {"status": "blocked", "fingerprint": spec_fingerprint(specs["dcn_net"]),
                    "blocker": "_contrib_DeformableConvolution: no ONNX operator"},
    })
    gluon_hub.reset_hub()
    return site


def test_rows_reach_the_specs_and_the_filters(two_models):
    assert gluon_hub.info("good_net").onnx == OnnxPortability(
        status="exportable", fingerprint=spec_fingerprint(gluon_hub.info("good_net")), opset=13,
        input_shapes=((None, 7),), max_rel_diff=3e-7)
    assert gluon_hub.info("dcn_net").onnx.blocker.startswith("_contrib_DeformableConvolution")
    assert gluon_hub.info("new_net").onnx is None
    assert gluon_hub.list_models(portable=True) == ["good_net"]
    assert sorted(gluon_hub.list_models(portable=False)) == ["dcn_net", "new_net"]


def test_a_row_for_an_older_spec_is_not_portable(two_models):
    rows = json.loads((two_models / "portability.json").read_text())["models"]
    rows["good_net"]["fingerprint"] = "0" * 16
    _write(two_models, rows)
    gluon_hub.reset_hub()
    assert gluon_hub.list_models(portable=True) == []


def cli(*args: str, site: Path) -> subprocess.CompletedProcess:
    path = os.pathsep.join([str(site), str(HELPERS), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path, "GLUON_HUB_DISABLE_PLUGINS": "hub,cv,nlp,contrib,deploy"}
    return subprocess.run([sys.executable, "-m", "gluon_hub.cli", *args], capture_output=True,
                          text=True, env=env, timeout=120)


def test_cli_info_list_and_registry_check(two_models, tmp_path):
    info = cli("info", "good_net", site=two_models)
    assert info.returncode == 0, info.stderr
    assert "exportable, opset 13, inputs ?x7 ('?' is dynamic)" in info.stdout
    assert "blocked by _contrib_DeformableConvolution" in cli("info", "dcn_net", site=two_models).stdout
    assert "not measured" in cli("info", "new_net", site=two_models).stdout
    listed = cli("list", "--portable", site=two_models)
    assert listed.returncode == 0 and "good_net" in listed.stdout and "dcn_net" not in listed.stdout

    index = tmp_path / "index.json"
    rows = json.loads((two_models / "portability.json").read_text())["models"]
    rows["dcn_net"]["fingerprint"] = "f" * 16
    _write(two_models, rows)
    check = cli("registry", "check", "--path", str(index), site=two_models)
    assert check.returncode == 1
    assert "portability rows of alpha/dcn_net were measured on an older spec" in check.stderr
    assert "gluon-hub portability --write alpha/dcn_net" in check.stderr


def test_a_broken_file_marks_the_plugin_not_the_hub(two_models):
    (two_models / "portability.json").write_text("{not json")
    gluon_hub.reset_hub()
    with pytest.warns(gluon_hub.errors.PluginWarning, match="portability.json: not a readable"):
        assert gluon_hub.list_models() == ["dcn_net", "good_net", "new_net"]


def test_rows_are_written_stably(tmp_path):
    rows = {"b": OnnxPortability(status="blocked", fingerprint="1", blocker="X: why"),
            "a": OnnxPortability(status="exportable", fingerprint="2", opset=13,
                                 input_shapes=((1, 3, None, None),), max_rel_diff=1e-6)}
    path = tmp_path / "portability.json"
    write_rows(path, rows)
    first = path.read_bytes()
    write_rows(path, dict(reversed(list(read_rows(path).items()))))
    assert path.read_bytes() == first
    assert list(json.loads(first)["models"]) == ["a", "b"]
    assert read_rows(path) == rows


def test_store_adds_a_row_beside_the_plugin_and_keeps_the_others(two_models, capsys):
    from gluon_hub.portability import is_current, store

    spec = gluon_hub.info("new_net")
    row = OnnxPortability(status="exportable", fingerprint=spec_fingerprint(spec), opset=13,
                          input_shapes=((None, 7),), max_rel_diff=2e-7)
    assert store(spec, row) == two_models / "portability.json"
    assert set(read_rows(two_models / "portability.json")) == {"good_net", "dcn_net", "new_net"}
    gluon_hub.reset_hub()
    assert is_current(gluon_hub.info("new_net")) and gluon_hub.info("new_net").onnx == row
    # a plugin registered from an object has no file to keep rows beside: a warning, nothing lost
    gluon_hub.register_plugin(types.SimpleNamespace(GLUON_HUB_API=">=1,<2", gluon_hub_models=gluon_hub.hookimpl(
        lambda: [dataclasses.replace(spec, name="object_net", plugin="")])), "objplugin")
    assert store(gluon_hub.info("object_net"), row) is None
    assert "plugin 'objplugin' has no module file to keep rows beside; object_net's row is not stored" in \
        capsys.readouterr().err


def test_tools_import_spec_strings_and_read_the_progress_setting_through_public_names(monkeypatch):
    """What gluon-hub-deploy needs from the core beyond the matrix, public: a spec's
    "module:attr" string imported with errors naming its owner, and GLUON_HUB_PROGRESS."""
    from gluon_hub.cache import progress_setting
    from gluon_hub.errors import PluginError
    from gluon_hub.specs import import_object

    assert import_object("gluon_hub.portability:store", "a test") is __import__("gluon_hub.portability").portability.store
    with pytest.raises(PluginError, match=r"the export graphs of model 'x': 'gluon_hub.portability' has no attribute "
                       r"'nothing'"):
        import_object("gluon_hub.portability:nothing", "the export graphs of model 'x'")
    for value, expected in (("0", False), ("1", True)):
        monkeypatch.setenv("GLUON_HUB_PROGRESS", value)
        assert progress_setting() is expected
