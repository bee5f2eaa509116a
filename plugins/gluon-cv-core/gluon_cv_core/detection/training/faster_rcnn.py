"""Training Faster R-CNN (and its FPN form) with GluonCV 0.10's recipe.

Faster R-CNN has two sets of targets, made in two places, as in GluonCV:

* **RPN targets are made in the data workers.** For each training image the anchors of
  every feature map are laid out for that image's size, matched to the ground truth by IoU
  and subsampled exactly as GluonCV's ``RPNTargetSampler`` / ``RPNTargetGenerator`` do
  (:func:`rpn_anchor_targets`): anchors reaching outside the image are ignored; the best
  anchor of each box and every anchor with IoU >= 0.7 is positive, anchors with IoU < 0.3
  negative; at most 128 positives and 256 samples in all are kept, the rest dropped at
  random; positives get centre/size offsets. GluonCV asks the network for the anchors and
  a symbolic shape inference for the feature sizes on every image; here
  :class:`RPNTargetMaker` is built once from the network's stored anchors (the first cell's
  anchors and the stride of each level, plain numpy, so the transform pickles) and a
  feature map is ``ceil(size / stride)`` (ResNet's rounding; checked against the network's
  own shape inference when the recipe is built). With FPN all levels' anchors are matched
  together, then split per level, as GluonCV does.
* **RCNN targets are made by the network** (its region sampler and target encoder run in
  the training-mode forward, see :mod:`gluon_cv_core.detection.models.faster_rcnn`).

:class:`FasterRCNNBatchify` pads images (zeros) and labels (rows of -1) to the batch's
largest, and each level's RPN targets to the padded image's feature map (ignored anchors,
no box), then flattens levels in the network's anchor order: GluonCV's
``FasterRCNNTrainBatchify``.

The losses (:func:`faster_rcnn_losses`) are the training script's: sigmoid binary
cross-entropy on the RPN objectness and smooth L1 (transition 1/9) on its offsets, both
divided by the number of RPN samples; softmax cross-entropy on the region classes and
smooth L1 (transition 1) on the region offsets, both divided by the number of sampled
regions. Each is the per-device mean GluonCV logs, whose gradient is the one GluonCV
steps with (it backpropagates the per-image sum and divides by the batch).

``tests/detection/test_train_faster_rcnn.py`` checks the RPN targets against GluonCV's
generator and transform, the batch against its batchify (C4 and FPN), the losses against
its training step on the same network and batch, and that a small network's loss drops.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from gluon_hub.compat import mx

from ...common.worker_random import WorkerRandom
from ..classes import COCO_CLASSES
from ..presets import FasterRCNNTrainTransform, FasterRCNNValTransform
from .recipe import DetectionRecipe, Sample, Transform, pad_images_and_labels

__all__ = [
    "FasterRCNNBatchify",
    "FasterRCNNRecipe",
    "RPNTargetMaker",
    "faster_rcnn_losses",
    "rpn_anchor_targets",
]

#: ``np.spacing(np.float32(1))``: GluonCV's tolerance for "as good as a box's best anchor"
_EPS = np.spacing(np.float32(1.0))


def _iou(anchors: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """``(N, M)`` IoU of corner boxes, by MXNet's operator so that thresholds fall exactly
    where GluonCV's do."""
    return mx.nd.contrib.box_iou(mx.nd.array(anchors), mx.nd.array(boxes), format="corner").asnumpy()


