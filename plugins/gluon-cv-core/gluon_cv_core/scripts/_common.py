"""What the training and evaluation scripts share: data, devices, seeding, evaluation."""

from __future__ import annotations

import argparse
import random
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from gluon_hub.compat import mx


def add_data_arguments(parser: argparse.ArgumentParser) -> None:
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--data-dir",
        help="image folders in the ImageNet layout: DIR/train/<class>/*.jpg and DIR/val/<class>/*.jpg",
    )
    source.add_argument("--dataset", help="a dataset name from gluon_hub.list_datasets(), e.g. cifar10")
    parser.add_argument("--data-root", help="with --dataset: the folder that already holds its files")
    parser.add_argument("--batch-size", type=int, default=32, help="samples per device per step (default 32)")
    parser.add_argument("-j", "--num-workers", type=int, default=4, help="data loading processes (default 4)")
    parser.add_argument("--ctx", default="cpu", help="devices, e.g. cpu or gpu0,gpu1,gpu2,gpu3 (default cpu)")
    parser.add_argument("--dtype", default="float32", choices=("float32", "float16"), help="compute precision")


def load_split(args: argparse.Namespace, segment: str) -> Any:
    """The ``segment`` of the data the arguments name, as ``(HWC uint8 image, label)`` items."""
    if args.data_dir:
        from ..data.folder import ImageFolderDataset

        return ImageFolderDataset(Path(args.data_dir) / segment)
    import gluon_hub

    segments = gluon_hub.dataset_info(args.dataset).segments
    if segment == "val" and segments and "val" not in segments and "test" in segments:
        segment = "test"
    return gluon_hub.load_dataset(args.dataset, segment=segment, root=args.data_root)


def seed_everything(seed: int) -> None:
    """Seed Python, numpy and MXNet, whose random streams the augmentations draw from."""
    random.seed(seed)
    np.random.seed(seed)
    mx.random.seed(seed)


def evaluate(net: Any, loader: Any, ctx: Sequence[Any], dtype: str = "float32") -> dict[str, float]:
    """Top-1 and top-5 accuracy of ``net`` over ``loader``."""
    from ..data.metrics import TopKAccuracy

    metric = TopKAccuracy((1, 5))
    for data, label in loader:
        parts = mx.gluon.utils.split_and_load(data, ctx, even_split=False)
        labels = mx.gluon.utils.split_and_load(label, ctx, even_split=False)
        metric.update(labels, [net(x.astype(dtype, copy=False)) for x in parts])
    return metric.get()


def check_positive(args: argparse.Namespace, *names: str) -> None:
    for name in names:
        if getattr(args, name) < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be at least 1")


def lr_schedule(args: argparse.Namespace, steps_per_epoch: int) -> Any:
    """The learning-rate schedule, in optimizer updates (steps), from ``--lr``, ``--lr-mode``
    (cosine or step), ``--lr-decay``, ``--lr-decay-epoch``, ``--warmup-epochs``,
    ``--warmup-lr`` and ``--num-epochs``."""
    warmup = args.warmup_epochs * steps_per_epoch
    if args.lr_mode == "cosine":
        return mx.lr_scheduler.CosineScheduler(
            max_update=max(args.num_epochs * steps_per_epoch, warmup + 1),
            base_lr=args.lr,
            final_lr=0.0,
            warmup_steps=warmup,
            warmup_begin_lr=args.warmup_lr,
        )
    epochs = [int(e) for e in args.lr_decay_epoch.split(",") if e.strip()]
    steps = [e * steps_per_epoch for e in epochs if e * steps_per_epoch > warmup]
    if not steps:
        return mx.lr_scheduler.FactorScheduler(step=1 << 62, factor=1.0, base_lr=args.lr,
                                               warmup_steps=warmup, warmup_begin_lr=args.warmup_lr)
    return mx.lr_scheduler.MultiFactorScheduler(step=steps, factor=args.lr_decay, base_lr=args.lr,
                                                warmup_steps=warmup, warmup_begin_lr=args.warmup_lr)
