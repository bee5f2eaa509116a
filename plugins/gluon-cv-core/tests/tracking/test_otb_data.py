"""OTB2015's layout (generated here: frames and ground truth in each of OTB's separators) and
its success and precision, checked against GluonCV's ``OPEBenchmark`` functions (pysot's)."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from gluon_cv_core.datasets.otb import (
    OTB2015,
    PRECISION_THRESHOLDS,
    precision_curve,
    precision_score,
    read_groundtruth,
    success_curve,
    success_score,
)
from gluon_hub.compat import mx  # noqa: F401  (GluonCV needs the compat shim first)

from gluoncv.utils.metrics.tracking import success_error, success_overlap


def _sequence(root, name: str, frames: int, truths: dict[str, list[str]]) -> None:
    folder = root / name / "img"
    folder.mkdir(parents=True)
    for k in range(frames):
        Image.fromarray(np.full((12, 16, 3), k, np.uint8)).save(folder / f"{k + 1:04d}.jpg")
    for suffix, lines in truths.items():
        (root / name / f"groundtruth_rect{suffix}.txt").write_text("\n".join(lines) + "\n")


def test_sequences_read_every_separator_and_both_targets(tmp_path) -> None:
    _sequence(tmp_path, "Basketball", 3, {"": ["1,2,3,4", "2,3,4,5", "3,4,5,6"]})
    _sequence(tmp_path, "Jogging", 2, {".1": ["1\t2\t3\t4", "5\t6\t7\t8"], ".2": ["1 2 3 4", "9  10 11 12"]})
    _sequence(tmp_path, "David", 4, {"": ["1,2,3,4", "2,2,3,4"]})
    (tmp_path / "results").mkdir()  # not a sequence: skipped
    data = OTB2015(tmp_path, start_frames={"David": 3})
    assert data.names == ["Basketball", "David", "Jogging-1", "Jogging-2"]
    assert len(data["Basketball"]) == 3 and data["Basketball"].frames[0].endswith("Basketball/img/0001.jpg")
    np.testing.assert_array_equal(data["Jogging-2"].boxes, [[1, 2, 3, 4], [9, 10, 11, 12]])
    np.testing.assert_array_equal(data["Jogging-1"].boxes[1], [5, 6, 7, 8])
    assert [f[-8:] for f in data["David"].frames] == ["0003.jpg", "0004.jpg"]
    with pytest.raises(KeyError, match="Basketball"):
        data["Bolt"]


def test_missing_and_malformed_data_are_clear_errors(tmp_path) -> None:
    with pytest.raises(FileNotFoundError, match="cvlab.hanyang.ac.kr"):
        OTB2015(tmp_path / "nowhere")
    _sequence(tmp_path, "Car4", 2, {})
    with pytest.raises(FileNotFoundError, match="Car4.*groundtruth_rect.txt"):
        OTB2015(tmp_path)
    (tmp_path / "Car4" / "groundtruth_rect.txt").write_text("1,2,3,4\n")
    with pytest.raises(ValueError, match="1 boxes but .*Car4/img.* 2 frames.*start_frames"):
        OTB2015(tmp_path)
    (tmp_path / "Car4" / "groundtruth_rect.txt").write_text("1,2,3,4\n1,2,x,4\n")
    with pytest.raises(ValueError, match="line 2: expected 4 numbers"):
        OTB2015(tmp_path)
    with pytest.raises(FileNotFoundError, match="absent.txt"):
        read_groundtruth(tmp_path / "absent.txt")


def test_success_and_precision_match_gluoncvs_benchmark() -> None:
    rng = np.random.RandomState(0)
    truth = np.column_stack([rng.uniform(0, 100, (40, 2)), rng.uniform(5, 40, (40, 2))])
    predicted = truth + rng.normal(0, 6, truth.shape)
    truth[3, 2] = 0  # an empty ground truth: a failure for success
    truth[5, :2] = -30  # a centre off the positive quadrant: not measured by precision
    np.testing.assert_allclose(success_curve(truth, predicted), success_overlap(truth, predicted, len(truth)))
    centre = lambda b: np.column_stack([b[:, 0] + (b[:, 2] - 1) / 2, b[:, 1] + (b[:, 3] - 1) / 2])  # noqa: E731
    expected = success_error(centre(truth), centre(predicted), PRECISION_THRESHOLDS, len(truth))
    np.testing.assert_allclose(precision_curve(truth, predicted), expected)
    assert success_score(truth, predicted) == pytest.approx(expected_auc := success_overlap(truth, predicted, 40).mean())
    assert 0 < expected_auc < 1
    assert precision_score(truth, predicted) == pytest.approx(expected[20])
    # a perfect box passes every threshold but the last (IoU must exceed 1): 20 of 21
    assert success_score(truth[:1], truth[:1]) == pytest.approx(20 / 21)
    assert precision_score(truth[:1], truth[:1]) == 1.0
    with pytest.raises(ValueError, match=r"\(N, 4\)"):
        success_curve(truth, predicted[:3])
