"""GluonCV 0.10's Simple Pose recipe: person crops, Gaussian heatmap targets, the masked MSE loss,
and OKS AP evaluation; what ``train_pose`` is made of.

A person's box becomes a centre and a scale (the box grown to the crop's aspect ratio, times
1.25); training draws a random scale factor, a rotation (60% of the time) and a horizontal flip
that swaps left and right joints, then cuts the crop out with one affine warp (OpenCV, bilinear,
black outside the image). Each labelled joint inside the crop gets a Gaussian of ``sigma`` heatmap
pixels (peak 1) and weight 1; unlabelled joints and joints whose Gaussian misses the heatmap get
weight 0, so the loss ignores them. :class:`PoseTrainTransform` draws from its own Python and
numpy streams in GluonCV's order: with ``seed=s`` it returns the crops and targets
``SimplePoseDefaultTrainTransform`` returns after ``random.seed(s); np.random.seed(s)``
(checked in ``tests/pose/test_pose_training.py``).

Evaluation is GluonCV's ``validate.py``: the unrotated crop of each ground-truth box, heatmaps
decoded with the quarter-pixel refinement and mapped back through the crop, optionally averaged
with the mirrored crop's (``flip_test``), scored by pycocotools' OKS AP
(:class:`~gluon_cv_core.pose.metrics.COCOKeyPointsMetric`).
"""

from __future__ import annotations

import multiprocessing
import os
import random
from typing import Any, Sequence

import numpy as np

from gluon_hub.compat import mx

from ..common.worker_random import WorkerRandom
from ..common.zoo import IMAGENET_MEAN, IMAGENET_STD
from .keypoints import COCO_FLIP_PAIRS

__all__ = ["box_to_center_scale", "crop_matrix", "HeatmapTargets", "PoseTrainTransform", "PoseValTransform",
           "heatmap_loss", "flip_heatmaps", "evaluate_pose"]

#: GluonCV's margin around a person box
BOX_SCALE = 1.25


def _cv2() -> Any:
    try:
        import cv2
    except ImportError:
        raise ImportError("pose crops are cut with OpenCV's affine warp, which is not installed: "
                          "pip install opencv-python (the plugin's [opencv] extra)") from None
    return cv2


def box_to_center_scale(box: Sequence[float], aspect_ratio: float,
                        scale_mult: float = BOX_SCALE) -> tuple[np.ndarray, np.ndarray]:
    """``(center, scale)`` float32 ``(x, y)`` and ``(width, height)`` of the crop around a box
    ``(x0, y0, x1, y1)``: the box widened or heightened to ``aspect_ratio`` (width / height),
    then grown ``scale_mult`` times."""
    x0, y0, x1, y1 = box
    w, h = x1 - x0, y1 - y0
    center = np.array([x0 + w * 0.5, y0 + h * 0.5], np.float32)
    if w > aspect_ratio * h:
        h = w / aspect_ratio
    elif w < aspect_ratio * h:
        w = h * aspect_ratio
    return center, np.array([w, h], np.float32) * scale_mult


def crop_matrix(center: np.ndarray, width: float, rotation: float, out_w: int, out_h: int,
                inverse: bool = False) -> np.ndarray:
    """The 2x3 affine map taking ``width`` image pixels about ``center``, turned ``rotation``
    degrees, onto an ``out_w`` x ``out_h`` crop (or back, with ``inverse``).

    Solved by OpenCV from three float32 point pairs (the centre, a point half a crop-width above
    it, and one at right angles), as the Simple Baselines code does, so that the matrix and
    OpenCV's fixed-point warp with it agree with GluonCV's to the bit.
    """
    theta = np.pi * rotation / 180
    half = np.float32(width) * -0.5
    up = np.array([-(half * np.sin(theta)), half * np.cos(theta)])  # (0, half) turned by theta
    src = np.zeros((3, 2), np.float32)
    src[0] = center
    src[1] = np.asarray(center, np.float64) + up
    dst = np.array([[out_w * 0.5, out_h * 0.5], [out_w * 0.5, out_h * 0.5 - out_w * 0.5], [0, 0]], np.float32)
    for points in (src, dst):
        towards = points[0] - points[1]
        points[2] = points[1] + np.array([-towards[1], towards[0]], np.float32)
    cv2 = _cv2()
    return cv2.getAffineTransform(dst, src) if inverse else cv2.getAffineTransform(src, dst)


