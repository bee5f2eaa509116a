"""The ONNX runner of the pose estimators (``gluon_hub.runtime.load``) against the MXNet path of
``gluon-hub predict``: the same person crops to the bit, the same grown boxes, keypoint positions
equal and their confidences within 1e-5 (the heatmaps' float differences, about 2e-6 here; a
peak would move only where two heatmap pixels are that close), persons from an exported
detector runner as MXNet's detector finds them (boxes and keypoints within 1e-3 pixel: the
detector's own float differences move the crops' edges by about 1e-5 pixel), and the same ``--json`` and picture through the
real CLI, without importing MXNet."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from cv_testlib.cli import hub_json
from cv_testlib.exported import exported_models, save_and_export, seeded_net
from matplotlib import cbook
from PIL import Image

import gluon_hub
import gluon_hub.runtime
from gluon_cv_core.common.images import read_image
from gluon_cv_core.detection.predict import detect
from gluon_cv_core.pose.keypoints import COCO_KEYPOINTS
from gluon_cv_core.pose.predict import crop_persons, draw_poses, estimate_poses
from gluon_hub.cli import main as hub_main

pytestmark = pytest.mark.portability

PHOTO = Path(cbook.get_sample_data("grace_hopper.jpg", asfileobj=False))  # 512 wide, 600 high
POSE = {"simple_pose_resnet18_v1b": "SimplePose", "mobile_pose_mobilenetv3_small": "MobilePose"}
DETECTOR = "yolo3_mobilenet0.25_coco"
#: boxes that shrink, enlarge, touch the image's edges and leave it (after growing)
BOXES = [(100.5, 50.2, 400.7, 500.1), (0.0, 0.0, 60.0, 90.0), (450.0, 520.0, 512.0, 600.0), (200.3, 100.9, 260.0, 180.0)]
#: the detector's score threshold: the random weights score two persons above it, the next 3e-4 below
THRESHOLD = 0.2935


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> dict[str, tuple[object, Path, Path]]:
    """Each pose network and the person detector with seeded random weights: the network, its
    .params and its ONNX file. The detector's .params have its 80 COCO classes (the MXNet path
    resets them to ``person``); its ONNX file is exported after that reset, as the runner's
    docstring says to export it."""
    folder = tmp_path_factory.mktemp("onnx")
    found = exported_models({name: (256, 192) for name in POSE}, folder, dynamic_spatial=False)
    net = seeded_net(DETECTOR, (416, 416), seed=1)
    params = folder / "detector.params"
    net.save_parameters(str(params))
    net.reset_class(["person"], reuse_weights=["person"])
    _, persons = save_and_export(net, folder, "persons", (416, 416), dynamic_spatial=True)
    found[DETECTOR] = (net, params, persons)
    return found


def _same_persons(want: list, got: list, pixels: float = 0.0) -> None:
    """Scores and confidences within 1e-5, boxes within 1e-3 pixel and keypoint positions within
    ``pixels`` (0 for the same boxes; a detector's boxes differ by its float rounding)."""
    assert len(got) == len(want)
    for w, g in zip(want, got):
        assert g.score == pytest.approx(w.score, abs=1e-5)
        np.testing.assert_allclose(g.box, w.box, atol=1e-3)
        np.testing.assert_allclose(g.keypoints[:, :2], w.keypoints[:, :2], rtol=0, atol=pixels)
        np.testing.assert_allclose(g.keypoints[:, 2], w.keypoints[:, 2], atol=1e-5)


@pytest.mark.parametrize("name", list(POSE))
def test_crops_are_mxnets_and_keypoints_match(exported, name, tmp_path):
    net, _, onnx_file = exported[name]
    runner = gluon_hub.runtime.load(name, onnx_file)
    assert type(runner).__name__ == "PoseEstimator" and runner.session.provider == "CPUExecutionProvider"
    spec = gluon_hub.info(name)
    image = read_image(PHOTO)
    crops, grown = runner.to_input(image.asnumpy(), BOXES)
    want, want_grown = crop_persons(image, BOXES, spec.input.shape[1:], spec.input.mean, spec.input.std)
    np.testing.assert_array_equal(crops, want.asnumpy())
    np.testing.assert_array_equal(grown, want_grown)
    scores = [0.9, 0.8, 0.7, 0.6]
    want_persons = estimate_poses(net, spec, image, BOXES, scores)
    got = runner.estimate(image.asnumpy(), BOXES, scores)
    _same_persons(want_persons, got)
    assert len({tuple(p.keypoints[:, 0]) for p in got}) == len(BOXES)  # the random weights do spread the peaks
    draw_poses(image, want_persons, str(tmp_path / "mxnet.png"))
    runner.draw(image.asnumpy(), got, str(tmp_path / "onnx.png"))
    drawn = [np.asarray(Image.open(tmp_path / f"{which}.png")) for which in ("mxnet", "onnx")]
    np.testing.assert_array_equal(drawn[0], drawn[1])
    assert runner.estimate(image.asnumpy(), [], []) == []


def test_persons_from_a_detector_runner_are_mxnets(exported):
    name = "simple_pose_resnet18_v1b"
    net, _, onnx_file = exported[name]
    detector_net, _, detector_file = exported[DETECTOR]
    detector = gluon_hub.runtime.load(DETECTOR, detector_file)
    runner = gluon_hub.runtime.load(name, onnx_file)
    found = detect(detector_net, gluon_hub.info(DETECTOR), [str(PHOTO)], THRESHOLD)
    (image, detections), = found
    assert 1 < len(detections) <= 20 and {d.label for d in detections} == {"person"}
    want = estimate_poses(net, gluon_hub.info(name), image, [d.box for d in detections],
                          [d.score for d in detections])
    (picture, got), = runner.predict([str(PHOTO)], detector, THRESHOLD)
    np.testing.assert_array_equal(picture, image.asnumpy())
    _same_persons(want, got, pixels=1e-3)
    by_box = runner.predict([picture], box=BOXES[0])[0][1]
    _same_persons(estimate_poses(net, gluon_hub.info(name), image, BOXES[:1], [1.0]), by_box)
    with pytest.raises(ValueError, match="pass a detector runner to find the persons, or the box of one person"):
        runner.predict([picture])


def test_cli_json_and_picture_are_the_same_for_both_runtimes(exported, tmp_path):
    name = "simple_pose_resnet18_v1b"
    _, params, onnx_file = exported[name]
    _, detector_params, detector_file = exported[DETECTOR]
    pictures = {which: tmp_path / f"{which}.png" for which in ("mxnet", "onnx")}
    common = ("predict", name, str(PHOTO), "--detector", DETECTOR, "--json", "--threshold", str(THRESHOLD))
    by_mxnet = hub_json(*common, "--params", str(params), "--detector-params", str(detector_params),
                    "--out", str(pictures["mxnet"]))
    by_onnx = hub_json(*common, "--runtime", "onnx", "--model-file", str(onnx_file), "--detector-file",
                   str(detector_file), "--out", str(pictures["onnx"]), check_no_mxnet=True)
    (want,), (got,) = by_mxnet, by_onnx
    assert set(got) == set(want) == {"image", "width", "height", "persons_from", "persons"}
    assert [got[k] for k in ("image", "width", "height", "persons_from")] == [str(PHOTO), 512, 600, DETECTOR]
    assert [want[k] for k in ("image", "width", "height", "persons_from")] == [str(PHOTO), 512, 600, DETECTOR]
    assert len(got["persons"]) == len(want["persons"]) > 1
    for w, g in zip(want["persons"], got["persons"]):
        assert set(g) == set(w) == {"score", "box", "keypoints"}
        np.testing.assert_allclose(g["score"], w["score"], atol=1e-5)
        np.testing.assert_allclose(g["box"], w["box"], atol=1e-3)
        assert [k["name"] for k in g["keypoints"]] == [k["name"] for k in w["keypoints"]] == list(COCO_KEYPOINTS)
        for a, b in zip(w["keypoints"], g["keypoints"]):
            assert (b["x"], b["y"]) == pytest.approx((a["x"], a["y"]), abs=1e-3)
            assert b["score"] == pytest.approx(a["score"], abs=1e-5)
    drawn = [np.asarray(Image.open(p)) for p in pictures.values()]
    np.testing.assert_array_equal(drawn[0], drawn[1])
    by_box = hub_json("predict", name, str(PHOTO), "--runtime", "onnx", "--model-file", str(onnx_file), "--json",
                  "--box", *map(str, BOXES[0]), check_no_mxnet=True)
    assert by_box[0]["persons_from"] == "--box" and len(by_box[0]["persons"]) == 1


@pytest.mark.parametrize("extra, message", [
    (["--detector-file", "d.onnx"], "--detector-file is the detector's exported file that --runtime onnx runs"),
    (["--runtime", "onnx", "--model-file", "POSE.onnx", "--detector-params", "d.params"],
     "with --runtime onnx give its exported file: --detector-file FILE.onnx"),
    (["--runtime", "onnx", "--model-file", "POSE.onnx", "--detector", "mask_rcnn_resnet18_v1b_coco"],
     "is a instance-segmentation model; give an object detector trained on COCO"),
    (["--runtime", "onnx", "--model-file", "POSE.onnx", "--detector-file", "d.onnx", "--box", "1", "2", "3", "4"],
     "pass one of them"),
])
def test_cli_errors_say_what_to_do(exported, capsys, extra, message):
    pose_file = str(exported["simple_pose_resnet18_v1b"][2])
    extra = [pose_file if arg == "POSE.onnx" else arg for arg in extra]
    assert hub_main(["predict", "simple_pose_resnet18_v1b", str(PHOTO), *extra]) != 0
    assert message in capsys.readouterr().err


def test_cli_without_a_detector_file_names_the_option(exported, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("GLUON_HUB_HOME", str(tmp_path / "empty-cache"))  # no converted detector here
    for variable in ("GLUON_HUB_SHARED_CACHE", "GLUON_HUB_MIRRORS"):
        monkeypatch.delenv(variable, raising=False)
    onnx_file = exported["simple_pose_resnet18_v1b"][2]
    assert hub_main(["predict", "simple_pose_resnet18_v1b", str(PHOTO), "--runtime", "onnx", "--model-file",
                     str(onnx_file), "--detector", DETECTOR]) != 0
    assert "--runtime onnx needs --detector-file FILE.onnx" in capsys.readouterr().err
