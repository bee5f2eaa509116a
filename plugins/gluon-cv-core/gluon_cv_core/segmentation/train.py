"""Train a semantic-segmentation model (FCN, PSPNet, DeepLab ...) with GluonCV's recipe.

Single machine, one or several devices::

    python -m gluon_cv_core.segmentation.train --model fcn_resnet50_voc --dataset voc_aug \\
        --ctx gpu0,gpu1,gpu2,gpu3 --batch-size 4 --syncbn --aux --epochs 50 --lr 0.001 --save-dir runs

The recipe is GluonCV's ``scripts/segmentation/train.py``: random scale (long side in
``[0.5, 2] x --base-size``), flip, crop (``--crop-size``) and blur; SGD with momentum 0.9 and
weight decay 1e-4 (``--no-wd`` spares biases and normalisation parameters); a linear warm-up
(``--warmup-epochs``) then the "poly" schedule ``lr * (1 - t / T) ** 0.9``; softmax
cross-entropy over the labelled pixels, plus ``--aux-weight`` (0.5) times that of the
auxiliary head when the model has one (``--aux`` turns it on for a model built without). The
loss is normalised as GluonCV's (per device, by the labelled pixels of the device's batch, and
the update by the number of images), so GluonCV's learning rates carry over. One difference:
GluonCV's ``SoftmaxOutput``-based loss ignores the weight in its gradient (its auxiliary head
trains at weight 1 whatever ``--aux-weight`` says); here the weight is applied.
``--syncbn`` builds the model with ``SyncBatchNorm`` across the devices of ``--ctx``; they then
run in threads at once, imperatively.

After every epoch the model is evaluated on the validation split (pixAcc and mIoU of GluonCV's
validation: short side to ``--crop-size``, centre crop; ``--no-val`` skips it) and saved to
``--save-dir`` as ``{model}-{epoch:04d}.params``, with ``{model}-best.params`` for the best mIoU.
``--resume FILE --start-epoch N`` continues a run (the schedule resumes at epoch N).
Several machines work as for classification (``--kvstore dist_sync`` under
``python -m gluon_cv_core.launch``).
"""

from __future__ import annotations

import argparse
import logging
import math
import time
from pathlib import Path
from typing import Any, Sequence

from gluon_hub.compat import mx

from ..common.training import Checkpoints, check_positive, seed_everything, train_main
from ._script import (
    PolySchedule,
    add_segmentation_data_arguments,
    build_segmenter,
    evaluate_segmenter,
    load_segmentation_split,
    output_weights,
    segmentation_loss,
    sizes,
)

log = logging.getLogger("gluon_cv_core.train_segmentation")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m gluon_cv_core.segmentation.train",
        description="Train a semantic-segmentation model from the hub with GluonCV's recipe.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--model", required=True, help="model name, e.g. fcn_resnet50_voc")
    add_segmentation_data_arguments(parser, train=True)
    parser.add_argument("--pretrained", nargs="?", const=True, default=False, metavar="TAG",
                        help="start from the published weights (fine-tuning)")
    parser.add_argument("--no-pretrained-base", dest="pretrained_base", action="store_false",
                        help="do not fetch the backbone's ImageNet weights (train from scratch)")
    aux = parser.add_mutually_exclusive_group()
    aux.add_argument("--aux", dest="aux", action="store_true", default=None,
                     help="build the model with its auxiliary head (default: as the model is published)")
    aux.add_argument("--no-aux", dest="aux", action="store_false", help="build the model without it")
    parser.add_argument("--aux-weight", type=float, default=0.5, help="loss weight of the auxiliary head")
    parser.add_argument("--syncbn", action="store_true", help="synchronised BatchNorm across the devices")
    parser.add_argument("--epochs", type=int, default=50)
    parser.add_argument("--start-epoch", type=int, default=0, help="with --resume: the epoch to continue from")
    parser.add_argument("--optimizer", default="sgd", help="any MXNet optimizer name")
    parser.add_argument("--lr", type=float, default=1e-3, help="learning rate")
    parser.add_argument("--momentum", type=float, default=0.9)
    parser.add_argument("--wd", type=float, default=1e-4, help="weight decay")
    parser.add_argument("--no-wd", action="store_true", help="no weight decay on biases and normalisation parameters")
    parser.add_argument("--warmup-epochs", type=int, default=0, help="linear warm-up from 0")
    parser.add_argument("--power", type=float, default=0.9, help="exponent of the poly schedule")
    parser.add_argument("--dtype", default="float32", choices=("float32", "float16"), help="compute precision")
    parser.add_argument("--resume", metavar="FILE", help="continue from these parameters")
    parser.add_argument("--no-val", action="store_true", help="do not evaluate after each epoch")
    parser.add_argument("--no-hybridize", dest="hybridize", action="store_false", help="run imperatively")
    parser.add_argument("--kvstore", default="device",
                        help="device, local, or dist_sync / dist_device_sync / dist_async under the launcher")
    parser.add_argument("--save-dir", help="write {model}-{epoch:04d}.params and {model}-best.params here")
    parser.add_argument("--log-interval", type=int, default=20, help="log every N steps (0: per epoch only)")
    parser.add_argument("--steps-per-epoch", type=int, help="stop each epoch after N steps (smoke tests)")
    parser.add_argument("--seed", type=int, default=0)
    return parser


