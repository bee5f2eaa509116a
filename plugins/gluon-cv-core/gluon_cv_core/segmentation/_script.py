"""What the semantic-segmentation training and evaluation scripts share: the data, the loss,
GluonCV's learning-rate schedule, and pixAcc/mIoU evaluation at one scale or several.

Data: ``--dataset`` names one of the semantic datasets of :mod:`gluon_cv_core.datasets`, read from
``--data-root`` (or, where its licence allows, fetched through the cache). A dataset in the VOC
layout of your own (``VOC2012/{JPEGImages,SegmentationClass,ImageSets/Segmentation}``) is
``--dataset voc --data-root DIR``.
"""

from __future__ import annotations

import argparse
import importlib
import math
from typing import Any, Callable, Sequence

from gluon_hub.compat import mx

from ..common.norm import SyncBatchNorm

#: --dataset -> ("module:reader" in ..datasets, default train split, default val split)
DATASETS: dict[str, tuple[str, str, str]] = {
    "voc": ("voc:voc_segmentation", "train", "val"),
    "voc_aug": ("voc:voc_aug_segmentation", "train", "val"),
    "ade20k": ("ade20k:ade20k", "train", "val"),
    "cityscapes": ("cityscapes:cityscapes", "train", "val"),
    "coco": ("coco:coco_segmentation", "train", "val"),
}
#: loss weights of every output, for families whose outputs are not "main, then auxiliary"
#: (GluonCV's ``ICNetLoss`` and ``SegmentationMultiLosses``)
_OUTPUT_WEIGHTS = {"icnet": (1.0, 0.4, 0.4, 1.0), "danet": (1.0, 1.0, 1.0)}


def add_segmentation_data_arguments(parser: argparse.ArgumentParser, train: bool) -> None:
    parser.add_argument("--dataset", required=True, choices=sorted(DATASETS),
                        help="the data (your own VOC-layout folder: voc with --data-root)")
    parser.add_argument("--data-root", help="the folder that holds the dataset (default: the cache)")
    if train:
        parser.add_argument("--train-split", help="split to train on (default: the dataset's training split)")
    parser.add_argument("--val-split", help="split to evaluate on (default: the dataset's validation split)")
    parser.add_argument("--base-size", type=int,
                        help="long side at scale 1 (default: the model's base_size, GluonCV's 520 for VOC/ADE20K)")
    parser.add_argument("--crop-size", type=int,
                        help="side of the training crops and evaluation windows (default: the model's crop_size)")
    parser.add_argument("--batch-size", type=int, default=4, help="images per device per step")
    parser.add_argument("-j", "--num-workers", type=int, default=4, help="data loading processes")
    parser.add_argument("--ctx", default="cpu", help="devices, e.g. cpu or gpu0,gpu1,gpu2,gpu3")


def load_segmentation_split(args: argparse.Namespace, which: str, transform: Any = None) -> Any:
    """The ``which`` ("train" or "val") split of ``--dataset``, items passed through ``transform``."""
    reader, train_split, val_split = DATASETS[args.dataset]
    module, name = reader.split(":")
    split = getattr(args, f"{which}_split", None) or (train_split if which == "train" else val_split)
    read = getattr(importlib.import_module(f"..datasets.{module}", __package__), name)
    return read(args.data_root, split, transform=transform)


def build_segmenter(args: argparse.Namespace, classes: Sequence[str], ctx: Sequence[Any]) -> Any:
    """The network for data with ``classes``: published weights (``--pretrained``; new class heads
    where the data has other classes), else fresh, on the ImageNet backbone unless
    ``--no-pretrained-base``; ``--aux`` and ``--syncbn`` applied."""
    import gluon_hub

    spec = gluon_hub.info(args.model)
    if spec.task != "semantic-segmentation":
        raise ValueError(f"{args.model!r} is a {spec.task} model; these scripts train and evaluate "
                         "semantic-segmentation models (fcn_*, psp_*, deeplab_* ...)")
    kwargs: dict[str, Any] = {}
    if getattr(args, "aux", None) is not None:
        kwargs["aux"] = args.aux
    if getattr(args, "syncbn", False):
        kwargs.update(norm_layer=SyncBatchNorm, norm_kwargs={"num_devices": len(ctx)})
    if tuple(spec.class_names(spec.input.num_classes or 0)) != tuple(classes):
        kwargs["classes"] = list(classes)  # with --pretrained: every published parameter but the class heads
    if getattr(args, "pretrained", None):
        return gluon_hub.load(args.model, pretrained=args.pretrained, ctx=list(ctx), **kwargs)
    if hasattr(args, "pretrained_base"):
        kwargs["pretrained_base"] = args.pretrained_base
    return gluon_hub.load(args.model, ctx=list(ctx), **kwargs)


def sizes(args: argparse.Namespace, net: Any) -> tuple[int, int]:
    """``(base_size, crop_size)``: the options, else the network's attributes, else GluonCV's 520 / 480."""
    base = args.base_size or getattr(net, "base_size", None) or 520
    crop = args.crop_size or getattr(net, "crop_size", None) or 480
    if base < 2 or crop < 2:
        raise ValueError(f"--base-size and --crop-size must be at least 2, got {base} and {crop}")
    return int(base), int(crop)


