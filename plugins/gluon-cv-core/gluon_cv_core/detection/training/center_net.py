"""CenterNet's training recipe: centre heatmaps, size and offset targets, focal and L1 losses.

What matches GluonCV 0.10 (checked in ``tests/detection/test_train_center_net.py`` against
``CenterNetTargetGenerator``, ``HeatmapFocalLoss`` and ``MaskedL1Loss`` on the same inputs):

* **Targets** (:func:`center_net_targets`), computed per image in the data workers from the
  boxes the train preset already moved into the heatmap's frame. Every box with a positive
  width and height puts a Gaussian around its centre cell into its class's heatmap; where
  Gaussians overlap the larger value wins. Its radius is GluonCV's ``gaussian_radius`` of
  the box's ceiled height and width at overlap 0.7 (including that formula's quirks, which
  the published weights were trained with), ``sigma = (2 r + 1) / 6``. The centre cell
  also gets the box's width and height and the centre's sub-cell offset, with masks that
  mark the cells the L1 losses look at; when two boxes share a centre cell the later box's
  size and offset are kept, as in GluonCV's loop. GluonCV loops over the boxes and draws
  each Gaussian in Python; here boxes are grouped by radius and each group's Gaussians are
  scattered in one ``np.maximum.at``, so the loop runs over the few distinct radii only.
  Arithmetic follows GluonCV's dtypes (radius in float64, centres, sizes and offsets from
  the float32 boxes), so the arrays are equal, not just close.
* **Losses** (:func:`heatmap_focal_loss`, :func:`masked_l1_loss`): the focal loss on the
  clipped sigmoid heatmap the network returns in training mode, normalised by the number of
  centre cells (at least one) in the device's batch; L1 on sizes and offsets at the masked
  cells, normalised by the mask's sum; GluonCV's script weighs them 1, 0.1 and 1.
* **Defaults**: those of GluonCV's ``scripts/detection/center_net/train_center_net.py``
  (0.10): Adam at 1.25e-4, weight decay 1e-4 except on biases, steps of 0.1 at epochs 90
  and 120 of 140, batch 32, 512 px.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from gluon_hub.compat import mx

from ..presets import CenterNetTrainTransform, CenterNetValTransform
from .recipe import DetectionRecipe

__all__ = ["CenterNetRecipe", "CenterNetTrainTargets", "center_net_targets", "gaussian_radius",
           "heatmap_focal_loss", "masked_l1_loss"]

#: GluonCV's minimum IoU between a box and one whose corners moved within the radius
MIN_OVERLAP = 0.7


def gaussian_radius(height: np.ndarray, width: np.ndarray, min_overlap: float = MIN_OVERLAP) -> np.ndarray:
    """CenterNet's Gaussian radius for boxes of ``height`` x ``width`` cells (float64).

    The smallest root of the three corner-displacement cases of the CornerNet paper, as
    CenterNet's reference code (and GluonCV) solves them: the second and third roots divide
    by 2 instead of ``2a``, which gives larger radii than the paper; the published models
    were trained with these, so they are kept.
    """
    height, width = np.asarray(height, np.float64), np.asarray(width, np.float64)
    b1 = height + width
    c1 = width * height * (1 - min_overlap) / (1 + min_overlap)
    r1 = (b1 + np.sqrt(b1 ** 2 - 4 * c1)) / 2
    b2 = 2 * (height + width)
    c2 = (1 - min_overlap) * width * height
    r2 = (b2 + np.sqrt(b2 ** 2 - 4 * 4 * c2)) / 2
    a3 = 4 * min_overlap
    b3 = -2 * min_overlap * (height + width)
    c3 = (min_overlap - 1) * width * height
    r3 = (b3 + np.sqrt(b3 ** 2 - 4 * a3 * c3)) / 2
    return np.minimum(np.minimum(r1, r2), r3)


def _draw_gaussians(heatmap: np.ndarray, classes: np.ndarray, centers: np.ndarray, radii: np.ndarray) -> None:
    """Max-merge a Gaussian of each radius around each integer centre into ``heatmap`` (C, H, W)."""
    _, height, width = heatmap.shape
    for radius in np.unique(radii):
        pick = radii == radius
        offsets = np.arange(-radius, radius + 1, dtype=np.float64)
        sigma = (2 * radius + 1) / 6
        # exp(-(x^2 + y^2) / (2 sigma^2)) in float64, rounded to float32 on the way in, as
        # GluonCV does it; its corner value exp(-18 r^2 / (2r + 1)^2) > e^-9 never falls under
        # the float64-epsilon cut-off GluonCV applies, so that cut-off is not repeated here
        kernel = np.exp(-(offsets[None, :] ** 2 + offsets[:, None] ** 2) / (2 * sigma * sigma)).astype(np.float32)
        dy, dx = np.meshgrid(np.arange(-radius, radius + 1), np.arange(-radius, radius + 1), indexing="ij")
        ys = centers[pick, 1][:, None, None] + dy  # (boxes, 2r+1, 2r+1)
        xs = centers[pick, 0][:, None, None] + dx
        inside = (ys >= 0) & (ys < height) & (xs >= 0) & (xs < width)
        cls = np.broadcast_to(classes[pick][:, None, None], ys.shape)
        values = np.broadcast_to(kernel, ys.shape)
        np.maximum.at(heatmap, (cls[inside], ys[inside], xs[inside]), values[inside])


def center_net_targets(boxes: np.ndarray, class_ids: np.ndarray, num_classes: int, width: int,
                       height: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One image's CenterNet targets from its boxes in the heatmap's frame.

    Parameters
    ----------
    boxes : ``(N, 4)`` ``[xmin, ymin, xmax, ymax]`` in heatmap cells (the train preset's
        output); rows without positive width and height (padding rows of -1 among them) are
        ignored.
    class_ids : ``(N,)`` or ``(N, 1)`` class of each box.
    num_classes : heatmap channels.
    width, height : the heatmap's size.

    Returns
    -------
    ``(heatmap (C, H, W), wh (2, H, W), wh_mask, center_offset (2, H, W), offset_mask)``,
    all ``float32`` numpy arrays.
    """
    boxes = np.asarray(boxes, np.float32).reshape(-1, 4)
    class_ids = np.asarray(class_ids).reshape(-1)
    if len(class_ids) != len(boxes):
        raise ValueError(f"got {len(boxes)} boxes but {len(class_ids)} class ids")
    heatmap = np.zeros((num_classes, height, width), np.float32)
    wh = np.zeros((2, height, width), np.float32)
    wh_mask = np.zeros((2, height, width), np.float32)
    offset = np.zeros((2, height, width), np.float32)
    offset_mask = np.zeros((2, height, width), np.float32)
    box_w, box_h = boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]
    keep = (box_w > 0) & (box_h > 0)
    if not keep.any():
        return heatmap, wh, wh_mask, offset, offset_mask
    boxes, box_w, box_h = boxes[keep], box_w[keep], box_h[keep]
    classes = class_ids[keep].astype(np.int64)
    bad = (classes < 0) | (classes >= num_classes)
    if bad.any():
        raise ValueError(f"class id(s) {sorted(set(classes[bad].tolist()))} are outside the heatmap's "
                         f"{num_classes} classes; give the network the dataset's classes")
    centers = np.stack([(boxes[:, 0] + boxes[:, 2]) / 2, (boxes[:, 1] + boxes[:, 3]) / 2], axis=1)
    cells = centers.astype(np.int32)
    outside = (cells[:, 0] < 0) | (cells[:, 0] >= width) | (cells[:, 1] < 0) | (cells[:, 1] >= height)
    if outside.any():
        raise ValueError(f"box centre(s) {centers[outside].tolist()} lie outside the {width}x{height} heatmap; "
                         "boxes must be in the heatmap's frame (the input divided by the network's stride)")
    radii = np.maximum(0, gaussian_radius(np.ceil(box_h), np.ceil(box_w)).astype(np.int64))
    _draw_gaussians(heatmap, classes, cells, radii)
    # one box per centre cell, the last one, as GluonCV's loop leaves it
    flat = cells[:, 1] * width + cells[:, 0]
    _, from_end = np.unique(flat[::-1], return_index=True)
    last = len(flat) - 1 - from_end
    xs, ys = cells[last, 0], cells[last, 1]
    wh[0, ys, xs], wh[1, ys, xs] = box_w[last], box_h[last]
    offset[:, ys, xs] = (centers[last] - cells[last]).T
    wh_mask[:, ys, xs] = 1.0
    offset_mask[:, ys, xs] = 1.0
    return heatmap, wh, wh_mask, offset, offset_mask


