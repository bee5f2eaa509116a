"""YOLOv3's training recipe: prefetched box targets, ignore-by-IoU, mixup, label smoothing
and the four sigmoid/L1 losses.

What matches GluonCV 0.10 (checked in ``tests/detection/test_train_yolo3.py`` against
``YOLOV3PrefetchTargetGenerator``, ``YOLOV3TargetMerger`` and ``YOLOV3Loss`` on the same
inputs):

* **Prefetched targets** (:func:`yolo3_prefetch_targets`), computed per image in the data
  workers. Each ground-truth box goes to the one anchor, over all scales, whose shape
  overlaps it best when both are centred at the origin, in the cell of that anchor's scale
  that holds the box centre. That anchor's row gets objectness 1 (or the box's mixup
  weight), the centre's position inside the cell, ``log(max(size, 1) / anchor)`` as scale,
  the weight ``2 - box area / image area`` (small boxes count more) and a one-hot class;
  every other row has objectness 0 and class -1 ("not a positive"). Boxes after the first
  padding row (a coordinate below 0) are ignored, and when two boxes land on the same
  anchor of the same cell the later one wins, as in GluonCV's loop. GluonCV loops over the
  boxes in Python; here one pass of numpy fancy indexing writes all of them, and the
  arithmetic follows GluonCV's dtypes (cell position in float64, scales in float32), so the
  arrays are equal, not just close. A box whose centre lies exactly on the image's right or
  bottom edge goes to the last cell (GluonCV would index past its scale).
* **Dynamic targets** (:func:`yolo3_merge_targets`), computed on the device from the
  network's decoded boxes: a prediction that is not a positive but overlaps any ground-truth
  box with IoU above ``ignore_iou_thresh`` (0.7) gets objectness -1, i.e. no objectness
  loss. With label smoothing the positive class becomes ``1 - e`` and the others ``e``,
  ``e = min(1 / classes, 1 / 40)``.
* **Losses** (:func:`yolo3_losses`): sigmoid cross-entropy for objectness (positives
  weighted by their mixup weight, ignored rows masked), box centres (on the raw outputs,
  weighted by the box weight times objectness) and classes (positives only); L1 on the raw
  scales. GluonCV returns each as a per-image sum; its script backpropagates their sum over
  the batch and steps by the batch size, so :meth:`YOLO3Recipe.losses` returns their mean
  over the device's images, which the shared script averages over devices.
* **Mixup** (:class:`MixupDetection`): an image is blended with a random other one with a
  weight drawn from Beta(1.5, 1.5); each box carries its image's weight in a last label
  column, which becomes its objectness target. GluonCV's script turns mixup off for the
  last ``no_mixup_epochs`` (20) epochs; :meth:`YOLO3Recipe.begin_epoch` does that through a
  flag in shared memory, so data-loader workers forked before the switch see it too.
* **Defaults**: those of GluonCV's ``scripts/detection/yolo/train_yolo3.py`` (0.10): SGD at
  1e-3, momentum 0.9, weight decay 5e-4, steps of 0.1 at epochs 160 and 180 of 200, batch
  64, 416 px (the validation size).
* **Multi-scale training** (``random_shape``, on by default as in GluonCV): every batch is
  square at one side drawn from 320, 352, ..., 608 (:data:`RANDOM_SHAPES`), a new one at
  the first batch of each epoch and every ``random_shape_interval`` (10) batches after, to
  the end of training (GluonCV's ``RandomTransformDataLoader``). GluonCV draws in the loader
  and hands the chosen transform to its workers; here :class:`RandomShapeBatchSampler`
  draws in the main process from a seeded stream and writes the choice into the batch's
  keys, ``(index, shape)``, which :class:`RandomShapeData` reads in any worker. So the plain
  MXNet ``DataLoader`` does it, every image of a batch (on every device) has the same size,
  and a run repeats with its seed. Each size has its own precomputed anchors-to-cells
  layout, read from one symbolic trace of the network.

The feature-map sizes and anchors the prefetch needs are read from the network once, in
the recipe's constructor, by tracing its training-mode graph symbolically at the data
shape: this gives the shapes GluonCV's forward of a zero image gives, without computing
anything on the training devices, and works on a network whose parameter shapes are still
deferred (initialized, never run).
"""

