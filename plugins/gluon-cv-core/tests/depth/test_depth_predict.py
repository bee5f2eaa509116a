"""``gluon-hub predict`` with Monodepth2: the depth summary, the colour map, GluonCV's demo numbers."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from cv_testlib.detection import randomize
from PIL import Image

from gluon_cv_core.depth.predict import colorize
from gluon_cv_core.predict import main as predict_main
from gluon_hub.cli import main as hub_main
from gluon_hub.compat import mx

import gluoncv  # noqa: F401  (test-only reference; after the compat shim)

MODEL = "monodepth2_resnet18_kitti_stereo_640x192"
POSE = "monodepth2_resnet18_posenet_kitti_mono_640x192"


@pytest.fixture(scope="module")
def photo(tmp_path_factory) -> Path:
    """A real photograph shipped with matplotlib, made small (an odd size) to keep the test quick."""
    import matplotlib

    source = Path(matplotlib.get_data_path()) / "sample_data" / "grace_hopper.jpg"
    path = tmp_path_factory.mktemp("photo") / "hopper.jpg"
    Image.open(source).convert("RGB").resize((101, 87), Image.BILINEAR).save(path, quality=95)
    return path


def test_random_weights_print_the_depth_range_and_write_the_colour_map(photo, tmp_path, capsys) -> None:
    out = tmp_path / "depth.png"
    assert hub_main(["predict", MODEL, str(photo), "--random-weights", "--json", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "RANDOM" in captured.err
    result = json.loads(captured.out)
    assert (result["image"], result["width"], result["height"]) == (str(photo), 101, 87)
    depth = result["depth"]
    assert depth["unit"] == "m"  # a stereo-trained model: metres after the 5.4 factor
    assert 1e-3 <= depth["min"] < depth["median"] < depth["max"] <= 80
    drawn = np.asarray(Image.open(out))
    assert drawn.shape == (87, 101, 3) and drawn.dtype == np.uint8
    assert len(np.unique(drawn.reshape(-1, 3), axis=0)) > 20  # a map, not a flat colour


def test_depth_equals_gluoncvs_demo_with_the_same_weights(photo, tmp_path, capsys) -> None:
    import cv2

    from gluoncv.model_zoo.monodepthv2.layers import disp_to_depth

    reference = gluoncv.model_zoo.get_model(MODEL, pretrained=False, pretrained_base=False)
    image = Image.open(photo).convert("RGB")
    x = mx.nd.array(np.asarray(image.resize((640, 192), Image.LANCZOS), np.float32).transpose(2, 0, 1)[None] / 255)
    reference(x)
    randomize(reference, seed=5)
    params = tmp_path / "gluoncv.params"
    reference.save_parameters(str(params))
    # GluonCV's scripts/depth/demo.py, for a model trained with stereo pairs
    disp, _ = disp_to_depth(reference.predict(x)[("disp", 0)], 0.1, 100)
    disp = cv2.resize(disp.squeeze().asnumpy(), (image.width, image.height))
    expected = np.clip(5.4 / disp, 1e-3, 80)

    out = tmp_path / "depth.png"
    assert hub_main(["predict", MODEL, str(photo), "--params", str(params), "--json", "--out", str(out)]) == 0
    depth = json.loads(capsys.readouterr().out)["depth"]
    for key, value in (("min", expected.min()), ("median", np.median(expected)), ("max", expected.max())):
        assert depth[key] == pytest.approx(float(value), rel=1e-4), key
    # the picture: GluonCV's normalisation (minimum to 95th percentile) in our magma-like colours
    expected_colours = colorize(disp, disp.min(), np.percentile(disp, 95)).astype(np.int64)
    assert np.abs(np.asarray(Image.open(out)).astype(np.int64) - expected_colours).max() <= 1  # float rounding


def test_the_colour_map_is_magma() -> None:
    import matplotlib

    values = np.linspace(0, 1, 257, dtype=np.float32).reshape(1, -1)
    ours = colorize(values, 0.0, 1.0).astype(np.float32)[0]
    magma = matplotlib.colormaps["magma"](values[0])[:, :3] * 255
    assert np.abs(ours - magma).max() < 12  # 11 control points, linear between them
    assert tuple(ours[0]) == (0, 0, 4) and tuple(ours[-1]) == (252, 253, 191)


def test_a_pose_network_prints_the_motion_between_two_frames(photo, capsys) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert hub_main(["predict", POSE, str(photo), str(photo), "--random-weights", "--json"]) == 0
    motion = json.loads(capsys.readouterr().out)
    assert motion["frames"] == [str(photo), str(photo)]
    assert len(motion["axisangle"]) == len(motion["translation"]) == 3


def test_bad_requests_are_refused_before_the_network_is_built(photo, tmp_path) -> None:
    # the command itself, which raises (gluon-hub prints the message and exits 1)
    with pytest.raises(ValueError, match="exactly two images, got 1"):
        predict_main([POSE, str(photo), "--random-weights"])
    with pytest.raises(ValueError, match="--out draws the depth of one image"):
        predict_main([MODEL, str(photo), str(photo), "--random-weights", "--out", str(tmp_path / "d.png")])
    with pytest.raises(FileNotFoundError, match="missing.jpg"):
        predict_main([MODEL, str(tmp_path / "missing.jpg"), "--random-weights"])
    with pytest.raises(FileNotFoundError, match="does not exist"):
        predict_main([MODEL, str(photo), "--random-weights", "--out", str(tmp_path / "no" / "d.png")])
    broken = tmp_path / "broken.jpg"
    broken.write_bytes(b"not an image")
    with pytest.raises(ValueError, match="cannot decode image .*broken.jpg"):
        predict_main([MODEL, str(broken), "--random-weights"])
