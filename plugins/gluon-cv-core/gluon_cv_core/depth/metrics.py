"""KITTI depth errors as Monodepth2 and GluonCV 0.10 report them (``scripts/depth/test.py``).

:func:`compute_errors` gives the seven standard errors of predicted against ground-truth depths
(checked against worked cases computed by hand from the definitions, in
``tests/depth/test_depth_data.py``). :func:`evaluate_image` does one image the way GluonCV's
evaluation does: the predicted disparity resized to the ground truth, inverted to depth, the
valid pixels (between ``min_depth`` and ``max_depth``, inside the Eigen crop), an optional fixed
scale (5.4 for stereo-trained models) or the per-image median scaling of monocular models, then
clamping to ``[min_depth, max_depth]``. :class:`DepthErrors` averages images, as GluonCV does.
"""

from __future__ import annotations

from dataclasses import astuple, dataclass
from typing import Sequence

import numpy as np

__all__ = ["DepthErrors", "ERROR_NAMES", "Errors", "compute_errors", "eigen_crop_mask", "evaluate_image", "resize_bilinear"]

ERROR_NAMES = ("abs_rel", "sq_rel", "rmse", "rmse_log", "a1", "a2", "a3")
#: GluonCV's evaluation range, in metres
MIN_DEPTH, MAX_DEPTH = 1e-3, 80.0
#: Garg and Eigen's crop of KITTI's ground truth: rows then columns, as fractions of the image
_EIGEN_CROP = (0.40810811, 0.99189189, 0.03594771, 0.96405229)


@dataclass(frozen=True)
class Errors:
    """The seven errors of one image (or their mean): lower is better but for ``a1..a3``."""

    abs_rel: float
    sq_rel: float
    rmse: float
    rmse_log: float
    a1: float
    a2: float
    a3: float

    def as_dict(self) -> dict[str, float]:
        return dict(zip(ERROR_NAMES, astuple(self)))


def compute_errors(gt: np.ndarray, pred: np.ndarray) -> Errors:
    """Errors of ``pred`` against ``gt``, two arrays of the same positive depths (any shape).

    ``a1``, ``a2``, ``a3``: the share of pixels whose ratio ``max(gt / pred, pred / gt)`` is below
    1.25, 1.25² and 1.25³; ``abs_rel`` and ``sq_rel`` divide by the ground truth.
    """
    gt = np.asarray(gt, dtype=np.float64)
    pred = np.asarray(pred, dtype=np.float64)
    if gt.shape != pred.shape:
        raise ValueError(f"ground truth {gt.shape} and prediction {pred.shape} differ in shape")
    if gt.size == 0:
        raise ValueError("no pixels to compare: the ground truth has no valid depth")
    if (gt <= 0).any() or (pred <= 0).any():
        raise ValueError("depths must be positive; mask out pixels without ground truth first")
    ratio = np.maximum(gt / pred, pred / gt)
    diff = gt - pred
    return Errors(
        abs_rel=float(np.mean(np.abs(diff) / gt)),
        sq_rel=float(np.mean(diff ** 2 / gt)),
        rmse=float(np.sqrt(np.mean(diff ** 2))),
        rmse_log=float(np.sqrt(np.mean((np.log(gt) - np.log(pred)) ** 2))),
        a1=float(np.mean(ratio < 1.25)),
        a2=float(np.mean(ratio < 1.25 ** 2)),
        a3=float(np.mean(ratio < 1.25 ** 3)),
    )


def eigen_crop_mask(height: int, width: int) -> np.ndarray:
    """``(height, width)`` bool mask of the Eigen crop GluonCV evaluates KITTI inside."""
    top, bottom, left, right = (np.array(_EIGEN_CROP) * [height, height, width, width]).astype(np.int32)
    mask = np.zeros((height, width), dtype=bool)
    mask[top:bottom, left:right] = True
    return mask


