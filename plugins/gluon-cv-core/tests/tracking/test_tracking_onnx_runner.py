"""The ONNX runner of the SiamRPN tracker (``gluon_hub.runtime.load``) against the MXNet tracker of
``gluon-hub predict``, with seeded random weights exported from the same network, on generated
videos of a moving square. Both run the same numpy loop (:mod:`gluon_cv_core.tracking.loop`); what
differs is the network's runtime and the crops' resize, so:

* a crop that shrinks is the MXNet tracker's to the bit; one that is enlarged (a small target)
  differs by one grey level in under 1% of its pixels (OpenCV's enlarging path rounds otherwise);
* per-frame boxes agree within 1e-3 pixels and scores within 1e-5, crops enlarged or shrunk (the
  differences seen are under 1e-4 pixels and 2e-7);
* ``--json`` of both runtimes agrees through the real CLI, the ONNX one without importing MXNet.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from cv_testlib.cli import hub_json
from cv_testlib.detection import build_ours
from cv_testlib.tracking import calibrate
from cv_testlib.video import square_at, write_square_video

import gluon_hub
import gluon_hub.runtime
from gluon_cv_core.tracking.predict import read_frames
from gluon_cv_core.tracking.tracker import SiamRPNTracker
from gluon_hub.cli import main as hub_main
from gluon_hub.compat import mx

pytestmark = pytest.mark.portability

NAME = "siamrpn_alexnet_v2_otb15"
CROPS = [(1, 3, 127, 127), (1, 3, 287, 287)]  # template, search
#: video -> (frame side, square side): a small target (crops enlarged) and a large one (crops shrunk)
VIDEOS = {"small": (64, 14), "large": (160, 72)}
ORANGE = (240, 140, 30)  # a colour, so that swapped channels would show
FRAMES = 8


@pytest.fixture(scope="module")
def videos(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("videos")
    return {key: write_square_video(folder / f"{key}.avi", FRAMES, side, size, ORANGE)
            for key, (side, size) in VIDEOS.items()}


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> tuple[object, Path, Path]:
    """SiamRPN with seeded random weights, calibrated to spread its scores and offsets: the network,
    its .params and its ONNX file."""
    folder = tmp_path_factory.mktemp("onnx")
    net = build_ours(NAME)
    net.initialize()
    net(*[mx.nd.zeros(shape) for shape in CROPS])
    calibrate(net, seed=3)
    params, onnx_file = folder / "siamrpn.params", folder / "siamrpn.onnx"
    net.save_parameters(str(params))
    files = gluon_hub.export(NAME, onnx_file, format="onnx", pretrained=str(params))
    assert [f.name for f in files] == ["siamrpn-template.onnx", "siamrpn-search.onnx"]
    net.hybridize(static_alloc=True, static_shape=True)
    return net, params, onnx_file


def _first_box(key: str) -> tuple[int, int, int, int]:
    return square_at(0, VIDEOS[key][1])


def test_crops_are_the_mxnet_trackers(exported, videos):
    net, _, onnx_file = exported
    runner = gluon_hub.runtime.load(NAME, onnx_file)
    assert type(runner).__name__ == "ObjectTracker" and runner.session.provider == "CPUExecutionProvider"
    mxnet_tracker = SiamRPNTracker(net)
    for key in VIDEOS:
        frame = next(read_frames(str(videos[key])))
        for tracker in (runner, mxnet_tracker):
            tracker.init(frame, _first_box(key))
        bgr = frame[:, :, ::-1]
        for out_size in (127, 287):
            for side in (30, 63, 127, 200, 287, 330):
                patch = runner.patch(bgr, side)
                np.testing.assert_array_equal(patch, mxnet_tracker.patch(bgr, side))
                got, want = runner.network_input(patch, out_size), mxnet_tracker.network_input(patch, out_size)
                assert got.shape == (1, 3, out_size, out_size) and got.dtype == np.float32
                want = want.asnumpy()
                if side >= out_size:
                    np.testing.assert_array_equal(got, want)
                else:
                    assert np.abs(got - want).max() <= 1 and np.mean(got != want) < 0.01, (side, out_size)


@pytest.mark.parametrize("key", list(VIDEOS))
def test_boxes_are_the_mxnet_trackers_frame_for_frame(exported, videos, key):
    net, _, onnx_file = exported
    frames = list(read_frames(str(videos[key])))
    mxnet_tracker = SiamRPNTracker(net)
    want = [mxnet_tracker.init(frames[0], _first_box(key))] + [mxnet_tracker.update(f) for f in frames[1:]]
    got = list(gluon_hub.runtime.load(NAME, onnx_file).track(videos[key], _first_box(key)))
    assert len(got) == len(want) == FRAMES
    assert got[0] == want[0]
    for g, w in zip(got[1:], want[1:]):
        np.testing.assert_allclose(g.box, w.box, rtol=0, atol=1e-3)
        assert abs(g.score - w.score) <= 1e-5
    # the random network moves and resizes the box: the frames test the loop, not a clamp
    assert len({tuple(np.round(w.box, 1)) for w in want}) == FRAMES
    assert len({tuple(np.round(np.subtract(w.box[2:], w.box[:2]), 1)) for w in want}) > 2


def test_cli_json_is_the_same_for_both_runtimes(exported, videos):
    _, params, onnx_file = exported
    video = str(videos["small"])
    common = ("predict", NAME, video, "--box", *map(str, _first_box("small")), "--json")
    by_mxnet = hub_json(*common, "--params", str(params))
    by_onnx = hub_json(*common, "--runtime", "onnx", "--model-file", str(onnx_file), check_no_mxnet=True)
    assert [r["frame"] for r in by_onnx] == [r["frame"] for r in by_mxnet] == list(range(FRAMES))
    for want, got in zip(by_mxnet, by_onnx):
        assert set(got) == set(want) == {"video", "frame", "box", "score"} and got["video"] == want["video"] == video
        np.testing.assert_allclose(got["box"], want["box"], rtol=0, atol=1e-3 + 0.01)  # printed to 0.01
        assert abs(got["score"] - want["score"]) <= 1e-5


def test_the_template_runs_once_per_object(exported, videos):
    """The template graph runs at ``init`` only; each frame runs the search graph alone, against
    the template's features, as the MXNet tracker does."""
    runner = gluon_hub.runtime.load(NAME, exported[2])
    calls = {"template": 0, "search": 0}
    for graph, session in (("template", runner.template_session), ("search", runner.search_session)):
        def counted(*arrays, _run=session.run, _graph=graph):
            calls[_graph] += 1
            return _run(*arrays)
        session.run = counted
    assert len(list(runner.track(videos["small"], _first_box("small")))) == FRAMES
    assert calls == {"template": 1, "search": FRAMES - 1}


