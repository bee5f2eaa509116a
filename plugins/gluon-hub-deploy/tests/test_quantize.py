"""gluon_hub.quantize: a real oneDNN int8 graph whose outputs stay near float32, and a clear
error for every bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest

import gluon_hub
from gluon_hub.compat import mx
from gluon_hub_deploy._quantize import calibration_layers, int8_operators


def _net():
    """A small trained-looking CNN: He weights keep outputs far from zero, so that a relative
    error means something; BatchNorm and the residual adds are fused like a big model's."""
    net = gluon_hub.load("cifar_resnet20_v1")
    net.initialize(mx.init.Xavier(rnd_type="gaussian", factor_type="in", magnitude=2), force_reinit=True)
    return net


def _batches(count, batch=4, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.random((batch, 3, 32, 32), dtype=np.float32) for _ in range(count)]


def _relative_error(got, want):
    return float(np.abs(got - want).max() / np.abs(want).max())


def _graph_nodes(block, folder):
    folder.mkdir(parents=True, exist_ok=True)
    block.export(str(folder / "int8"))
    return json.loads((folder / "int8-symbol.json").read_text())["nodes"]


@pytest.fixture(scope="module")
def digits():
    """The main job's CNN, trained for a few seconds on the UCI digits (real data that ships
    with scikit-learn): (net, train images, test images, test labels)."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "scripts"))
    try:
        import digits_demo
    finally:
        sys.path.pop(0)
    net, _, _ = digits_demo.train(seconds=20, epochs=8)
    x_train, _, x_test, y_test = digits_demo.digits_split()
    return net, x_train, x_test[:320], y_test[:320]


@pytest.mark.parametrize(("mode", "max_error"), [("naive", 0.05), ("entropy", 0.05), ("none", 0.4)])
def test_int8_of_a_trained_model_agrees_with_float32(digits, mode, max_error, tmp_path):
    net, x_train, x_test, y_test = digits
    calib = [x_train[i:i + 64] for i in range(0, 640, 64)]  # calibration never sees the test split
    int8 = gluon_hub.quantize(net, calib_data=calib, calib_mode=mode)
    want = net(mx.nd.array(x_test)).asnumpy()
    got = np.concatenate([int8(mx.nd.array(x_test[i:i + 64])).asnumpy() for i in range(0, len(x_test), 64)])
    assert _relative_error(got, want) < max_error
    assert (got.argmax(1) == want.argmax(1)).mean() >= 0.99
    assert (got.argmax(1) == y_test).mean() >= (want.argmax(1) == y_test).mean() - 0.01

    nodes = _graph_nodes(int8, tmp_path)
    convs = [n for n in nodes if n["op"] == "_sg_mkldnn_conv"]
    assert len(convs) == 2 and all(n["attrs"]["quantized"] == "true" for n in convs)
    assert not {n["op"] for n in nodes} & {"Convolution", "FullyConnected"}
    calibrated = [n for n in convs if "min_calib_range" in n["attrs"]]
    if mode == "none":  # ranges measured at run time, after each layer
        assert not calibrated and "_contrib_requantize" in {n["op"] for n in nodes}
    else:
        assert len(calibrated) == len(convs)


def test_the_float32_block_is_unchanged():
    net = _net()
    x = mx.nd.array(_batches(1)[0])
    want = net(x).asnumpy()
    gluon_hub.quantize(net, calib_data=_batches(1))
    np.testing.assert_array_equal(net(x).asnumpy(), want)


def test_int8_operators_lists_the_quantized_dense_layer(tmp_path):
    # MXNet marks a quantized fused convolution quantized="true" but a dense layer "True"
    net = _net()
    int8 = gluon_hub.quantize(net, calib_data=_batches(1))
    [dense] = [n for n in _graph_nodes(int8, tmp_path) if n["op"] == "_sg_mkldnn_fully_connected"]
    assert dense["attrs"]["quantized"] == "True"
    assert {"_sg_mkldnn_conv", "_sg_mkldnn_fully_connected"} <= set(int8_operators(int8))
    assert int8(mx.nd.array(_batches(1)[0])).asnumpy().shape == (4, 10)


def test_excluded_layers_and_operators_stay_float32(tmp_path):
    net = _net()
    int8 = gluon_hub.quantize(net, calib_data=_batches(1), exclude_operators=["FullyConnected"])
    [dense] = [n for n in _graph_nodes(int8, tmp_path) if "fully_connected" in n["op"].lower()]
    assert dense.get("attrs", {}).get("quantized", "").lower() != "true"  # float32 (fused or not)
    assert "_sg_mkldnn_fully_connected" not in int8_operators(int8)
    assert "_sg_mkldnn_conv" in int8_operators(int8)
    kept = int8.gluon_hub_float32_layers
    assert kept[net.output.name + "_fwd"] == "exclude_operators"
    assert [why for why in kept.values() if why.startswith("exclude")] == ["exclude_operators"]

    first = net.features[0].name + "_fwd"  # the stem convolution, by its symbol name
    int8 = gluon_hub.quantize(net, calib_data=_batches(1), exclude_layers=[first])
    stems = [n for n in _graph_nodes(int8, tmp_path / "second") if n["op"] == "_sg_mkldnn_conv"]
    assert "quantized" not in stems[0].get("attrs", {})  # float32, still fused
    kept = int8.gluon_hub_float32_layers
    assert kept[first] == "exclude_layers"
    assert [why for why in kept.values() if why.startswith("exclude")] == ["exclude_layers"]


def test_recorded_thresholds_replace_measured_ones(tmp_path):
    net = _net()
    layers = calibration_layers(net, _batches(1)[0])
    assert layers[0] == "data" and layers[1] == "sg_mkldnn_conv_bn_0_output"  # cifar_resnet20 stem: no ReLU
    int8 = gluon_hub.quantize(net, calib_data=_batches(1), calib_mode="none",
                              thresholds={layers[1]: (0.0, 1.5)})
    first = next(n for n in _graph_nodes(int8, tmp_path) if n["op"] == "_sg_mkldnn_conv")
    assert float(first["attrs"]["min_calib_range"]) == 0.0
    assert float(first["attrs"]["max_calib_range"]) == 1.5
    with pytest.raises(ValueError, match="thresholds name layers the graph does not have: no_such_output"):
        gluon_hub.quantize(net, calib_data=_batches(1), thresholds={"no_such_output": (0, 1)})


def test_a_block_with_two_inputs():
    class Two(mx.gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            self.a, self.b = mx.gluon.nn.Dense(8, in_units=6), mx.gluon.nn.Dense(8, in_units=6)

        def hybrid_forward(self, F, x, y):
            return F.relu(self.a(x)) + self.b(y)

    net = Two()
    net.initialize(mx.init.Xavier())
    rng = np.random.default_rng(0)
    calib = [(rng.random((4, 6), dtype=np.float32), rng.random((4, 6), dtype=np.float32)) for _ in range(2)]
    int8 = gluon_hub.quantize(net, calib_data=calib)
    x, y = map(mx.nd.array, calib[0])
    assert "_contrib_quantize_v2" in int8_operators(int8)  # both inputs reach the int8 graph
    got, want = int8(x, y).asnumpy(), net(x, y).asnumpy()
    assert np.abs(got - want).mean() < 0.1 * np.abs(want).mean()  # an untrained 6-unit layer: coarse


@pytest.mark.parametrize("mode", ["naive", "entropy", "none"])
def test_no_calibration_data_is_refused(mode):
    with pytest.raises(ValueError, match=rf"quantize\(calib_mode='{mode}'\) needs calib_data, an iterable of input batches"):
        gluon_hub.quantize(_net(), calib_mode=mode)


@pytest.mark.parametrize(("calib", "error", "message"), [
    ([], ValueError, "calib_data is empty; pass at least one batch"),
    (iter(()), ValueError, "calib_data is empty"),
    (np.zeros((4, 3, 32, 32), np.float32), TypeError, r"not one array; wrap it: calib_data=\[x\]"),
    (5, TypeError, "calib_data must be an iterable of input batches, got int"),
    (["images"], TypeError, "calibration batch 0 holds a str"),
    ([np.zeros(32, np.float32)], ValueError, r"batch 0 has shape \(32,\); a batch needs a batch axis"),
    ([np.zeros((4, 3, 32, 32), np.float32), np.zeros((4, 3, 16, 16), np.float32)], ValueError,
     r"calibration batch 1 has shape \(4, 3, 16, 16\), batch 0 \(4, 3, 32, 32\); all batches must have one shape"),
    ([np.zeros((4, 3, 32), np.float32)], ValueError,
     r"the calibration batches \(shape \(4, 3, 32\)\) do not fit the block: .*Input data should be 4D"),
])
def test_bad_calibration_data_is_refused(calib, error, message):
    with pytest.raises(error, match=message):
        gluon_hub.quantize(_net(), calib_data=calib)


def test_bad_mode_and_thresholds_with_entropy_are_refused():
    with pytest.raises(ValueError, match="calib_mode must be one of 'naive', 'entropy', 'none', got 'minmax'"):
        gluon_hub.quantize(_net(), calib_data=_batches(1), calib_mode="minmax")
    with pytest.raises(ValueError, match="use them with calib_mode='naive' or 'none'"):
        gluon_hub.quantize(_net(), calib_data=_batches(1), calib_mode="entropy", thresholds={"data": (0, 1)})


def test_inputs_or_parameters_off_the_cpu_are_refused():
    """``cpu_pinned`` is the one non-CPU context a CPU build has; a GPU is refused the same way."""
    batch = mx.nd.array(_batches(1)[0], ctx=mx.cpu_pinned())
    with pytest.raises(ValueError, match="calibration batch 0 is on cpu_pinned.*run on the CPU only"):
        gluon_hub.quantize(_net(), calib_data=[batch])
    net = gluon_hub.load("cifar_resnet20_v1", ctx=mx.cpu_pinned())
    with pytest.raises(ValueError, match=r"parameters are on cpu_pinned\(0\); move them with .*reset_ctx"):
        gluon_hub.quantize(net, calib_data=_batches(1))


def test_blocks_that_cannot_be_quantized_are_refused():
    plain = mx.gluon.nn.Sequential()
    plain.add(mx.gluon.nn.Dense(3, in_units=4))
    plain.initialize()
    with pytest.raises(TypeError, match="quantize needs a HybridBlock .*got Sequential"):
        gluon_hub.quantize(plain, calib_data=[np.ones((1, 4), np.float32)])
    never_initialised = mx.gluon.nn.HybridSequential()
    never_initialised.add(mx.gluon.nn.Dense(3, in_units=4))
    with pytest.raises(ValueError, match="parameters are not initialised .*call initialize"):
        gluon_hub.quantize(never_initialised, calib_data=[np.ones((1, 4), np.float32)])


class _GatedConv(mx.gluon.HybridBlock):
    """Two ReLU convolutions multiplied, as MobileNetV3's hard-swish and attention masks do."""

    def __init__(self):
        super().__init__()
        self.a = mx.gluon.nn.Conv2D(8, 3, in_channels=3, activation="relu")
        self.b = mx.gluon.nn.Conv2D(8, 3, in_channels=3, activation="relu")
        self.dense = mx.gluon.nn.Dense(4, in_units=8 * 6 * 6)

    def hybrid_forward(self, F, x):
        return self.dense(F.elemwise_mul(self.a(x), self.b(x)))


