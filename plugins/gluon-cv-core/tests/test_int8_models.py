"""GluonCV's int8 names: registry entries that load float32 weights through the cache (from a
loopback mirror here) and run an int8 oneDNN graph with GluonCV's recorded ranges; the ranges
are the ones GluonCV's int8 symbol files record (checked against the files gluoncv ships)."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import http.server
import json
import threading
import types

import numpy as np
import pytest

import gluon_hub
from gluon_cv_core.common.int8_specs import recorded_ranges
from gluon_hub import FileRef, WeightVariant, hookimpl
from gluon_hub.compat import mx
from gluon_hub_deploy._quantize import _graph, int8_operators

pytestmark = pytest.mark.parity

INT8 = ["mobilenet1.0_int8", "resnet50_v1_int8", "ssd_300_vgg16_atrous_voc_int8",
        "ssd_512_mobilenet1.0_voc_int8", "ssd_512_resnet50_v1_voc_int8", "ssd_512_vgg16_atrous_voc_int8",
        "fcn_resnet101_voc_int8", "fcn_resnet101_coco_int8", "psp_resnet101_voc_int8", "psp_resnet101_coco_int8",
        "deeplab_resnet101_voc_int8", "deeplab_resnet101_coco_int8", "simple_pose_resnet18_v1b_int8",
        "simple_pose_resnet50_v1b_int8", "simple_pose_resnet50_v1d_int8", "simple_pose_resnet101_v1b_int8",
        "simple_pose_resnet101_v1d_int8", "vgg16_ucf101_int8", "inceptionv3_ucf101_int8",
        "resnet18_v1b_kinetics400_int8", "resnet50_v1b_kinetics400_int8", "inceptionv3_kinetics400_int8"]


def test_the_int8_names_are_all_of_gluoncvs():
    import gluoncv

    listed = {n for n in gluoncv.model_zoo.get_model_list() if n.endswith("_int8")}
    assert sorted(listed) == sorted(INT8)
    ours = gluon_hub.list_models("*_int8")
    assert sorted(ours) == sorted(INT8)
    for name in ours:
        spec, fp32 = gluon_hub.info(name), gluon_hub.info(name[: -len("_int8")])
        assert spec.weights[0].file == fp32.weights[0].file  # GluonCV's float32 file, same sha1
        assert spec.input == fp32.input and "int8" in spec.tags
        assert json.loads(json.dumps(spec.to_dict())) == spec.to_dict()


@pytest.fixture
def mirror(tmp_path, monkeypatch):
    """A loopback HTTP mirror of ``tmp_path/mirror`` (the cache's only source); yields the
    folder and the paths asked of the server."""
    folder = tmp_path / "mirror"
    folder.mkdir()
    asked: list[str] = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)
            asked.append(self.path)
            super().do_GET()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("GLUON_HUB_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GLUON_HUB_MIRRORS", f"http://127.0.0.1:{server.server_address[1]}/")
    monkeypatch.delenv("GLUON_HUB_OFFLINE", raising=False)
    try:
        yield folder, asked
    finally:
        server.shutdown()
        server.server_close()


def _published(name, folder):
    """The int8 entry ``name`` as a plugin 'mirrored' registers it, its weights being a float32
    file of the float32 model (random weights) in the mirror; returns the qualified name and
    the float32 model with those weights."""
    spec = gluon_hub.info(name)
    fp32 = gluon_hub.load(spec.kwargs["fp32"])
    if spec.task == "image-classification":  # He weights keep a deep net's outputs far from zero
        fp32.initialize(mx.init.Xavier(rnd_type="gaussian", factor_type="in", magnitude=2), force_reinit=True)
    fp32(mx.nd.ones((1, *spec.input.shape)))  # shapes the deferred parameters
    path = folder / f"{spec.kwargs['fp32']}.params"
    fp32.save_parameters(str(path))
    file = FileRef(hash=f"sha256:{hashlib.sha256(path.read_bytes()).hexdigest()}", filename=path.name)
    mirrored = dataclasses.replace(spec, plugin="", weights=(WeightVariant(tag=spec.weights[0].tag, file=file),))
    plugin = types.SimpleNamespace(GLUON_HUB_API=">=1,<2", gluon_hub_models=hookimpl(lambda: [mirrored]))
    gluon_hub.register_plugin(plugin, "mirrored")
    return f"mirrored/{name}", fp32


@pytest.fixture
def registered():
    yield
    with contextlib.suppress(gluon_hub.PluginError):  # the test may fail before registering
        gluon_hub.unregister_plugin("mirrored")


def _calibrated(net, tmp_path):
    """Layer output name -> (min, max) written into the int8 graph."""
    net.export(str(tmp_path / "int8"))
    nodes = json.loads((tmp_path / "int8-symbol.json").read_text())["nodes"]
    return {f"{n['name'][len('quantized_'):]}_output": (float(n["attrs"]["min_calib_range"]),
                                                        float(n["attrs"]["max_calib_range"]))
            for n in nodes if n["op"] == "_sg_mkldnn_conv" and "min_calib_range" in n.get("attrs", {})}


def _same_ranges(a, b):
    return a.keys() == b.keys() and all(np.allclose(a[k], b[k], rtol=1e-6) for k in a)


@pytest.mark.parametrize("name", ["mobilenet1.0_int8", "ssd_512_mobilenet1.0_voc_int8"])
def test_pretrained_int8_entry_runs_int8_with_the_recorded_ranges(name, mirror, registered, tmp_path):
    folder, asked = mirror
    qualified, _ = _published(name, folder)
    net = gluon_hub.load(qualified, pretrained=True)
    assert asked == [f"/{gluon_hub.info(qualified).kwargs['fp32']}.params"]
    assert {"_contrib_quantize_v2", "_sg_mkldnn_conv"} <= set(int8_operators(net.int8))
    assert "_sg_mkldnn_fully_connected" not in int8_operators(net.int8)  # a classifier's dense: float32
    recorded = recorded_ranges(gluon_hub.info(qualified).kwargs["fp32"])
    assert _same_ranges(_calibrated(net, tmp_path), recorded)  # every conv, GluonCV's range
    side = gluon_hub.info(qualified).input.shape[-1]
    out = net(mx.nd.ones((1, 3, side, side)))
    if name.startswith("ssd"):
        assert [o.shape for o in out] == [(1, 100, 1), (1, 100, 1), (1, 100, 4)]
        assert net.classes == gluon_hub.load(gluon_hub.info(qualified).kwargs["fp32"]).classes
    else:
        assert out.shape == (1, 1000)


def test_calib_data_calibrates_on_the_users_batches_instead(mirror, registered, tmp_path):
    folder, _ = mirror
    qualified, fp32 = _published("mobilenet1.0_int8", folder)
    rng = np.random.default_rng(0)
    calib = [rng.random((2, 3, 224, 224), dtype=np.float32) for _ in range(2)]
    net = gluon_hub.load(qualified, pretrained=True, calib_data=calib)
    ranges = _calibrated(net, tmp_path)
    recorded = recorded_ranges("mobilenet1.0")
    assert set(ranges) == set(recorded) and not _same_ranges(ranges, recorded)  # measured
    x = mx.nd.array(calib[0])
    got, want = net(x).asnumpy(), fp32(x).asnumpy()
    assert np.abs(got - want).mean() < 0.1 * np.abs(want).mean()


def test_int8_entries_refuse_a_mode_without_data_and_a_gpu_context():
    with pytest.raises(gluon_hub.ModelBuildError, match="calib_mode='entropy' needs calib_data"):
        gluon_hub.load("mobilenet1.0_int8", calib_mode="entropy")
    with pytest.raises(gluon_hub.ModelBuildError, match="int8 models run on the CPU only .* cpu_pinned"):
        gluon_hub.load("mobilenet1.0_int8", ctx=mx.cpu_pinned())


def _gluoncv_symbol(name):
    """The text of GluonCV's int8 symbol file of ``name``: shipped as a file, or compressed in
    ``quantized.py`` (segmentation, pose and video)."""
    import os

    from gluoncv.model_zoo.quantized import quantized
    from gluoncv.utils.compress_json import decode_b64

    if name in quantized._compressed_int8_json:
        return decode_b64(quantized._compressed_int8_json[name])
    with open(os.path.join(os.path.dirname(quantized.__file__), f"{name}-symbol.json"), encoding="utf-8") as fh:
        return fh.read()


def test_recorded_ranges_and_segments_are_those_of_gluoncvs_symbol_files():
    from gluon_cv_core.common.int8_specs import _recorded

    for name in INT8:
        text, recorded = _gluoncv_symbol(name), _recorded()[name]
        assert hashlib.sha1(text.encode("utf-8")).hexdigest() == recorded["symbol_sha1"], name
        nodes = json.loads(text)["nodes"]
        theirs = {n["name"][len("quantized_sg_mkldnn_conv_"):]: [float(n["attrs"]["min_calib_range"]),
                                                                  float(n["attrs"]["max_calib_range"])]
                  for n in nodes if n["op"] == "_sg_mkldnn_conv"}
        if "compressed_in" in recorded:  # named as MXNet 1.9.1 names our graphs' layers, as GluonCV's were
            assert recorded["ranges"] == theirs, name
        else:  # older files, older names (bn_relu_0 ...): the same ranges, to float32 precision
            assert np.allclose(sorted(recorded["ranges"].values()), sorted(theirs.values()), rtol=1e-6), name
        spec = gluon_hub.info(name)
        reshapes = [n["attrs"]["shape"] for n in nodes if n["op"] == "Reshape"]
        if spec.task == "action-recognition":  # TSN: (-1, segments, features), averaged
            assert spec.kwargs["num_segments"] == int(reshapes[0].strip("()").split(",")[1]), name
            assert spec.kwargs["exclude_operators"] == ["FullyConnected"]
        float32_dense = any(n["op"] in ("FullyConnected", "_sg_mkldnn_fully_connected")
                            and n.get("attrs", {}).get("quantized") != "true" for n in nodes)
        assert float32_dense == (spec.kwargs["exclude_operators"] == ["FullyConnected"]), name


def _fused_convs(net, x):
    """MXNet's oneDNN partition of ``net``: fused conv key -> (the float32 node giving its output,
    the parameter that scales it: the BatchNorm's gamma, or the weight of a convolution
    without one), keys as in ``int8_ranges.json``."""
    symbol, _ = _graph(mx, net, [x])
    fused = {}
    for node in json.loads(symbol.get_backend_symbol("MKLDNN_QUANTIZE").tojson())["nodes"]:
        if node["op"] == "_sg_mkldnn_conv":
            graph = node["subgraphs"][0]
            inner = {n["op"]: n["name"] for n in graph["nodes"]}
            scaled = (inner["BatchNorm"].replace("_fwd", "_gamma") if "BatchNorm" in inner
                      else inner["Convolution"].replace("_fwd", "_weight"))
            fused[node["name"][len("sg_mkldnn_conv_"):]] = (graph["nodes"][graph["heads"][0][0]]["name"], scaled)
    return fused, symbol


def _fit_to_recorded(net, x, recorded):
    """Random weights that GluonCV's recorded ranges describe, as trained weights are: layer by
    layer in graph order, the scale of each fused convolution (its BatchNorm's gamma, or its
    weight) set so that its output on ``x`` reaches half the recorded range."""
    fused, symbol = _fused_convs(net, x)
    params = net.collect_params()
    internals = symbol.get_internals()
    probe = mx.gluon.SymbolBlock(mx.sym.Group([internals[f"{out}_output"] for out, _ in fused.values()]),
                                 mx.sym.var("data"), params=params)
    for index, (key, (_, scaled)) in enumerate(fused.items()):
        factor = max(map(abs, recorded[key])) / 2 / probe(x)[index].abs().max().asscalar()
        bias = scaled.replace("_weight", "_bias")  # a convolution's bias scales with its weight
        for name in [scaled] + ([bias] if scaled.endswith("_weight") and bias in params else []):
            params[name].set_data(params[name].data() * factor)


NEW_FAMILIES = {  # one per family of the compressed symbol files, at a small input
    "fcn_resnet101_voc_int8": (1, 3, 32, 32),
    "simple_pose_resnet18_v1b_int8": (1, 3, 64, 64),
    "resnet18_v1b_kinetics400_int8": (7, 3, 32, 32),  # one video: its 7 segments' frames
}


@pytest.mark.parametrize("name", NEW_FAMILIES)
def test_segmentation_pose_and_video_int8_entries_run_near_float32(name, mirror, registered, tmp_path):
    folder, asked = mirror
    spec, shape = gluon_hub.info(name), NEW_FAMILIES[name]
    x = mx.nd.array(np.random.default_rng(0).standard_normal(shape, dtype=np.float32))
    recorded = recorded_ranges(spec.kwargs["fp32"])
    fp32 = gluon_hub.load(spec.kwargs["fp32"], **{k: v for k, v in spec.kwargs.items() if k == "num_segments"})
    _fit_to_recorded(fp32, x, {k[len("sg_mkldnn_conv_"):-len("_output")]: v for k, v in recorded.items()})
    path = folder / f"{spec.kwargs['fp32']}.params"
    fp32.save_parameters(str(path))
    file = FileRef(hash=f"sha256:{hashlib.sha256(path.read_bytes()).hexdigest()}", filename=path.name)
    small = dataclasses.replace(spec, plugin="", kwargs={**spec.kwargs, "input_shape": list(shape[1:])},
                                weights=(WeightVariant(tag=spec.weights[0].tag, file=file),))
    plugin = types.SimpleNamespace(GLUON_HUB_API=">=1,<2", gluon_hub_models=hookimpl(lambda: [small]))
    gluon_hub.register_plugin(plugin, "mirrored")

    net = gluon_hub.load(f"mirrored/{name}", pretrained=True)
    assert asked == [f"/{path.name}"]
    assert {"_contrib_quantize_v2", "_sg_mkldnn_conv"} <= set(int8_operators(net.int8))
    assert "_sg_mkldnn_fully_connected" not in int8_operators(net.int8)  # video: dense layers float32
    assert _same_ranges(_calibrated(net, tmp_path), recorded)  # every conv, GluonCV's range
    got, want = net(x), fp32(x)
    if spec.task == "semantic-segmentation":  # (prediction, auxiliary prediction), both int8
        assert [o.shape for o in got] == [o.shape for o in want] == [(1, 21, 32, 32)] * 2
    else:
        got, want = [got], [want]
        assert got[0].shape == want[0].shape == {"pose-estimation": (1, 17, 16, 16)}.get(spec.task, (1, 400))
    for g, w in zip(got, want):
        g, w = g.asnumpy(), w.asnumpy()
        assert np.abs(g - w).mean() < 0.1 * np.abs(w).mean()
        assert (g.argmax(1) == w.argmax(1)).mean() > 0.8


def test_an_int8_video_model_given_frames_of_part_of_a_video_says_so_instead_of_dying():
    """oneDNN's int8 graph of a TSN entry divides the batch by its segments: 1 frame of a
    7-segment model killed the process with SIGFPE. Run apart, so that a crash fails only this."""
    import subprocess
    import sys

    script = (
        "import numpy as np, gluon_hub\n"
        "from gluon_hub.compat import mx\n"
        "net = gluon_hub.load('resnet18_v1b_kinetics400_int8', input_shape=[3, 32, 32])\n"
        "net.initialize()\n"
        "print(net(mx.nd.array(np.ones((14, 3, 32, 32), np.float32))).shape)\n"
        "net(mx.nd.array(np.ones((1, 3, 32, 32), np.float32)))\n"
    )
    child = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert child.stdout.strip() == "(2, 400)"  # two videos of seven frames each
    assert child.returncode == 1, child.stderr[-2000:]
    assert ("ValueError: this int8 video model averages 7 frames per video, so its input is (videos * 7, 3, 32, "
            "32); got 1 frames") in child.stderr
