"""SSD training: multibox targets, the multibox loss and GluonCV's schedule.

GluonCV splits SSD training in two places, and so does this module:

* **Targets in the data workers** (:class:`SSDTargets`, numpy, no network needed). GluonCV's
  train transform matches each image's boxes to the fixed anchors of the input size:
  bipartite matching first (every box gets its best free anchor, greedily by IoU, plus any
  anchor whose best box it is the best anchor of), then every other anchor whose best IoU
  is at least 0.5. Matched anchors get the box's class + 1 and its offsets encoded
  against the anchor, ``((gx - ax) / aw / 0.1, (gy - ay) / ah / 0.1, log(gw / aw) / 0.2,
  log(gh / ah) / 0.2)``; the rest get class 0 (background) and zero offsets. There is no
  sampling here (GluonCV builds its generator with ``negative_mining_ratio=-1``), so no
  anchor is ignored. The greedy matching loops over boxes (one step per box, every anchor
  and image of the batch at once); everything else is array arithmetic. IoUs are computed
  in float32 in the operator's order, so near-ties are broken as MXNet's ``box_iou`` does.
* **Hard negatives in the loss** (:func:`multibox_loss`, MXNet operators, under autograd).
  Cross-entropy over every positive anchor and the ``3 x positives`` background anchors
  the network currently finds hardest (per image), smooth L1 (``rho = 1``) over the
  positives' offsets, both divided by the number of positives, ``lambda = 1``. Anchors
  with the ignore label (-1) count neither as positives nor as negatives (GluonCV's loss
  would rank them as background; its SSD pipeline never produces one).

One divergence, in a case GluonCV gets wrong: a box that overlaps no anchor at all would,
in GluonCV's matcher, collect every anchor that overlaps nothing; here it matches none.

``tests/detection/test_train_ssd.py`` checks the targets element for element against
GluonCV 0.10.5's ``SSDTargetGenerator`` (batches with different box counts and rows of -1
padding) and the losses against ``SSDMultiBoxLoss``, and trains a small SSD on a toy
dataset until its loss falls.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from gluon_hub.compat import mx

from ..presets import SSDTrainTransform, SSDValTransform
from .recipe import DetectionRecipe

__all__ = ["STDS", "SSDRecipe", "SSDTargets", "SSDTrainSample", "bipartite_matches", "box_iou", "center_to_corner",
           "encode_boxes", "multibox_loss", "ssd_matches", "ssd_targets", "stack_samples", "training_anchors"]

#: box-offset normalisation of GluonCV's SSD box coder
STDS = (0.1, 0.1, 0.2, 0.2)


def center_to_corner(boxes: np.ndarray) -> np.ndarray:
    """``(..., 4)`` centre-x, centre-y, width, height -> corners, in the input's dtype."""
    half = boxes[..., 2:] * boxes.dtype.type(0.5)
    return np.concatenate([boxes[..., :2] - half, boxes[..., :2] + half], axis=-1)