def heatmap_focal_loss(pred: Any, label: Any) -> Any:
    """CenterNet's focal loss of a heatmap of probabilities ``pred`` against Gaussian ``label``.

    Centre cells (label 1) weigh ``(1 - p)^2 log p``, the rest ``(1 - label)^4 p^2 log(1 - p)``,
    so cells near a centre are barely pushed down; the sum is divided by the number of
    centres (at least one). ``pred`` must lie inside (0, 1): the network clips it in training.
    """
    positive = label == 1
    negative = label < 1
    pos_loss = mx.nd.log(pred) * mx.nd.square(1 - pred) * positive
    neg_loss = mx.nd.log(1 - pred) * mx.nd.square(pred) * mx.nd.power(1 - label, 4) * negative
    count = mx.nd.clip(mx.nd.sum(positive), 1, 1e30)
    return -(mx.nd.sum(pos_loss) + mx.nd.sum(neg_loss)) / count


def masked_l1_loss(pred: Any, label: Any, mask: Any, weight: float = 1.0) -> Any:
    """``weight`` times the L1 distance at the cells ``mask`` marks, over the mask's sum (at least 1)."""
    loss = mx.nd.abs(label * mask - pred * mask) * weight
    return mx.nd.sum(loss) / mx.nd.clip(mx.nd.sum(mask), 1, 1e30)


