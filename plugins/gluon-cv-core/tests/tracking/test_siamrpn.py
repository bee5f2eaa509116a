"""SiamRPN has GluonCV 0.10's parameters, loads its files, matches its outputs, and its tracker
gives GluonCV's ``SiamRPNTracker`` boxes frame for frame.

GluonCV (test-only reference) builds the network with random parameters and saves them; ours
loads them strictly. GluonCV's network fixes its batch and sizes at construction (``bz``,
``is_train``: 1 x 287 for tracking, ``bz`` x 255 for training); ours takes both at run time, so
each GluonCV configuration is compared with the same ours.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from cv_testlib.detection import assert_same, build_ours, running_stats, strictly_loaded
from cv_testlib.tracking import calibrate, pixels

import gluon_hub
from gluon_cv_core.tracking.models.siamrpn import feature_size
from gluon_cv_core.tracking.tracker import SiamRPNTracker, anchor_grid
from gluon_hub.compat import mx

import gluoncv  # noqa: E402  (test-only reference; after the compat shim)
from gluoncv.model_zoo.siamrpn.siamrpn_tracker import SiamRPNTracker as ReferenceTracker

pytestmark = pytest.mark.parity

NAME = "siamrpn_alexnet_v2_otb15"


def _reference(**kwargs):
    net = gluoncv.model_zoo.get_model(NAME, pretrained=False, **kwargs)
    batch, search = (kwargs["bz"], 255) if kwargs.get("is_train") else (1, 287)
    net(pixels((batch, 3, 127, 127), 0), pixels((batch, 3, search, search), 1))  # shapes known
    return net


@pytest.fixture(scope="module")
def params_file(tmp_path_factory) -> str:
    reference = _reference()
    calibrate(reference)
    path = str(tmp_path_factory.mktemp("siamrpn") / f"{NAME}.params")
    reference.save_parameters(path)
    return path


def _structure(net, search: int) -> dict[str, tuple[int, ...]]:
    """Structural parameter name -> shape, by symbolic shape inference over both inputs."""
    out = mx.sym.Group(list(net(mx.sym.var("template"), mx.sym.var("search"))))
    args, _, aux = out.infer_shape(template=(1, 3, 127, 127), search=(1, 3, search, search))
    shapes = {**dict(zip(out.list_arguments(), args)), **dict(zip(out.list_auxiliary_states(), aux))}
    return {k: tuple(shapes[p.name]) for k, p in net._collect_params_with_prefix().items()}


def test_registry_entry_names_gluoncvs_file_and_the_two_inputs() -> None:
    from gluoncv.model_zoo import model_store

    assert gluon_hub.list_models(plugin="cv", task="object-tracking") == [NAME]
    assert [n for n in gluoncv.model_zoo.get_model_list() if n.startswith("siamrpn")] == [NAME]
    spec = gluon_hub.info(NAME)
    sha1 = model_store._model_sha1[NAME]
    assert spec.weight().file.hash == f"sha1:{sha1}"
    assert spec.weight().file.filename == f"gluon/models/{NAME}-{sha1[:8]}.zip"
    assert spec.weight().file.extract == f"{NAME}-{sha1[:8]}.params"
    assert spec.input.shape == (3, 127, 127) and spec.extra_inputs[0].shape == (3, 287, 287)
    assert spec.output_shape == (10, 21, 21)
    # listing trackers imports no mxnet
    code = ("import sys, gluon_hub; gluon_hub.info('%s'); "
            "sys.exit('mxnet' in sys.modules)" % NAME)
    assert subprocess.run([sys.executable, "-c", code], timeout=120).returncode == 0


def test_parameter_names_shapes_and_count_match_gluoncv() -> None:
    ours = build_ours(NAME)
    for search in (287, 255):
        expected = _structure(gluoncv.model_zoo.get_model(NAME, pretrained=False), search)
        assert _structure(ours, search) == expected
    learnable = sum(int(np.prod(shape)) for key, shape in expected.items() if not key.endswith(("running_mean", "running_var")))
    assert learnable == gluon_hub.info(NAME).num_params == 6251102
    assert feature_size(127) == 6 and feature_size(287) == 26


def test_tracking_outputs_match_gluoncv_hybridized_and_not(params_file) -> None:
    reference = _reference()
    strictly_loaded(reference, params_file)
    ours = strictly_loaded(build_ours(NAME), params_file)
    z, x = pixels((1, 3, 127, 127), 2), pixels((1, 3, 287, 287), 3)
    expected = reference(z, x)
    reference.template(z)
    tracked = reference.track(x)
    for got in (ours(z, x), ours.track(x, ours.template(z))):
        for actual, want in zip(got, expected):
            assert actual.shape == want.shape
            assert_same(actual, want)
    assert_same(tracked["cls"], expected[0])
    ours.hybridize()
    for actual, want in zip(ours(z, x), expected):
        assert_same(actual, want)
    for actual, want in zip(ours.track(x, ours.template(z)), expected):
        assert_same(actual, want)
    with pytest.raises(ValueError, match="template features of shape"):  # from a 159x159 template
        strictly_loaded(build_ours(NAME), params_file).track(x, mx.nd.zeros((1, 256, 10, 10)))


def test_training_batch_matches_gluoncv_in_inference_and_training(params_file) -> None:
    """GluonCV's training configuration: a batch of 2, search crops of 255 (17x17 grid)."""
    reference = strictly_loaded(_reference(bz=2, is_train=True), params_file)
    ours = strictly_loaded(build_ours(NAME), params_file)
    z, x = pixels((2, 3, 127, 127), 5), pixels((2, 3, 255, 255), 6)
    expected = reference(z, x)
    assert expected[0].shape == (2, 10, 17, 17) and expected[1].shape == (2, 20, 17, 17)
    for actual, want in zip(ours(z, x), expected):
        assert_same(actual, want)
    results = []
    for net in (reference, ours):
        with mx.autograd.record(train_mode=True):
            cls, loc = net(z, x)
            loss = (cls * cls).mean() + (loc * mx.nd.arange(loc.size).reshape(loc.shape) / loc.size).sum()
        loss.backward()
        grads = {k: p.grad().asnumpy() for k, p in net._collect_params_with_prefix().items() if p.grad_req != "null"}
        results.append((cls, loc, grads, running_stats(net)))
    (rcls, rloc, rgrads, rstats), (ocls, oloc, ograds, ostats) = results
    assert_same(ocls, rcls)
    assert_same(oloc, rloc)
    assert sorted(ograds) == sorted(rgrads)
    for key in rgrads:
        scale = max(1.0, float(np.abs(rgrads[key]).max()))
        np.testing.assert_allclose(ograds[key], rgrads[key], rtol=1e-4, atol=1e-4 * scale, err_msg=key)
    for key in rstats:
        np.testing.assert_allclose(ostats[key], rstats[key], rtol=1e-5, atol=1e-5, err_msg=key)


