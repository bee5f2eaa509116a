"""The hub's GroupNorm, BatchNorm and SyncBatchNorm converters against MXNet (2-D and 3-D
inputs, a dynamic graph; ``fix_gamma`` with a stored gamma that is not 1), the models built on
them, and the random weights the portability matrix measures with."""

from __future__ import annotations

import math

import numpy as np
import onnxruntime
import pytest

import gluon_hub
from gluon_hub.compat import mx


@pytest.mark.parametrize("groups, shapes", [
    (1, [(1, 4, 5, 6), (2, 4, 3, 7)]),
    (4, [(1, 8, 5, 6), (3, 8, 9, 2)]),
    (2, [(1, 4, 3, 5, 6), (2, 4, 2, 3, 4)]),  # video (N, C, T, H, W)
])
def test_group_norm_matches_mxnet(tmp_path, groups, shapes):
    data = mx.sym.var("data")
    net = mx.gluon.SymbolBlock(mx.sym.GroupNorm(data, num_groups=groups, eps=1e-3, name="gn"), [data])
    rng = np.random.default_rng(0)
    net.initialize()
    net.collect_params()["gn_gamma"].set_data(mx.nd.array(rng.normal(size=groups)))
    net.collect_params()["gn_beta"].set_data(mx.nd.array(rng.normal(size=groups)))
    (path,) = gluon_hub.export(net, tmp_path / "gn.onnx", format="onnx", input_shape=shapes[0],
                               dynamic_batch=True, dynamic_spatial=True)
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for shape in shapes:
        x = (rng.normal(size=shape) * 3 + 1).astype(np.float32)
        expected = net(mx.nd.array(x)).asnumpy()
        (got,) = session.run(None, {"data": x})
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5)


def _batch_norm_symbol(**options):
    data = mx.sym.var("data")
    y = mx.sym.Convolution(data, num_filter=4, kernel=(3, 3), pad=(1, 1), name="conv")
    return mx.gluon.SymbolBlock(mx.sym.BatchNorm(y, name="bn", **options), [data])


def _batch_norm_gluon(**options):
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.BatchNorm(in_channels=3, **options), mx.gluon.nn.Conv2D(4, 3, in_channels=3))
    return net


def _sync_batch_norm_symbol(**options):
    data = mx.sym.var("data")
    y = mx.sym.Convolution(data, num_filter=4, kernel=(3, 3), pad=(1, 1), name="conv")
    return mx.gluon.SymbolBlock(mx.sym.contrib.SyncBatchNorm(y, name="sbn", key="sbn", **options), [data])


def _sync_batch_norm_gluon(**options):
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Conv2D(4, 3, in_channels=3),
            mx.gluon.contrib.nn.SyncBatchNorm(in_channels=4, num_devices=2, **options))
    return net


@pytest.mark.parametrize("make, options, gamma_used", [
    (_batch_norm_symbol, {}, False),  # SSD's extra layers: fix_gamma left at its default, True
    (_batch_norm_symbol, {"fix_gamma": True, "eps": 1e-5}, False),
    (_batch_norm_symbol, {"fix_gamma": False}, True),
    (_batch_norm_gluon, {"scale": False, "center": False}, False),  # ResNet V2's input normalisation
    (_batch_norm_gluon, {}, True),
    # the *_syncbn_* R-CNNs: inference uses the moving statistics, like BatchNorm
    (_sync_batch_norm_symbol, {}, False),
    (_sync_batch_norm_symbol, {"fix_gamma": False, "eps": 1e-5}, True),
    (_sync_batch_norm_gluon, {"scale": False}, False),
    (_sync_batch_norm_gluon, {}, True),
], ids=["symbol-default", "symbol-fix-gamma", "symbol-gamma", "gluon-scale-false", "gluon",
        "sync-symbol-default", "sync-symbol-gamma", "sync-gluon-scale-false", "sync-gluon"])