def rpn_anchor_targets(anchors: np.ndarray, boxes: np.ndarray, width: int, height: int,
                       rng: np.random.RandomState, num_sample: int = 256, pos_iou_thresh: float = 0.7,
                       neg_iou_thresh: float = 0.3, pos_ratio: float = 0.5,
                       stds: Sequence[float] = (1.0, 1.0, 1.0, 1.0)) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """RPN targets of one image: GluonCV's ``RPNTargetGenerator``.

    Parameters
    ----------
    anchors : ``(N, 4)`` corner anchors of the image's feature maps.
    boxes : ``(M, 4)`` corner ground-truth boxes, ``M >= 1``.
    width, height : the image's size; anchors reaching outside it are ignored.
    rng : draws the subsampling (GluonCV draws the same numbers from ``np.random``).

    Returns
    -------
    ``cls (N,)``: 1 positive, 0 negative, -1 ignored; ``box (N, 4)`` offsets and
    ``mask (N, 4)``, non-zero for positives only.
    """
    anchors = np.asarray(anchors, dtype=np.float32).reshape(-1, 4)
    boxes = np.asarray(boxes, dtype=np.float32).reshape(-1, 4)
    if boxes.shape[0] == 0:
        raise ValueError("RPN targets need at least one ground-truth box in the image")
    outside = ((anchors[:, 0] < 0) | (anchors[:, 1] < 0) | (anchors[:, 2] >= width)
               | (anchors[:, 3] >= height))
    ious = np.where(outside[:, None], np.float32(-1.0), _iou(anchors, boxes))
    matches = ious.argmax(axis=1)
    best = ious.max(axis=1)
    samples = np.zeros(len(anchors), dtype=np.float32)
    # each box's best anchor(s), even when far below the threshold (and then made negative
    # below, when under neg_iou_thresh: GluonCV's order of the rules)
    samples[((ious + _EPS) > ious.max(axis=0, keepdims=True)).any(axis=1)] = 1
    samples[best >= pos_iou_thresh] = 1
    samples[(best < neg_iou_thresh) & (best >= 0)] = -1
    max_pos = round(num_sample * pos_ratio)
    positives = np.flatnonzero(samples > 0)
    if len(positives) > max_pos:
        samples[rng.choice(positives, size=len(positives) - max_pos, replace=False)] = 0
    negatives = np.flatnonzero(samples < 0)
    max_neg = num_sample - min(len(positives), max_pos)
    if len(negatives) > max_neg:
        samples[rng.choice(negatives, size=len(negatives) - max_neg, replace=False)] = 0

    cls = np.where(samples == 0, np.float32(-1), (samples + 1) / 2).astype(np.float32)
    box = np.zeros((len(anchors), 4), dtype=np.float32)
    mask = np.zeros((len(anchors), 4), dtype=np.float32)
    keep = samples > 0.5
    a, g = anchors[keep], boxes[matches[keep]]
    aw, ah = a[:, 2] - a[:, 0], a[:, 3] - a[:, 1]
    gw, gh = g[:, 2] - g[:, 0], g[:, 3] - g[:, 1]
    ax, ay = a[:, 0] + aw * 0.5, a[:, 1] + ah * 0.5
    gx, gy = g[:, 0] + gw * 0.5, g[:, 1] + gh * 0.5
    std = np.asarray(stds, dtype=np.float32)
    box[keep] = np.stack([(gx - ax) / aw / std[0], (gy - ay) / ah / std[1],
                          np.log(gw / aw) / std[2], np.log(gh / ah) / std[3]], axis=1)
    mask[keep] = 1.0
    return cls, box, mask


def _feature_size(size: int, stride: int) -> int:
    return math.ceil(size / stride)


