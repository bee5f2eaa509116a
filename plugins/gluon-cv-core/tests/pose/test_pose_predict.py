"""``gluon-hub predict`` with a pose estimator: person crops and decoding as GluonCV's demos, a
crop/back-projection round trip, and the command on a real photograph with random weights."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import gluon_hub
from gluon_cv_core.pose.decode import person_boxes
from gluon_cv_core.pose.keypoints import COCO_KEYPOINTS
from gluon_cv_core.pose.predict import DEFAULT_DETECTOR, Person, crop_persons, draw_poses, estimate_poses
from gluon_hub.cli import main as hub_main
from gluon_hub.compat import mx

from gluoncv.data.transforms.pose import detector_to_simple_pose, heatmap_to_coord

MODEL = "simple_pose_resnet18_v1b"
BOX = (30.0, 20.0, 100.0, 130.0)


@pytest.fixture(scope="module")
def photo(tmp_path_factory) -> Path:
    """A real photograph shipped with matplotlib, made small so that the detector runs it quickly."""
    import matplotlib

    source = Path(matplotlib.get_data_path()) / "sample_data" / "grace_hopper.jpg"
    path = tmp_path_factory.mktemp("photo") / "hopper.jpg"
    Image.open(source).convert("RGB").resize((128, 150), Image.BILINEAR).save(path, quality=95)
    return path


def _brightness(x):
    """A stand-in pose network: each heatmap is the crop's brightness averaged over 4x4 cells,
    so a bright dot in the image peaks where the dot is."""
    cells = mx.nd.Pooling(x.sum(axis=1, keepdims=True), kernel=(4, 4), stride=(4, 4), pool_type="avg")
    return cells.tile((1, 17, 1, 1))


def test_crops_and_keypoints_equal_gluoncvs_demo_pipeline() -> None:
    rng = np.random.RandomState(0)
    image = mx.nd.array(rng.randint(0, 256, (150, 128, 3)), dtype="uint8")
    ids = mx.nd.array([[[0], [2], [0], [0], [-1]]])
    scores = mx.nd.array([[[0.9], [0.95], [0.7], [0.3], [0.0]]])
    boxes = mx.nd.array([[[30.4, 20.7, 100.2, 130.9], [1, 2, 3, 4], [-5, 60, 50, 170], [10, 10, 60, 60],
                          [0, 0, 0, 0]]])
    expected, expected_boxes = detector_to_simple_pose(image, ids, scores, boxes)
    found = person_boxes(ids[0].asnumpy(), scores[0].asnumpy(), boxes[0].asnumpy())
    spec = gluon_hub.info(MODEL)
    crops, grown = crop_persons(image, found, spec.input.shape[1:], spec.input.mean, spec.input.std)
    assert crops.shape == (2, 3, 256, 192)
    np.testing.assert_allclose(grown, np.array(expected_boxes), rtol=1e-6)
    np.testing.assert_array_equal(crops.asnumpy(), expected.asnumpy())

    persons = estimate_poses(_brightness, spec, image, found, [0.9, 0.7])
    coords, confidence = heatmap_to_coord(_brightness(expected), expected_boxes)
    assert [p.score for p in persons] == pytest.approx([0.9, 0.7])
    for person, xy, conf in zip(persons, coords.asnumpy(), confidence.asnumpy()):
        assert person.keypoints.shape == (17, 3)
        np.testing.assert_allclose(person.keypoints[:, :2], xy, rtol=1e-5)
        np.testing.assert_allclose(person.keypoints[:, 2:], conf, rtol=1e-6)


def test_crop_and_back_projection_round_trip_a_known_box() -> None:
    spec = gluon_hub.info(MODEL)
    for dot in ((64.0, 75.0), (40.0, 33.0), (85.0, 118.0)):
        pixels = np.zeros((150, 128, 3), np.uint8)
        x, y = int(dot[0]), int(dot[1])
        pixels[y - 1:y + 2, x - 1:x + 2] = 255
        [person] = estimate_poses(_brightness, spec, mx.nd.array(pixels, dtype="uint8"), [BOX], [1.0])
        # the grown box: 1.25 times about the centre, clipped to the image
        np.testing.assert_allclose(person.box, (21.25, 6.25, 108.75, 143.75))
        # one heatmap cell is (87.5 / 48, 137.5 / 64) image pixels; the dot's 3x3 square centres on it
        cell = np.array([87.5 / 48, 137.5 / 64])
        assert np.abs(person.keypoints[:, :2] - (x + 0.5, y + 0.5)).max(axis=0).tolist() <= (cell * 1.5).tolist()
        assert (person.keypoints[:, 2] > 0).all()


def test_skeleton_is_drawn_where_joints_are_confident(tmp_path) -> None:
    angles = 2 * np.pi * np.arange(17) / 17
    points = np.stack([64 + 45 * np.cos(angles), 75 + 55 * np.sin(angles), np.ones(17)], axis=1)
    image = np.zeros((150, 128, 3), np.uint8)

    def drawn(persons) -> np.ndarray:
        out = tmp_path / "skeleton.png"
        draw_poses(image, persons, str(out))
        return np.asarray(Image.open(out).convert("RGB"))

    sure = drawn([Person(0.9, (10.0, 10.0, 118.0, 140.0), points)])
    unsure_ankle = points.copy()
    unsure_ankle[15, 2] = 0.1  # below the drawing threshold: neither it nor its limb (15, 13) is drawn
    unsure = drawn([Person(0.9, (10.0, 10.0, 118.0, 140.0), unsure_ankle)])
    assert sure.shape == unsure.shape == image.shape
    ankle_limb = np.rint((points[15, :2] + points[13, :2]) / 2).astype(int)
    shoulders = np.rint((points[5, :2] + points[6, :2]) / 2).astype(int)
    assert sure[ankle_limb[1], ankle_limb[0]].any() and not unsure[ankle_limb[1], ankle_limb[0]].any()
    assert sure[shoulders[1], shoulders[0]].any() and unsure[shoulders[1], shoulders[0]].any()
    assert sure[10, 50].any() and not sure[5, 5].any()  # the box outline; nothing outside it
    assert not drawn([]).any()
    with pytest.raises(FileNotFoundError, match="does not exist"):
        draw_poses(image, [], str(tmp_path / "missing" / "x.png"))


def test_cli_on_a_photograph_with_a_given_box(photo, tmp_path) -> None:
    out = tmp_path / "skeleton.png"
    done = subprocess.run([sys.executable, "-m", "gluon_hub", "predict", MODEL, str(photo), "--random-weights",
                           "--box", *map(str, BOX), "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "RANDOM" in done.stderr
    first, person, *joints = done.stdout.splitlines()
    assert first == f"{photo}: 1 person(s) from --box"
    assert person.startswith("  person 1: score 1.000, box 21.2 6.2 108.8 143.8")
    assert [line.split()[0] for line in joints] == list(COCO_KEYPOINTS)
    xy = np.array([[float(v) for v in line.split()[1:3]] for line in joints])
    assert ((xy >= (21.25, 6.25)) & (xy <= (108.75, 143.75))).all()  # keypoints lie in the crop
    assert Image.open(out).size == Image.open(photo).size == (128, 150)


def test_cli_finds_persons_with_the_registry_detector(photo, capsys) -> None:
    assert hub_main(["predict", MODEL, str(photo), "--random-weights", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert (result["image"], result["width"], result["height"]) == (str(photo), 128, 150)
    assert result["persons_from"] == DEFAULT_DETECTOR and isinstance(result["persons"], list)
    for person in result["persons"]:
        assert person["score"] >= 0.5 and [k["name"] for k in person["keypoints"]] == list(COCO_KEYPOINTS)


@pytest.mark.parametrize("extra, message", [
    (["--random-weights", "--detector", "resnet18_v1"], "is a image-classification model; give an object detector"),
    (["--random-weights", "--box", "50", "10", "20", "90"], "needs X1 > X0 and Y1 > Y0"),
    (["--random-weights", "--box", "1", "2", "3", "4", "--detector", DEFAULT_DETECTOR], "pass one of them"),
    (["--params", "nothing.params"], "--box X0 Y0 X1 Y1 to give the person's box"),
])
def test_cli_errors_say_what_to_do(photo, capsys, monkeypatch, tmp_path, extra, message) -> None:
    monkeypatch.setenv("GLUON_HUB_HOME", str(tmp_path / "empty-cache"))  # no published weights here
    for name in ("GLUON_HUB_SHARED_CACHE", "GLUON_HUB_MIRRORS"):
        monkeypatch.delenv(name, raising=False)
    assert hub_main(["predict", MODEL, str(photo), *extra]) != 0
    assert message in capsys.readouterr().err
