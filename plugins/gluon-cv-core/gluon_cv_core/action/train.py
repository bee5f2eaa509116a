"""Train a video action recogniser (TSN, I3D, SlowFast ...) with GluonCV's recipe.

Example (I3D on Kinetics-400 laid out as :mod:`gluon_cv_core.datasets.video` describes)::

    python -m gluon_cv_core.action.train --model i3d_resnet50_v1_kinetics400 \\
        --dataset kinetics400 --data-root ~/data/kinetics400 --new-length 32 --new-step 2 \\
        --lr 0.01 --lr-decay-epoch 40,80 --num-epochs 100 --ctx gpu0,gpu1 --save-dir runs

The recipe is GluonCV's ``scripts/action-recognition/train_recognizer.py``: clips sampled by
:class:`~gluon_cv_core.action.clips.ClipSampler` (``--num-segments``, ``--new-length``,
``--new-step``, ``--temporal-jitter``, ``--slowfast``), frames decoded at ``--new-width`` x
``--new-height``, the ``--data-aug`` transforms (v1: multi-scale crop and flip); SGD with momentum
0.9 and weight decay 1e-4, a step (``--lr-decay-epoch``) or cosine schedule after a linear warm-up;
softmax cross-entropy. A sample's clips or segments are folded into the batch, as GluonCV does.
Validation (``--val-list`` or the dataset's validation split) reports clip top-1/top-5 each epoch;
``--save-dir`` keeps ``{model}-{epoch:04d}.params``.
"""

from __future__ import annotations

import argparse
import logging
import math
import time
from typing import Any, Sequence

from gluon_hub.compat import mx

from ..common.training import Checkpoints, check_positive, lr_schedule, seed_everything, train_main

log = logging.getLogger("gluon_cv_core.train_action")