from __future__ import annotations

import multiprocessing
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from gluon_hub.compat import mx

from ...common.worker_random import WorkerRandom
from ..presets import YOLO3TrainTransform, YOLO3ValTransform
from .recipe import DetectionRecipe

__all__ = ["MixupDetection", "RANDOM_SHAPES", "RandomShapeBatchSampler", "RandomShapeData", "YOLO3Recipe",
           "YOLO3TrainTargets", "yolo3_losses", "yolo3_merge_targets", "yolo3_prefetch_targets"]

nd = mx.nd

#: GluonCV's multi-scale training sides: 320 to 608 pixels in steps of the network's stride
RANDOM_SHAPES = tuple(range(320, 609, 32))


# ---------------------------------------------------------------- prefetched targets (numpy)


def yolo3_prefetch_targets(boxes: np.ndarray, class_ids: np.ndarray, anchors: Sequence[np.ndarray],
                           feature_sizes: Sequence[tuple[int, int]], image_size: tuple[int, int],
                           num_classes: int, mix_weights: np.ndarray | None = None) -> tuple[np.ndarray, ...]:
    """The targets that do not depend on the network's predictions.

    Parameters
    ----------
    boxes : ``(B, M, 4)`` corner boxes in input pixels; padding rows hold -1.
    class_ids : ``(B, M)`` class of each box.
    anchors : per scale, in the network's output order, an ``(A, 2)`` array of anchor
        widths and heights in pixels.
    feature_sizes : per scale, the ``(height, width)`` of its feature map.
    image_size : ``(width, height)`` of the network input.
    num_classes : number of foreground classes.
    mix_weights : ``(B, M)`` mixup weight of each box, or ``None`` for weight 1.

    Returns
    -------
    ``(objectness (B, N, 1), centres (B, N, 2), scales (B, N, 2), weights (B, N, 2),
    classes (B, N, num_classes))`` in float32, rows in the network's prediction order (scale,
    then cell row-major, then anchor).
    """
    boxes = np.asarray(boxes, dtype=np.float32)
    if boxes.ndim != 3 or boxes.shape[-1] != 4:
        raise ValueError(f"boxes must be (batch, boxes, 4) corner boxes; got shape {boxes.shape}")
    class_ids = np.asarray(class_ids).reshape(boxes.shape[:2])
    if len(anchors) != len(feature_sizes):
        raise ValueError(f"{len(anchors)} anchor groups but {len(feature_sizes)} feature maps: "
                         "give one of each per scale")
    all_anchors = np.concatenate([np.asarray(a, dtype=np.float32).reshape(-1, 2) for a in anchors])
    per_scale = np.array([np.asarray(a).size // 2 for a in anchors])
    anchor_start = np.concatenate([[0], np.cumsum(per_scale)])
    heights, widths = (np.array(side) for side in zip(*feature_sizes))
    row_start = np.concatenate([[0], np.cumsum(heights * widths * per_scale)])
    batch, total = boxes.shape[0], int(row_start[-1])
    objectness = np.zeros((batch, total, 1), np.float32)
    centers = np.zeros((batch, total, 2), np.float32)
    scales = np.zeros((batch, total, 2), np.float32)
    weights = np.zeros((batch, total, 2), np.float32)
    classes = -np.ones((batch, total, num_classes), np.float32)

    # GluonCV stops at an image's first box with a negative coordinate (the padding)
    valid = np.cumprod((boxes >= 0).all(axis=-1), axis=1).astype(bool)
    b, m = np.nonzero(valid)
    if b.size == 0:
        return objectness, centers, scales, weights, classes
    xmin, ymin, xmax, ymax = (boxes[b, m, k] for k in range(4))
    box_w, box_h = xmax - xmin, ymax - ymin
    center_x, center_y = xmin + box_w * np.float32(0.5), ymin + box_h * np.float32(0.5)

    # best anchor by IoU of origin-centred shapes: intersection min(w) x min(h)
    half_w, half_h = np.float32(0.5) * box_w[:, None], np.float32(0.5) * box_h[:, None]
    anchor_w, anchor_h = all_anchors[None, :, 0], all_anchors[None, :, 1]
    half_aw, half_ah = anchor_w * np.float32(0.5), anchor_h * np.float32(0.5)
    inter_w = np.maximum(np.minimum(half_aw, half_w) - np.maximum(-half_aw, -half_w), 0)
    inter_h = np.maximum(np.minimum(half_ah, half_h) - np.maximum(-half_ah, -half_h), 0)
    inter = inter_w * inter_h
    union = anchor_w * anchor_h + ((half_w + half_w) * (half_h + half_h)) - inter
    match = np.argmax(inter / union, axis=1)
    scale = np.searchsorted(anchor_start, match, side="right") - 1

    width, height = image_size
    cell_x = center_x.astype(np.float64) / width * widths[scale]
    cell_y = center_y.astype(np.float64) / height * heights[scale]
    loc_x = np.minimum(cell_x.astype(np.int64), widths[scale] - 1)
    loc_y = np.minimum(cell_y.astype(np.int64), heights[scale] - 1)
    row = row_start[scale] + (loc_y * widths[scale] + loc_x) * per_scale[scale] + match - anchor_start[scale]

    # the last box written to a (image, row) wins, as in GluonCV's loop
    key = (b * total + row)[::-1]
    _, first = np.unique(key, return_index=True)
    keep = np.sort(len(key) - 1 - first)
    b, m, row, match = b[keep], m[keep], row[keep], match[keep]
    objectness[b, row, 0] = 1 if mix_weights is None else np.asarray(mix_weights).reshape(boxes.shape[:2])[b, m]
    centers[b, row, 0] = (cell_x - loc_x)[keep]
    centers[b, row, 1] = (cell_y - loc_y)[keep]
    scales[b, row, 0] = np.log(np.maximum(box_w[keep], np.float32(1)) / all_anchors[match, 0])
    scales[b, row, 1] = np.log(np.maximum(box_h[keep], np.float32(1)) / all_anchors[match, 1])
    weights[b, row, :] = (2.0 - (box_w * box_h)[keep].astype(np.float64) / width / height)[:, None]
    classes[b, row, :] = 0
    classes[b, row, class_ids[b, m].astype(np.int64)] = 1
    return objectness, centers, scales, weights, classes


# ---------------------------------------------------------------- dynamic targets and losses (MXNet)


def _batch_iou(a: Any, b: Any) -> Any:
    """IoU ``(B, N, M)`` of corner boxes ``a (B, N, 4)`` and ``b (B, M, 4)``."""
    al, at, ar, ab = (a.slice_axis(axis=-1, begin=k, end=k + 1) for k in range(4))
    bl, bt, br, bb = (b.slice_axis(axis=-1, begin=k, end=k + 1).transpose((0, 2, 1)) for k in range(4))
    inter_w = nd.clip(nd.broadcast_minimum(ar, br) - nd.broadcast_maximum(al, bl), 0, 65504)
    inter_h = nd.clip(nd.broadcast_minimum(ab, bb) - nd.broadcast_maximum(at, bt), 0, 65504)
    inter = inter_w * inter_h
    union = nd.broadcast_add((ar - al) * (ab - at), (br - bl) * (bb - bt)) - inter
    return inter / (union + 1e-15)


def yolo3_merge_targets(box_preds: Any, gt_boxes: Any, objectness: Any, centers: Any, scales: Any,
                        weights: Any, classes: Any, ignore_iou_thresh: float = 0.7,
                        label_smoothing: bool = False) -> tuple[Any, ...]:
    """The prefetched targets with the non-positive predictions that overlap a ground-truth
    box by more than ``ignore_iou_thresh`` marked ignored (objectness -1), and the classes
    smoothed when asked.

    ``box_preds (B, N, 4)`` are the network's decoded boxes, ``gt_boxes (B, M, 4)`` the
    image's boxes padded with -1 rows. Returns ``(objectness, centres, scales, weights,
    classes, class_mask)``, gradient-free.
    """
    with mx.autograd.pause():
        ignored = _batch_iou(box_preds, gt_boxes).max(axis=-1, keepdims=True) > ignore_iou_thresh
        positive = objectness > 0
        merged = nd.where(positive, objectness, -ignored)
        centers, scales, weights = (nd.broadcast_mul(t, positive) for t in (centers, scales, weights))
        num_classes = classes.shape[-1]
        classes = nd.broadcast_mul(classes, positive) - nd.broadcast_mul(nd.ones_like(classes), 1 - positive)
        if label_smoothing:
            eps = min(1.0 / num_classes, 1.0 / 40)
            others = nd.where(classes < -0.5, classes, nd.ones_like(classes) * eps)
            classes = nd.where(classes > 0.5, classes - eps, others)
        class_mask = nd.broadcast_mul(positive, classes >= 0)
    return tuple(t.detach() for t in (merged, centers, scales, weights, classes, class_mask))


def _sigmoid_ce(logits: Any, labels: Any, weights: Any) -> Any:
    """Per-image sum of weighted sigmoid cross-entropy on ``logits`` (stable form)."""
    loss = nd.relu(logits) - logits * labels + nd.Activation(-nd.abs(logits), act_type="softrelu")
    return nd.sum(loss * weights, axis=0, exclude=True)


def yolo3_losses(objectness: Any, centers: Any, scales: Any, class_pred: Any, objectness_t: Any, centers_t: Any,
                 scales_t: Any, weights_t: Any, classes_t: Any, class_mask: Any) -> tuple[Any, Any, Any, Any]:
    """YOLOv3's objectness, centre, scale and class losses, each ``(B,)``: a sum over the
    image's predictions. Inputs are the raw network outputs (objectness ``(B, N, 1)``,
    centres and scales ``(B, N, 2)``, class logits ``(B, N, C)``) and
    :func:`yolo3_merge_targets`' targets."""
    box_weight = nd.broadcast_mul(weights_t, objectness_t)
    hard = nd.where(objectness_t > 0, nd.ones_like(objectness_t), objectness_t)
    obj_mask = nd.where(objectness_t > 0, objectness_t, objectness_t >= 0)
    obj_loss = _sigmoid_ce(objectness, hard, obj_mask)
    center_loss = _sigmoid_ce(centers, centers_t, box_weight)
    scale_loss = nd.sum(nd.abs(scales - scales_t) * box_weight, axis=0, exclude=True)
    class_loss = _sigmoid_ce(class_pred, classes_t, nd.broadcast_mul(class_mask, objectness_t))
    return obj_loss, center_loss, scale_loss, class_loss


# ---------------------------------------------------------------- data


class MixupDetection(mx.gluon.data.Dataset):
    """Items of ``dataset`` blended with a random other item, for mixup training.

    An item ``(HWC uint8 image, (N, k) label)`` becomes ``(image, (N', k + 1) label)``: with
    mixup on, a weight ``w`` drawn from Beta(``alpha``, ``alpha``) blends it with another
    image (``w * this + (1 - w) * other`` on a canvas as large as both, cast back to
    uint8), and both images' boxes are kept, each with its image's weight in the new last
    column. With mixup off (:attr:`enabled` false), or when ``w`` comes out as 1, the item is
    returned alone with weight 1 on every box.

    ``enabled`` lives in shared memory: data-loader workers forked before it changes see
    the change.
    """

    def __init__(self, dataset: Any, alpha: float = 1.5, seed: int | None = None) -> None:
        if len(dataset) < 2:
            raise ValueError(f"mixup blends pairs of images; the training set has {len(dataset)} image(s)")
        if alpha <= 0:
            raise ValueError(f"mixup's Beta(alpha, alpha) needs alpha > 0, got {alpha}")
        self._dataset, self._alpha = dataset, float(alpha)
        self._random = WorkerRandom(seed)
        self._enabled = multiprocessing.RawValue("b", 1)

    @property
    def rng(self) -> np.random.RandomState:
        """This process's stream (each data-loader worker draws its own pairs and weights)."""
        return self._random.rng

    @property
    def enabled(self) -> bool:
        """Whether items are blended; GluonCV turns this off for the last epochs."""
        return bool(self._enabled.value)

    @enabled.setter
    def enabled(self, value: bool) -> None:
        self._enabled.value = int(bool(value))

    def __getstate__(self) -> dict:
        # a plain copy (spawned workers, pickle round trips) keeps the flag's value only
        return {**self.__dict__, "_enabled": self.enabled}

    def __setstate__(self, state: dict) -> None:
        enabled = multiprocessing.RawValue("b", int(state.pop("_enabled")))
        self.__dict__.update(state, _enabled=enabled)

    def __len__(self) -> int:
        return len(self._dataset)

    def __getitem__(self, index: int) -> tuple[Any, np.ndarray]:
        image, label = self._dataset[index]
        label = np.asarray(label.asnumpy() if hasattr(label, "asnumpy") else label, dtype=np.float32)
        weight = float(np.clip(self.rng.beta(self._alpha, self._alpha), 0, 1)) if self.enabled else 1.0
        if weight >= 1:
            return image, np.hstack([label, np.ones((len(label), 1), np.float32)])
        other = int(self.rng.randint(len(self) - 1))
        other += other >= index
        image2, label2 = self._dataset[other]
        label2 = np.asarray(label2.asnumpy() if hasattr(label2, "asnumpy") else label2, dtype=np.float32)
        first, second = (np.asarray(i.asnumpy() if hasattr(i, "asnumpy") else i, dtype=np.float32)
                         for i in (image, image2))
        canvas = np.zeros((max(first.shape[0], second.shape[0]), max(first.shape[1], second.shape[1]), 3), np.float32)
        canvas[:first.shape[0], :first.shape[1]] = first * np.float32(weight)
        canvas[:second.shape[0], :second.shape[1]] += second * np.float32(1 - weight)
        mixed = np.vstack([np.hstack([label, np.full((len(label), 1), weight, np.float32)]),
                           np.hstack([label2, np.full((len(label2), 1), 1 - weight, np.float32)])])
        return mx.nd.array(canvas.astype(np.uint8), dtype="uint8"), mixed


class YOLO3TrainTargets:
    """GluonCV's YOLOv3 train augmentation followed by the prefetched targets.

    ``(image, label)`` -> ``(CHW image, objectness (N, 1), centres (N, 2), scales (N, 2),
    weights (N, 2), classes (N, C), boxes (M, 4))``; with ``mixup`` the label's last column
    is each box's mixup weight (:class:`MixupDetection` adds it). Holds only numpy arrays
    and the seeded preset, so it pickles into data-loader workers.
    """

    def __init__(self, width: int, height: int, anchors: Sequence[np.ndarray], feature_sizes: Sequence[tuple[int, int]],
                 num_classes: int, mixup: bool = False, seed: int | None = None) -> None:
        self._preset = YOLO3TrainTransform(width, height, seed=seed)
        self._size = (width, height)
        self._anchors = [np.asarray(a, dtype=np.float32) for a in anchors]
        self._feature_sizes = [tuple(s) for s in feature_sizes]
        self._num_classes, self._mixup = num_classes, mixup

    def __call__(self, src: Any, label: Any) -> tuple:
        image, boxes = self._preset(src, label)
        boxes = np.asarray(boxes, dtype=np.float32)
        targets = yolo3_prefetch_targets(boxes[None, :, :4], boxes[None, :, 4], self._anchors, self._feature_sizes,
                                         self._size, self._num_classes,
                                         boxes[None, :, -1] if self._mixup else None)
        return (image, *(t[0] for t in targets), boxes[:, :4])


def stack_and_pad(samples: list[tuple]) -> tuple:
    """YOLOv3 training samples -> a batch: the image and the five target arrays stacked,
    the ground-truth boxes padded with -1 rows to the most boxes (at least one)."""
    def arr(value: Any) -> np.ndarray:
        return value.asnumpy() if hasattr(value, "asnumpy") else np.asarray(value)

    stacked = [mx.nd.array(np.stack([arr(s[k]) for s in samples])) for k in range(6)]
    rows = max(1, max(len(s[6]) for s in samples))
    boxes = -np.ones((len(samples), rows, 4), np.float32)
    for k, sample in enumerate(samples):
        boxes[k, :len(sample[6])] = arr(sample[6])
    return (*stacked, mx.nd.array(boxes))


class RandomShapeBatchSampler(mx.gluon.data.Sampler):
    """Batches of ``(index, shape)`` keys for :class:`RandomShapeData`: ``sampler``'s indices,
    ``batch_size`` at a time (an incomplete last batch is dropped), every key of a batch
    naming the same shape, one of ``range(num_shapes)`` drawn at the first batch and every
    ``interval`` batches after. The draw happens here, in the main process, from a stream
    seeded by ``seed``, so the workers that build a batch cannot disagree on its size."""

    def __init__(self, sampler: Any, batch_size: int, num_shapes: int, interval: int = 10,
                 seed: int | None = None) -> None:
        if batch_size < 1 or num_shapes < 1 or interval < 1:
            raise ValueError(f"batch_size, num_shapes and interval must be at least 1; got {batch_size}, "
                             f"{num_shapes}, {interval}")
        self._sampler, self._batch_size = sampler, int(batch_size)
        self._num_shapes, self._interval = int(num_shapes), int(interval)
        self._rng = np.random.RandomState(seed)

    def __iter__(self) -> Iterator[list[tuple[int, int]]]:
        batch: list[int] = []
        shape, count = 0, 0
        for index in self._sampler:
            batch.append(index)
            if len(batch) < self._batch_size:
                continue
            if count % self._interval == 0:
                shape = int(self._rng.randint(self._num_shapes))
            yield [(i, shape) for i in batch]
            batch, count = [], count + 1

    def __len__(self) -> int:
        return len(self._sampler) // self._batch_size


class RandomShapeData(mx.gluon.data.Dataset):
    """``samples`` through one of several train transforms chosen by the key: ``(index, k)``
    (from :class:`RandomShapeBatchSampler`) goes through ``transforms[k]``, a plain index
    through ``default``. Holds only picklable transforms, so it travels to loader workers."""

    def __init__(self, samples: Any, transforms: Sequence[Callable], default: Callable) -> None:
        self._samples, self._transforms, self._default = samples, list(transforms), default

    def __len__(self) -> int:
        return len(self._samples)

    def __getitem__(self, key: Any) -> tuple:
        if isinstance(key, tuple):
            index, shape = key
            return self._transforms[shape](*self._samples[index])
        return self._default(*self._samples[key])


# ---------------------------------------------------------------- the recipe


def anchors_and_feature_sizes(net: Any, width: int, height: int) -> tuple[list[np.ndarray], list[tuple[int, int]]]:
    """Per scale of a YOLOv3 ``net`` at ``width`` x ``height``: its ``(A, 2)`` anchors and
    its feature map's ``(height, width)``, in the network's output order.

    The training-mode graph is traced symbolically and shape-inferred: nothing runs on the
    network's devices, and parameters whose shapes are still deferred need not be known.
    """
    return _anchors(net), _feature_sizes(_templates(net), width, height)


def _anchors(net: Any) -> list[np.ndarray]:
    return [head.anchors.data(head.anchors.list_ctx()[0]).asnumpy().reshape(-1, 2) for head in net.yolo_outputs]


def _templates(net: Any) -> Any:
    """The symbol of a YOLOv3 ``net``'s per-scale feature-map templates (training mode)."""
    with mx.autograd.train_mode():
        outputs = net(mx.sym.var("data"))
    return mx.sym.Group(list(outputs[3]))


def _feature_sizes(templates: Any, width: int, height: int) -> list[tuple[int, int]]:
    _, shapes, _ = templates.infer_shape_partial(data=(1, 3, height, width))
    return [(int(s[2]), int(s[3])) for s in shapes]


class YOLO3Recipe(DetectionRecipe):
    """GluonCV's YOLOv3 recipe: prefetched targets plus IoU-ignore, four summed losses,
    optional ``mixup`` (off for the last ``no_mixup_epochs``) and ``label_smoothing``, and
    multi-scale training: unless ``random_shape`` is false, each batch has a side from
    ``random_shapes`` (multiples of 32), a new one every ``random_shape_interval`` batches.
    ``data_shape`` is the validation size, and the training size without ``random_shape``.

    >>> YOLO3Recipe.loss_names
    ('objectness', 'box_center', 'box_scale', 'class')
    """

    loss_names = ("objectness", "box_center", "box_scale", "class")
    defaults = {"lr": 1e-3, "lr_mode": "step", "lr_decay": 0.1, "lr_decay_epoch": (160, 180),
                "warmup_epochs": 0, "wd": 5e-4, "momentum": 0.9, "epochs": 200, "optimizer": "sgd",
                "batch_size": 64, "data_shape": 416}

    def __init__(self, net: Any, data_shape: tuple[int, int] | None = None, seed: int | None = None,
                 mixup: bool = False, label_smoothing: bool = False, no_mixup_epochs: int = 20,
                 ignore_iou_thresh: float = 0.7, random_shape: bool = True,
                 random_shapes: Sequence[int] = RANDOM_SHAPES, random_shape_interval: int = 10,
                 **options: Any) -> None:
        side = self.defaults["data_shape"]
        super().__init__(net, tuple(data_shape) if data_shape else (side, side), seed, **options)
        if no_mixup_epochs < 0:
            raise ValueError(f"no_mixup_epochs must be 0 or more, got {no_mixup_epochs}")
        shapes = tuple(int(s) for s in random_shapes)
        if random_shape and (not shapes or any(s < 32 or s % 32 for s in shapes)):
            raise ValueError(f"random_shapes must be sides that are positive multiples of 32 (YOLOv3's stride), "
                             f"got {list(random_shapes)}")
        if random_shape_interval < 1:
            raise ValueError(f"random_shape_interval must be at least 1 batch, got {random_shape_interval}")
        self.mixup, self.label_smoothing = bool(mixup), bool(label_smoothing)
        self.no_mixup_epochs, self.ignore_iou_thresh = int(no_mixup_epochs), float(ignore_iou_thresh)
        self.random_shapes = shapes if random_shape else ()
        self.random_shape_interval = int(random_shape_interval)
        width, height = self.data_shape
        self._templates = _templates(net)
        self.anchors = _anchors(net)
        self.feature_sizes = _feature_sizes(self._templates, width, height)
        self._mixed: MixupDetection | None = None

    def train_transform(self) -> YOLO3TrainTargets:
        width, height = self.data_shape
        return YOLO3TrainTargets(width, height, self.anchors, self.feature_sizes, len(self.net.classes),
                                 self.mixup, self.seed)

    def training_data(self, samples: Any) -> Any:
        """The samples through the train transform, blended in pairs first with ``mixup``;
        with random shapes, a :class:`RandomShapeData` that has one transform per side."""
        if self.mixup:
            self._mixed = MixupDetection(samples, alpha=1.5, seed=self.seed)
            samples = self._mixed
        if not self.random_shapes:
            return samples.transform(self.train_transform())
        transforms = [YOLO3TrainTargets(side, side, self.anchors, _feature_sizes(self._templates, side, side),
                                        len(self.net.classes), self.mixup,
                                        None if self.seed is None else self.seed + 1 + k)
                      for k, side in enumerate(self.random_shapes)]
        return RandomShapeData(samples, transforms, self.train_transform())

    def batch_sampler(self, sampler: Any, batch_size: int) -> Any:
        """Batches whose keys carry the side drawn for them (GluonCV's interval and sides),
        or plain batches without random shapes."""
        if not self.random_shapes:
            return super().batch_sampler(sampler, batch_size)
        return RandomShapeBatchSampler(sampler, batch_size, len(self.random_shapes), self.random_shape_interval,
                                       self.seed)

    def begin_epoch(self, epoch: int, num_epochs: int) -> None:
        """Mixup on, except in the last ``no_mixup_epochs`` epochs (GluonCV's schedule)."""
        if self._mixed is not None:
            self._mixed.enabled = epoch < num_epochs - self.no_mixup_epochs

    def batchify(self) -> Callable[[list[tuple]], tuple]:
        return stack_and_pad

    def losses(self, batch: Sequence[Any]) -> list[Any]:
        images, objectness_t, centers_t, scales_t, weights_t, classes_t, gt_boxes = batch
        box_preds, _, _, _, centers, scales, objectness, class_pred = self.net(images)
        targets = yolo3_merge_targets(box_preds, gt_boxes, objectness_t, centers_t, scales_t, weights_t, classes_t,
                                      self.ignore_iou_thresh, self.label_smoothing)
        return [loss.mean() for loss in yolo3_losses(objectness, centers, scales, class_pred, *targets)]

    def val_transform(self) -> YOLO3ValTransform:
        width, height = self.data_shape
        return YOLO3ValTransform(width, height)