def resize_bilinear(image: np.ndarray, height: int, width: int) -> np.ndarray:
    """A 2-D float map resized with pixel-centre bilinear sampling, as OpenCV's ``INTER_LINEAR``
    (which GluonCV resizes predicted disparities with) does."""
    image = np.asarray(image, dtype=np.float32)
    if image.shape == (height, width):
        return image.copy()

    def taps(size_in: int, size_out: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        pos = np.clip((np.arange(size_out) + 0.5) * size_in / size_out - 0.5, 0, size_in - 1)
        low = np.floor(pos).astype(np.int64)
        high = np.minimum(low + 1, size_in - 1)
        return low, high, (pos - low).astype(np.float32)

    r0, r1, fr = taps(image.shape[0], height)
    c0, c1, fc = taps(image.shape[1], width)
    rows = image[r0] * (1 - fr)[:, None] + image[r1] * fr[:, None]
    return rows[:, c0] * (1 - fc) + rows[:, c1] * fc


def evaluate_image(gt_depth: np.ndarray, pred_disp: np.ndarray, median_scaling: bool = True,
                   scale_factor: float = 1.0, eigen_crop: bool = True, min_depth: float = MIN_DEPTH,
                   max_depth: float = MAX_DEPTH) -> tuple[Errors, float]:
    """Errors of one predicted disparity map against a ground-truth depth map (0 = no depth),
    and the median-scaling ratio applied (1.0 without).

    Monocular models use ``median_scaling=True`` (their scale is arbitrary: each prediction is
    scaled so its median matches the ground truth's); stereo-trained ones
    ``median_scaling=False, scale_factor=5.4``.
    """
    gt_depth = np.asarray(gt_depth, dtype=np.float64)
    pred_disp = np.asarray(pred_disp, dtype=np.float32)
    if gt_depth.ndim != 2 or pred_disp.ndim != 2:
        raise ValueError(f"expected 2-D depth and disparity maps, got {gt_depth.shape} and {pred_disp.shape}")
    if (pred_disp <= 0).any():
        raise ValueError("predicted disparities must be positive (Monodepth2's lie in [1/max_depth, 1/min_depth])")
    height, width = gt_depth.shape
    pred_depth = 1.0 / resize_bilinear(pred_disp, height, width).astype(np.float64)
    if eigen_crop:
        mask = (gt_depth > min_depth) & (gt_depth < max_depth) & eigen_crop_mask(height, width)
    else:
        mask = gt_depth > 0
    gt, pred = gt_depth[mask], pred_depth[mask] * scale_factor
    if gt.size == 0:
        raise ValueError("the ground-truth map has no valid depth inside the evaluated region")
    ratio = 1.0
    if median_scaling:
        ratio = float(np.median(gt) / np.median(pred))
        pred = pred * ratio
    return compute_errors(gt, np.clip(pred, min_depth, max_depth)), ratio


class DepthErrors:
    """The mean of per-image errors over a test set (GluonCV averages images, not pixels)."""

    def __init__(self, median_scaling: bool = True, scale_factor: float = 1.0, eigen_crop: bool = True) -> None:
        self.median_scaling, self.scale_factor, self.eigen_crop = median_scaling, scale_factor, eigen_crop
        self.errors: list[Errors] = []
        self.ratios: list[float] = []

    def update(self, gt_depths: Sequence[np.ndarray], pred_disps: Sequence[np.ndarray]) -> None:
        """Add images: ground-truth depth maps and the predicted disparities, in the same order."""
        if len(gt_depths) != len(pred_disps):
            raise ValueError(f"{len(gt_depths)} ground-truth maps but {len(pred_disps)} predictions")
        for gt, disp in zip(gt_depths, pred_disps):
            errors, ratio = evaluate_image(gt, disp, self.median_scaling, self.scale_factor, self.eigen_crop)
            self.errors.append(errors)
            self.ratios.append(ratio)

    def get(self) -> Errors:
        if not self.errors:
            raise ValueError("no images were added: call update() first")
        return Errors(*np.mean([astuple(e) for e in self.errors], axis=0).tolist())