def test_files_of_another_model_or_an_old_single_graph_are_refused_saying_what_to_do(exported, tmp_path):
    net = exported[0]
    whole = tmp_path / "whole.onnx"  # the network as one graph (both crops), as exported before
    gluon_hub.export(net, whole, format="onnx", input_shape=CROPS)
    with pytest.raises(FileNotFoundError, match=r"runs as the graphs template, search, but .*whole-template.onnx, "
                       r".*whole-search.onnx are missing; gluon_hub.export\('siamrpn_alexnet_v2_otb15'"):
        gluon_hub.runtime.load(NAME, whole)
    swapped = tmp_path / "swapped.onnx"
    for graph, source in (("template", "search"), ("search", "template")):
        (tmp_path / f"swapped-{graph}.onnx").write_bytes(exported[2].with_name(f"siamrpn-{source}.onnx").read_bytes())
    with pytest.raises(ValueError, match=r"feeds a template crop \(1, 3, 127, 127\), then its features \(1, 256, 6, "
                       r"6\) with a search crop \(1, 3, 287, 287\).*gluon_hub.export\('siamrpn_alexnet_v2_otb15'"):
        gluon_hub.runtime.load(NAME, swapped)


def test_cli_errors_say_what_to_do(exported, videos, capsys):
    onnx = ["--runtime", "onnx", "--model-file", str(exported[2])]
    assert hub_main(["predict", NAME, str(videos["small"]), *onnx]) != 0
    assert "give its box in the first frame with --box X0 Y0 X1 Y1" in capsys.readouterr().err
    assert hub_main(["predict", NAME, str(videos["small"]), *onnx, "--box", "1", "1", "9", "9", "--params", "x"]) != 0
    assert "--params apply to the MXNet runtime" in capsys.readouterr().err
    assert hub_main(["predict", NAME, str(videos["small"]), *onnx, "--box", "50", "50", "90", "60"]) != 0
    assert "not a box inside the first frame" in capsys.readouterr().err


def test_export_graphs_trace_at_the_template_shape_or_both_crops():
    """``siamrpn_graphs`` takes the template crops' shape (the search crop then 287 x 287), or
    both crops' shapes; a template of another side than the network's is refused."""
    from gluon_cv_core.tracking.export_graphs import siamrpn_graphs

    net = build_ours(NAME)
    template, search = siamrpn_graphs(net)
    assert (template.name, search.name) == ("template", "search")
    assert template.input_shapes == ((1, 3, 127, 127),)
    assert search.input_shapes == ((1, 256, 6, 6), (1, 3, 287, 287))
    assert search.dynamic_shapes == ((None, 256, 6, 6), (None, 3, None, None))
    _, search = siamrpn_graphs(net, [(2, 3, 127, 127), (2, 3, 255, 255)])
    assert search.input_shapes == ((2, 256, 6, 6), (2, 3, 255, 255))
    with pytest.raises(ValueError, match=r"SiamRPN exports at \(template, search\) crop shapes \(\(N, 3, 127, 127\), "
                       r"\(N, 3, S, S\)\), got \[\(1, 3, 255, 255\)\]"):
        siamrpn_graphs(net, (1, 3, 255, 255))
