"""KITTI raw layout (split lines, frames, sides, calibration, velodyne ground truth) on a tiny
generated fixture, and the depth errors on worked cases."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from gluon_cv_core.datasets.kitti import KITTI_INTRINSICS, KITTIRawDepth, read_split, velodyne_depth_map
from gluon_cv_core.depth.metrics import (
    DepthErrors,
    compute_errors,
    eigen_crop_mask,
    evaluate_image,
    resize_bilinear,
)

DRIVE = "2011_09_26/2011_09_26_drive_0001_sync"
#: focal length and principal point of the fixture's rectified camera 2 (1242 x 375, as KITTI's)
FOCAL, CX, CY = 700.0, 600.2, 180.4


def write_kitti(root: Path, frames: int = 3, size: tuple[int, int] = (48, 16)) -> Path:
    """KITTI raw in miniature: one drive, ``frames`` PNG frames per camera (left red-ish, right
    blue-ish, brightness growing with the frame number), calibration, and one velodyne scan."""
    date = root / "2011_09_26"
    for camera, channel in ((2, 0), (3, 2)):
        folder = root / DRIVE / f"image_0{camera}" / "data"
        folder.mkdir(parents=True)
        for k in range(frames):
            pixels = np.full((size[1], size[0], 3), 10 * k, np.uint8)
            pixels[..., channel] = 200
            Image.fromarray(pixels).save(folder / f"{k:010d}.png")
    (date / "calib_cam_to_cam.txt").write_text(
        "calib_time: 09-Jan-2012 13:57:47\n"
        "S_rect_02: 1.242000e+03 3.750000e+02\n"
        "R_rect_00: 1 0 0 0 1 0 0 0 1\n"
        f"P_rect_02: {FOCAL} 0 {CX} 0 0 {FOCAL} {CY} 0 0 0 1 0\n"
        f"P_rect_03: {FOCAL} 0 {CX} -378 0 {FOCAL} {CY} 0 0 0 1 0\n")
    # velodyne x forward, y left, z up -> camera x right, y down, z forward
    (date / "calib_velo_to_cam.txt").write_text("R: 0 -1 0 0 0 -1 1 0 0\nT: 0 0 0\n")
    scan = root / DRIVE / "velodyne_points" / "data"
    scan.mkdir(parents=True)
    points = np.array([[10, 0, 0, 0.5],     # straight ahead: the principal point, 10 m
                       [12, 0, 0, 0.5],     # behind it on the same pixel: the nearer one wins
                       [20, 2, 1, 0.5],     # up and to the left
                       [-5, 0, 0, 0.5],     # behind the car
                       [1, 50, 0, 0.5]],    # far outside the image
                      np.float32)
    points.tofile(scan / "0000000000.bin")
    return root


@pytest.fixture
def kitti(tmp_path) -> Path:
    return write_kitti(tmp_path / "kitti_data")


def test_velodyne_points_project_to_their_pixels_nearest_first(kitti) -> None:
    depth = velodyne_depth_map(kitti / "2011_09_26", kitti / DRIVE / "velodyne_points/data/0000000000.bin", 2)
    assert depth.shape == (375, 1242)
    # KITTI's devkit convention: round, then one pixel back
    assert depth[int(round(CY)) - 1, int(round(CX)) - 1] == 10.0
    u = int(round(FOCAL * -2 / 20 + CX)) - 1
    v = int(round(FOCAL * -1 / 20 + CY)) - 1
    assert depth[v, u] == 20.0
    assert np.count_nonzero(depth) == 2


def test_items_have_gluoncvs_keys_scales_frames_and_sides(kitti) -> None:
    data = KITTIRawDepth(kitti, [f"{DRIVE} 1 l"], height=32, width=64, frame_ids=(0, -1, 1, "s"), num_scales=2)
    assert len(data) == 1 and not data.has_depth  # frame 1 has no scan
    item = data[0]
    for frame_id in (0, -1, 1, "s"):
        assert item[("color", frame_id, 0)].shape == (3, 32, 64)
        assert item[("color", frame_id, 1)].shape == (3, 16, 32)
        assert item[("color_aug", frame_id, 0)] is item[("color", frame_id, 0)]
    colour = {f: item[("color", f, 0)].asnumpy().mean(axis=(1, 2)) for f in (0, -1, 1, "s")}
    assert colour[-1][1] == pytest.approx(0 / 255, abs=1e-3)  # frame 0
    assert colour[0][1] == pytest.approx(10 / 255, abs=1e-3)  # frame 1
    assert colour[1][1] == pytest.approx(20 / 255, abs=1e-3)  # frame 2
    assert colour[0][0] == pytest.approx(200 / 255, abs=1e-3)  # left camera: red
    assert colour["s"][2] == pytest.approx(200 / 255, abs=1e-3)  # the other side: the right camera, blue
    expected = KITTI_INTRINSICS.copy()
    expected[0] *= 32
    expected[1] *= 16
    np.testing.assert_allclose(item[("K", 1)].asnumpy(), expected)
    np.testing.assert_allclose(item[("inv_K", 1)].asnumpy() @ expected, np.eye(4), atol=1e-5)
    assert item["stereo_T"].asnumpy()[0, 3] == pytest.approx(-0.1)  # left image: the other camera is right


def test_ground_truth_comes_with_the_first_samples_scan(kitti, tmp_path) -> None:
    split = tmp_path / "test_files.txt"
    split.write_text(f"{DRIVE} 0 l\n\n")
    data = KITTIRawDepth(kitti, split, height=32, width=64)
    assert data.has_depth
    depth = data[0]["depth_gt"].asnumpy()
    assert depth.shape == (1, 375, 1242)
    assert sorted(np.unique(depth).tolist()) == [0.0, 10.0, 20.0]


def test_missing_data_and_bad_split_lines_say_what_to_do(kitti, tmp_path) -> None:
    with pytest.raises(FileNotFoundError, match="KITTI raw is user-provided.*raw_data.php"):
        KITTIRawDepth(tmp_path / "nowhere", [f"{DRIVE} 0 l"])
    with pytest.raises(FileNotFoundError, match="0000000007.png"):
        KITTIRawDepth(kitti, [f"{DRIVE} 7 l"])
    with pytest.raises(ValueError, match=r"line 2: 'drive 3 x' is not 'FOLDER FRAME SIDE'"):
        read_split([f"{DRIVE} 0 l", "drive 3 x"])
    with pytest.raises(FileNotFoundError, match="split file"):
        read_split(str(tmp_path / "missing.txt"))
    data = KITTIRawDepth(kitti, [f"{DRIVE} 2 r"], height=32, width=64, frame_ids=(0, 1))
    with pytest.raises(FileNotFoundError, match="0000000003.png.*temporal neighbours"):
        data[0]
    (kitti / DRIVE / "image_02/data/0000000000.png").write_bytes(b"not a png")
    with pytest.raises(ValueError, match="cannot decode image .*0000000000.png"):
        KITTIRawDepth(kitti, [f"{DRIVE} 0 l"], height=32, width=64)[0]


def test_errors_on_a_worked_case() -> None:
    gt, pred = np.array([1.0, 2.0, 4.0, 10.0]), np.array([1.0, 1.5, 8.0, 19.0])
    errors = compute_errors(gt, pred)
    # gt - pred: 0, .5, -4, -9; ratios max(gt/pred, pred/gt): 1, 4/3, 2, 1.9
    assert errors.abs_rel == pytest.approx((0 + 0.25 + 1 + 0.9) / 4)
    assert errors.sq_rel == pytest.approx((0 + 0.125 + 4 + 8.1) / 4)
    assert errors.rmse == pytest.approx(np.sqrt((0 + 0.25 + 16 + 81) / 4))
    assert errors.rmse_log == pytest.approx(np.sqrt((np.log(4 / 3) ** 2 + np.log(2) ** 2 + np.log(1.9) ** 2) / 4))
    # thresholds 1.25, 1.5625, 1.953125
    assert (errors.a1, errors.a2, errors.a3) == (0.25, 0.5, 0.75)
    assert list(errors.as_dict()) == ["abs_rel", "sq_rel", "rmse", "rmse_log", "a1", "a2", "a3"]


def test_median_scaling_makes_a_rescaled_prediction_perfect() -> None:
    gt = np.zeros((40, 60))
    gt[20:38, 5:55] = np.linspace(2, 25, 18 * 50).reshape(18, 50)  # three times deeper stays under 80 m
    disp = np.zeros_like(gt, dtype=np.float32)
    disp[gt > 0] = 1 / (gt[gt > 0] * 3)  # right shape, three times too deep
    disp[gt == 0] = 0.01
    errors, ratio = evaluate_image(gt, disp, eigen_crop=False)
    assert ratio == pytest.approx(1 / 3)
    assert errors.abs_rel == pytest.approx(0, abs=1e-6) and errors.a1 == 1.0
    unscaled, ratio = evaluate_image(gt, disp, median_scaling=False, eigen_crop=False)
    assert ratio == 1.0 and unscaled.abs_rel == pytest.approx(2.0, rel=1e-5)
    fixed, _ = evaluate_image(gt, disp, median_scaling=False, scale_factor=1 / 3, eigen_crop=False)
    assert fixed.rmse == pytest.approx(0, abs=1e-4)
    metric = DepthErrors(median_scaling=True, eigen_crop=False)
    metric.update([gt, gt], [disp, disp])
    assert metric.get().abs_rel == pytest.approx(0, abs=1e-6) and metric.ratios == pytest.approx([1 / 3, 1 / 3])


def test_eigen_crop_and_resizing_follow_gluoncvs_evaluation() -> None:
    import cv2

    mask = eigen_crop_mask(375, 1242)
    rows, cols = np.nonzero(mask)
    assert (rows.min(), rows.max() + 1, cols.min(), cols.max() + 1) == (153, 371, 44, 1197)
    disp = np.random.RandomState(0).uniform(0.01, 1, (12, 40)).astype(np.float32)
    for height, width in ((37, 125), (6, 17)):
        np.testing.assert_allclose(resize_bilinear(disp, height, width), cv2.resize(disp, (width, height)),
                                   rtol=1e-6, atol=1e-6)


def test_bad_metric_input_is_refused() -> None:
    with pytest.raises(ValueError, match="differ in shape"):
        compute_errors(np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match="positive"):
        compute_errors(np.array([1.0, 0.0]), np.ones(2))
    with pytest.raises(ValueError, match="no valid depth"):
        evaluate_image(np.zeros((10, 10)), np.ones((5, 5), np.float32))
    with pytest.raises(ValueError, match="update"):
        DepthErrors().get()
