"""Training Mask R-CNN with GluonCV 0.10's recipe: Faster R-CNN's, plus instance masks.

What Mask R-CNN adds to :mod:`.faster_rcnn`, as GluonCV's ``train_mask_rcnn.py`` does it:

* **The training transform** (:class:`MaskRCNNTrainTransform`) resizes and flips each
  object's mask with the image and boxes (the Faster R-CNN preset's draws, in the same
  order, so a seed gives the same image). Polygons are scaled and mirrored as coordinates,
  then rasterised at the new size by ``pycocotools`` (GluonCV's ``MaskRCNNDefaultTrainTransform``);
  masks already decoded (RLE objects, ``segm_format="mask"``) are resized nearest-neighbour.
  Masks travel as ``uint8`` ``(N, H, W)`` and the batch pads them with zeros to the padded
  image (GluonCV's ``MaskRCNNTrainBatchify``).
* **Mask targets** (:func:`mask_targets`) are GluonCV's ``MaskTargetGenerator``: each sampled
  positive region pools its matched ground-truth mask with ROIAlign (scale 1, two samples
  per bin) to the mask head's size. GluonCV copies that mask into every class channel and
  weights only the region's class; here the mask is kept once with its class, and the loss
  picks that channel of the prediction: the same numbers without a ``C``-fold copy.
* **The mask loss** (:func:`mask_loss`) is sigmoid binary cross-entropy on the matched class
  channel, summed and divided by the weighted pixels (positives x mask area), the value
  GluonCV's script logs per image.

Bad instance data fails naming the sample (:class:`InstanceTrainingSamples`): an object
without a mask, masks that do not match the boxes in number or image size.

``tests/detection/test_train_mask_rcnn.py`` checks the targets against GluonCV's
generator, the transform against its preset, the five losses against its training step on
one network and batch, and trains the script on a tiny COCO-format dataset.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from gluon_hub.compat import mx

from ...common.worker_random import WorkerRandom
from ..presets import (
    FasterRCNNTrainTransform,
    _checked,
    _image,
    _resize,
    _tensor,
    flip_boxes,
    resize_boxes,
    short_side_size,
)
from .faster_rcnn import COCO_DEFAULTS, FasterRCNNBatchify, FasterRCNNRecipe, RPNTargetMaker, faster_rcnn_losses
from .recipe import Sample, Transform
from .samples import TrainingSamples

__all__ = [
    "InstanceTrainingSamples",
    "MaskRCNNBatchify",
    "MaskRCNNRecipe",
    "MaskRCNNTrainTransform",
    "instance_masks",
    "mask_loss",
    "mask_targets",
]

#: ``train_mask_rcnn.py``'s schedule (COCO only): Faster R-CNN's COCO one, per device
MASK_DEFAULTS: dict[str, Any] = dict(COCO_DEFAULTS)


def _polygons(obj: Any) -> list[np.ndarray]:
    """Copies of one object's polygons as ``(K, 2)`` ``float32`` arrays (flat COCO lists accepted)."""
    return [np.array(p, dtype=np.float32).reshape(-1, 2) for p in obj]


def check_instances(segm: Any, num_objects: int, size: tuple[int, int]) -> None:
    """Raise ``ValueError`` unless ``segm`` gives each of ``num_objects`` objects a non-empty
    mask: a list of polygon lists, or ``(N, H, W)`` masks of the image's ``size`` ``(h, w)``."""
    if isinstance(segm, (np.ndarray, mx.nd.NDArray)):
        masks = segm.asnumpy() if isinstance(segm, mx.nd.NDArray) else segm
        if masks.ndim != 3 or masks.shape[1:] != tuple(size):
            raise ValueError(f"masks of shape {masks.shape} are not (N, {size[0]}, {size[1]}), one per object at "
                             "the image's size")
        count = masks.shape[0]
        empty = [k for k in range(count) if not masks[k].any()]
    else:
        count = len(segm)
        empty = []
        for k, obj in enumerate(segm):
            polygons = [p for p in _polygons(obj) if len(p) >= 3]
            # shoelace area: a polygon of collinear points covers nothing
            area = sum(abs(float(np.dot(p[:, 0], np.roll(p[:, 1], 1)) - np.dot(p[:, 1], np.roll(p[:, 0], 1))))
                       for p in polygons)
            if not polygons or area == 0:
                empty.append(k)
    if count != num_objects:
        raise ValueError(f"{num_objects} object(s) in the label but {count} mask(s); every object needs its mask")
    if empty:
        raise ValueError(f"object(s) {empty} have no mask (no polygon with an area, or no pixel set); "
                         "give them a segmentation or remove them")


