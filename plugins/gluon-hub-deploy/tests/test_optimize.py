"""gluon_hub.optimize and load(optimize=True): oneDNN-fused graphs with the plain model's
outputs, and a warned fallback where fusion cannot run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import gluon_hub
import gluon_hub_deploy
from gluon_hub.compat import mx


def _he(net):
    """He (fan-in) weights keep a deep network's outputs far from zero, so that relative
    differences mean something."""
    net.initialize(mx.init.Xavier(rnd_type="gaussian", factor_type="in", magnitude=2), force_reinit=True)
    return net


def _exported_graph(net, tmp_path):
    """The nodes of the graph the block runs, as ``export`` writes it (the public view)."""
    net.export(str(tmp_path / "graph"))
    return json.loads((tmp_path / "graph-symbol.json").read_text())["nodes"]


def _assert_close(got, want, rtol=1e-4):
    """Relative to the largest finite magnitude; infinities must sit in the same places."""
    got, want = got.asnumpy().astype(np.float64), want.asnumpy().astype(np.float64)
    finite = np.isfinite(want)
    np.testing.assert_array_equal(np.isfinite(got), finite)
    np.testing.assert_array_equal(got[~finite], want[~finite])
    scale = np.abs(want[finite]).max()
    assert np.abs(got[finite] - want[finite]).max() <= rtol * scale


def test_classifier_is_fused_and_gives_the_plain_outputs(tmp_path):
    net = _he(gluon_hub.load("resnet18_v1"))
    x = mx.nd.array(np.random.default_rng(0).random((1, 3, 64, 64), dtype=np.float32))
    expected = net(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error", gluon_hub.OptimizeWarning)
        assert gluon_hub.optimize(net, x) is net
    _assert_close(net(x), expected)

    nodes = _exported_graph(net, tmp_path)
    ops = {node["op"] for node in nodes}
    assert {"_sg_mkldnn_conv", "_sg_mkldnn_fully_connected"} <= ops
    assert not ops & {"Convolution", "BatchNorm", "Activation"}, ops  # all folded into fused nodes
    folded = [{n["op"] for n in node["subgraphs"][0]["nodes"]} for node in nodes if node["op"] == "_sg_mkldnn_conv"]
    assert any({"Convolution", "BatchNorm", "Activation"} <= inner for inner in folded)
    assert any("elemwise_add" in inner for inner in folded)  # the residual add too


def test_load_optimize_applies_it_for_the_spec_input_shape():
    net = gluon_hub.load("cifar_resnet20_v1", optimize=True)
    assert gluon_hub_deploy.fused_operators(net) == ["_sg_mkldnn_conv", "_sg_mkldnn_fully_connected"]
    plain = gluon_hub.load("cifar_resnet20_v1")
    for name, param in plain.collect_params().items():  # the same weights as the optimized one
        param.set_data(net.collect_params()[name.replace(plain.prefix, net.prefix, 1)].data())
    x = mx.nd.array(np.random.default_rng(1).random((1, 3, 32, 32), dtype=np.float32))
    _assert_close(net(x), plain(x))


def test_an_optimized_block_refuses_to_train():
    net = gluon_hub.load("cifar_resnet20_v1", optimize=True)
    with pytest.raises(RuntimeError, match="compiled for inference by gluon_hub.optimize.*load the model again"):
        with mx.autograd.record():
            net(mx.nd.ones((1, 3, 32, 32)))


def test_detector_is_fused_and_gives_the_plain_detections():
    net = gluon_hub.load("ssd_300_mobilenet0.25_voc")
    x = mx.nd.array(np.random.default_rng(2).random((1, 3, 128, 128), dtype=np.float32))
    expected = net(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error", gluon_hub.OptimizeWarning)
        gluon_hub.optimize(net, x)
    assert "_sg_mkldnn_conv" in gluon_hub_deploy.fused_operators(net)
    got = net(x)
    assert len(got) == len(expected) == 3  # class ids, scores, boxes
    for g, e in zip(got, expected):
        _assert_close(g, e)


def test_text_model_is_fused_and_gives_the_plain_outputs():
    net = gluon_hub.load("textcnn_rand", vocab_size=100, embed_size=16)
    tokens = mx.nd.array(np.random.default_rng(3).integers(0, 100, (2, 20)), dtype="int32")
    expected = net(tokens)
    with warnings.catch_warnings():
        warnings.simplefilter("error", gluon_hub.OptimizeWarning)
        gluon_hub.optimize(net, tokens)
    assert gluon_hub_deploy.fused_operators(net) == ["_sg_mkldnn_fully_connected"]
    _assert_close(net(tokens), expected)


class _NumpyInside(mx.gluon.HybridBlock):
    """A block whose forward leaves the graph (``asnumpy``): no symbol can trace it."""

    def __init__(self):
        super().__init__()
        self.dense = mx.gluon.nn.Dense(3, in_units=4)

    def hybrid_forward(self, F, x):
        return F.array(np.tanh(self.dense(x).asnumpy()))


def test_a_block_that_cannot_be_hybridized_falls_back_with_a_warning():
    net = _NumpyInside()
    net.initialize()
    x = mx.nd.ones((2, 4))
    expected = net(x).asnumpy()
    with pytest.warns(gluon_hub.OptimizeWarning, match=r"fusion is unavailable \(building or partitioning its graph with the MKLDNN backend failed: "
                      r"AttributeError.*\); it cannot be hybridized either, so it runs imperatively"):
        assert gluon_hub.optimize(net, x) is net
    np.testing.assert_array_equal(net(x).asnumpy(), expected)
    assert gluon_hub_deploy.fused_operators(net) == []


def test_a_plain_block_falls_back_with_a_warning():
    net = mx.gluon.nn.Sequential()
    net.add(mx.gluon.nn.Dense(3, in_units=4))
    net.initialize()
    with pytest.warns(gluon_hub.OptimizeWarning, match="Sequential is a plain Block.*static memory planning only"):
        gluon_hub.optimize(net, np.ones((1, 4), dtype=np.float32))
    assert net[0]._active  # its hybridizable child was hybridized


def test_onednn_turned_off_falls_back_with_a_warning():
    """``MXNET_MKLDNN_ENABLED=0`` (read by MXNet at start-up) leaves the backend nothing to fuse."""
    code = (
        "import warnings, numpy as np, gluon_hub, gluon_hub_deploy\n"
        "from gluon_hub.compat import mx\n"
        "net = gluon_hub.load('cifar_resnet20_v1')\n"
        "x = mx.nd.array(np.random.default_rng(0).random((1, 3, 32, 32), dtype=np.float32))\n"
        "expected = net(x).asnumpy()\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    gluon_hub.optimize(net, x)\n"
        "[w] = [w for w in caught if w.category is gluon_hub.OptimizeWarning]\n"
        "print('WARNING:', w.message)\n"
        "assert net._active and gluon_hub_deploy.fused_operators(net) == []\n"
        "np.testing.assert_allclose(net(x).asnumpy(), expected, rtol=1e-5)\n"
    )
    env = {**os.environ, "MXNET_MKLDNN_ENABLED": "0", "MXNET_STORAGE_FALLBACK_LOG_VERBOSE": "0"}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "fused no operator; oneDNN may be turned off (MXNET_MKLDNN_ENABLED=0)" in result.stdout
    assert "hybridized with static memory planning only" in result.stdout


def test_load_optimize_needs_a_fixed_input_shape():
    with pytest.raises(ValueError, match=r"optimize=True needs the fixed input shape.*textcnn_rand.*\(None,\).*"
                       r"gluon_hub.optimize\(net, example_input\)"):
        gluon_hub.load("textcnn_rand", optimize=True)


def test_bad_example_input_is_refused():
    net = mx.gluon.nn.Dense(2, in_units=3)
    net.initialize()
    with pytest.raises(TypeError, match="example_input must be an NDArray or numpy array"):
        gluon_hub.optimize(net, [[1.0, 2.0, 3.0]])


def test_optimize_is_public():
    assert {"optimize", "OptimizeWarning"} <= set(gluon_hub.__all__)
    assert gluon_hub.optimize is gluon_hub_deploy.optimize