_DATASETS = ("kinetics400", "kinetics700", "ucf101", "hmdb51", "sthsthv2")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m gluon_cv_core.action.train",
                                     description="Train a video action-recognition model from the hub.",
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--model", required=True, help="model name, e.g. i3d_resnet50_v1_kinetics400")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--train-list", help="GluonCV list file: 'path num_frames label' a line")
    source.add_argument("--dataset", choices=_DATASETS, help="a dataset in its official layout under --data-root")
    parser.add_argument("--val-list", help="with --train-list: the validation list file")
    parser.add_argument("--data-dir", default=".", help="folder the list files' paths are relative to")
    parser.add_argument("--data-root", help="with --dataset: its folder")
    parser.add_argument("--num-classes", type=int, help="classes (default: the dataset's, or the model's)")
    parser.add_argument("--num-segments", type=int, default=1)
    parser.add_argument("--new-length", type=int, default=1, help="frames per clip")
    parser.add_argument("--new-step", type=int, default=1, help="distance between a clip's frames")
    parser.add_argument("--temporal-jitter", action="store_true")
    parser.add_argument("--slowfast", action="store_true", help="SlowFast packing of each clip")
    parser.add_argument("--slow-temporal-stride", type=int, default=16)
    parser.add_argument("--fast-temporal-stride", type=int, default=2)
    parser.add_argument("--new-width", type=int, default=340, help="decode width (-1: the video's)")
    parser.add_argument("--new-height", type=int, default=256, help="decode height (-1: the video's)")
    parser.add_argument("--input-size", type=int, default=224, help="crop size fed to the network")
    parser.add_argument("--data-aug", default="v1", choices=("v1", "v2", "v3"))
    parser.add_argument("--batch-size", type=int, default=8, help="videos per device per step")
    parser.add_argument("-j", "--num-workers", type=int, default=4)
    parser.add_argument("--ctx", default="cpu", help="devices, e.g. cpu or gpu0,gpu1")
    parser.add_argument("--num-epochs", type=int, default=100)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--lr-mode", default="step", choices=("step", "cosine"))
    parser.add_argument("--lr-decay", type=float, default=0.1)
    parser.add_argument("--lr-decay-epoch", default="40,80")
    parser.add_argument("--warmup-epochs", type=int, default=0)
    parser.add_argument("--warmup-lr", type=float, default=0.0)
    parser.add_argument("--momentum", type=float, default=0.9)
    parser.add_argument("--wd", type=float, default=1e-4)
    parser.add_argument("--pretrained", action="store_true", help="start from the published weights")
    parser.add_argument("--no-hybridize", dest="hybridize", action="store_false")
    parser.add_argument("--save-dir", help="write {model}-{epoch:04d}.params here")
    parser.add_argument("--steps-per-epoch", type=int, help="stop each epoch after N steps (smoke tests)")
    parser.add_argument("--log-interval", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    return parser


def _datasets(args: argparse.Namespace) -> tuple[Any, Any]:
    """The training and (or None) validation datasets the arguments name."""
    from ..datasets import video as vd
    from .clips import ClipSampler
    from .transforms import train_transform, val_transform

    sampler = ClipSampler(args.num_segments, args.new_length, args.new_step, args.temporal_jitter, args.slowfast,
                          args.slow_temporal_stride, args.fast_temporal_stride)
    common = dict(sampler=sampler, new_width=args.new_width, new_height=args.new_height)
    train_tf = train_transform(args.data_aug, args.input_size, args.new_height, args.new_width, seed=args.seed)
    val_tf = val_transform(args.data_aug, args.input_size, args.new_height)
    if args.train_list:
        train = vd.VideoClassification(vd.video_list(args.train_list, args.data_dir), mode="train",
                                       transform=train_tf, seed=args.seed, **common)
        val = None if not args.val_list else vd.VideoClassification(
            vd.video_list(args.val_list, args.data_dir), mode="val", transform=val_tf, **common)
        return train, val
    if not args.data_root:
        raise ValueError("--dataset needs --data-root, the folder that holds its videos and split files")
    make = getattr(vd, args.dataset)
    val_segment = "test" if args.dataset in ("ucf101", "hmdb51") else "val"
    return (make(args.data_root, "train", mode="train", transform=train_tf, seed=args.seed, **common),
            make(args.data_root, val_segment, mode="val", transform=val_tf, **common))


def train(args: argparse.Namespace) -> list[dict[str, float]]:
    """Run the training the arguments describe; returns one record per epoch."""
    import gluon_hub

    from ..common.devices import contexts
    from ..common.metrics import TopKAccuracy

    check_positive(args, "batch_size", "num_epochs", "num_segments", "new_length", "new_step")
    seed_everything(args.seed)
    ctx = contexts(args.ctx)
    train_data, val_data = _datasets(args)
    spec = gluon_hub.info(args.model)
    kwargs: dict[str, Any] = {}
    classes = args.num_classes or (len(train_data.classes) if train_data.classes else None)
    if classes:
        kwargs["nclass"] = classes
    if spec.input.layout == "NCHW":  # TSN: the network averages a video's segments
        kwargs["num_segments"] = args.num_segments
    net = gluon_hub.load(args.model, pretrained=args.pretrained, ctx=ctx, **kwargs)
    if args.hybridize:
        net.hybridize(static_alloc=True)
    global_batch = args.batch_size * len(ctx)
    if len(train_data) < global_batch:
        raise ValueError(f"{len(train_data)} training videos do not fill one batch of {global_batch}; "
                         "lower --batch-size")
    loader = mx.gluon.data.DataLoader(train_data, global_batch, shuffle=True, last_batch="discard",
                                      num_workers=args.num_workers)
    steps_per_epoch = len(loader) if not args.steps_per_epoch else min(len(loader), args.steps_per_epoch)
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {
        "learning_rate": args.lr, "momentum": args.momentum, "wd": args.wd,
        "lr_scheduler": lr_schedule(args, steps_per_epoch)})
    loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    history: list[dict[str, float]] = []
    checkpoints = Checkpoints(args.save_dir, args.model)
    for epoch in range(args.num_epochs):
        tic, loss_sum, steps = time.time(), 0.0, 0
        for steps, (data, label) in enumerate(loader, 1):
            parts = mx.gluon.utils.split_and_load(data, ctx, even_split=False)
            labels = mx.gluon.utils.split_and_load(label, ctx, even_split=False)
            with mx.autograd.record():
                losses = [loss_fn(_logits(net, x), y) for x, y in zip(parts, labels)]
            mx.autograd.backward(losses)
            trainer.step(global_batch)
            value = sum(float(loss.mean().asscalar()) for loss in losses) / len(losses)
            if not math.isfinite(value):
                raise FloatingPointError(f"epoch {epoch + 1} step {steps}: the loss became {value}; lower --lr")
            loss_sum += value
            if args.log_interval and steps % args.log_interval == 0:
                log.info("epoch %d step %d: loss %.4f, lr %.5f", epoch + 1, steps, loss_sum / steps,
                         trainer.learning_rate)
            if steps >= steps_per_epoch:
                break
        record: dict[str, float] = {"epoch": epoch + 1, "loss": loss_sum / max(steps, 1),
                                    "lr": trainer.learning_rate, "time_s": time.time() - tic}
        if val_data is not None:
            metric = TopKAccuracy((1, 5))
            for data, label in mx.gluon.data.DataLoader(val_data, global_batch, num_workers=args.num_workers):
                parts = mx.gluon.utils.split_and_load(data, ctx, even_split=False)
                labels = mx.gluon.utils.split_and_load(label, ctx, even_split=False)
                metric.update(labels, [_logits(net, x) for x in parts])
            record.update({f"val_{k}": v for k, v in metric.get().items()})
        history.append(record)
        log.info("epoch %d: %s", epoch + 1, ", ".join(f"{k} {v:.4g}" for k, v in record.items() if k != "epoch"))
        checkpoints.save(net, epoch)
    return history


def _logits(net: Any, x: Any) -> Any:
    """Scores of a batch of samples: a sample's clips (3D) or segments (2D) are folded into the batch
    axis; a 3D model's several clips per sample are averaged."""
    videos = x.shape[0]
    scores = net(x.reshape((-1,) + x.shape[2:]))
    return scores.reshape((videos, -1, scores.shape[-1])).mean(axis=1)


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the command line and train; returns the exit code."""
    return train_main("train_action", build_parser(), train, argv)


if __name__ == "__main__":
    raise SystemExit(main())
