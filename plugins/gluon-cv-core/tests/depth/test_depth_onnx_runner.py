"""The ONNX runner of Monodepth2 (``gluon_hub.runtime.load``) against the MXNet path of ``gluon-hub
predict``: the same network input, disparity and depth maps at image size, the same colour picture,
the same pose-network motion, and the same ``--json`` through the real CLI without importing MXNet.

Weights are He-initialised with the disparity heads scaled as trained ones are
(:func:`scale_disparity_heads`: logits within 10), so the comparison sees the sigmoid's working
range rather than its float32 rounding at saturation.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from cv_testlib.cli import hub_json
from cv_testlib.exported import identity_onnx
from matplotlib import cbook
from PIL import Image

import gluon_hub
import gluon_hub.runtime
from gluon_cv_core.depth.models.monodepth2 import scale_disparity_heads
from gluon_cv_core.depth.predict import _model_input, _open_rgb, _pose, colorize, predict_depth
from gluon_hub.compat import mx

pytestmark = pytest.mark.portability

PHOTO = Path(cbook.get_sample_data("grace_hopper.jpg", asfileobj=False))  # 600 x 512
DEPTH, POSE = "monodepth2_resnet18_kitti_stereo_640x192", "monodepth2_resnet18_posenet_kitti_mono_640x192"
#: the disparity's tolerance, of its largest value: the network's float32 differences (measured 8e-6
#: here, 1.1e-5 in the deploy plugin's export test); depths, their inverses, within RTOL of themselves
#: (measured 2.4e-5)
SCALE_TOL, RTOL = 3e-5, 1e-4


@pytest.fixture(scope="module")
def images(tmp_path_factory) -> list[str]:
    """Two crops of the photograph, of sizes other than the model's (they are resized to 640x192)."""
    folder = tmp_path_factory.mktemp("images")
    photo = np.asarray(Image.open(PHOTO).convert("RGB"))
    Image.fromarray(photo[40:190, 100:301]).save(folder / "face.png")
    Image.fromarray(photo[300:380, 0:112]).save(folder / "desk.png")
    return [str(folder / "face.png"), str(folder / "desk.png")]


def _export(name: str, folder: Path, channels: int) -> tuple[object, Path, Path]:
    """``name`` with seeded He weights (disparity heads scaled for a depth network), saved as
    .params and exported to ONNX at the spec's input size."""
    mx.random.seed(0)
    net = gluon_hub.load(name)
    net.initialize(mx.init.Xavier(rnd_type="gaussian", factor_type="in", magnitude=2), force_reinit=True)
    shape = (1, channels, 192, 640)
    x = np.random.default_rng(0).uniform(size=shape).astype(np.float32)
    net(mx.nd.array(x))  # deferred shapes
    if channels == 3:
        scale_disparity_heads(net, x)
    params, onnx_file = folder / f"{name}.params", folder / f"{name}.onnx"
    net.save_parameters(str(params))
    gluon_hub.export(net, onnx_file, format="onnx", input_shape=shape)
    return net, params, onnx_file


@pytest.fixture(scope="module")
def depth_model(tmp_path_factory) -> tuple[object, Path, Path]:
    return _export(DEPTH, tmp_path_factory.mktemp("depth"), 3)


def test_runner_input_maps_and_picture_are_mxnets(depth_model, images, tmp_path):
    net, _, onnx_file = depth_model
    runner = gluon_hub.runtime.load(DEPTH, onnx_file)
    assert type(runner).__name__ == "DepthEstimator" and runner.session.provider == "CPUExecutionProvider"
    spec = gluon_hub.info(DEPTH)
    np.testing.assert_array_equal(runner.to_input(images[0])[None],
                                  _model_input(_open_rgb(images[0]), spec, mx.cpu()).asnumpy())
    want = predict_depth(net, spec, images)
    got = runner.estimate(images)
    for path, expected, (picture, result) in zip(images, want, got):
        np.testing.assert_array_equal(picture, np.asarray(Image.open(path).convert("RGB")))
        assert result.depth.shape == expected.depth.shape == picture.shape[:2] and result.metric
        assert expected.disparity.std() > 1e-3 * expected.disparity.mean()  # a map, not a saturated constant
        np.testing.assert_allclose(result.disparity, expected.disparity, rtol=0,
                                   atol=SCALE_TOL * expected.disparity.max())
        np.testing.assert_allclose(result.depth, expected.depth, rtol=RTOL)
    runner.draw(got[0][1], str(tmp_path / "onnx.png"))
    drawn = np.asarray(Image.open(tmp_path / "onnx.png")).astype(np.int64)
    # one colour level where a pixel sits on a rounding boundary of the 8-bit scale
    assert np.abs(drawn - colorize(want[0].disparity)).max() <= 1