def instance_masks(segm: Any, in_size: tuple[int, int], out_size: tuple[int, int], flip: bool = False) -> np.ndarray:
    """``(N, h, w)`` ``uint8`` masks of an image resized from ``in_size`` to ``out_size``
    (``(w, h)`` each), then mirrored left-right when ``flip``.

    ``segm`` is a list (one entry per object) of polygon lists, each polygon ``(K, 2)``
    ``[x, y]`` points or a flat COCO list; or ``(N, H, W)`` masks of the original image.
    """
    width, height = out_size
    if isinstance(segm, (np.ndarray, mx.nd.NDArray)):
        from PIL import Image

        masks = np.asarray(segm.asnumpy() if isinstance(segm, mx.nd.NDArray) else segm, dtype=np.uint8)
        out = np.stack([np.asarray(Image.fromarray(m).resize((width, height), Image.NEAREST)) for m in masks]) \
            if len(masks) else np.zeros((0, height, width), np.uint8)
        return np.ascontiguousarray(out[:, :, ::-1]) if flip else out
    from pycocotools import mask as coco_mask

    x_scale, y_scale = width / in_size[0], height / in_size[1]
    out = np.zeros((len(segm), height, width), np.uint8)
    for k, obj in enumerate(segm):
        flat = []
        for polygon in _polygons(obj):
            # float32 arithmetic, as GluonCV's mask.resize / mask.flip do it on the arrays
            polygon[:, 0] = x_scale * polygon[:, 0]
            polygon[:, 1] = y_scale * polygon[:, 1]
            if flip:
                polygon[:, 0] = width - polygon[:, 0]
            flat.append(polygon.flatten().tolist())
        out[k] = coco_mask.decode(coco_mask.merge(coco_mask.frPyObjects(flat, height, width)))
    return out


class MaskRCNNTrainTransform(FasterRCNNTrainTransform):
    """The Faster R-CNN training preset applied to ``(image, label, segm)``: the masks are
    resized and flipped with the image; returns ``(CHW image, boxes, (N, h, w) uint8 masks)``."""

    def __call__(self, src: Any, label: Any, segm: Any = None) -> tuple[Any, np.ndarray, np.ndarray]:
        if segm is None:
            raise ValueError("the Mask R-CNN transform takes (image, label, segm): the objects' masks are missing")
        src, boxes = _image(src), _checked(label)
        height, width = src.shape[:2]
        check_instances(segm, len(boxes), (height, width))
        short = self._short
        if not isinstance(short, int):  # the preset's draws, in its order
            short = int(self.rng.randint(short[0], short[1] + 1))
        new_w, new_h = short_side_size(height, width, short, self._max_size)
        image = _resize(src, new_w, new_h, interp=1)
        boxes = resize_boxes(boxes, (width, height), (new_w, new_h))
        flip = bool(self.rng.uniform() < self._flip_p)
        if flip:
            image = mx.nd.flip(image, axis=1)
        boxes = flip_boxes(boxes, (new_w, new_h), flip_x=flip)
        masks = instance_masks(segm, (width, height), (new_w, new_h), flip)
        return _tensor(image, self._mean, self._std), boxes.astype(np.float32), masks


class _TrainTransform:
    """The Mask R-CNN preset, then the RPN targets of the augmented image; samples are
    ``(image, boxes, rpn_cls, rpn_box, rpn_mask, masks)``."""

    def __init__(self, preset: MaskRCNNTrainTransform, targets: RPNTargetMaker, seed: int | None) -> None:
        self._preset, self._targets = preset, targets
        self._random = WorkerRandom(None if seed is None else [seed, 1])  # as Faster R-CNN's

    def __call__(self, src: Any, label: np.ndarray, segm: Any = None) -> Sample:
        image, boxes, masks = self._preset(src, label, segm)
        cls, box, mask = self._targets(boxes[:, :4], image.shape[1], image.shape[2], self._random.rng)
        return image, boxes, cls, box, mask, masks


class MaskRCNNBatchify:
    """Samples ``(image, label, rpn_cls, rpn_box, rpn_mask, masks)`` -> ``(images, labels,
    masks (B, M, H, W) uint8, rpn_cls, rpn_box, rpn_mask)``, GluonCV's order: Faster
    R-CNN's batch, with each image's masks zero-padded to the most objects and the padded size."""

    def __init__(self, strides: Sequence[int]) -> None:
        self._faster = FasterRCNNBatchify(strides)

    def __call__(self, samples: list[Sample]) -> tuple:
        images, labels, *rpn = self._faster([s[:5] for s in samples])
        height, width = images.shape[2], images.shape[3]
        masks = np.zeros((len(samples), max(max(len(s[5]) for s in samples), 1), height, width), np.uint8)
        for k, sample in enumerate(samples):
            m = np.asarray(sample[5], dtype=np.uint8)
            masks[k, :m.shape[0], :m.shape[1], :m.shape[2]] = m
        return (images, labels, mx.nd.array(masks, dtype=np.uint8), *rpn)