def _warp(pixels: np.ndarray, matrix: np.ndarray, out_w: int, out_h: int) -> np.ndarray:
    cv2 = _cv2()
    return cv2.warpAffine(pixels, matrix, (int(out_w), int(out_h)), flags=cv2.INTER_LINEAR)


def _tensor(pixels: np.ndarray, mean: Sequence[float], std: Sequence[float]) -> Any:
    """HWC uint8 -> normalised CHW float32 NDArray."""
    return mx.nd.image.normalize(mx.nd.image.to_tensor(mx.nd.array(pixels)), mean=tuple(mean), std=tuple(std))


def _pixels(image: Any) -> np.ndarray:
    pixels = image.asnumpy() if hasattr(image, "asnumpy") else np.asarray(image)
    if pixels.ndim != 3 or pixels.shape[2] != 3:
        raise ValueError(f"expected an image of height x width x 3, got shape {pixels.shape}")
    return pixels


class HeatmapTargets:
    """Gaussian heatmap targets and their weights from joints in crop pixels.

    Parameters
    ----------
    image_size, heatmap_size : ``(height, width)`` of the crop and of the heatmaps.
    sigma : the Gaussian's standard deviation, in heatmap pixels; it is cut off at 3 sigma.

    Calling it with ``(J, 3)`` joints ``x, y, visibility`` gives ``(J, H, W)`` float32 targets
    and ``(J, 1, 1)`` float32 weights: a joint's weight is its visibility, or 0 when its
    Gaussian lies wholly outside the heatmap; a weighted joint's heatmap holds the Gaussian
    (peak 1 at the joint's nearest heatmap pixel), the others stay 0.
    """

    def __init__(self, image_size: Sequence[int], heatmap_size: Sequence[int], sigma: float = 2) -> None:
        if sigma <= 0:
            raise ValueError(f"sigma must be positive, got {sigma}")
        self.height, self.width = (int(v) for v in heatmap_size)
        # (x, y) pixels of crop per heatmap pixel
        self.stride = np.array([image_size[1], image_size[0]]) / np.array([self.width, self.height])
        self.radius = sigma * 3
        side = 2 * self.radius + 1
        axis = np.arange(0, side, 1, np.float32)
        mid = side // 2
        self.patch = np.exp(-((axis[None, :] - mid) ** 2 + (axis[:, None] - mid) ** 2) / (2 * sigma ** 2))

    def __call__(self, joints: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        joints = np.asarray(joints)
        target = np.zeros((len(joints), self.height, self.width), np.float32)
        weight = joints[:, 2].astype(np.float32)
        for j, (x, y) in enumerate(joints[:, :2]):
            # int() truncates towards zero, as the reference does, also for points left of the crop
            mu_x, mu_y = int(x / self.stride[0] + 0.5), int(y / self.stride[1] + 0.5)
            left, top = int(mu_x - self.radius), int(mu_y - self.radius)
            right, bottom = int(mu_x + self.radius + 1), int(mu_y + self.radius + 1)
            if left >= self.width or top >= self.height or right < 0 or bottom < 0:
                weight[j] = 0
                continue
            if weight[j] > 0.5:
                x0, x1 = max(0, left), min(right, self.width)
                y0, y1 = max(0, top), min(bottom, self.height)
                target[j, y0:y1, x0:x1] = self.patch[y0 - top:y1 - top, x0 - left:x1 - left]
        return target, weight.reshape(-1, 1, 1)


class PoseTrainTransform:
    """GluonCV's Simple Pose training augmentation of ``(image, label, image_id)`` items of
    :class:`~gluon_cv_core.datasets.coco_keypoints.COCOKeyPoints`, seeded.

    Parameters
    ----------
    image_size : ``(height, width)`` of the crop; ``heatmap_size`` defaults to a quarter of it.
    sigma : of the Gaussian targets, in heatmap pixels.
    scale_factor : the crop's scale is multiplied by ``N(1, scale_factor)`` clipped to
        ``1 +- scale_factor``.
    rotation_factor : 60% of crops turn by ``N(0, rotation_factor)`` degrees, clipped to twice that.
    flip : mirror half of the crops, swapping the joints of ``flip_pairs``.
    seed : seeds the transform's Python and numpy streams (GluonCV draws from the global ones);
        a data-loader worker re-seeds from it and its own name.

    Returns ``(image, target, weight, image_id)``: the normalised ``(3, H, W)`` crop, ``(J, h, w)``
    heatmap targets and ``(J, 1, 1)`` weights (see :class:`HeatmapTargets`).
    """

    def __init__(self, image_size: Sequence[int] = (256, 192), heatmap_size: Sequence[int] | None = None,
                 sigma: float = 2, scale_factor: float = 0.25, rotation_factor: float = 30, flip: bool = True,
                 flip_pairs: Sequence[tuple[int, int]] = COCO_FLIP_PAIRS, mean: Sequence[float] = IMAGENET_MEAN,
                 std: Sequence[float] = IMAGENET_STD, seed: int | None = None) -> None:
        self.height, self.width = (int(v) for v in image_size)
        heatmap_size = heatmap_size or (self.height // 4, self.width // 4)
        self.targets = HeatmapTargets(image_size, heatmap_size, sigma)
        self.scale_factor, self.rotation_factor, self.flip = scale_factor, rotation_factor, flip
        self.flip_pairs, self.mean, self.std = tuple(flip_pairs), tuple(mean), tuple(std)
        self._seed, self._numpy = seed, WorkerRandom(seed)
        self._pid, self._python = os.getpid(), random.Random(seed)

    @property
    def python_random(self) -> random.Random:
        """This process's Python stream (a data-loader worker re-seeds its copy)."""
        if os.getpid() != self._pid:
            self._pid = os.getpid()
            name = multiprocessing.current_process().name
            self._python = random.Random(None if self._seed is None else f"{self._seed}/{name}")
        return self._python

    def flip_joints(self, joints: np.ndarray, width: int) -> np.ndarray:
        """``joints`` of an image ``width`` pixels wide, mirrored: x to ``width - 1 - x``, left and
        right swapped, unlabelled joints moved to ``(0, 0)``."""
        out = joints.copy()
        out[:, 0] = width - out[:, 0] - 1
        for left, right in self.flip_pairs:
            out[[left, right]] = out[[right, left]]
        out[:, :2] *= out[:, 2:3]
        return out

    def __call__(self, image: Any, label: dict[str, np.ndarray], image_id: Any) -> tuple[Any, np.ndarray,
                                                                                        np.ndarray, Any]:
        pixels = _pixels(image)
        joints = np.array(label["joints"], np.float32)
        center, scale = box_to_center_scale(label["bbox"], self.width / self.height)
        numpy_rng, python_rng = self._numpy.rng, self.python_random
        sf, rf = self.scale_factor, self.rotation_factor
        scale = scale * np.clip(numpy_rng.randn() * sf + 1, 1 - sf, 1 + sf)
        rotation = np.clip(numpy_rng.randn() * rf, -rf * 2, rf * 2) if python_rng.random() <= 0.6 else 0
        if self.flip and python_rng.random() > 0.5:
            pixels = np.ascontiguousarray(pixels[:, ::-1])
            joints = self.flip_joints(joints, pixels.shape[1])
            center[0] = pixels.shape[1] - center[0] - 1
        matrix = crop_matrix(center, scale[0], rotation, self.width, self.height)
        crop = _warp(pixels, matrix, self.width, self.height)
        seen = joints[:, 2] > 0
        homogeneous = np.concatenate([joints[seen, :2].astype(np.float64), np.ones((seen.sum(), 1))], axis=1)
        joints[seen, :2] = homogeneous @ matrix.T
        target, weight = self.targets(joints)
        return _tensor(crop, self.mean, self.std), target, weight, image_id


class PoseValTransform:
    """The evaluation crop of a person's box (no augmentation): ``(image, scale, center, score,
    image_id)``, where ``scale`` and ``center`` map heatmaps back to the image and ``score`` is
    the person's detection score (1 for ground-truth boxes)."""

    def __init__(self, image_size: Sequence[int] = (256, 192), mean: Sequence[float] = IMAGENET_MEAN,
                 std: Sequence[float] = IMAGENET_STD) -> None:
        self.height, self.width = (int(v) for v in image_size)
        self.mean, self.std = tuple(mean), tuple(std)

    def __call__(self, image: Any, label: dict[str, Any], image_id: Any) -> tuple[Any, np.ndarray, np.ndarray,
                                                                                 float, Any]:
        center, scale = box_to_center_scale(label["bbox"], self.width / self.height)
        crop = _warp(_pixels(image), crop_matrix(center, scale[0], 0, self.width, self.height),
                     self.width, self.height)
        return _tensor(crop, self.mean, self.std), scale, center, float(label.get("score", 1)), image_id


def heatmap_loss(pred: Any, target: Any, weight: Any) -> Any:
    """Per-sample ``mean(weight * (pred - target) ** 2) / 2`` (MXNet's ``L2Loss`` with the joint
    weights as sample weights): joints of weight 0 add nothing and get no gradient."""
    return mx.gluon.loss.L2Loss()(pred, target, weight)


def flip_heatmaps(heatmaps: Any, flip_pairs: Sequence[tuple[int, int]] = COCO_FLIP_PAIRS) -> Any:
    """Heatmaps of a mirrored crop, mapped back onto the crop: mirrored, left and right swapped,
    and shifted one pixel right (the mirror of pixel ``x`` is ``W - 1 - x``, GluonCV's alignment)."""
    order = list(range(heatmaps.shape[1]))
    for left, right in flip_pairs:
        order[left], order[right] = right, left
    out = mx.nd.take(mx.nd.flip(heatmaps, axis=3), mx.nd.array(order, ctx=heatmaps.context), axis=1)
    return mx.nd.concat(out[:, :, :, :1], out[:, :, :, :-1], dim=3)


def evaluate_pose(net: Any, dataset: Any, ctx: Sequence[Any], batch_size: int = 32, num_workers: int = 0,
                  flip_test: bool = False, image_size: Sequence[int] = (256, 192)) -> dict[str, float]:
    """pycocotools' OKS AP/AR of ``net`` over a :class:`~gluon_cv_core.datasets.coco_keypoints.COCOKeyPoints`
    split built without a transform, one crop per ground-truth person (see the module docstring)."""
    from .decode import heatmap_to_coord_affine
    from .metrics import COCOKeyPointsMetric

    metric = COCOKeyPointsMetric(dataset)
    items = dataset.transform(PoseValTransform(image_size), lazy=True)
    loader = mx.gluon.data.DataLoader(items, batch_size * len(ctx), shuffle=False, last_batch="keep",
                                      num_workers=num_workers)
    pairs = getattr(dataset, "joint_pairs", COCO_FLIP_PAIRS)
    for images, scale, center, score, image_ids in loader:
        outputs = []
        for x in mx.gluon.utils.split_and_load(images, ctx, even_split=False):
            heatmaps = net(x)
            if flip_test:
                heatmaps = (heatmaps + flip_heatmaps(net(mx.nd.flip(x, axis=3)), pairs)) / 2
            outputs.append(heatmaps.as_in_context(mx.cpu()))
        heatmaps = mx.nd.concat(*outputs, dim=0).asnumpy()
        coords, confidence = heatmap_to_coord_affine(heatmaps, center.asnumpy(), scale.asnumpy())
        metric.update(coords, confidence, score.asnumpy(), image_ids.asnumpy())
    names, values = metric.get()
    return dict(zip(names, values))