def test_cli_json_and_picture_are_the_same_for_both_runtimes(depth_model, images, tmp_path):
    _, params, onnx_file = depth_model
    pictures = {which: tmp_path / f"{which}.png" for which in ("mxnet", "onnx")}
    want = hub_json("predict", DEPTH, images[0], "--params", str(params), "--json", "--out", str(pictures["mxnet"]))
    got = hub_json("predict", DEPTH, images[0], "--runtime", "onnx", "--model-file", str(onnx_file), "--json",
                   "--out", str(pictures["onnx"]), check_no_mxnet=True)
    assert len(got) == len(want) == 1 and set(got[0]) == set(want[0]) == {"image", "width", "height", "depth"}
    assert {k: v for k, v in got[0].items() if k != "depth"} == {k: v for k, v in want[0].items() if k != "depth"}
    assert got[0]["depth"]["unit"] == want[0]["depth"]["unit"] == "m"
    for key in ("min", "median", "max"):
        assert got[0]["depth"][key] == pytest.approx(want[0]["depth"][key], rel=RTOL), key
    drawn = [np.asarray(Image.open(p)).astype(np.int64) for p in pictures.values()]
    assert np.abs(drawn[0] - drawn[1]).max() <= 1
    both = hub_json("predict", DEPTH, *images, "--runtime", "onnx", "--model-file", str(onnx_file), "--json",
                    check_no_mxnet=True)
    assert [line["image"] for line in both] == images and both[0]["depth"] == got[0]["depth"]


def test_pose_network_motion_is_mxnets(images, tmp_path):
    net, params, onnx_file = _export(POSE, tmp_path, 6)
    runner = gluon_hub.runtime.load(POSE, onnx_file)
    want = _pose(net, gluon_hub.info(POSE), images, mx.cpu())
    got = runner.motion(*images)
    assert got["frames"] == want["frames"] == images
    for key in ("axisangle", "translation"):
        np.testing.assert_allclose(got[key], want[key], rtol=1e-4, atol=1e-6 * np.abs(want[key]).max())
    cli = hub_json("predict", POSE, *images, "--runtime", "onnx", "--model-file", str(onnx_file), "--json",
                   check_no_mxnet=True)
    assert cli == [got]
    with pytest.raises(ValueError, match="pose network: call motion"):
        runner.estimate(images[:1])


def test_wrong_files_and_options_say_what_to_do(depth_model, images, tmp_path):
    _, _, onnx_file = depth_model
    other = identity_onnx(tmp_path / "other.onnx", ("batch", 3, 192, 320))
    with pytest.raises(ValueError, match=r"other\.onnx' takes data \('batch', 3, 192, 320\), but 'cv/monodepth2_\w+' "
                       r"feeds \(batch, 3, 192, 640\): the file was exported from another model or for another "
                       r"input size; export it again with gluon_hub\.export\('monodepth2_"):
        gluon_hub.runtime.load(DEPTH, other)
    runner = gluon_hub.runtime.load(DEPTH, onnx_file)
    with pytest.raises(ValueError, match="call estimate"):
        runner.motion(*images)
    with pytest.raises(ValueError, match="HWC uint8 RGB"):
        runner.to_input(np.zeros((10, 10), np.uint8))
    with pytest.raises(ValueError, match="apply to the MXNet runtime"):
        from gluon_cv_core.predict import main
        main([DEPTH, images[0], "--runtime", "onnx", "--model-file", str(onnx_file), "--random-weights"])