class CenterNetTrainTargets:
    """The CenterNet train preset followed by :func:`center_net_targets`.

    Returns ``(image, heatmap, wh, wh_mask, center_offset, offset_mask)``; the image is an
    NDArray, the targets numpy arrays. Plain attributes only, so it pickles into data-loader
    workers with its random state.
    """

    def __init__(self, width: int, height: int, num_classes: int, scale_factor: int = 4,
                 seed: int | None = None) -> None:
        self._preset = CenterNetTrainTransform(width, height, scale_factor=scale_factor, seed=seed)
        self._num_classes = num_classes
        self._out_w, self._out_h = width // scale_factor, height // scale_factor

    def __call__(self, src: Any, label: Any) -> tuple:
        image, boxes = self._preset(src, label)
        targets = center_net_targets(boxes[:, :4], boxes[:, 4], self._num_classes, self._out_w, self._out_h)
        return (image, *targets)


def _stack(samples: list[tuple]) -> tuple:
    """Fixed-size CenterNet samples -> one NDArray per item, samples on axis 0."""
    return tuple(mx.nd.array(np.stack([s[k].asnumpy() if hasattr(s[k], "asnumpy") else s[k] for s in samples]))
                 for k in range(len(samples[0])))


class CenterNetRecipe(DetectionRecipe):
    """GluonCV's CenterNet recipe: heatmap focal loss, size L1 (weight ``wh_weight``) and
    centre-offset L1 (weight ``center_reg_weight``), Adam with weight decay off for biases.

    >>> CenterNetRecipe.loss_names
    ('heatmap_focal', 'wh_l1', 'center_reg_l1')
    """

    loss_names = ("heatmap_focal", "wh_l1", "center_reg_l1")
    defaults = {"lr": 1.25e-4, "lr_mode": "step", "lr_decay": 0.1, "lr_decay_epoch": (90, 120),
                "warmup_epochs": 0, "wd": 1e-4, "momentum": 0.9, "epochs": 140, "optimizer": "adam",
                "batch_size": 32, "data_shape": 512}

    def __init__(self, net: Any, data_shape: tuple[int, int] | None = None, seed: int | None = None,
                 wh_weight: float = 0.1, center_reg_weight: float = 1.0, **options: Any) -> None:
        side = self.defaults["data_shape"]
        super().__init__(net, tuple(data_shape) if data_shape else (side, side), seed, **options)
        self.scale_factor = int(getattr(net, "scale", 4))
        width, height = self.data_shape
        if width % self.scale_factor or height % self.scale_factor:
            raise ValueError(f"CenterNet's data shape {width}x{height} must be a multiple of the network's "
                             f"stride {self.scale_factor}, so its heatmap covers the input exactly")
        self.wh_weight, self.center_reg_weight = wh_weight, center_reg_weight

    def train_transform(self) -> CenterNetTrainTargets:
        width, height = self.data_shape
        return CenterNetTrainTargets(width, height, len(self.net.classes), self.scale_factor, seed=self.seed)

    def batchify(self) -> Callable[[list[tuple]], tuple]:
        return _stack

    def prepare(self) -> None:
        """No weight decay on biases, as GluonCV's CenterNet script sets before training."""
        for param in self.net.collect_params(".*bias").values():
            param.wd_mult = 0.0

    def losses(self, batch: Sequence[Any]) -> list[Any]:
        images, heatmap, wh, wh_mask, offset, offset_mask = batch
        pred_heatmap, pred_wh, pred_offset = self.net(images)
        return [heatmap_focal_loss(pred_heatmap, heatmap),
                masked_l1_loss(pred_wh, wh, wh_mask, self.wh_weight),
                masked_l1_loss(pred_offset, offset, offset_mask, self.center_reg_weight)]

    def val_transform(self) -> CenterNetValTransform:
        width, height = self.data_shape
        return CenterNetValTransform(width, height)
