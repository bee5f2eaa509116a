"""COCO person keypoints and OKS AP against GluonCV 0.10 on a generated COCO keypoints file,
a hand-worked OKS case, and the errors malformed annotations give."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from cv_testlib.pose import SPLIT, person_keypoints as _person, write_keypoints as _write

from gluon_cv_core.datasets.coco_keypoints import COCOKeyPoints, coco_keypoints
from gluon_cv_core.datasets.specs import dataset_specs
from gluon_cv_core.pose.metrics import STAT_NAMES, COCOKeyPointsMetric
from gluon_hub.compat import mx

from gluoncv.data import COCOKeyPoints as GluonKeyPoints
from gluoncv.utils.metrics.coco_keypoints import COCOKeyPointsMetric as GluonMetric

# COCO's per-joint OKS constants (pycocotools' kpt_oks_sigmas), for the hand-worked case
SIGMAS = np.array([.26, .25, .25, .35, .35, .79, .79, .72, .72, .62, .62, 1.07, 1.07, .87, .87, .89, .89]) / 10


def _fixture(root: Path) -> Path:
    rng = np.random.RandomState(0)
    people = [
        (11, 1, [10.0, 20.0, 60.0, 110.0], _person(rng, [10, 20, 60, 110], unlabelled=(1, 2, 15), occluded=(5,)), 0),
        (12, 1, [100.0, 10.0, 90.0, 140.0], _person(rng, [100, 10, 90, 140], occluded=(0, 9)), 0),
        (13, 1, [0.0, 0.0, 200.0, 160.0], [0] * 51, 1),  # crowd: skipped
        (14, 1, [50.0, 50.0, 30.0, 30.0], [0] * 51, 0),  # no keypoints: skipped
        (21, 2, [80.0, 30.0, 60.0, 90.0], _person(rng, [80, 30, 40, 70], unlabelled=range(8)), 0),  # clipped box
        (22, 2, [20.0, 10.0, 0.0, 40.0], _person(rng, [20, 10, 1, 40]), 0),  # zero width: skipped
        (23, 2, [5.0, 5.0, 50.0, 80.0], [v if i % 3 != 2 else 0 for i, v in
                                         enumerate(_person(rng, [5, 5, 50, 80]))], 0),  # none labelled: skipped
    ]  # image 3 has nobody
    return _write(root, people)


@pytest.mark.parametrize("skip_empty", [True, False])
def test_items_equal_gluoncv(tmp_path, skip_empty) -> None:
    _fixture(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the note on skipped images
        ours = COCOKeyPoints(tmp_path, SPLIT, skip_empty=skip_empty)
    reference = GluonKeyPoints(str(tmp_path), (SPLIT,), skip_empty=skip_empty)
    assert len(ours) == len(reference) == (3 if skip_empty else 4)
    for index in range(len(ours)):
        (image, label, image_id), (ref_image, ref_label, ref_id) = ours[index], reference[index]
        np.testing.assert_array_equal(image.asnumpy(), ref_image.asnumpy())
        assert image_id == ref_id
        np.testing.assert_array_equal(label["bbox"], np.asarray(ref_label["bbox"], np.float64))
        joints, ref_joints = label["joints"], ref_label["joints_3d"]
        assert joints.shape == (17, 3) and joints.dtype == np.float32
        np.testing.assert_array_equal(joints[:, :2], ref_joints[:, :2, 0])
        np.testing.assert_array_equal(joints[:, 2], ref_joints[:, 0, 1])


def test_conventions_by_hand(tmp_path) -> None:
    _fixture(tmp_path)
    with pytest.warns(UserWarning, match=r"skipped 1 image\(s\) without objects \(000000000003.jpg\)"):
        dataset = coco_keypoints(tmp_path, "val")
    assert dataset.image_ids == [1, 1, 2] and len(dataset) == 3
    first = dataset.label(0)
    # inclusive corners: x + w - 1
    np.testing.assert_array_equal(first["bbox"], [10, 20, 69, 129])
    # unlabelled joints are kept with visibility 0; occluded (v=1) and visible (v=2) both weigh 1
    expected = np.ones(17)
    expected[[1, 2, 15]] = 0
    np.testing.assert_array_equal(first["joints"][:, 2], expected)
    np.testing.assert_array_equal(first["joints"][[1, 2, 15], :2], 0)
    # a box running past the 120x100 image is clipped to its last pixel
    np.testing.assert_array_equal(dataset.label(2)["bbox"], [80, 30, 119, 99])
    assert dataset.label(2)["joints"][:8, 2].sum() == 0 and dataset.label(2)["joints"][8:, 2].all()
    seen = []
    with pytest.warns(UserWarning, match="skipped 1 image"):
        transformed = COCOKeyPoints(tmp_path, SPLIT, transform=lambda im, lab, iid: seen.append(iid) or lab["bbox"])
    np.testing.assert_array_equal(transformed[1], [100, 10, 189, 149])
    assert seen == [1]
    with pytest.raises(ValueError, match="segments 'train' and 'val', got 'test'"):
        coco_keypoints(tmp_path, "test")


def test_registered_with_the_coco_archives() -> None:
    specs = {spec.name: spec for spec in dataset_specs()}
    keypoints = specs["coco_keypoints"]
    assert keypoints.files == specs["coco"].files
    assert keypoints.task == "pose-estimation" and keypoints.segments == ("train", "val")
    assert keypoints.factory == "gluon_cv_core.datasets.coco_keypoints:coco_keypoints"


def _predictions(dataset: COCOKeyPoints, seed: int) -> tuple[np.ndarray, ...]:
    """Noisy copies of every person plus two spurious people, with confidences and scores."""
    rng = np.random.RandomState(seed)
    truth = np.stack([dataset.label(i)["joints"][:, :2] for i in range(len(dataset))]).astype(np.float64)
    coords = np.concatenate([truth + rng.normal(0, 4, truth.shape), rng.uniform(0, 100, (2, 17, 2))])
    confidence = rng.uniform(0, 1, (len(coords), 17, 1))
    scores = rng.uniform(0.3, 1, len(coords))
    image_ids = np.array(dataset.image_ids + [1, 2])
    return coords, confidence, scores, image_ids


def test_oks_ap_equals_gluoncv(tmp_path) -> None:
    _fixture(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dataset = COCOKeyPoints(tmp_path, SPLIT)
    reference_dataset = GluonKeyPoints(str(tmp_path), (SPLIT,))
    for seed in (0, 1):
        coords, confidence, scores, image_ids = _predictions(dataset, seed)
        ours = COCOKeyPointsMetric(dataset)
        # NDArrays with (N, 17, 1) confidences, then numpy with (N, 17): both layouts decoding gives
        ours.update(mx.nd.array(coords[:3], dtype="float64"), mx.nd.array(confidence[:3], dtype="float64"),
                    scores[:3], image_ids[:3])
        ours.update(coords[3:], confidence[3:, :, 0], scores[3:], image_ids[3:])
        reference = GluonMetric(reference_dataset, str(tmp_path / f"ref{seed}"), use_time=False)
        reference.update(mx.nd.array(coords, dtype="float64"), mx.nd.array(confidence, dtype="float64"),
                         mx.nd.array(scores, dtype="float64"), mx.nd.array(image_ids))
        names, values = ours.get()
        ref_values, ref_ap = reference.get()
        assert names == list(STAT_NAMES) and values[0] == pytest.approx(ref_ap, abs=1e-12)
        np.testing.assert_allclose(values, list(ref_values.values()), rtol=0, atol=1e-12)
        assert 0 < values[0] < 1 and "Average Precision" in ours.summary
        ours.save(tmp_path / "results.json")
        saved = json.loads((tmp_path / "results.json").read_text())
        ref_saved = json.loads((tmp_path / f"ref{seed}.json").read_text())
        assert len(saved) == len(ref_saved) == 5
        for mine, theirs in zip(saved, ref_saved):
            assert mine["image_id"] == theirs["image_id"] and mine["category_id"] == theirs["category_id"] == 1
            assert mine["keypoints"] == theirs["keypoints"]
            assert mine["score"] == pytest.approx(theirs["score"], rel=1e-12)


def test_oks_ap_by_hand(tmp_path) -> None:
    rng = np.random.RandomState(3)
    box = [20.0, 10.0, 100.0, 120.0]  # area 12000
    _write(tmp_path, [(1, 1, box, _person(rng, box), 0)], images=((1, (200, 160)),), info=False)
    dataset = COCOKeyPoints(tmp_path, SPLIT)
    truth = dataset.label(0)["joints"][None, :, :2].astype(np.float64)
    metric = COCOKeyPointsMetric(dataset)
    metric.update(truth, np.ones((1, 17)), [0.9], [1])
    perfect = dict(zip(*metric.get()))  # every OKS threshold matched at every recall
    assert perfect.pop("AP (M)") == perfect.pop("AR (M)") == -1.0  # pycocotools' mark: no medium person
    assert list(perfect.values()) == pytest.approx([1.0] * 8, abs=1e-12)
    # every joint 14.5 px off: OKS = mean(exp(-d^2 / (2 area (2 sigma)^2))), between 0.50 and 0.55,
    # so only the 0.50 threshold of the ten (0.50:0.05:0.95) matches: AP = 1/10, AP .5 = 1, AP .75 = 0
    shift = 14.5
    oks = np.mean(np.exp(-shift ** 2 / (2 * 12000 * (2 * SIGMAS) ** 2)))
    assert 0.50 < oks < 0.55
    metric.reset()
    metric.update(truth + [shift, 0.0], np.ones((1, 17)), [0.9], [1])
    names, values = metric.get()
    stats = dict(zip(names, values))
    assert [stats[k] for k in ("AP", "AP .5", "AP .75", "AP (L)", "AR", "AR .5", "AR .75")] == pytest.approx(
        [0.1, 1.0, 0.0, 0.1, 0.1, 1.0, 0.0], abs=1e-12)
    metric.reset()
    with pytest.warns(UserWarning, match="no predictions"):
        assert metric.get()[1][0] == 0.0


def test_metric_rejects_mismatched_batches(tmp_path) -> None:
    rng = np.random.RandomState(3)
    box = [20.0, 10.0, 100.0, 120.0]
    _write(tmp_path, [(1, 1, box, _person(rng, box), 0)], images=((1, (200, 160)),))
    metric = COCOKeyPointsMetric(COCOKeyPoints(tmp_path, SPLIT))
    with pytest.raises(ValueError, match="coords must be"):
        metric.update(np.zeros((1, 17, 3)), np.ones((1, 17)), [1.0], [1])
    with pytest.raises(ValueError, match="one score and image id per person"):
        metric.update(np.zeros((2, 17, 2)), np.ones((2, 17)), [1.0], [1, 1])


@pytest.mark.parametrize("change, message", [
    ({"keypoints": [10, 10, 2] * 16}, r"annotation 5 \(image 1\) has keypoints 48 values; .* 17 x, y, v triples"),
    ({"keypoints": None}, r"annotation 5 \(image 1\) has keypoints None"),
    ({"keypoints": [10, 10, 2] * 16 + [10, 10, 3]}, "joint right_ankle has visibility 3"),
    ({"keypoints": [10, 10, 2] * 16 + [10, "a", 2]}, "keypoints that are not all numbers"),
    ({"bbox": [250.0, 10.0, 30.0, 30.0]}, r"annotation 5 has bbox \[250.0, 10.0, 30.0, 30.0\] .* wholly outside "
                                          "its 200x160 image 1"),
])
def test_bad_annotations_name_the_file_and_annotation(tmp_path, change, message) -> None:
    box = [20.0, 10.0, 100.0, 120.0]
    person = {"keypoints": [30, 30, 2] * 17, "bbox": box}
    person.update(change)
    path = _write(tmp_path, [(5, 1, person["bbox"], [0] * 51, 0)], images=((1, (200, 160)),))
    data = json.loads(path.read_text())
    data["annotations"][0]["keypoints"] = person["keypoints"]
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=message) as error:
        COCOKeyPoints(tmp_path, SPLIT)
    assert str(path) in str(error.value)
