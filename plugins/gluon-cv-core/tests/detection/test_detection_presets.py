"""Detection presets: validation presets equal GluonCV 0.10's arrays; train presets keep
boxes on their objects and repeat under a seed.

Consistency is checked on painted images: each box is filled with its own colour on a
grey background, so after an operation the pixels inside every returned box must still
be that box's colour.
"""

from __future__ import annotations

import numpy as np
import pytest

from gluon_cv_core.detection.presets import (
    MEAN,
    STD,
    CenterNetTrainTransform,
    CenterNetValTransform,
    FasterRCNNTrainTransform,
    FasterRCNNValTransform,
    SSDTrainTransform,
    SSDValTransform,
    YOLO3TrainTransform,
    YOLO3ValTransform,
    crop_boxes,
    flip_boxes,
    random_crop_with_constraints,
    random_expand,
    resize_boxes,
    translate_boxes,
)
from gluon_hub.compat import mx

from gluoncv.data.transforms.presets import (
    center_net as gcv_center_net,
    rcnn as gcv_rcnn,
    ssd as gcv_ssd,
    yolo as gcv_yolo,
)

COLOURS = np.array([[250, 10, 10], [10, 250, 10], [10, 10, 250]], np.uint8)


def _painted(height: int = 40, width: int = 60) -> tuple[mx.nd.NDArray, np.ndarray]:
    """A grey image with three boxes painted in their own colours, and its label."""
    image = np.full((height, width, 3), 128, np.uint8)
    label = np.array([[2, 3, 20, 30, 0, 0], [26, 8, 50, 22, 1, 1], [40, 25, 58, 39, 2, 0]], float)
    for (x1, y1, x2, y2, cls, _) in label.astype(int):
        image[y1:y2, x1:x2] = COLOURS[cls]
    return mx.nd.array(image, dtype=np.uint8), label


