"""pixAcc and mIoU equal GluonCV 0.10's ``SegmentationMetric``; bad labels fail naming the sample."""

from __future__ import annotations

import numpy as np
import pytest

from gluon_cv_core.segmentation.metrics import IGNORE_LABEL, SegmentationMetric, confusion_matrix
from gluon_hub.compat import mx

from gluoncv.utils.metrics import SegmentationMetric as GluonMetric


def test_worked_case_by_hand() -> None:
    # 2 images of 1x4; class 3 never appears (absent classes count as IoU 0 in the mean)
    labels = np.array([[[0, 0, 1, -1]], [[2, 2, -1, 1]]])
    preds = np.array([[[0, 1, 1, 2]], [[2, 0, 0, 1]]])
    metric = SegmentationMetric(4)
    metric.update(labels, preds)
    # scored pixels: 6 (two ignored, their predictions are not counted); correct: 4
    # class 0: inter 1, label 2, pred 2 -> 1/3; class 1: inter 2, label 2, pred 3 -> 2/3;
    # class 2: inter 1, label 2, pred 1 -> 1/2; class 3: 0
    pix_acc, miou = metric.get()
    assert pix_acc == pytest.approx(4 / 6)
    assert miou == pytest.approx((1 / 3 + 2 / 3 + 1 / 2 + 0) / 4)
    np.testing.assert_allclose(metric.class_iou(), [1 / 3, 2 / 3, 1 / 2, np.nan])
    assert confusion_matrix(labels, preds, 4).tolist() == [[1, 1, 0, 0], [0, 2, 0, 0], [1, 0, 1, 0], [0, 0, 0, 0]]


def test_equals_gluoncv_over_batches_with_ignored_pixels_and_absent_classes() -> None:
    rng = np.random.RandomState(0)
    ours, theirs = SegmentationMetric(6), GluonMetric(6)
    assert ours.get() == (0.0, 0.0) == tuple(theirs.get())
    for step in range(4):
        labels = rng.randint(-1, 4, size=(2, 9, 11))  # classes 4 and 5 never labelled
        scores = rng.rand(2, 6, 9, 11).astype(np.float32)
        scores[:, 5] -= 2.0  # ... and 5 never predicted
        if step == 3:
            labels[1] = -1  # a fully ignored image
        label_nd, score_nd = mx.nd.array(labels, dtype=np.int32), mx.nd.array(scores)
        if step % 2:  # one NDArray per device, as GluonCV's training loop passes them
            ours.update([label_nd[:1], label_nd[1:]], [score_nd[:1], score_nd[1:]])
            theirs.update([label_nd[:1], label_nd[1:]], [score_nd[:1], score_nd[1:]])
        else:
            ours.update(label_nd, score_nd)
            theirs.update(label_nd, score_nd)
        assert ours.get() == tuple(theirs.get())  # exactly: the same formulas, spacing(1) included
        np.testing.assert_array_equal(ours.total_inter, theirs.total_inter)
        np.testing.assert_array_equal(ours.total_union, theirs.total_union)
        assert (ours.total_correct, ours.total_label) == (theirs.total_correct, theirs.total_label)
    assert np.isnan(ours.class_iou()[5]) and ours.class_iou()[4] == 0  # 4 predicted, never labelled
    # class ids give the same result as scores
    again = SegmentationMetric(6)
    again.update(labels, scores.argmax(axis=1))
    single = SegmentationMetric(6)
    single.update(label_nd, score_nd)
    assert again.get() == single.get()
    ours.reset()
    assert ours.get() == (0.0, 0.0)


@pytest.mark.parametrize("bad", [6, -2, 255])
def test_label_outside_the_classes_names_the_sample(bad: int) -> None:
    labels = np.zeros((3, 4, 4), int)
    labels[2, 1, 1] = bad
    metric = SegmentationMetric(6)
    with pytest.raises(ValueError, match=rf"sample 2 \(c\.png\): label values \[{bad}\] are outside 0\.\.5 "
                                         rf"and not the ignore label {IGNORE_LABEL}"):
        metric.update(labels, np.zeros((3, 6, 4, 4)), names=["a.png", "b.png", "c.png"])
    assert metric.total_label == 0  # nothing of the bad batch was counted


def test_mismatched_sizes_and_channels_are_errors() -> None:
    metric = SegmentationMetric(3)
    with pytest.raises(ValueError, match=r"predictions of shape \(1, 4, 5\) do not match labels of shape \(1, 4, 4\)"):
        metric.update(np.zeros((1, 4, 4), int), np.zeros((1, 3, 4, 5)))
    with pytest.raises(ValueError, match="predicted scores have 4 channels, the metric has 3 classes"):
        metric.update(np.zeros((1, 4, 4), int), np.zeros((1, 4, 4, 4)))
    with pytest.raises(ValueError, match=r"sample 0: prediction values \[3\] are outside 0\.\.2$"):
        metric.update(np.zeros((1, 4, 4), int), np.full((1, 4, 4), 3))
