"""Training labels are checked before any loss sees them (issue 14, "Bad input")."""

from __future__ import annotations

import re

import numpy as np
import pytest
from cv_testlib.detection import SHAPE_CLASSES, write_shapes_voc

from gluon_cv_core.datasets.voc import VOCDetection
from gluon_cv_core.detection.training import TrainingSamples
from gluon_cv_core.detection.training.samples import TrainingLabelWarning
from gluon_hub.compat import mx


class ListDataset(mx.gluon.data.Dataset):
    """Items given as a list, the way a user's own dataset might hand them over."""

    def __init__(self, items):
        self.items = items

    def __len__(self):
        return len(self.items)

    def __getitem__(self, index):
        return self.items[index]


def image(height=20, width=30, channels=3):
    return mx.nd.array(np.zeros((height, width, channels)), dtype="uint8")


def test_good_labels_pass_through_unchanged() -> None:
    label = np.array([[1, 2, 10, 12, 1, 0], [0, 0, 29, 19, 0, 1]], np.float64)
    samples = TrainingSamples(ListDataset([(image(), label)]), num_classes=2)
    out_image, out_label = samples[0]
    assert out_image.shape == (20, 30, 3)
    np.testing.assert_array_equal(out_label, label.astype(np.float32))
    assert out_label.dtype == np.float32


def test_boxes_outside_the_image_are_clipped_and_empty_ones_dropped_with_warnings() -> None:
    label = np.array([[-5, 2, 40, 12, 1], [3, 3, 3, 9, 0], [31, 0, 50, 10, 0], [2, 2, 8, 8, 0]], np.float64)
    samples = TrainingSamples(ListDataset([(image(), label)]), num_classes=2)
    with pytest.warns(TrainingLabelWarning) as caught:
        _, out = samples[0]
    messages = " | ".join(str(w.message) for w in caught)
    assert "sample 0: clipped 1 box(es)" in messages and "30x20 image" in messages
    assert "dropped 2 empty box(es)" in messages
    np.testing.assert_array_equal(out, [[0, 2, 29, 12, 1], [2, 2, 8, 8, 0]])


def test_images_without_objects_are_skipped_with_a_warning_naming_the_file(tmp_path) -> None:
    root = write_shapes_voc(tmp_path, count=3)
    annotation = root / "shapes" / "Annotations" / "000001.xml"
    annotation.write_text(re.sub(r"<object>.*</object>", "", annotation.read_text()))
    dataset = VOCDetection(root, splits=[("shapes", "train")], classes=SHAPE_CLASSES)
    with pytest.warns(TrainingLabelWarning, match=r"skipped 1 training image\(s\) without objects: sample 1 \(.*000001\.jpg\)"):
        samples = TrainingSamples(dataset, num_classes=2)
    assert samples.indices == [0, 2] and len(samples) == 2
    np.testing.assert_array_equal(samples[1][1], dataset.label(2).astype(np.float32))


def test_a_dataset_without_any_object_is_an_error() -> None:
    empty = np.zeros((0, 5))
    with pytest.raises(ValueError, match="none of the 2 training images has an object"), \
            pytest.warns(TrainingLabelWarning):
        TrainingSamples(ListDataset([(image(), empty), (image(), empty)]), num_classes=2)


@pytest.mark.parametrize("label, message", [
    (np.array([1, 2, 3, 4, 0]), r"sample 1: a detection label is an \(N, 5\+\) array .* got shape \(5,\)"),
    (np.array([[1, 2, 3, 4]]), r"got shape \(1, 4\)"),
    (np.array([[1, np.nan, 3, 4, 0]]), "sample 1: the label has a NaN or infinite box or class id"),
    (np.array([[1, 2, 3, 4, 2]]), r"sample 1: class id\(s\) \[2.0\] are not among the network's 2 classes"),
    (np.array([[1, 2, 3, 4, -1]]), r"class id\(s\) \[-1.0\]"),
    (np.array([[1, 2, 3, 4, 0.5]]), r"class id\(s\) \[0.5\]"),
])
def test_bad_labels_fail_at_construction_naming_the_sample(label, message) -> None:
    good = np.array([[1, 2, 3, 4, 0]])
    with pytest.raises(ValueError, match=message):
        TrainingSamples(ListDataset([(image(), good), (image(), label)]), num_classes=2)


@pytest.mark.parametrize("bad, shape", [(image(channels=1), r"\(20, 30, 1\)"),
                                        (mx.nd.zeros((20, 30), dtype="uint8"), r"\(20, 30\)"),
                                        (image(height=0), r"\(0, 30, 3\)")])
def test_bad_images_fail_naming_the_sample(bad, shape) -> None:
    samples = TrainingSamples(ListDataset([(bad, np.array([[1, 2, 3, 4, 0]]))]), num_classes=2)
    with pytest.raises(ValueError, match=rf"sample 0: a training image is an HWC array with 3 channels; got shape {shape}"):
        samples[0]


def test_an_image_whose_boxes_all_lie_outside_it_fails() -> None:
    samples = TrainingSamples(ListDataset([(image(), np.array([[40, 30, 50, 35, 0]]))]), num_classes=2)
    with pytest.raises(ValueError, match=r"sample 0: no box of this image lies inside it \(30x20\)"), \
            pytest.warns(TrainingLabelWarning):
        samples[0]


def test_the_transform_gets_the_checked_sample() -> None:
    seen = []
    samples = TrainingSamples(ListDataset([(image(), np.array([[-3, 1, 5, 6, 1]]))]), num_classes=2,
                              transform=lambda img, lab: seen.append(lab) or "done")
    with pytest.warns(TrainingLabelWarning):
        assert samples[0] == "done"
    np.testing.assert_array_equal(seen[0], [[0, 1, 5, 6, 1]])