class RPNTargetMaker:
    """Lays out a network's anchors for an image size and makes that image's RPN targets.

    Parameters
    ----------
    base_anchors : per feature map, the ``(A, 4)`` anchors of the cell at the origin.
    strides : per feature map, its stride in input pixels.
    num_sample, pos_iou_thresh, neg_iou_thresh, pos_ratio, stds : see :func:`rpn_anchor_targets`
        (GluonCV's training transform defaults).
    """

    def __init__(self, base_anchors: Sequence[np.ndarray], strides: Sequence[int], num_sample: int = 256,
                 pos_iou_thresh: float = 0.7, neg_iou_thresh: float = 0.3, pos_ratio: float = 0.5,
                 stds: Sequence[float] = (1.0, 1.0, 1.0, 1.0)) -> None:
        if len(base_anchors) != len(strides) or not strides:
            raise ValueError(f"one stride per level of anchors: got {len(base_anchors)} levels and "
                             f"{len(strides)} strides")
        self.base_anchors = [np.asarray(b, dtype=np.float32).reshape(-1, 4) for b in base_anchors]
        self.strides = [int(s) for s in strides]
        self._options: dict[str, Any] = {"num_sample": num_sample, "pos_iou_thresh": pos_iou_thresh,
                                         "neg_iou_thresh": neg_iou_thresh, "pos_ratio": pos_ratio,
                                         "stds": tuple(stds)}

    @classmethod
    def from_network(cls, net: Any, **options: Any) -> RPNTargetMaker:
        """The anchors stored in a Faster R-CNN (ours or GluonCV's): each level's grid
        constant gives the first cell's anchors and, from the next cell, the stride."""
        generator = net.rpn.anchor_generator
        levels = list(generator) if isinstance(generator, mx.gluon.nn.HybridSequential) else [generator]
        base, strides = [], []
        for level in levels:
            constants = [p for p in level.collect_params().values() if isinstance(p, mx.gluon.Constant)]
            if len(constants) != 1:
                raise ValueError("the network's RPN anchor generator holds no anchor grid; is it a Faster R-CNN?")
            try:
                grid = constants[0].list_data()[0].asnumpy()
            except RuntimeError as err:
                raise ValueError("initialize the network before building its training recipe "
                                 "(its anchors are read from it)") from err
            grid = grid.reshape(grid.shape[2], grid.shape[3], -1, 4)
            base.append(grid[0, 0])
            strides.append(round(float(grid[0, 1, 0, 0] - grid[0, 0, 0, 0])))
        return cls(base, strides, **options)

    def feature_sizes(self, height: int, width: int) -> list[tuple[int, int]]:
        """``(h, w)`` of each feature map for an input of ``height`` x ``width``."""
        return [(_feature_size(height, s), _feature_size(width, s)) for s in self.strides]

    def anchors(self, height: int, width: int) -> np.ndarray:
        """``(N, 4)`` anchors of an input of that size, in the network's order (levels, rows,
        columns, anchors of a cell)."""
        out = []
        for (h, w), stride, base in zip(self.feature_sizes(height, width), self.strides, self.base_anchors):
            shift_x, shift_y = np.meshgrid(np.arange(w) * stride, np.arange(h) * stride)
            shifts = np.stack([shift_x, shift_y, shift_x, shift_y], axis=-1).astype(np.float32)
            out.append((shifts[:, :, None, :] + base[None, None]).reshape(-1, 4))
        return np.concatenate(out, axis=0)

    def __call__(self, boxes: np.ndarray, height: int, width: int,
                 rng: np.random.RandomState) -> tuple[tuple[np.ndarray, ...], ...]:
        """Per level, ``(h, w, A)`` class targets and ``(h, w, 4A)`` box targets and masks."""
        cls, box, mask = rpn_anchor_targets(self.anchors(height, width), boxes, width, height, rng,
                                            **self._options)
        levels: tuple[list, list, list] = ([], [], [])
        start = 0
        for (h, w), base in zip(self.feature_sizes(height, width), self.base_anchors):
            end = start + h * w * len(base)
            for out, value in zip(levels, (cls, box, mask)):
                out.append(value[start:end].reshape(h, w, -1))
            start = end
        return tuple(tuple(level) for level in levels)


class _TrainTransform:
    """The Faster R-CNN training preset, then the RPN targets of the augmented image."""

    def __init__(self, preset: Callable[[Any, Any], tuple], targets: RPNTargetMaker, seed: int | None) -> None:
        self._preset, self._targets = preset, targets
        # its own stream, so the augmentation draws do not shift the anchor sampling
        self._random = WorkerRandom(None if seed is None else [seed, 1])

    def __call__(self, src: Any, label: np.ndarray) -> Sample:
        image, boxes = self._preset(src, label)
        cls, box, mask = self._targets(boxes[:, :4], image.shape[1], image.shape[2], self._random.rng)
        return image, boxes, cls, box, mask