def test_anchors_are_gluoncvs(params_file) -> None:
    reference = ReferenceTracker(None)
    ours = anchor_grid(21, 8, (0.33, 0.5, 1, 2, 3), (8,))
    np.testing.assert_array_equal(ours.T, reference.anchors)
    np.testing.assert_array_equal(SiamRPNTracker(None).window, reference.window)


def _frames(count: int) -> list[np.ndarray]:
    """A textured background with a coloured patch moving right and down; 60x80, so that the
    search crops leave the frame and are padded."""
    rng = np.random.RandomState(7)
    frames = []
    for k in range(count):
        frame = rng.randint(0, 90, (60, 80, 3)).astype(np.uint8)
        frame[10 + 2 * k:30 + 2 * k, 20 + 3 * k:44 + 3 * k] = (200, 120, 40)
        frames.append(frame)
    return frames


def test_tracker_gives_gluoncvs_boxes_frame_for_frame(params_file) -> None:
    reference = strictly_loaded(_reference(), params_file)
    ours = strictly_loaded(build_ours(NAME), params_file)
    ours.hybridize()
    frames = _frames(6)
    theirs = ReferenceTracker(reference)
    mine = SiamRPNTracker(ours)
    theirs.init(frames[0][:, :, ::-1], [20, 10, 24, 20], ctx=mx.cpu())  # GluonCV: BGR frames, x y w h
    start = mine.init(frames[0], (20, 10, 44, 30))  # ours: RGB frames, x0 y0 x1 y1
    assert start.box == (20, 10, 44, 30) and start.score == 1.0
    moved = []
    for frame in frames[1:]:
        want = theirs.track(frame[:, :, ::-1], ctx=mx.cpu())
        got = mine.update(frame)
        np.testing.assert_allclose(got.xywh, want["bbox"], rtol=1e-5, atol=1e-4)
        np.testing.assert_allclose(got.score, want["best_score"], rtol=1e-4)
        moved.append(got.box)
    assert len({tuple(np.round(b, 3)) for b in moved}) == len(moved)  # the boxes differ frame to frame


def test_tracker_refuses_bad_input() -> None:
    tracker = SiamRPNTracker(None)
    with pytest.raises(RuntimeError, match="call init"):
        tracker.update(np.zeros((8, 8, 3), np.uint8))
    with pytest.raises(ValueError, match="is empty"):
        tracker.init(np.zeros((8, 8, 3), np.uint8), (4, 4, 4, 6))
    with pytest.raises(ValueError, match="uint8 RGB"):
        tracker.init(np.zeros((8, 8), np.uint8), (1, 1, 4, 6))