def box_iou(anchors: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """IoU of corner ``anchors (N, 4)`` with corner ``boxes (B, M, 4)``: ``(B, N, M)`` float32.

    The arithmetic of MXNet's ``box_iou``: negative extents count as 0, no ``+1``.
    """
    a = anchors.astype(np.float32)[None, :, None, :]
    b = boxes.astype(np.float32)[:, None, :, :]
    iw = np.maximum(np.minimum(a[..., 2], b[..., 2]) - np.maximum(a[..., 0], b[..., 0]), 0)
    ih = np.maximum(np.minimum(a[..., 3], b[..., 3]) - np.maximum(a[..., 1], b[..., 1]), 0)
    inter = iw * ih

    def area(x: np.ndarray) -> np.ndarray:
        w, h = x[..., 2] - x[..., 0], x[..., 3] - x[..., 1]
        return np.where((w < 0) | (h < 0), np.float32(0), w * h)

    union = area(a) + area(b) - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(inter > 0, inter / np.where(inter > 0, union, 1), np.float32(0)).astype(np.float32)


def bipartite_matches(ious: np.ndarray, threshold: float = 1e-12) -> np.ndarray:
    """Greedy one-to-one matching ``(B, N)``: box index per anchor, -1 where none.

    Repeatedly takes the largest IoU among anchors and boxes both still free while it
    exceeds ``threshold``: one step per box, all images at once.
    """
    batch, num_anchors, num_boxes = ious.shape
    matches = -np.ones((batch, num_anchors), dtype=np.int64)
    free = ious.astype(np.float64).copy()
    images = np.arange(batch)
    for _ in range(min(num_anchors, num_boxes)):
        best = free.reshape(batch, -1).argmax(axis=1)
        value = free.reshape(batch, -1)[images, best]
        ok = value > threshold
        if not ok.any():
            break
        rows, cols = np.divmod(best[ok], num_boxes)
        matches[images[ok], rows] = cols
        free[images[ok], rows, :] = -np.inf
        free[images[ok], :, cols] = -np.inf
    return matches


def ssd_matches(ious: np.ndarray, iou_thresh: float = 0.5, eps: float = 1e-12) -> np.ndarray:
    """SSD's anchor-to-box assignment ``(B, N)`` from ``ious (B, N, M)``; -1: background.

    Bipartite matches first; an anchor left free takes its best box when it is (up to
    ``eps``) that box's best anchor, otherwise when their IoU reaches ``iou_thresh``.
    """
    matches = bipartite_matches(ious)
    best_box = ious.argmax(axis=-1)
    best_iou = np.take_along_axis(ious, best_box[..., None], axis=-1)[..., 0]
    box_best = ious.max(axis=1)  # (B, M): each box's best IoU over anchors
    its_best = best_iou + eps >= np.take_along_axis(box_best, best_box, axis=-1)
    # best_iou > 0: a box that overlaps no anchor must not collect every anchor overlapping nothing
    shared = np.where(its_best & (best_iou > 0), best_box, -1)
    matches = np.where(matches < 0, shared, matches)
    return np.where(matches < 0, np.where(best_iou >= iou_thresh, best_box, -1), matches)


def encode_boxes(boxes: np.ndarray, anchors: np.ndarray, stds: Sequence[float] = STDS) -> np.ndarray:
    """Corner ``boxes`` as offsets from corner ``anchors`` (same shape), normalised by ``stds``."""
    def center(x: np.ndarray) -> tuple[np.ndarray, ...]:
        w, h = x[..., 2] - x[..., 0], x[..., 3] - x[..., 1]
        return x[..., 0] + w * np.float32(0.5), x[..., 1] + h * np.float32(0.5), w, h

    gx, gy, gw, gh = center(boxes.astype(np.float32))
    ax, ay, aw, ah = center(anchors.astype(np.float32))
    s = [np.float32(v) for v in stds]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.stack([(gx - ax) / aw / s[0], (gy - ay) / ah / s[1],
                         np.log(gw / aw) / s[2], np.log(gh / ah) / s[3]], axis=-1)


def ssd_targets(anchors: np.ndarray, boxes: np.ndarray, ids: np.ndarray, iou_thresh: float = 0.5,
                stds: Sequence[float] = STDS) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Training targets of a batch, as GluonCV's SSD train transform makes them.

    Parameters
    ----------
    anchors : ``(N, 4)`` (or ``(1, N, 4)``) centre-format anchors in input pixels.
    boxes : ``(B, M, 4)`` corner boxes in input pixels; rows of -1 are padding.
    ids : ``(B, M)`` (or ``(B, M, 1)``) class ids, -1 on padding rows.

    Returns
    -------
    ``cls_targets (B, N)`` (0 background, ``id + 1`` matched), ``box_targets (B, N, 4)``
    (zero where unmatched) and ``box_masks (B, N, 4)`` (1 where matched), all float32.

    Examples
    --------
    >>> anchors = np.array([[10, 10, 20, 20], [30, 30, 20, 20]], np.float32)
    >>> cls, box, _ = ssd_targets(anchors, np.array([[[22, 22, 40, 40]]]), np.array([[4]]))
    >>> cls.tolist(), [round(float(v), 3) for v in box[0, 1]]
    ([[0.0, 5.0]], [0.5, 0.5, -0.527, -0.527])
    """
    corners = center_to_corner(np.asarray(anchors, dtype=np.float32).reshape(-1, 4))
    boxes = np.asarray(boxes, dtype=np.float32).reshape(len(boxes), -1, 4)
    ids = np.asarray(ids, dtype=np.float32).reshape(len(boxes), -1)
    batch, num_anchors = len(boxes), len(corners)
    if boxes.shape[1] == 0:
        return (np.zeros((batch, num_anchors), np.float32), np.zeros((batch, num_anchors, 4), np.float32),
                np.zeros((batch, num_anchors, 4), np.float32))
    ious = box_iou(corners, boxes)
    ious[np.broadcast_to((ids < 0)[:, None, :], ious.shape)] = 0  # padding rows match nothing
    matches = ssd_matches(ious, iou_thresh)
    positive = matches >= 0
    picked = np.maximum(matches, 0)
    cls_targets = np.where(positive, np.take_along_axis(ids, picked, axis=1) + 1, 0).astype(np.float32)
    matched = np.take_along_axis(boxes, picked[..., None], axis=1)
    codes = encode_boxes(matched, np.broadcast_to(corners, matched.shape), stds)
    mask = np.broadcast_to(positive[..., None], codes.shape)
    return cls_targets, np.where(mask, codes, 0).astype(np.float32), mask.astype(np.float32)


class SSDTargets:
    """One image's targets against fixed anchors: ``(boxes (M, 4), ids (M,))`` ->
    ``(cls_targets (N,), box_targets (N, 4))``. Plain numpy, so it pickles into workers."""

    def __init__(self, anchors: np.ndarray, iou_thresh: float = 0.5, stds: Sequence[float] = STDS) -> None:
        self.anchors = np.asarray(anchors, dtype=np.float32).reshape(-1, 4)
        self.iou_thresh, self.stds = iou_thresh, tuple(stds)

    def __call__(self, boxes: np.ndarray, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        cls_targets, box_targets, _ = ssd_targets(self.anchors, np.asarray(boxes)[None], np.asarray(ids)[None],
                                                  self.iou_thresh, self.stds)
        return cls_targets[0], box_targets[0]


class SSDTrainSample:
    """GluonCV's SSD training sample: the augmentation preset, then the targets of the
    augmented boxes. ``(image, label)`` -> ``(CHW image, cls_targets (N,), box_targets (N, 4))``."""

    def __init__(self, width: int, height: int, anchors: np.ndarray, seed: int | None = None,
                 iou_thresh: float = 0.5, stds: Sequence[float] = STDS) -> None:
        self.preset = SSDTrainTransform(width, height, seed=seed)
        self.targets = SSDTargets(anchors, iou_thresh, stds)

    def __call__(self, src: Any, label: Any) -> tuple[Any, np.ndarray, np.ndarray]:
        image, boxes = self.preset(src, label)
        cls_targets, box_targets = self.targets(boxes[:, :4], boxes[:, 4])
        return image, cls_targets, box_targets


def multibox_loss(cls_pred: Any, box_pred: Any, cls_target: Any, box_target: Any,
                  negative_mining_ratio: float = 3.0, rho: float = 1.0) -> tuple[Any, Any]:
    """SSD's classification and box losses over one device's batch, both divided by its
    number of positive anchors (at least 1).

    ``cls_pred (B, N, C + 1)`` logits, ``box_pred (B, N, 4)``, ``cls_target (B, N)`` (0
    background, -1 ignored), ``box_target (B, N, 4)``. Per image, the
    ``negative_mining_ratio x positives`` background anchors with the largest
    cross-entropy are the negatives; smooth L1 switches from quadratic to linear at ``rho``.
    Returns two scalar NDArrays, differentiable under ``autograd.record``.
    """
    nd = mx.nd
    positive = cls_target > 0
    background = cls_target == 0
    entropy = -nd.pick(nd.log_softmax(cls_pred, axis=-1), nd.maximum(cls_target, 0), axis=-1)
    # cross-entropy is >= 0, so -1 puts the anchors that are no candidates last
    hardness = nd.where(background, entropy.detach(), -nd.ones_like(entropy))
    rank = nd.argsort(nd.argsort(-hardness, axis=1), axis=1)  # 0: hardest negative of its image
    quota = positive.sum(axis=1, keepdims=True) * negative_mining_ratio
    hard = background * nd.broadcast_lesser(rank, quota)
    norm = nd.maximum(positive.sum(), 1)
    cls_loss = (entropy * (positive + hard)).sum() / norm
    diff = nd.abs(box_pred.reshape_like(box_target) - box_target)
    smooth = nd.where(diff > rho, diff - 0.5 * rho, (0.5 / rho) * nd.square(diff))
    box_loss = (smooth * positive.expand_dims(axis=-1)).sum() / norm
    return cls_loss, box_loss


def training_anchors(net: Any, width: int, height: int) -> np.ndarray:
    """The ``(N, 4)`` centre-format anchors (input pixels) ``net`` uses at ``width`` x ``height``.

    They are what the training-mode forward returns third (GluonCV's script runs one on a
    zero image); here the features run in inference mode instead, so BatchNorm's running
    statistics are not pulled towards a black image.
    """
    params = list(net.collect_params().values())
    ctx = params[0].list_ctx()[0] if params else mx.cpu()
    with mx.autograd.predict_mode():
        features = net.features(mx.nd.zeros((1, 3, height, width), ctx=ctx))
        anchors = [generator(feature).reshape((-1, 4)) for generator, feature in zip(net.anchor_generators, features)]
    return mx.nd.concat(*anchors, dim=0).asnumpy().astype(np.float32)


def stack_samples(samples: list[tuple]) -> tuple[Any, Any, Any]:
    """``(image, cls_targets, box_targets)`` samples -> three stacked NDArrays."""
    def numpy(value: Any) -> np.ndarray:
        return value.asnumpy() if hasattr(value, "asnumpy") else np.asarray(value)

    return tuple(mx.nd.array(np.stack([numpy(s[k]) for s in samples])) for k in range(3))


class SSDRecipe(DetectionRecipe):
    """GluonCV's SSD recipe (``scripts/detection/ssd/train_ssd.py``).

    ``data_shape`` defaults to the side the network's configuration was made for (300 or
    512); the anchors for that shape are computed once here, so the train transform
    carries them as numpy and never touches the network. The losses are GluonCV's
    ``CrossEntropy`` and ``SmoothL1`` (already weighted by ``lambd``).

    >>> SSDRecipe.loss_names
    ('cross_entropy', 'smooth_l1')
    """

    loss_names = ("cross_entropy", "smooth_l1")
    #: train_ssd.py's defaults; its batch size of 32 is the global one (all devices)
    defaults = {"lr": 0.001, "lr_mode": "step", "lr_decay": 0.1, "lr_decay_epoch": (160, 200),
                "warmup_epochs": 0, "wd": 5e-4, "momentum": 0.9, "epochs": 240, "optimizer": "sgd",
                "batch_size": 32, "data_shape": 300}
    #: matching threshold, hard negatives per positive, smooth-L1 knee, box-loss weight
    iou_thresh, negative_mining_ratio, rho, lambd = 0.5, 3.0, 1.0, 1.0

    def __init__(self, net: Any, data_shape: tuple[int, int] | None = None, seed: int | None = None,
                 **options: Any) -> None:
        super().__init__(net, data_shape, seed, **options)
        if self.data_shape is None:
            side = int(round(net.steps[-1]))
            self.data_shape = (side, side)
        width, height = self.data_shape
        if width < 1 or height < 1:
            raise ValueError(f"SSD's data shape must be positive, got {self.data_shape}")
        self.anchors = training_anchors(net, width, height)

    def train_transform(self) -> SSDTrainSample:
        width, height = self.data_shape
        return SSDTrainSample(width, height, self.anchors, self.seed, self.iou_thresh)

    def batchify(self) -> Any:
        return stack_samples

    def losses(self, batch: Sequence[Any]) -> list[Any]:
        images, cls_targets, box_targets = batch[:3]
        cls_pred, box_pred, _ = self.net(images)
        cls_loss, box_loss = multibox_loss(cls_pred, box_pred, cls_targets, box_targets,
                                           self.negative_mining_ratio, self.rho)
        return [cls_loss, self.lambd * box_loss]

    def val_transform(self) -> SSDValTransform:
        width, height = self.data_shape
        return SSDValTransform(width, height)