def test_a_multiplication_mxnet_cannot_run_in_int8_stays_float32_by_itself():
    # MXNet 1.9.1 quantizes elemwise_mul, but its int8 kernel takes int8 inputs only: on a
    # ReLU's uint8 output the graph builds and then fails when it runs
    net = _GatedConv()
    net.initialize(mx.init.Xavier())
    x = np.random.default_rng(0).random((2, 3, 8, 8), dtype=np.float32)
    int8 = gluon_hub.quantize(net, calib_data=[x])
    got, want = int8(mx.nd.array(x)).asnumpy(), net(mx.nd.array(x)).asnumpy()
    assert np.abs(got - want).max() < 0.1 * np.abs(want).max()  # untrained 8-channel layers: coarse
    [mul] = [n["name"] for n in json.loads(int8._cached_graph[1].tojson())["nodes"] if n["op"] == "elemwise_mul"]
    assert int8.gluon_hub_float32_layers == {
        mul: "excluded automatically: MXNet 1.9.1's int8 elemwise_mul takes int8 inputs only and fails "
             "at run time on a ReLU's uint8 output"}
    assert "_sg_mkldnn_conv" in int8_operators(int8)


class _GlobalPool(mx.gluon.HybridBlock):
    """A global average pool declared with a 7x7 kernel: float32 ignores the kernel, MXNet
    1.9.1's int8 pooling checks it against the input and fails when it runs."""

    def __init__(self):
        super().__init__()
        self.conv = mx.gluon.nn.Conv2D(8, 3, in_channels=3, activation="relu")
        self.dense = mx.gluon.nn.Dense(4, in_units=8)

    def hybrid_forward(self, F, x):
        return self.dense(F.Pooling(self.conv(x), kernel=(7, 7), global_pool=True, pool_type="avg"))