class FasterRCNNBatchify:
    """Training samples ``(image, label, cls, box, mask)`` -> ``(images (B, 3, H, W),
    labels (B, M, k), rpn_cls (B, N), rpn_box (B, N, 4), rpn_mask (B, N, 4))``.

    Images and labels are padded as for validation; each level's targets are padded to the
    padded image's feature map (class -1, box and mask 0) and flattened, levels in order.
    """

    def __init__(self, strides: Sequence[int]) -> None:
        self._strides = [int(s) for s in strides]

    def __call__(self, samples: list[Sample]) -> tuple:
        images, labels = pad_images_and_labels([s[:2] for s in samples])
        height, width = images.shape[2], images.shape[3]
        columns: list[list[np.ndarray]] = [[], [], []]
        for level, stride in enumerate(self._strides):
            h, w = _feature_size(height, stride), _feature_size(width, stride)
            for k, fill in enumerate((-1.0, 0.0, 0.0)):
                parts = [np.asarray(s[2 + k][level], dtype=np.float32) for s in samples]
                padded = np.full((len(samples), h, w, parts[0].shape[-1]), fill, dtype=np.float32)
                for i, part in enumerate(parts):
                    padded[i, :part.shape[0], :part.shape[1]] = part
                columns[k].append(padded.reshape(len(samples), -1) if k == 0
                                  else padded.reshape(len(samples), -1, 4))
        rpn = [mx.nd.array(np.concatenate(parts, axis=1)) for parts in columns]
        return (images, labels, *rpn)


def _smooth_l1(diff: Any, rho: float) -> Any:
    """Huber loss with transition ``rho``: quadratic inside, linear outside."""
    size = mx.nd.abs(diff)
    return mx.nd.where(size > rho, size - 0.5 * rho, (0.5 / rho) * mx.nd.square(size))


def faster_rcnn_losses(rpn_score: Any, rpn_offsets: Any, rpn_cls: Any, rpn_box: Any, rpn_mask: Any,
                       cls_pred: Any, box_pred: Any, cls_targets: Any, box_targets: Any, box_masks: Any,
                       rpn_rho: float = 1.0 / 9.0, rcnn_rho: float = 1.0) -> list[Any]:
    """GluonCV's four Faster R-CNN losses of one device's batch, each a scalar.

    ``rpn_score (B, N, 1)`` logits and ``rpn_offsets (B, N, 4)`` against the transform's
    targets; ``cls_pred (B, S, C+1)`` and ``box_pred (B, P, C, 4)`` against the network's
    region targets. RPN losses are divided by the anchors sampled (target >= 0), region
    losses by the regions sampled, over the whole batch.
    """
    logits = rpn_score.reshape((0, -1))
    rpn_valid = rpn_cls >= 0
    num_rpn = mx.nd.maximum(rpn_valid.sum(), 1)
    bce = mx.nd.relu(logits) - logits * rpn_cls + mx.nd.Activation(-mx.nd.abs(logits), act_type="softrelu")
    rpn_conf = (bce * rpn_valid).sum() / num_rpn
    rpn_l1 = (_smooth_l1(rpn_offsets - rpn_box, rpn_rho) * rpn_mask).sum() / num_rpn
    rcnn_valid = cls_targets >= 0
    num_rcnn = mx.nd.maximum(rcnn_valid.sum(), 1)
    log_prob = mx.nd.log_softmax(cls_pred, axis=-1)
    rcnn_ce = -(mx.nd.pick(log_prob, cls_targets, axis=-1) * rcnn_valid).sum() / num_rcnn
    rcnn_l1 = (_smooth_l1(box_pred - box_targets, rcnn_rho) * box_masks).sum() / num_rcnn
    return [rpn_conf, rpn_l1, rcnn_ce, rcnn_l1]


#: the training script's settings for VOC (its default dataset), per device
VOC_DEFAULTS: dict[str, Any] = {
    "lr": 0.001, "lr_mode": "step", "lr_decay": 0.1, "lr_decay_epoch": (14, 20), "warmup_epochs": 0,
    "wd": 5e-4, "momentum": 0.9, "epochs": 20, "optimizer": "sgd", "batch_size": 1, "data_shape": None,
}
#: its settings for COCO, which also warm up linearly over the first 1000 iterations of the
#: first epoch from a third of the rate (``--lr-warmup``, ``--lr-warmup-factor``)
COCO_DEFAULTS: dict[str, Any] = dict(VOC_DEFAULTS, lr=0.00125, lr_decay_epoch=(17, 23), wd=1e-4, epochs=26,
                                     lr_warmup=1000, lr_warmup_factor=1.0 / 3.0)


