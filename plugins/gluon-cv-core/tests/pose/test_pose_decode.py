"""Heatmap decoding equals GluonCV 0.10's (``gluoncv.data.transforms.pose``) on generated heatmaps and boxes."""

from __future__ import annotations

import numpy as np
import pytest

from gluon_cv_core.pose.decode import (
    heatmap_peaks,
    heatmap_to_coord,
    heatmap_to_coord_affine,
    heatmap_to_coord_alpha_pose,
    person_boxes,
    refine_peaks,
    upscale_boxes,
)
from gluon_hub.compat import mx

from gluoncv.data.transforms import pose as reference  # test-only reference, after the compat shim


def _heatmaps(persons: int = 5, joints: int = 17, size: tuple[int, int] = (64, 48), seed: int = 0) -> np.ndarray:
    """Gaussian blobs on noise, with the cases decoding treats specially: peaks centred on a
    pixel (equal neighbours, no shift), peaks on and next to the border (no shift), an
    all-zero and an all-negative map (reported at (0, 0))."""
    rng = np.random.RandomState(seed)
    height, width = size
    ys, xs = np.mgrid[0:height, 0:width]
    maps = rng.uniform(-0.05, 0.05, (persons, joints, height, width))
    for n in range(persons):
        for k in range(joints):
            cx, cy = rng.uniform(0, width - 1), rng.uniform(0, height - 1)
            if k % 4 == 0:
                cx, cy = float(round(cx)), float(round(cy))
                maps[n, k] = 0  # no noise: the neighbours stay exactly equal
            maps[n, k] += rng.uniform(0.2, 1.0) * np.exp(-((xs - cx) ** 2 + (ys - cy) ** 2) / (2 * 2.0 ** 2))
    maps[0, 1] = np.exp(-((xs - 1) ** 2 + (ys - 30) ** 2) / 8.0)  # next to the left border
    maps[0, 2] = np.exp(-((xs - width + 1) ** 2 + (ys - 0) ** 2) / 8.0)  # a corner
    maps[1, 3] = 0
    maps[1, 4] = -maps[1, 4] - 1
    return maps.astype(np.float32)


def _boxes(persons: int, seed: int = 1) -> np.ndarray:
    rng = np.random.RandomState(seed)
    x0, y0 = rng.uniform(0, 300, persons), rng.uniform(0, 200, persons)
    return np.stack([x0, y0, x0 + rng.uniform(30, 200, persons), y0 + rng.uniform(60, 300, persons)], axis=1)


def test_peaks_and_their_refinement_cover_the_special_cases() -> None:
    maps = _heatmaps()
    coords, peak = heatmap_peaks(maps)
    assert coords.shape == (5, 17, 2) and peak.shape == (5, 17, 1)
    np.testing.assert_array_equal(coords[1, 3], [0, 0])  # not positive: reported at the origin
    np.testing.assert_array_equal(coords[1, 4], [0, 0])
    refined = refine_peaks(maps, coords)
    np.testing.assert_array_equal(refined[0, 1:3], coords[0, 1:3])  # at the border: not moved
    steps = np.abs(refined - coords)
    assert set(np.unique(steps)) == {0.0, 0.25}
    assert (steps[:, 0::4] == 0).all()  # centred on a pixel: equal neighbours, no step
    assert (steps == 0.25).sum() > 50


def test_heatmap_to_coord_matches_gluoncv() -> None:
    maps, boxes = _heatmaps(), _boxes(5)
    expected, expected_peak = reference.heatmap_to_coord(mx.nd.array(maps), boxes.tolist())
    coords, peak = heatmap_to_coord(maps, boxes)
    np.testing.assert_allclose(coords, expected.asnumpy(), rtol=1e-6, atol=1e-4)
    np.testing.assert_array_equal(peak, expected_peak.asnumpy())


def test_refined_box_decoding_is_the_refined_peak_scaled_into_the_box() -> None:
    maps, boxes = _heatmaps(), _boxes(5)
    coords, _ = heatmap_to_coord(maps, boxes, refine=True)
    refined = refine_peaks(maps, heatmap_peaks(maps)[0])
    size = np.array([48, 64])
    np.testing.assert_allclose(coords, boxes[:, None, :2] + (boxes[:, None, 2:] - boxes[:, None, :2]) * refined / size,
                               rtol=1e-6, atol=1e-4)
    assert not np.allclose(coords, heatmap_to_coord(maps, boxes)[0])


def test_affine_decoding_matches_gluoncv_get_final_preds() -> None:
    maps = _heatmaps()
    rng = np.random.RandomState(3)
    center = rng.uniform(50, 400, (5, 2))
    scale = np.stack([rng.uniform(40, 300, 5), rng.uniform(50, 400, 5)], axis=1)
    expected, expected_peak = reference.get_final_preds(mx.nd.array(maps), center, scale)
    coords, peak = heatmap_to_coord_affine(maps, center, scale)
    np.testing.assert_allclose(coords, expected.asnumpy(), rtol=1e-6, atol=1e-4)
    np.testing.assert_array_equal(peak, expected_peak.asnumpy())


@pytest.mark.parametrize("size", [(80, 64), (64, 48)])
def test_alpha_pose_decoding_matches_gluoncv(size: tuple[int, int]) -> None:
    maps, boxes = _heatmaps(4, size=size), _boxes(4, seed=5)
    boxes[0, 2] = boxes[0, 0] + 20  # tall and narrow: padded across
    boxes[1, 3] = boxes[1, 1] + 20  # wide and flat: padded down
    expected, expected_peak = reference.heatmap_to_coord_alpha_pose(mx.nd.array(maps), boxes)
    coords, peak = heatmap_to_coord_alpha_pose(maps, boxes)
    np.testing.assert_allclose(coords, expected.asnumpy(), rtol=1e-6, atol=1e-4)
    np.testing.assert_array_equal(peak, expected_peak.asnumpy())


def test_person_selection_and_upscaled_boxes_match_gluoncv() -> None:
    image = np.zeros((240, 320, 3), dtype=np.uint8)
    ids = np.array([[[0], [2], [0], [0], [-1]]], dtype=np.float32)
    scores = np.array([[[0.9], [0.95], [0.3], [0.5], [-1]]], dtype=np.float32)
    boxes = np.array([[[10, 20, 110, 220], [0, 0, 50, 50], [5, 5, 9, 9], [200, 30, 310, 235], [-1, -1, -1, -1]]],
                     dtype=np.float32)
    _, expected = reference.detector_to_simple_pose(image, mx.nd.array(ids), mx.nd.array(scores), mx.nd.array(boxes))
    persons = person_boxes(ids, scores, boxes)
    np.testing.assert_allclose(upscale_boxes(persons, image.shape), np.array(expected), rtol=1e-6)
    assert len(persons) == 2


def test_bad_shapes_are_explained() -> None:
    with pytest.raises(ValueError, match="persons, keypoints, height, width"):
        heatmap_peaks(np.zeros((17, 64, 48)))
    with pytest.raises(ValueError, match="2 boxes .* for 3 heatmap sets"):
        heatmap_to_coord(np.zeros((3, 17, 8, 6)), np.zeros((2, 4)))
