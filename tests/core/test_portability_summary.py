"""The portability matrix summed up from the stored rows (`gluon-hub list --portability-summary`):
blocker classes from the texts gluon-hub-deploy writes, counts per task and per family, a row
measured on an older spec counted as not yet measured, the markdown README's table is made
of, the registry index as the source, and no MXNet anywhere."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import gluon_hub
from gluon_hub._portability import blocker_class, spec_fingerprint, summarize
from gluon_hub.specs import ModelSpec, OnnxPortability

HELPERS = Path(__file__).parent / "helpers"

# The blocker texts as gluon-hub-deploy writes them (_export.OnnxExportError, _measure.measure).
DCN = ("cv/center_net_dla34_dcnv2_coco is not portable to ONNX (_contrib_ModulatedDeformableConvolution: "
       "modulated deformable convolution (DCNv2) has no ONNX operator); export it as an MXNet symbol instead "
       "(gluon_hub.export('cv/center_net_dla34_dcnv2_coco', path, format='mxnet')) or build a native project "
       "around it (gluon-hub deploy cv/center_net_dla34_dcnv2_coco)")
INT8 = ("cv/mobilenet1.0_int8 cannot be exported to ONNX: no converter for the MXNet operator(s) "
        "_contrib_dequantize, _contrib_quantize_v2, _sg_mkldnn_conv, _sg_mkldnn_fully_connected; export it "
        "as an MXNet symbol instead (gluon_hub.export('cv/mobilenet1.0_int8', path, format='mxnet')) or "
        "build a native project around it (gluon-hub deploy cv/mobilenet1.0_int8)")
SYNCBN = ("cv/mask_rcnn_fpn_syncbn_mobilenet1_0_coco cannot be exported to ONNX: no converter for the MXNet "
          "operator(s) _contrib_SyncBatchNorm; export it as an MXNet symbol instead (gluon_hub.export("
          "'cv/mask_rcnn_fpn_syncbn_mobilenet1_0_coco', path, format='mxnet')) or build a native project "
          "around it (gluon-hub deploy cv/mask_rcnn_fpn_syncbn_mobilenet1_0_coco)")
DIFFERS = "onnxruntime's outputs differ from MXNet's by 2.6e-04 of their scale (tolerance 1e-04)"


@pytest.mark.parametrize("text, expected", [
    (DCN, "no_onnx_operator"),
    ("x is not portable to ONNX (_contrib_DeformableConvolution: deformable convolution has no ONNX "
     "operator); export it as an MXNet symbol instead", "no_onnx_operator"),
    (INT8, "int8"),
    (SYNCBN, "other"),  # a missing converter that is not int8: not misfiled as int8 for the model's name
    (DIFFERS, "beyond_tolerance"),
    ("its float32 parameters (3.1 GiB) exceed ONNX's 2 GiB protobuf limit, and mxnet.onnx 1.9.1 writes no "
     "external data; export it as an MXNet symbol instead", "too_large"),
    ("not comparable with random weights: MXNet's own outputs move by 4.6e-01 of their scale when its input "
     "moves by 1e-7 (float32 rounding grows through this network with random weights), onnxruntime's are "
     "4.3e-01 from MXNet's (tolerance 1e-04)", "random_weights"),
    ("at [(1, 3, 384, 384)] onnxruntime's outputs differ from MXNet's by 4.8e-01 of their scale",
     "beyond_tolerance"),
    ("onnxruntime's outputs differ from MXNet's: onnxruntime keeps 299 detections, MXNet 291",
     "beyond_tolerance"),
    ("MXNet itself failed at [(1, 3, 32, 32)]: MXNetError: shape mismatch", "other"),
    ("onnxruntime failed to run the exported graph: INVALID_ARGUMENT", "other"),
    ("something nobody has written yet", "other"),
])
def test_blocker_texts_fall_into_their_class(text, expected):
    assert blocker_class(text) == expected


def _spec(name: str, task: str, factory: str = "pkg.models:net", **row) -> ModelSpec:
    """A spec with a row measured on it (``fingerprint=...`` in ``row`` overrides), or none."""
    spec = ModelSpec(name=name, factory=factory, task=task, plugin="alpha")
    if not row:
        return spec
    row.setdefault("fingerprint", spec_fingerprint(spec))
    return dataclasses.replace(spec, onnx=OnnxPortability(**row))


def test_counts_per_task_with_stale_and_missing_rows():
    specs = [
        _spec("a", "t1", status="exportable", max_rel_diff=3e-7),
        _spec("b", "t1", status="exportable", max_rel_diff=2e-6),
        _spec("c", "t1", status="blocked", blocker=DCN),
        _spec("d", "t1"),
        _spec("e", "t0", status="blocked", blocker=INT8),
        _spec("f", "t0", status="blocked", blocker=DIFFERS),
        _spec("g", "t0", status="blocked", blocker=DIFFERS),
        _spec("h", "t0", status="exportable", max_rel_diff=0.5, fingerprint="0" * 16),  # older spec
    ]
    t0, t1, total = summarize(specs)
    assert (t0.group, t0.models, t0.exportable, t0.blocked, t0.not_measured, t0.stale, t0.max_rel_diff) == (
        "t0", 4, 0, {"int8": 1, "beyond_tolerance": 2}, 1, 1, None)  # the stale row's 0.5 is not counted
    assert (t1.group, t1.models, t1.exportable, t1.blocked, t1.not_measured, t1.stale, t1.max_rel_diff) == (
        "t1", 4, 2, {"no_onnx_operator": 1}, 1, 0, 2e-6)
    assert (total.group, total.models, total.exportable, total.not_measured, total.stale) == ("all", 8, 2, 2, 1)
    assert total.to_dict()["blocked"] == {"no_onnx_operator": 1, "int8": 1, "beyond_tolerance": 2}
    assert list(total.to_dict()["blocked"]) == ["no_onnx_operator", "int8", "beyond_tolerance"]


def test_families_are_models_sharing_a_factory():
    specs = [
        _spec("r18", "classification", "pkg.resnet:resnet_v1", status="exportable", max_rel_diff=1e-6),
        _spec("r50", "classification", "pkg.resnet:resnet_v1"),
        _spec("r18_q", "classification", "pkg.quantize:int8_model", status="blocked", blocker=INT8),
        _spec("ssd_q", "detection", "pkg.quantize:int8_model", status="blocked", blocker=INT8),
        _spec("net_a", "detection", "pkg.a:net"),  # two factories named `net`: shown in full
        _spec("net_b", "detection", "pkg.b:net"),
    ]
    rows = summarize(specs, by="family")
    assert [(r.group, r.tasks, r.models) for r in rows] == [
        ("resnet_v1", ("classification",), 2),
        ("int8_model", ("classification", "detection"), 2),
        ("pkg.a:net", ("detection",), 1),
        ("pkg.b:net", ("detection",), 1),
        ("all", ("classification", "detection"), 6),
    ]
    assert rows[1].blocked == {"int8": 2}
    with pytest.raises(ValueError, match="by 'task' or 'family', not 'plugin'"):
        summarize(specs, by="plugin")


def _write_rows(site: Path, rows: dict) -> None:
    (site / "portability.json").write_text(json.dumps({"schema": "gluon-hub-portability/1", "models": rows}))


MODELS = [("good_a", "demo"), ("good_b", "demo"), ("dcn_net", "demo"), ("new_net", "demo"),
          ("q_net", "other-task"), ("far_net", "other-task"), ("old_net", "other-task")]


@pytest.fixture
def measured(fake_dist, only_fakes, tmp_path):
    """A fake plugin whose portability.json has rows of every kind, one of them stale."""
    fake_dist("alpha", models=MODELS)
    fingerprint = {name: spec_fingerprint(gluon_hub.info(name)) for name, _ in MODELS}

    def row(name: str, **fields) -> dict:
        return {"fingerprint": fingerprint[name], "opset": 13, "input_shapes": [[None, 7]], **fields}

    _write_rows(tmp_path / "site", {
        "good_a": row("good_a", status="exportable", max_rel_diff=3e-7),
        "good_b": row("good_b", status="exportable", max_rel_diff=2e-6),
        "dcn_net": row("dcn_net", status="blocked", blocker=DCN),
        "q_net": row("q_net", status="blocked", blocker=INT8),
        "far_net": row("far_net", status="blocked", blocker=DIFFERS),
        "old_net": {**row("old_net", status="exportable", max_rel_diff=1e-7), "fingerprint": "0" * 16},
    })
    gluon_hub.reset_hub()
    return tmp_path / "site"


def cli(*args: str, site: Path, **env: str) -> subprocess.CompletedProcess:
    path = os.pathsep.join([str(site), str(HELPERS), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path, "GLUON_HUB_DISABLE_PLUGINS": "hub,cv,nlp,contrib,deploy", **env}
    # import mxnet fails in this process: the summary reads rows, it measures nothing
    code = "import sys; sys.modules['mxnet'] = None; from gluon_hub.cli import main; sys.exit(main())"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env,
                          timeout=120)


MARKDOWN = """\
| task | models | exportable | blocked | not yet measured | largest relative difference |
|---|---|---|---|---|---|
| demo | 4 | 2 | 1 (no ONNX operator 1) | 1 | 2.0e-06 |
| other-task | 3 | 0 | 2 (int8 operators 1, beyond tolerance 1) | 1 (1 on an older spec) |  |
| **all** | 7 | 2 | 3 (no ONNX operator 1, int8 operators 1, beyond tolerance 1) | 2 (1 on an older spec) | 2.0e-06 |
"""


def test_markdown_is_the_readme_table(measured):
    done = cli("list", "--portability-summary", "--format", "markdown", site=measured)
    assert done.returncode == 0, done.stderr
    table, _, legend = done.stdout.partition("\n\n")
    assert table + "\n" == MARKDOWN
    assert legend.startswith("Blocked: *no ONNX operator*: an operator ONNX has no counterpart for")


def test_text_json_filters_and_families(measured):
    text = cli("list", "--portability-summary", site=measured)
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert lines[0].split() == ["TASK", "MODELS", "EXPORTABLE", "BLOCKED", "NOT", "YET", "MEASURED",
                                "LARGEST", "RELATIVE", "DIFFERENCE"]
    assert lines[3].split() == ["other-task", "3", "0", "2", "(int8", "operators", "1,", "beyond", "tolerance",
                                "1)", "1", "(1", "on", "an", "older", "spec)", "-"]
    assert "gluon-hub portability --missing --write" in text.stdout

    data = json.loads(cli("list", "--portability-summary", "--json", "--task", "demo", site=measured).stdout)
    assert data == [
        {"group": "demo", "tasks": ["demo"], "models": 4, "exportable": 2, "blocked": {"no_onnx_operator": 1},
         "not_measured": 1, "stale": 0, "max_rel_diff": 2e-6},
        {"group": "all", "tasks": ["demo"], "models": 4, "exportable": 2, "blocked": {"no_onnx_operator": 1},
         "not_measured": 1, "stale": 0, "max_rel_diff": 2e-6},
    ]
    family = cli("list", "good_*", "--portability-summary", "--by", "family", "--json", site=measured)
    assert [(r["group"], r["models"]) for r in json.loads(family.stdout)] == [("dense_net", 2), ("all", 2)]


def test_the_summary_reads_the_registry_index_without_the_plugin(measured, tmp_path):
    rows = {name: row for name, row in json.loads((measured / "portability.json").read_text())["models"].items()}
    index = {"schema": "gluon-hub-registry/1", "hub_api": "1.0",
             "plugins": [{"name": "alpha", "distribution": "fake-alpha", "version": "1.2.3"}],
             "models": [{**gluon_hub.info(name).to_dict(), "onnx": rows.get(name)} for name, _ in MODELS]}
    path = tmp_path / "index.json"
    path.write_text(json.dumps(index))
    done = cli("list", "--portability-summary", "--index", "--format", "markdown", site=measured,
               GLUON_HUB_INDEX=str(path), GLUON_HUB_DISABLE_PLUGINS="hub,cv,nlp,contrib,deploy,alpha")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(MARKDOWN)
    installed = cli("list", "--portability-summary", "--json", site=measured,
                    GLUON_HUB_DISABLE_PLUGINS="hub,cv,nlp,contrib,deploy,alpha")
    assert json.loads(installed.stdout)[-1]["models"] == 0  # without --index: what is installed


@pytest.mark.parametrize("args, message", [
    (("list", "--by", "family"), "--by and --format apply to --portability-summary only"),
    (("list", "--format", "markdown"), "--by and --format apply to --portability-summary only"),
    (("list", "--kind", "datasets", "--portability-summary"), "--portability-summary applies to models only"),
])
def test_misused_options_say_so(measured, args, message):
    done = cli(*args, site=measured)
    assert done.returncode == 2 and message in done.stderr