def mask_targets(rois: Any, gt_masks: Any, matches: Any, cls_targets: Any,
                 size: tuple[int, int]) -> tuple[Any, Any]:
    """Mask targets of the sampled positive regions: GluonCV's ``MaskTargetGenerator``.

    Parameters
    ----------
    rois : ``(B, P, 4)`` corner regions (the network's positives, at its ``indices``).
    gt_masks : ``(B, M, H, W)`` full-image masks of each image's objects (zero padding rows).
    matches : ``(B, P)`` the object each region matched (-1 read as 0, as GluonCV).
    cls_targets : ``(B, P)`` region classes, 0 background and -1 ignored, objects from 1.
    size : the mask head's ``(h, w)``.

    Returns
    -------
    ``targets (B, P, h, w)``: each region's pooled mask, and ``classes (B, P)``: the channel
    it trains (``cls_targets - 1``), -1 for regions that train no mask. GluonCV's per-class
    targets are ``targets`` in every channel, weighted 1 where the channel is ``classes``.
    """
    with mx.autograd.pause():
        batch, num = rois.shape[0], rois.shape[1]
        objects = gt_masks.shape[1]
        masks = gt_masks.astype("float32").reshape((-1, 1) + tuple(gt_masks.shape[2:]))  # (B*M, 1, H, W)
        image = mx.nd.arange(batch, ctx=rois.context).reshape((-1, 1)) * objects
        index = mx.nd.broadcast_add(mx.nd.relu(matches), image).reshape((-1, 1))
        regions = mx.nd.concat(index, rois.reshape((-1, 4)), dim=1)
        pooled = mx.nd.contrib.ROIAlign(masks, regions, tuple(size), 1.0, sample_ratio=2)
        classes = mx.nd.where(cls_targets >= 1, cls_targets - 1, -mx.nd.ones_like(cls_targets))
        return pooled.reshape((batch, num, size[0], size[1])), classes


def mask_loss(mask_pred: Any, targets: Any, classes: Any) -> Any:
    """Sigmoid binary cross-entropy of ``mask_pred (B, P, C, h, w)`` logits on each region's
    class channel against ``targets (B, P, h, w)``, over the regions with ``classes >= 0``;
    divided by their pixels (at least 1): GluonCV's mask loss per image."""
    channels, height, width = mask_pred.shape[2:]
    rows = mask_pred.shape[0] * mask_pred.shape[1]
    with mx.autograd.pause():
        weight = (classes >= 0).reshape((-1, 1, 1))
        flat = mx.nd.arange(rows, ctx=classes.context) * channels + mx.nd.clip(classes.reshape((-1,)), 0, channels - 1)
    logits = mx.nd.take(mask_pred.reshape((-1, height, width)), flat)
    labels = targets.reshape((-1, height, width))
    bce = mx.nd.relu(logits) - logits * labels + mx.nd.Activation(-mx.nd.abs(logits), act_type="softrelu")
    return mx.nd.broadcast_mul(bce, weight).sum() / mx.nd.maximum(weight.sum() * (height * width), 1)


def _at(values: Any, indices: Any) -> Any:
    """``values (B, N, ...)`` at each image's ``indices (B, P)`` -> ``(B, P, ...)``."""
    batch, num = values.shape[0], values.shape[1]
    flat = mx.nd.broadcast_add(indices, mx.nd.arange(batch, ctx=indices.context).reshape((-1, 1)) * num)
    picked = mx.nd.take(values.reshape((batch * num, -1)), flat.reshape((-1,)))
    return picked.reshape((batch, indices.shape[1]) + tuple(values.shape[2:]))