def output_weights(model: str, outputs: int, aux_weight: float) -> tuple[float, ...]:
    """The loss weight of each of a network's ``outputs`` in training mode: the main head 1 and each
    auxiliary head ``aux_weight``, except for ICNet's cascade and DANet's three heads (GluonCV's weights)."""
    for family, weights in _OUTPUT_WEIGHTS.items():
        if family in model:
            if len(weights) != outputs:
                raise ValueError(f"{model} returned {outputs} outputs in training mode; its loss weighs {len(weights)}")
            return weights
    return (1.0,) + (aux_weight,) * (outputs - 1)


def segmentation_loss(outputs: Sequence[Any], label: Any, weights: Sequence[float]) -> Any:
    """Weighted softmax cross-entropy of every output, summed over the pixels whose label is not
    ``-1`` and divided by their number in this batch (GluonCV's ``normalization="valid"``).

    Outputs smaller than the label map (ICNet's coarse branches) are resized to it first.
    """
    height, width = label.shape[1:]
    valid = (label >= 0).astype("float32")
    target = mx.nd.maximum(label, 0).astype("float32")
    total = None
    for scores, weight in zip(outputs, weights):
        if scores.shape[2:] != (height, width):
            scores = mx.nd.contrib.BilinearResize2D(scores, height=height, width=width)
        picked = mx.nd.pick(mx.nd.log_softmax(scores.astype("float32"), axis=1), target, axis=1)
        term = -weight * (picked * valid).sum()
        total = term if total is None else total + term
    return total / mx.nd.maximum(valid.sum(), 1.0)


class PolySchedule(mx.lr_scheduler.LRScheduler):
    """GluonCV's segmentation schedule: a linear warm-up from 0 over ``warmup_steps`` updates, then
    ``lr * (1 - t / (n - 1)) ** power`` over the ``n`` remaining updates (``t`` counts from 0, as in
    ``gluoncv.utils.LRSequential`` of a ``linear`` and a ``poly`` ``LRScheduler``)."""

    def __init__(self, base_lr: float, total_steps: int, warmup_steps: int = 0, power: float = 0.9) -> None:
        super().__init__(base_lr=base_lr)
        if total_steps < 1 or not 0 <= warmup_steps < total_steps:
            raise ValueError(f"the warm-up ({warmup_steps} steps) must be shorter than the training "
                             f"({total_steps} steps); lower --warmup-epochs")
        self.total_steps, self.warmup_steps, self.power = total_steps, warmup_steps, power

    def __call__(self, num_update: int) -> float:
        if num_update < self.warmup_steps:
            return self.base_lr * num_update / max(self.warmup_steps - 1, 1)
        last = max(self.total_steps - self.warmup_steps - 1, 1)
        step = min(max(num_update - self.warmup_steps, 0), last)
        return self.base_lr * (1.0 - step / last) ** self.power


def evaluate_segmenter(net: Any, dataset: Any, ctx: Sequence[Any], num_classes: int, batch_size: int = 1,
                       num_workers: int = 0, evaluator: Callable[[Any, Any], Any] | None = None) -> dict[str, float]:
    """pixAcc and mIoU of ``net`` over ``dataset`` (items: normalised image, ``int32`` label map).

    Without ``evaluator`` the batches go through the network once (the first output scored, as
    GluonCV's validation does, but without computing the auxiliary heads); with one (see
    :func:`multi_scale`), one image at a time, spread over the devices, with the scores
    ``evaluator(image, device)`` returns.
    """
    from .metrics import SegmentationMetric
    from .multiscale import main_prediction

    metric = SegmentationMetric(num_classes)
    batch = batch_size * len(ctx) if evaluator is None else 1
    loader = mx.gluon.data.DataLoader(dataset, batch, shuffle=False, last_batch="keep", num_workers=num_workers)
    where = getattr(dataset, "where", None)
    predict = main_prediction(net, fixed_shape=False) if evaluator is None else None
    seen = 0
    for step, (images, labels) in enumerate(loader):
        names = [where(seen + i) if where else f"item {seen + i}" for i in range(images.shape[0])]
        if evaluator is not None:
            scores = [evaluator(images[0], ctx[step % len(ctx)])]
            parts = [labels]
        else:
            data = mx.gluon.utils.split_and_load(images, ctx, even_split=False)
            parts = mx.gluon.utils.split_and_load(labels, ctx, even_split=False)
            scores = [predict(x) for x in data]
        start = 0
        for part_scores, part_labels in zip(scores, parts):
            count = part_labels.shape[0]
            metric.update(part_labels, part_scores, names=names[start:start + count])
            start += count
        seen += images.shape[0]
    pix_acc, miou = metric.get()
    return {"pixAcc": float(pix_acc), "mIoU": float(miou)}


def multi_scale(net: Any, num_classes: int, base_size: int, crop_size: int, scales: Sequence[float],
                flip: bool) -> Callable[[Any, Any], Any]:
    """``(image, device) -> scores`` with GluonCV's multi-scale, flipped, sliding-window evaluation."""
    from .multiscale import MultiScaleEvaluator

    evaluator = MultiScaleEvaluator(net, num_classes, base_size, crop_size, scales, flip)
    return lambda image, device: evaluator(image.as_in_context(device))


def parse_scales(text: str) -> tuple[float, ...]:
    """``"0.5,0.75,1"`` -> ``(0.5, 0.75, 1.0)``, refusing anything that is not a positive number."""
    try:
        scales = tuple(float(s) for s in text.split(",") if s.strip())
    except ValueError:
        raise ValueError(f"--scales must be comma-separated numbers, got {text!r}") from None
    if not scales or any(not math.isfinite(s) or s <= 0 for s in scales):
        raise ValueError(f"--scales must be positive numbers, got {text!r}")
    return scales