class FasterRCNNRecipe(DetectionRecipe):
    """GluonCV's Faster R-CNN training (C4 and FPN networks, ours or GluonCV's).

    ``data_shape`` ``(width, height)``, when given, replaces the network's preferred sizes:
    shorter side ``min(data_shape)``, longer at most ``max(data_shape)``. The schedule
    defaults are the script's for COCO when the network has COCO's classes, else for VOC.
    """

    loss_names = ("rpn_conf", "rpn_smoothl1", "rcnn_crossentropy", "rcnn_smoothl1")
    defaults = VOC_DEFAULTS

    def __init__(self, net: Any, data_shape: tuple[int, int] | None = None, seed: int | None = None,
                 **options: Any) -> None:
        super().__init__(net, data_shape, seed, **options)
        if tuple(getattr(net, "classes", ())) == COCO_CLASSES:
            self.defaults = COCO_DEFAULTS
        if data_shape is not None:
            if min(data_shape) < 1:
                raise ValueError(f"data_shape must be positive, got {data_shape}")
            self.short: int | tuple[int, int] = int(min(data_shape))
            self.max_size = int(max(data_shape))
        else:
            self.short, self.max_size = net.short, net.max_size
        self.targets = RPNTargetMaker.from_network(net)
        self._check_feature_sizes()

    def _check_feature_sizes(self) -> None:
        """The targets assume ``ceil(size / stride)`` feature maps: ask the network once, at a
        size that is no multiple of any stride, rather than on every image as GluonCV does."""
        height, width = 97, 131
        out = self.net.features(mx.sym.var("data"))
        out = mx.sym.Group(list(out)) if isinstance(out, (list, tuple)) else out
        _, shapes, _ = out.infer_shape(data=(1, 3, height, width))
        actual = [tuple(s[2:]) for s in shapes]
        expected = self.targets.feature_sizes(height, width)
        if actual != expected:
            raise ValueError(f"the network's feature maps for a {height}x{width} input are {actual}, but its "
                             f"anchors' strides {self.targets.strides} give {expected}; the RPN targets "
                             "would not line up with its anchors")

    def prepare(self) -> None:
        """Train only what GluonCV trains (``collect_train_params``): the frozen stem and
        first stage, and BatchNorm statistics, get no gradient."""
        self.net.collect_params().setattr("grad_req", "null")
        for param in self.net.collect_train_params().values():
            if not isinstance(param, mx.gluon.Constant):  # the stored anchors match the patterns too
                param.grad_req = "write"

    def train_transform(self) -> Transform:
        short = self.short
        if isinstance(short, (tuple, list)):  # a range: a random shorter side per image
            short = (int(short[0]), int(short[1]))
        preset = FasterRCNNTrainTransform(short=short, max_size=self.max_size, seed=self.seed)
        return _TrainTransform(preset, self.targets, self.seed)

    def batchify(self) -> Callable[[list[Sample]], tuple]:
        return FasterRCNNBatchify(self.targets.strides)

    def losses(self, batch: Sequence[Any]) -> list[Any]:
        images, labels, rpn_cls, rpn_box, rpn_mask = batch
        expected = getattr(self.net, "_batch_size", images.shape[0])
        if images.shape[0] != expected:
            raise ValueError(f"this Faster R-CNN samples regions for {expected} image(s) per device, but the "
                             f"device's batch holds {images.shape[0]}; build the network with "
                             f"per_device_batch_size={images.shape[0]}")
        outputs = self.net(images, labels.slice_axis(axis=-1, begin=0, end=4),
                           labels.slice_axis(axis=-1, begin=4, end=5))
        cls_pred, box_pred, rpn_score, rpn_offsets = outputs[0], outputs[1], outputs[5], outputs[6]
        if rpn_score.shape[1] != rpn_cls.shape[1]:
            raise ValueError(f"the network has {rpn_score.shape[1]} anchors for a {images.shape[2]}x"
                             f"{images.shape[3]} batch but the batch carries targets for {rpn_cls.shape[1]}; "
                             "make the batch with this recipe's batchify")
        return faster_rcnn_losses(rpn_score, rpn_offsets, rpn_cls, rpn_box, rpn_mask, cls_pred, box_pred,
                                  outputs[8], outputs[9], outputs[10])

    def val_transform(self) -> Transform:
        short = self.short[-1] if isinstance(self.short, (tuple, list)) else self.short
        return FasterRCNNValTransform(short, self.max_size)