def _assert_boxes_on_their_colour(image: np.ndarray, boxes: np.ndarray, margin: float = 1.0) -> None:
    """Every box's inside (shrunk by ``margin`` pixels) is its class colour."""
    assert len(boxes), "no box left"
    for x1, y1, x2, y2, cls in boxes[:, :5]:
        inside = image[int(np.ceil(y1 + margin)):int(np.floor(y2 - margin)),
                       int(np.ceil(x1 + margin)):int(np.floor(x2 - margin))]
        assert inside.size, f"box {(x1, y1, x2, y2)} has no inside pixels"
        np.testing.assert_allclose(inside.reshape(-1, 3), np.broadcast_to(COLOURS[int(cls)], (inside.size // 3, 3)),
                                   atol=2)


def _numpy(value):
    return value.asnumpy() if hasattr(value, "asnumpy") else np.asarray(value)


# ---------------------------------------------------------------- validation: equal to GluonCV


VAL_CASES = [
    (SSDValTransform(300, 300), gcv_ssd.SSDDefaultValTransform(300, 300)),
    (SSDValTransform(32, 24, mean=(0.5, 0.4, 0.3), std=(0.2, 0.3, 0.4)),
     gcv_ssd.SSDDefaultValTransform(32, 24, mean=(0.5, 0.4, 0.3), std=(0.2, 0.3, 0.4))),
    (SSDValTransform(80, 30), gcv_ssd.SSDDefaultValTransform(80, 30)),  # bilinear: one side grows
    (YOLO3ValTransform(416, 320), gcv_yolo.YOLO3DefaultValTransform(416, 320)),
    (FasterRCNNValTransform(), gcv_rcnn.FasterRCNNDefaultValTransform()),
    (FasterRCNNValTransform(50, 70), gcv_rcnn.FasterRCNNDefaultValTransform(50, 70)),  # capped by max_size
    (CenterNetValTransform(512, 512), gcv_center_net.CenterNetDefaultValTransform(512, 512)),
    (CenterNetValTransform(96, 64), gcv_center_net.CenterNetDefaultValTransform(96, 64)),
]


@pytest.mark.parametrize("ours, reference", VAL_CASES, ids=lambda c: type(c).__name__)
@pytest.mark.parametrize("size", [(40, 60), (61, 37)])
def test_val_presets_equal_gluoncv(ours, reference, size) -> None:
    rng = np.random.RandomState(size[0])
    image = mx.nd.array(rng.randint(0, 256, (*size, 3)), dtype=np.uint8)
    h, w = size
    label = np.array([[2, 3, 20, 30, 1, 0], [5.5, 1.25, w - 1, h - 2, 4, 1], [0, 0, w, h, 7, 0]])
    before = label.copy()
    got, expected = ours(image, label), reference(image, label.copy())
    np.testing.assert_array_equal(label, before)  # unlike GluonCV's CenterNet preset, ours leaves it alone
    assert len(got) == len(expected)
    for mine, theirs in zip(got, expected):
        mine, theirs = _numpy(mine), _numpy(theirs)
        assert mine.dtype == theirs.dtype and mine.shape == theirs.shape
        np.testing.assert_array_equal(mine, theirs)


@pytest.mark.parametrize("preset", [SSDValTransform(30, 30), FasterRCNNValTransform(30, 60),
                                    CenterNetValTransform(32, 32), SSDTrainTransform(30, 30, seed=0)],
                         ids=lambda p: type(p).__name__)
def test_presets_refuse_bad_images_and_labels(preset) -> None:
    label = np.array([[1, 1, 5, 5, 0]], float)
    with pytest.raises(ValueError, match="HWC image with 3 channels, got shape \\(20, 20\\)"):
        preset(mx.nd.zeros((20, 20), dtype="uint8"), label)
    with pytest.raises(ValueError, match="HWC image with 3 channels, got shape \\(20, 20, 4\\)"):
        preset(mx.nd.zeros((20, 20, 4), dtype="uint8"), label)
    with pytest.raises(ValueError, match="image is empty"):
        preset(np.zeros((0, 20, 3), np.uint8), label)  # (MXNet cannot hold an empty image)
    with pytest.raises(ValueError, match=r"\(N, 5\+\) array .* got shape \(4,\)"):
        preset(mx.nd.zeros((20, 20, 3), dtype="uint8"), np.array([1, 1, 5, 5]))


# ---------------------------------------------------------------- training: box/image consistency per op


def test_box_ops_by_hand() -> None:
    boxes = np.array([[10, 20, 30, 40, 3]], float)
    np.testing.assert_array_equal(flip_boxes(boxes, (100, 50), flip_x=True), [[70, 20, 90, 40, 3]])
    np.testing.assert_array_equal(translate_boxes(boxes, 5, -2), [[15, 18, 35, 38, 3]])
    np.testing.assert_array_equal(resize_boxes(boxes, (100, 50), (50, 100)), [[5, 40, 15, 80, 3]])
    # centre (20, 30) inside the crop: kept and clipped; a box whose centre is outside: dropped
    np.testing.assert_array_equal(crop_boxes(np.vstack([boxes, [[0, 0, 12, 12, 1]]]), (15, 10, 50, 25)),
                                  [[0, 10, 15, 25, 3]])


@pytest.mark.parametrize("seed", range(6))
def test_expand_crop_flip_keep_boxes_on_their_objects(seed) -> None:
    rng = np.random.RandomState(seed)
    image, label = _painted()
    canvas, (dx, dy, out_w, out_h) = random_expand(image, rng, fill=(128, 128, 128))
    boxes = translate_boxes(label, dx, dy)
    assert canvas.shape == (out_h, out_w, 3) and out_w >= 60 and out_h >= 40
    _assert_boxes_on_their_colour(canvas.asnumpy(), boxes)
    kept, (left, top, crop_w, crop_h) = random_crop_with_constraints(boxes, (out_w, out_h), rng)
    cropped = mx.image.fixed_crop(canvas, left, top, crop_w, crop_h).asnumpy()
    assert (kept[:, :4] >= 0).all() and (kept[:, (0, 2)] <= crop_w).all() and (kept[:, (1, 3)] <= crop_h).all()
    assert set(kept[:, 5]) <= set(label[:, 5])  # extra columns ride along
    _assert_boxes_on_their_colour(cropped, kept)
    flipped = flip_boxes(kept, (crop_w, crop_h), flip_x=True)
    _assert_boxes_on_their_colour(cropped[:, ::-1], flipped)


def test_faster_rcnn_train_keeps_boxes_on_their_objects() -> None:
    image, label = _painted()
    preset = FasterRCNNTrainTransform(short=(80, 120), max_size=200, seed=3)
    flips = 0
    for _ in range(6):
        tensor, boxes = preset(image, label)
        pixels = tensor.asnumpy().transpose(1, 2, 0) * np.array(STD) + np.array(MEAN)
        assert 80 <= min(pixels.shape[:2]) <= 120 and boxes.dtype == np.float32
        _assert_boxes_on_their_colour(pixels * 255, boxes, margin=1.5)
        flips += boxes[0, 0] > pixels.shape[1] / 2
    assert 0 < flips < 6


@pytest.mark.parametrize("make", [lambda s: SSDTrainTransform(64, 48, seed=s),
                                  lambda s: YOLO3TrainTransform(64, 64, seed=s),
                                  lambda s: FasterRCNNTrainTransform((40, 60), 100, seed=s),
                                  lambda s: CenterNetTrainTransform(64, 64, seed=s)],
                         ids=["ssd", "yolo3", "faster_rcnn", "center_net"])
def test_train_presets_repeat_under_a_seed_and_keep_boxes_inside(make) -> None:
    image, label = _painted()
    runs = []
    for seed in (7, 7, 8):
        preset, outputs = make(seed), []
        for _ in range(4):
            tensor, boxes = preset(image, label)
            height, width = tensor.shape[1:]
            if isinstance(preset, CenterNetTrainTransform):  # boxes in the 4x smaller heatmap frame
                height, width = height // 4, width // 4
            assert tensor.dtype == np.float32 and boxes.dtype == np.float32 and boxes.shape[1] == 6
            assert (boxes[:, :4] >= 0).all() and (boxes[:, 2] <= width).all() and (boxes[:, 3] <= height).all()
            assert (boxes[:, 0] <= boxes[:, 2]).all() and (boxes[:, 1] <= boxes[:, 3]).all()
            assert set(boxes[:, 4]) <= {0, 1, 2} and np.isfinite(tensor.asnumpy()).all()
            outputs.append((tensor.asnumpy(), boxes))
        runs.append(outputs)
    for (a, boxes_a), (b, boxes_b) in zip(runs[0], runs[1]):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(boxes_a, boxes_b)
    assert any(a.shape != c.shape or not np.array_equal(a, c) for (a, _), (c, _) in zip(runs[0], runs[2]))


@pytest.mark.parametrize("make, scale", [(lambda: SSDTrainTransform(64, 48, seed=11), 1),
                                         (lambda: YOLO3TrainTransform(64, 64, seed=12), 1),
                                         (lambda: CenterNetTrainTransform(96, 64, seed=13), 4)],
                         ids=["ssd", "yolo3", "center_net"])
def test_train_boxes_follow_their_objects_through_the_whole_preset(make, scale) -> None:
    # colour distortion changes every pixel by the same function of its colour, so each
    # painted box stays uniform and the three stay distinct: a box that missed its object
    # (a wrong translation, crop, warp or flip) would cover mixed pixels
    image, label = _painted()
    preset = make()
    for _ in range(8):
        tensor, boxes = preset(image, label)
        pixels = tensor.asnumpy().transpose(1, 2, 0)
        centres = {}
        for x1, y1, x2, y2, cls, _ in boxes * np.array([scale] * 4 + [1, 1]):
            qx, qy = (x2 - x1) / 4, (y2 - y1) / 4  # the box's central half
            inside = pixels[int(np.ceil(y1 + qy)):int(np.floor(y2 - qy)), int(np.ceil(x1 + qx)):int(np.floor(x2 - qx))]
            if inside.shape[0] < 2 or inside.shape[1] < 2:
                continue
            assert np.ptp(inside.reshape(-1, 3), axis=0).max() < 0.1, f"box {cls:.0f} is not on its object"
            centres[cls] = inside.reshape(-1, 3).mean(axis=0)
        for a in centres:
            for b in centres:
                assert a == b or np.abs(centres[a] - centres[b]).max() > 0.5
