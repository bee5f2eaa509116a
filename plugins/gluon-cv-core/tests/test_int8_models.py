"""GluonCV's int8 names: registry entries that load float32 weights through the cache (from a
loopback mirror here) and run an int8 oneDNN graph with GluonCV's recorded ranges."""

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
from gluon_hub import FileRef, WeightVariant, hookimpl
from gluon_hub._quantize import int8_operators
from gluon_hub.compat import mx
from gluon_cv_core._int8_specs import recorded_ranges

INT8 = ["mobilenet1.0_int8", "resnet50_v1_int8", "ssd_300_vgg16_atrous_voc_int8",
        "ssd_512_mobilenet1.0_voc_int8", "ssd_512_resnet50_v1_voc_int8", "ssd_512_vgg16_atrous_voc_int8"]


def test_the_int8_names_are_gluoncvs_classification_and_ssd_ones():
    import gluoncv

    listed = {n for n in gluoncv.model_zoo.get_model_list() if n.endswith("_int8")}
    assert set(INT8) <= listed
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