def test_batch_norm_matches_mxnet_with_stored_gamma(tmp_path, make, options, gamma_used):
    """A stored gamma far from 1 (trained weights): MXNet ignores it under fix_gamma, and so
    must the ONNX graph, which then holds no unused copy of it."""
    import onnx

    net = make(**options)
    net.initialize(mx.init.Uniform(1))  # the normalisation parameters are set below
    net.hybridize()
    net(mx.nd.zeros((1, 3, 8, 8)))  # shapes the deferred parameters
    rng = np.random.default_rng(0)
    for name, param in net.collect_params().items():
        if name.endswith("gamma"):
            param.set_data(mx.nd.array(rng.uniform(2, 3, param.shape)))
        elif name.endswith(("beta", "mean")):
            param.set_data(mx.nd.array(rng.uniform(-0.5, 0.5, param.shape)))
        elif name.endswith("var"):
            param.set_data(mx.nd.array(rng.uniform(0.5, 2, param.shape)))
    (path,) = gluon_hub.export(net, tmp_path / "bn.onnx", format="onnx", input_shape=(1, 3, 8, 8),
                               dynamic_batch=True, dynamic_spatial=True)
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for shape in [(1, 3, 8, 8), (2, 3, 5, 7)]:
        x = rng.normal(size=shape).astype(np.float32)
        expected = net(mx.nd.array(x)).asnumpy()
        (got,) = session.run(None, {session.get_inputs()[0].name: x})
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5 * np.abs(expected).max())
    stored = {i.name for i in onnx.load(str(path)).graph.initializer}
    assert any(n.endswith("gamma") for n in stored) == gamma_used, stored


def test_sync_batch_norm_with_mean_and_variance_outputs_is_a_clear_error(tmp_path):
    data = mx.sym.var("data")
    out = mx.sym.contrib.SyncBatchNorm(data, name="sbn", key="sbn", output_mean_var=True)
    net = mx.gluon.SymbolBlock(out[0], [data])
    net.initialize()
    with pytest.raises(ValueError, match=r"SyncBatchNorm sbn: output_mean_var=True"):
        gluon_hub.export(net, tmp_path / "sbn.onnx", format="onnx", input_shape=(1, 3, 4, 5))


def test_batch_norm_on_another_axis_is_a_clear_error(tmp_path):
    data = mx.sym.var("data")
    net = mx.gluon.SymbolBlock(mx.sym.BatchNorm(data, axis=-1, name="bn"), [data])
    net.initialize()
    with pytest.raises(ValueError, match=r"BatchNorm bn: axis=-1 has no converter.*transpose"):
        gluon_hub.export(net, tmp_path / "bn.onnx", format="onnx", input_shape=(1, 3, 4, 5))


def test_random_weights_move_normalisation_parameters():
    """The portability matrix's weights: gamma, beta and the running statistics away from the
    identity's 1 and 0 (Gluon's own-initialiser and deferred parameters included, and the
    symbol API's names), the same on every run, in the documented ranges."""
    from gluon_hub_deploy._measure import _GAMMA_SHIFT, random_initializer

    factor = math.exp(_GAMMA_SHIFT)
    assert round(factor, 3) == 0.911  # the docstring's number

    def values(net):
        net.initialize(random_initializer(), force_reinit=True)
        net(mx.nd.zeros((1, 3, 8, 8)))
        # without the network's own prefix ("hybridsequential3_", "bn_")
        return {name.split("_", 1)[1]: p.data().asnumpy() for name, p in net.collect_params().items()}

    gluon = values(_batch_norm_gluon())
    assert gluon.keys() == values(_batch_norm_gluon()).keys()
    symbol = values(_batch_norm_symbol())
    for params in gluon, symbol:
        for name, v in params.items():
            if name.endswith(("gamma", "var")):
                low, high = (factor * 2 / 3, factor * 3 / 2) if name.endswith("gamma") else (1 / 2, 2)
                assert ((v >= low) & (v <= high)).all() and np.abs(v - 1).min() > 0, (name, v)
            elif name.endswith(("beta", "mean")):
                assert (np.abs(v) <= 0.2).all() and np.abs(v).min() > 0, (name, v)
    assert {"gamma", "beta", "moving_mean", "moving_var"} <= symbol.keys()
    # a layer passes its input's scale on unchanged on average: E[gamma^2 / variance] = 1
    draws = np.random.default_rng(0)
    gamma = factor * np.exp(draws.uniform(*np.log([2 / 3, 3 / 2]), 10**6))
    variance = np.exp(draws.uniform(*np.log([1 / 2, 2]), 10**6))
    assert abs(np.mean(gamma**2 / variance) - 1) < 3e-3
    again = values(_batch_norm_symbol())  # same names, same values
    for name in ("gamma", "beta", "moving_mean", "moving_var"):
        np.testing.assert_array_equal(symbol[name], again[name])


@pytest.mark.portability
def test_resnet_with_group_norm_exports(onnx_matches_mxnet):
    print("resnet50_v1b_gn", onnx_matches_mxnet("resnet50_v1b_gn", [(1, 3, 64, 64), (2, 3, 96, 80)]))
