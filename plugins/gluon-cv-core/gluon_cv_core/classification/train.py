"""Train an image classifier with the "bag of tricks" recipe GluonCV used for its zoo.

Single machine, one or several devices::

    python -m gluon_cv_core.classification.train --model resnet50_v1d --data-dir ~/imagenet \\
        --ctx gpu0,gpu1,gpu2,gpu3 --batch-size 64 --num-epochs 120 --lr 0.4 --lr-mode cosine \\
        --warmup-epochs 5 --label-smoothing --mixup --no-wd --save-dir params

``--data-dir`` holds ``train/<class>/*.jpg`` and ``val/<class>/*.jpg``; ``--dataset cifar10``
(any hub dataset) works as well.

Several machines, with MXNet's parameter server: add ``--kvstore dist_sync`` and start the
command through MXNet's launcher, ``tools/launch.py`` from the mxnet wheel.
``python -m gluon_cv_core.launch`` runs that launcher with the same arguments and
repairs it for Python 3.9+ (its tracker calls the removed ``Thread.isAlive``)::

    python -m gluon_cv_core.launch -n 4 -s 4 -H hosts --launcher ssh \\
        python -m gluon_cv_core.classification.train --kvstore dist_sync --model resnet50_v1d ...

Each worker trains on its own shard of the data (``gluon_hub.data.SplitSampler`` over
``kv.rank`` / ``kv.num_workers``, equal shard sizes so that all workers run the same
number of steps) and the servers sum the gradients every step; ``--lr`` is for the global
batch of all workers (``--batch-size`` x devices x workers). ``--launcher local`` runs every process on one machine.
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from gluon_hub.compat import mx

from ..common.training import add_data_arguments, check_positive, evaluate, load_split, lr_schedule, seed_everything

log = logging.getLogger("gluon_cv_core.train")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m gluon_cv_core.classification.train",
        description="Train an image-classification model from the hub.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--model", required=True, help="model name, e.g. resnet50_v1d")
    add_data_arguments(parser)
    parser.add_argument("--classes", type=int, help="number of classes, when not the model's default")
    parser.add_argument("--pretrained", nargs="?", const=True, default=False, metavar="TAG",
                        help="start from published weights (fine-tuning)")
    parser.add_argument("--num-epochs", type=int, default=120)
    parser.add_argument("--optimizer", default="nag", help="any MXNet optimizer name")
    parser.add_argument("--lr", type=float, default=0.1, help="learning rate for the global batch")
    parser.add_argument("--momentum", type=float, default=0.9)
    parser.add_argument("--wd", type=float, default=1e-4, help="weight decay")
    parser.add_argument("--lr-mode", default="cosine", choices=("cosine", "step"))
    parser.add_argument("--lr-decay", type=float, default=0.1, help="step mode: factor at each decay epoch")
    parser.add_argument("--lr-decay-epoch", default="40,60", help="step mode: epochs where the rate drops")
    parser.add_argument("--warmup-epochs", type=int, default=0, help="linear warm-up length")
    parser.add_argument("--warmup-lr", type=float, default=0.0, help="learning rate the warm-up starts at")
    parser.add_argument("--label-smoothing", type=float, nargs="?", const=0.1, default=0.0, metavar="EPS",
                        help="smooth the targets by EPS (0.1 when given without a value)")
    parser.add_argument("--mixup", action="store_true", help="train on mixup pairs with soft targets")
    parser.add_argument("--mixup-alpha", type=float, default=0.2, help="Beta(alpha, alpha) of the mixup weight")
    parser.add_argument("--mixup-off-epoch", type=int, default=0, help="train the last N epochs without mixup")
    parser.add_argument("--no-wd", action="store_true", help="no weight decay on biases and batch-norm parameters")
    parser.add_argument("--no-hybridize", dest="hybridize", action="store_false",
                        help="run imperatively (slower; for debugging)")
    parser.add_argument("--kvstore", default="device",
                        help="gradient aggregation: device, local, or dist_sync / dist_device_sync / dist_async "
                             "under MXNet's launcher")
    parser.add_argument("--save-dir", help="write {model}-{epoch:04d}.params (the bare model name) and "
                        "labels.txt (a --data-dir's class names, for predict --classes-file) here")
    parser.add_argument("--save-frequency", type=int, default=10, help="save every N epochs (and the last)")
    parser.add_argument("--log-interval", type=int, default=50, help="log every N steps (0: per epoch only)")
    parser.add_argument("--seed", type=int, default=0)
    return parser


def _no_bias_decay(net: Any) -> None:
    """Turn off weight decay on biases and normalisation scales/shifts (``--no-wd``).

    By parameter name, so every norm layer (BatchNorm, SyncBatchNorm, GroupNorm, ...)
    is covered; anchored at the end, so no weight whose name merely contains "bias".
    """
    for param in net.collect_params(".*_(bias|gamma|beta)$").values():
        param.wd_mult = 0.0


def _soft_targets(label: Any, classes: int, smoothing: float, dtype: str) -> Any:
    """One-hot targets with ``smoothing`` of the mass spread over all classes."""
    on, off = 1.0 - smoothing + smoothing / classes, smoothing / classes
    return mx.nd.one_hot(label, classes, on_value=on, off_value=off, dtype=dtype)


def _check(args: argparse.Namespace) -> None:
    check_positive(args, "batch_size", "num_epochs", "save_frequency")
    if not 0.0 <= args.label_smoothing < 1.0:
        raise ValueError(f"--label-smoothing must be in [0, 1), got {args.label_smoothing}")
    if args.mixup and args.mixup_alpha <= 0:
        raise ValueError("--mixup-alpha must be positive")
    if args.warmup_epochs < 0 or args.mixup_off_epoch < 0 or args.num_workers < 0:
        raise ValueError("--warmup-epochs, --mixup-off-epoch and --num-workers cannot be negative")


def train(args: argparse.Namespace) -> list[dict[str, float]]:
    """Run the training the arguments describe; returns one record per epoch."""
    import gluon_hub
    from gluon_hub.data import SplitSampler

    from ..common.devices import contexts
    from ..common.metrics import TopKAccuracy
    from .transforms import eval_transform, train_transform

    _check(args)
    seed_everything(args.seed)
    ctx = contexts(args.ctx)
    kv = mx.kv.create(args.kvstore)
    spec = gluon_hub.info(args.model)
    kwargs = {"classes": args.classes} if args.classes else {}

    train_split = load_split(args, "train")
    if args.save_dir and getattr(train_split, "classes", None):  # a folder's names, for predict --classes-file
        Path(args.save_dir).mkdir(parents=True, exist_ok=True)
        (Path(args.save_dir) / "labels.txt").write_text("".join(f"{c}\n" for c in train_split.classes),
                                                        encoding="utf-8")
    train_data = train_split.transform_first(train_transform(spec))
    val_data = load_split(args, "val").transform_first(eval_transform(spec))
    sampler = SplitSampler(len(train_data), kv.num_workers, kv.rank, even_size=True)
    global_batch = args.batch_size * len(ctx)
    if len(sampler) < global_batch:
        raise ValueError(f"this worker's {len(sampler)} training samples do not fill one batch of {global_batch}")
    loader = mx.gluon.data.DataLoader(train_data, global_batch, sampler=sampler, last_batch="discard",
                                      num_workers=args.num_workers)
    val_loader = mx.gluon.data.DataLoader(val_data, global_batch, num_workers=args.num_workers)
    steps_per_epoch = len(sampler) // global_batch

    net = gluon_hub.load(args.model, pretrained=args.pretrained, ctx=ctx, **kwargs)
    if not args.pretrained:
        # Kaiming-style init: what GluonCV trained its zoo from, and much better than the
        # default uniform init for deep networks.
        net.initialize(mx.init.MSRAPrelu(), ctx=ctx, force_reinit=True)
    if args.dtype != "float32":
        net.cast(args.dtype)
    if args.no_wd:
        _no_bias_decay(net)
    if args.hybridize:
        net.hybridize(static_alloc=True, static_shape=True)

    trainer = mx.gluon.Trainer(
        net.collect_params(),
        args.optimizer,
        {"learning_rate": args.lr, "wd": args.wd, "momentum": args.momentum,
         "lr_scheduler": lr_schedule(args, steps_per_epoch), "multi_precision": args.dtype != "float32"},
        kvstore=kv,
    )
    # The core's losses: smoothed cross-entropy on integer labels (epsilon 0 is the plain
    # one), and cross-entropy on the soft targets that mixup makes.
    hard_loss = gluon_hub.get_loss("label_smoothing_ce", epsilon=args.label_smoothing)
    soft_loss = gluon_hub.get_loss("soft_target_ce")

    history: list[dict[str, float]] = []
    for epoch in range(args.num_epochs):
        tic, seen, loss_sum = time.time(), 0, 0.0
        train_acc = TopKAccuracy((1,))
        mixing = args.mixup and epoch < args.num_epochs - args.mixup_off_epoch
        for step, (data, label) in enumerate(loader, 1):
            parts = mx.gluon.utils.split_and_load(data.astype(args.dtype, copy=False), ctx)
            labels = mx.gluon.utils.split_and_load(label, ctx)
            lam = float(np.random.beta(args.mixup_alpha, args.mixup_alpha)) if mixing else 1.0
            if mixing:
                parts = [lam * x + (1 - lam) * mx.nd.flip(x, axis=0) for x in parts]
            with mx.autograd.record():
                outputs = [net(x) for x in parts]
                if mixing:
                    losses = []
                    for out, y in zip(outputs, labels):
                        target = _soft_targets(y, out.shape[1], args.label_smoothing, args.dtype)
                        target = lam * target + (1 - lam) * mx.nd.flip(target, axis=0)
                        losses.append(soft_loss(out, target))
                else:
                    losses = [hard_loss(out, y) for out, y in zip(outputs, labels)]
            mx.autograd.backward(losses)
            trainer.step(global_batch * kv.num_workers)  # the mean gradient of all workers
            loss_sum += sum(float(loss.sum().asscalar()) for loss in losses)
            seen += global_batch
            if not mixing:
                train_acc.update(labels, outputs)
            if args.log_interval and step % args.log_interval == 0:
                log.info("epoch %d step %d/%d: loss %.4f, lr %.5f, %.1f samples/s", epoch + 1, step,
                         steps_per_epoch, loss_sum / seen, trainer.learning_rate, seen / (time.time() - tic))
        record = {"epoch": epoch + 1, "loss": loss_sum / seen, "lr": trainer.learning_rate,
                  "samples_per_s": seen / (time.time() - tic)}
        if not mixing:
            record["train_top1"] = train_acc.get()["top1"]
        record.update({f"val_{k}": v for k, v in evaluate(net, val_loader, ctx, args.dtype).items()})
        record["time_s"] = time.time() - tic
        history.append(record)
        log.info("epoch %d: %s", epoch + 1, ", ".join(f"{k} {v:.4g}" for k, v in record.items() if k != "epoch"))
        last = epoch + 1 == args.num_epochs
        if args.save_dir and kv.rank == 0 and ((epoch + 1) % args.save_frequency == 0 or last):
            Path(args.save_dir).mkdir(parents=True, exist_ok=True)
            # the bare name: a qualified "plugin/name" would name a folder
            net.save_parameters(str(Path(args.save_dir) / f"{spec.name}-{epoch + 1:04d}.params"))
    return history


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the command line and train; returns the exit code."""
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    train(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