class InstanceTrainingSamples(TrainingSamples):
    """:class:`~.samples.TrainingSamples` for instance data: items ``(image, label, segm)``
    (a :class:`~gluon_cv_core.datasets.coco.COCOInstance` or the same items).

    Labels are checked and repaired as for detection; every object must also have a
    non-empty mask, and a box dropped by the repair takes its mask with it. Errors name the
    sample (its file and COCO image id where the dataset has them).
    """

    def _raw_label(self, index: int) -> Any:
        labels = getattr(self._dataset, "labels", None)
        return labels[index] if labels is not None else self._dataset[index][1]

    def _where(self, index: int) -> str:
        items, ids = getattr(self._dataset, "items", None), getattr(self._dataset, "image_ids", None)
        if items is None:
            return super()._where(index)
        image_id = f", image id {ids[index]}" if ids is not None else ""
        return f"sample {index} ({items[index]}{image_id})"

    def __getitem__(self, position: int) -> Any:
        index = self.indices[position]
        item = self._dataset[index]
        if len(item) != 3:
            raise ValueError(f"{self._where(index)}: instance training items are (image, label, segm); got "
                             f"{len(item)} values. Read the data with COCOInstance")
        image, _, segm = item
        shape = tuple(image.shape)
        if len(shape) != 3 or shape[2] != 3 or 0 in shape:
            raise ValueError(f"{self._where(index)}: a training image is an HWC array with 3 channels; "
                             f"got shape {shape}")
        label = self._labels[index]
        try:
            check_instances(segm, len(label), shape[:2])
        except ValueError as err:
            raise ValueError(f"{self._where(index)}: {err}") from None
        # the row numbers ride along as a last column, to keep the masks of the boxes kept
        rows = np.concatenate([label, np.arange(len(label), dtype=label.dtype)[:, None]], axis=1)
        fitted = self._fitted(index, rows, shape[1], shape[0])
        if fitted.shape[0] == 0:
            raise ValueError(f"{self._where(index)}: no box of this image lies inside it "
                             f"({shape[1]}x{shape[0]}); fix the label or remove the image")
        keep = fitted[:, -1].astype(int)
        if isinstance(segm, (np.ndarray, mx.nd.NDArray)):
            segm = (segm.asnumpy() if isinstance(segm, mx.nd.NDArray) else segm)[keep]
        else:
            segm = [segm[k] for k in keep]
        label = fitted[:, :-1].astype(np.float32)
        return self._transform(image, label, segm) if self._transform is not None else (image, label, segm)


class MaskRCNNRecipe(FasterRCNNRecipe):
    """GluonCV's Mask R-CNN training (C4, FPN and SyncBatchNorm networks, ours or GluonCV's):
    Faster R-CNN's targets and four losses, plus the mask loss; GluonCV's COCO schedule,
    without weight decay on biases (``train_mask_rcnn.py`` sets their ``wd_mult`` to 0)."""

    loss_names = FasterRCNNRecipe.loss_names + ("rcnn_mask",)

    def __init__(self, net: Any, data_shape: tuple[int, int] | None = None, seed: int | None = None,
                 **options: Any) -> None:
        super().__init__(net, data_shape, seed, **options)
        self.defaults = MASK_DEFAULTS

    def prepare(self) -> None:
        super().prepare()
        for param in self.net.collect_params(".*bias").values():
            param.wd_mult = 0.0

    def training_data(self, samples: Any) -> Any:
        if not isinstance(samples, InstanceTrainingSamples):
            raise ValueError("Mask R-CNN trains on instance masks: read COCO instances into InstanceTrainingSamples "
                             "(python -m gluon_cv_core.detection.train_instance does), not detection boxes alone")
        return samples.transform(self.train_transform())

    def train_transform(self) -> Transform:
        short = self.short
        if isinstance(short, (tuple, list)):
            short = (int(short[0]), int(short[1]))
        preset = MaskRCNNTrainTransform(short=short, max_size=self.max_size, seed=self.seed)
        return _TrainTransform(preset, self.targets, self.seed)

    def batchify(self) -> Callable[[list[Sample]], tuple]:
        return MaskRCNNBatchify(self.targets.strides)

    def losses(self, batch: Sequence[Any]) -> list[Any]:
        images, labels, gt_masks, rpn_cls, rpn_box, rpn_mask = batch
        expected = getattr(self.net, "_batch_size", images.shape[0])
        if images.shape[0] != expected:
            raise ValueError(f"this Mask R-CNN samples regions for {expected} image(s) per device, but the "
                             f"device's batch holds {images.shape[0]}; build the network with "
                             f"per_device_batch_size={images.shape[0]}")
        (cls_pred, box_pred, mask_pred, rois, _, matches, rpn_score, rpn_offsets, _, cls_targets, box_targets,
         box_masks, indices) = self.net(images, labels.slice_axis(axis=-1, begin=0, end=4),
                                        labels.slice_axis(axis=-1, begin=4, end=5))
        if rpn_score.shape[1] != rpn_cls.shape[1]:
            raise ValueError(f"the network has {rpn_score.shape[1]} anchors for a {images.shape[2]}x"
                             f"{images.shape[3]} batch but the batch carries targets for {rpn_cls.shape[1]}; "
                             "make the batch with this recipe's batchify")
        losses = faster_rcnn_losses(rpn_score, rpn_offsets, rpn_cls, rpn_box, rpn_mask, cls_pred, box_pred,
                                    cls_targets, box_targets, box_masks)
        with mx.autograd.pause():
            targets, classes = mask_targets(_at(rois, indices), gt_masks, _at(matches, indices),
                                            _at(cls_targets, indices), tuple(mask_pred.shape[-2:]))
        return losses + [mask_loss(mask_pred, targets, classes)]
