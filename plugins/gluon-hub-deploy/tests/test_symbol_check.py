"""``gluon-hub deploy --symbol``: an exported graph from the user is checked before MXNet reads
it (no ``Custom`` or unregistered operators, bounded size and node count, only earlier nodes
as inputs), and its params file too; each refusal is a user error through the real CLI."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from gluon_hub.compat import mx


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> tuple[Path, Path]:
    """A small graph exported as ``block.export`` writes it: symbol JSON and params."""
    folder = tmp_path_factory.mktemp("exported")
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Dense(4, in_units=3), mx.gluon.nn.Activation("relu"), mx.gluon.nn.Dense(2, in_units=4))
    net.initialize()
    net.hybridize()
    net(mx.nd.zeros((1, 3)))
    net.export(str(folder / "tiny"))
    return folder / "tiny-symbol.json", folder / "tiny-0000.params"


def deploy_cli(symbol: Path, params: Path, out: Path, *extra: str, env: dict | None = None):
    return subprocess.run(
        [sys.executable, "-m", "gluon_hub", "deploy", "--symbol", str(symbol), "--params", str(params),
         "--shape", "1,3", "--lang", "cpp", "-o", str(out), *extra],
        capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=300,
    )


def crafted(exported: tuple[Path, Path], tmp_path: Path, change) -> Path:
    graph = json.loads(exported[0].read_text())
    change(graph)
    path = tmp_path / "crafted-symbol.json"
    path.write_text(json.dumps(graph))
    return path


def assert_refused(result, *needles: str) -> None:
    assert result.returncode != 0
    assert "This is a bug" not in result.stderr and "Traceback" not in result.stderr, result.stderr
    for needle in needles:
        assert needle in result.stderr, result.stderr


def test_an_exported_graph_is_deployed(exported, tmp_path):
    result = deploy_cli(*exported, tmp_path / "out")
    assert result.returncode == 0, result.stderr
    manifest = (tmp_path / "out" / "model.txt").read_text()
    assert "input data 1 3" in manifest and "output 0 1 2" in manifest
    assert "Cannot decide type" not in result.stderr


def first_op(graph: dict) -> dict:
    return next(node for node in graph["nodes"] if node["op"] != "null")


@pytest.mark.parametrize("op, why", [
    ("Custom", "runs code or follows pointers"),
    ("_Native", "runs code or follows pointers"),
    ("_made_up_operator", "which this MXNet does not register"),
])
def test_custom_and_unregistered_operators_are_refused(exported, tmp_path, op, why):
    def change(graph):
        node = first_op(graph)
        node["op"] = op
        node["attrs"] = {"op_type": "evil"}

    out = tmp_path / "out"
    result = deploy_cli(crafted(exported, tmp_path, change), exported[1], out)
    assert_refused(result, "crafted-symbol.json", f"operator {op!r}", why)
    assert not out.exists()


def test_an_input_that_is_not_an_earlier_node_is_refused(exported, tmp_path):
    def change(graph):
        first_op(graph)["inputs"].append([len(graph["nodes"]) + 5, 0, 0])

    result = deploy_cli(crafted(exported, tmp_path, change), exported[1], tmp_path / "out")
    assert_refused(result, "not an earlier node")


def test_the_size_is_bounded_and_configurable(exported, tmp_path):
    size = exported[0].stat().st_size
    result = deploy_cli(*exported, tmp_path / "out", env={"GLUON_HUB_MAX_SYMBOL_SIZE": str(size - 1)})
    assert_refused(result, f"larger than {size - 1} bytes (GLUON_HUB_MAX_SYMBOL_SIZE)")
    result = deploy_cli(*exported, tmp_path / "out", env={"GLUON_HUB_MAX_SYMBOL_SIZE": str(size)})
    assert result.returncode == 0, result.stderr


def test_the_node_count_is_bounded(exported, tmp_path):
    from gluon_hub_deploy._symbol_check import MAX_NODES

    nodes = ",".join(['{"op":"null","name":"v","inputs":[]}'] * (MAX_NODES + 1))
    path = tmp_path / "huge-symbol.json"
    path.write_text('{"nodes":[%s],"arg_nodes":[0],"heads":[[0,0,0]]}' % nodes)
    result = deploy_cli(path, exported[1], tmp_path / "out")
    assert_refused(result, f"more than {MAX_NODES} nodes")


def test_not_a_graph_is_refused(exported, tmp_path):
    path = tmp_path / "list-symbol.json"
    path.write_text("[1, 2, 3]")
    assert_refused(deploy_cli(path, exported[1], tmp_path / "out"), "not an MXNet symbol")
    path.write_text("{not json")
    assert_refused(deploy_cli(path, exported[1], tmp_path / "out"), "is not JSON text")


def test_a_pickled_params_file_is_refused(exported, tmp_path):
    params = tmp_path / "evil-0000.params"
    params.write_bytes(pickle.dumps({"arg:dense0_weight": [1.0]}))
    result = deploy_cli(exported[0], params, tmp_path / "out")
    assert_refused(result, "is not a valid MXNet NDArray file")


def test_symbol_needs_params_and_shape_and_no_name(exported, tmp_path):
    base = [sys.executable, "-m", "gluon_hub", "deploy", "--lang", "cpp", "-o", str(tmp_path / "o")]
    result = subprocess.run([*base, "--symbol", str(exported[0]), "--shape", "1,3"],
                            capture_output=True, text=True, timeout=300)
    assert_refused(result, "--symbol needs the graph's --params FILE")
    result = subprocess.run([*base, "resnet18_v1", "--symbol", str(exported[0]), "--params",
                             str(exported[1]), "--shape", "1,3"], capture_output=True, text=True, timeout=300)
    assert_refused(result, "give it no NAME")
    result = subprocess.run(base, capture_output=True, text=True, timeout=300)
    assert_refused(result, "give the NAME of a model to deploy")
