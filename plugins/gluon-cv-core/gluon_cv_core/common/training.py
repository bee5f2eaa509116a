"""What the training and evaluation scripts share: data, devices, seeding, evaluation, saving
weights and the command-line entry."""

from __future__ import annotations

import argparse
import logging
import math
import random
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

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
        from ..datasets.folder import ImageFolderDataset

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
    from .metrics import TopKAccuracy

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


def train_main(prog: str, parser: argparse.ArgumentParser, train: Callable[[argparse.Namespace], Any],
               argv: Sequence[str] | None) -> int:
    """A training script's ``main``: parse ``argv``, log to stderr, ``train``; returns the exit
    code. Bad data or settings (``ValueError``, a missing file, a NaN loss) end with one line
    ``PROG: error: ...`` and code 2, not a traceback."""
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    try:
        train(args)
    except (ValueError, FileNotFoundError, FloatingPointError) as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    return 0


class Checkpoints:
    """Where a training run keeps its weights: ``{model}-{epoch:04d}.params`` every ``every``
    epochs and after the last, and ``{model}-best.params`` for the best validation score so
    far. The first score is kept even if it is NaN (an AP on data without objects), and a
    later real score replaces it. Without a ``folder`` nothing is written."""

    def __init__(self, folder: str | None, model: str, every: int = 1) -> None:
        self.folder = Path(folder) if folder else None
        self.model = model.rsplit("/", 1)[-1]  # a qualified "plugin/name" would name a folder
        self.every = every
        self.best: float | None = None

    def save(self, net: Any, epoch: int, last: bool = False, score: float | None = None) -> None:
        """After ``epoch`` (counted from 0): its file when due, and the best file when ``score``
        (None: not validated) beats the best so far."""
        if self.folder is None:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        if (epoch + 1) % self.every == 0 or last:
            net.save_parameters(str(self.folder / f"{self.model}-{epoch + 1:04d}.params"))
        if score is not None and (self.best is None or score > self.best or math.isnan(self.best)):
            self.best = score
            net.save_parameters(str(self.folder / f"{self.model}-best.params"))