def test_an_int8_graph_that_mxnet_cannot_run_is_refused_with_the_fix():
    net = _GlobalPool()
    net.initialize(mx.init.Xavier())
    x = np.random.default_rng(0).random((2, 3, 6, 6), dtype=np.float32)
    with pytest.raises(RuntimeError, match=r"kernel size \(7\) exceeds input.*exclude_operators=\[\.\.\.\] "
                                           r"\(operator types, such as 'Pooling'\) or exclude_layers"):
        gluon_hub.quantize(net, calib_data=[x])
    int8 = gluon_hub.quantize(net, calib_data=[x], exclude_operators=["Pooling"])
    assert int8(mx.nd.array(x)).shape == (2, 4)
    assert int8.gluon_hub_float32_layers[net.prefix + "pooling0"] == "exclude_operators"


def test_an_int8_name_loaded_without_weights_runs_int8():
    """``load`` fills only what a factory left empty; an int8 model quantizes in its own
    ``initialize``, which ``load`` must call (it is no Gluon Block)."""
    net = gluon_hub.load("mobilenet1.0_int8")
    assert {"_contrib_quantize_v2", "_sg_mkldnn_conv"} <= set(int8_operators(net.int8))
    assert net(mx.nd.ones((1, 3, 224, 224))).shape == (1, 1000)