def _check(args: argparse.Namespace) -> None:
    check_positive(args, "batch_size", "epochs")
    if not 0 <= args.start_epoch < args.epochs:
        raise ValueError(f"--start-epoch must be in [0, --epochs), got {args.start_epoch}")
    if args.start_epoch and not args.resume:
        raise ValueError("--start-epoch continues a run: give the parameters to continue from with --resume FILE")
    if args.aux_weight < 0 or args.warmup_epochs < 0 or args.num_workers < 0:
        raise ValueError("--aux-weight, --warmup-epochs and --num-workers cannot be negative")
    if args.steps_per_epoch is not None and args.steps_per_epoch < 1:
        raise ValueError("--steps-per-epoch must be at least 1")


def train(args: argparse.Namespace) -> list[dict[str, float]]:
    """Run the training the arguments describe; returns one record per epoch."""
    from gluon_hub.data import SplitSampler

    from ..common.devices import contexts
    from .transforms import SegmentationTrainTransform, SegmentationValTransform

    _check(args)
    seed_everything(args.seed)
    ctx = contexts(args.ctx)
    if args.syncbn and len(ctx) > 1 and any(c.device_type == "cpu" for c in ctx):
        # the devices' SyncBatchNorm backward passes wait for each other inside MXNet's CPU engine
        raise ValueError("--syncbn synchronises several GPUs; on CPU devices it hangs in MXNet's engine: "
                         "train on one CPU device, or without --syncbn")
    kv = mx.kv.create(args.kvstore)
    classes = load_segmentation_split(args, "train").classes
    net = build_segmenter(args, classes, ctx)
    base_size, crop_size = sizes(args, net)
    if args.resume:
        if not Path(args.resume).is_file():
            raise FileNotFoundError(f"--resume {args.resume}: no such file")
        net.load_parameters(args.resume, ctx=ctx)
    if args.dtype != "float32":
        net.cast(args.dtype)
    if args.no_wd:
        for param in net.collect_params(".*_(bias|gamma|beta)$").values():
            param.wd_mult = 0.0
    # SyncBatchNorm runs the devices in threads, which cannot trace one graph at once (GluonCV
    # trains imperatively too)
    if args.hybridize and not (args.syncbn and len(ctx) > 1):
        net.hybridize(static_alloc=True)
    elif args.syncbn:
        for device in ctx:  # finish deferred initialisation one device at a time (inference: no syncing)
            net(mx.nd.zeros((1, 3, crop_size, crop_size), ctx=device, dtype=args.dtype))

    train_data = load_segmentation_split(
        args, "train", SegmentationTrainTransform(base_size, crop_size, seed=args.seed + kv.rank))
    val_data = None if args.no_val else load_segmentation_split(args, "val", SegmentationValTransform(crop_size))
    sampler = SplitSampler(len(train_data), kv.num_workers, kv.rank, even_size=True)
    global_batch = args.batch_size * len(ctx)
    if len(sampler) < global_batch:
        raise ValueError(f"this worker's {len(sampler)} training images do not fill one batch of {global_batch} "
                         f"(--batch-size {args.batch_size} x {len(ctx)} device(s)); lower --batch-size")
    loader = mx.gluon.data.DataLoader(train_data, global_batch, sampler=sampler, last_batch="discard",
                                      num_workers=args.num_workers)
    steps_per_epoch = len(sampler) // global_batch
    if args.steps_per_epoch:
        steps_per_epoch = min(steps_per_epoch, args.steps_per_epoch)

    schedule = PolySchedule(args.lr, args.epochs * steps_per_epoch, args.warmup_epochs * steps_per_epoch, args.power)
    optimizer = {"learning_rate": args.lr, "wd": args.wd, "lr_scheduler": schedule,
                 "multi_precision": args.dtype != "float32"}
    if args.optimizer in ("sgd", "nag"):
        optimizer["momentum"] = args.momentum
    trainer = mx.gluon.Trainer(net.collect_params(), args.optimizer, optimizer, kvstore=kv)
    if args.start_epoch:  # the schedule continues where the run stopped
        trainer._optimizer.num_update = args.start_epoch * steps_per_epoch  # noqa: SLF001 (MXNet has no setter)

    history: list[dict[str, float]] = []
    checkpoints = Checkpoints(args.save_dir if kv.rank == 0 else None, args.model)
    for epoch in range(args.start_epoch, args.epochs):
        tic, loss_sum, steps = time.time(), 0.0, 0
        for steps, (data, label) in enumerate(loader, 1):
            parts = mx.gluon.utils.split_and_load(data.astype(args.dtype, copy=False), ctx)
            labels = mx.gluon.utils.split_and_load(label, ctx)
            losses = _forward(net, parts, labels, args.model, args.aux_weight, parallel=args.syncbn)
            mx.autograd.backward(losses)
            trainer.step(global_batch * kv.num_workers)  # as GluonCV's: see the module docstring
            value = sum(float(loss.asscalar()) for loss in losses) / len(losses)
            if not math.isfinite(value):
                raise FloatingPointError(f"epoch {epoch + 1} step {steps}: the loss became {value} at learning "
                                         f"rate {trainer.learning_rate:g}; lower --lr or add --warmup-epochs")
            loss_sum += value
            if args.log_interval and steps % args.log_interval == 0:
                log.info("epoch %d step %d/%d: loss %.4f, lr %.6f, %.1f images/s", epoch + 1, steps,
                         steps_per_epoch, loss_sum / steps, trainer.learning_rate,
                         steps * global_batch / (time.time() - tic))
            if steps >= steps_per_epoch:
                break
        record: dict[str, float] = {"epoch": epoch + 1, "loss": loss_sum / max(steps, 1),
                                    "lr": trainer.learning_rate, "time_s": time.time() - tic}
        if val_data is not None:
            scores = evaluate_segmenter(net, val_data, ctx, len(net.classes), args.batch_size, args.num_workers)
            record.update({f"val_{k}": v for k, v in scores.items()})
        history.append(record)
        log.info("epoch %d: %s", epoch + 1, ", ".join(f"{k} {v:.4g}" for k, v in record.items() if k != "epoch"))
        checkpoints.save(net, epoch, score=record.get("val_mIoU"))
    return history


def _device_loss(net: Any, x: Any, y: Any, model: str, aux_weight: float) -> Any:
    """The recorded loss of one device's share of the batch."""
    with mx.autograd.record():
        outputs = net(x)
        outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
        return segmentation_loss(outputs, y, output_weights(model, len(outputs), aux_weight))


def _forward(net: Any, parts: Sequence[Any], labels: Sequence[Any], model: str, aux_weight: float,
             parallel: bool) -> list[Any]:
    """Each device's loss. With SyncBatchNorm every device's forward waits for the others' batch
    statistics, so the devices run in threads at once (GluonCV's ``DataParallelModel`` does the same)."""
    if not parallel or len(parts) == 1:
        return [_device_loss(net, x, y, model, aux_weight) for x, y in zip(parts, labels)]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(len(parts)) as pool:
        futures = [pool.submit(_device_loss, net, x, y, model, aux_weight) for x, y in zip(parts, labels)]
        return [f.result() for f in futures]


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the command line and train; returns the exit code."""
    return train_main("train_segmentation", build_parser(), train, argv)


if __name__ == "__main__":
    raise SystemExit(main())
