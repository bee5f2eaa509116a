"""Train a top-down pose estimator (Simple Pose, Mobile Pose) with GluonCV's Simple Pose recipe.

::

    python -m gluon_cv_core.pose.train --model simple_pose_resnet50_v1b --data-root ~/coco \\
        --ctx gpu0,gpu1,gpu2,gpu3,gpu4,gpu5,gpu6,gpu7 --batch-size 32 --save-dir runs

The recipe is GluonCV's ``scripts/pose/simple_pose/train_simple_pose.py`` with the settings of
its COCO runs: crops of ``--input-size`` (the model's, 256x192) around each annotated person,
random scale (``--scale-factor`` 0.30), rotation (``--rotation-factor`` 40 degrees) and flip,
Gaussian heatmap targets of ``--sigma`` 2 heatmap pixels with unlabelled joints weighted out,
the masked MSE loss (MXNet's ``L2Loss`` with the joint weights), Adam at ``--lr`` 1e-3 without
weight decay, divided by ``--lr-decay`` 10 at epochs ``--lr-decay-epoch`` 90 and 120 of
``--num-epochs`` 140 (``--warmup-epochs`` ramps up linearly first). The pieces are in
:mod:`._pose`. Without ``--no-pretrained-base`` the backbone starts from its ImageNet weights
(through the hub's cache); otherwise every parameter without its own initialiser starts from
MSRA-PReLU, as in GluonCV.

Data: a COCO-layout folder ``--data-root`` holding ``annotations/<split>.json`` and the image
folders (``--train-split`` ``person_keypoints_train2017``, ``--val-split``
``person_keypoints_val2017``); without it COCO 2017 comes through the hash-verified cache.
After every epoch the model is evaluated on the validation split (OKS AP through pycocotools,
ground-truth boxes, ``--flip-test`` averaging with the mirrored crop; ``--no-val`` skips it)
and saved to ``--save-dir`` as ``{model}-{epoch:04d}.params``, with ``{model}-best.params`` for
the best AP. ``--eval-only`` evaluates (``--resume FILE`` or ``--pretrained``) without training.
"""

from __future__ import annotations

import argparse
import logging
import math
import time
from pathlib import Path
from typing import Any, Sequence

from gluon_hub.compat import mx

from ..common.training import Checkpoints, check_positive, lr_schedule, seed_everything, train_main
from .recipe import PoseTrainTransform, evaluate_pose, heatmap_loss

log = logging.getLogger("gluon_cv_core.train_pose")

#: GluonCV trains these families with this recipe (AlphaPose has its own crops and targets)
FAMILIES = ("simple_pose", "mobile_pose")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m gluon_cv_core.pose.train",
        description="Train a top-down pose estimator from the hub with GluonCV's Simple Pose recipe.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--model", required=True, help="model name, e.g. simple_pose_resnet50_v1b")
    parser.add_argument("--data-root", help="COCO-layout folder with annotations/ and the images (default: the cache)")
    parser.add_argument("--train-split", default="person_keypoints_train2017", help="annotation file to train on")
    parser.add_argument("--val-split", default="person_keypoints_val2017", help="annotation file to evaluate on")
    parser.add_argument("--input-size", help="crop height,width (default: the model's, 256,192)")
    parser.add_argument("--sigma", type=float, default=2.0, help="Gaussian of the targets, in heatmap pixels")
    parser.add_argument("--scale-factor", type=float, default=0.30, help="random scale: N(1, f) clipped to 1 +- f")
    parser.add_argument("--rotation-factor", type=float, default=40.0,
                        help="random rotation (60%% of crops): N(0, f) degrees clipped to +-2f")
    parser.add_argument("--no-flip", dest="flip", action="store_false", help="no random horizontal flip")
    parser.add_argument("--batch-size", type=int, default=32, help="crops per device per step")
    parser.add_argument("-j", "--num-workers", type=int, default=4, help="data loading processes")
    parser.add_argument("--ctx", default="cpu", help="devices, e.g. cpu or gpu0,gpu1,gpu2,gpu3")
    parser.add_argument("--pretrained", nargs="?", const=True, default=False, metavar="TAG",
                        help="start from the published weights (fine-tuning)")
    parser.add_argument("--no-pretrained-base", dest="pretrained_base", action="store_false",
                        help="do not fetch the backbone's ImageNet weights (train from scratch)")
    parser.add_argument("--num-epochs", type=int, default=140)
    parser.add_argument("--optimizer", default="adam", help="any MXNet optimizer name")
    parser.add_argument("--lr", type=float, default=1e-3, help="learning rate")
    parser.add_argument("--wd", type=float, default=0.0, help="weight decay")
    parser.add_argument("--no-wd", action="store_true", help="no weight decay on biases and normalisation parameters")
    parser.add_argument("--lr-mode", default="step", choices=("step", "cosine"), help="learning-rate schedule")
    parser.add_argument("--lr-decay", type=float, default=0.1, help="step schedule: factor at each decay epoch")
    parser.add_argument("--lr-decay-epoch", default="90,120", help="step schedule: epochs to decay at")
    parser.add_argument("--warmup-epochs", type=int, default=0, help="linear warm-up from --warmup-lr")
    parser.add_argument("--warmup-lr", type=float, default=0.0)
    parser.add_argument("--resume", metavar="FILE", help="start from (or, with --eval-only, evaluate) these parameters")
    parser.add_argument("--eval-only", action="store_true", help="evaluate on --val-split and stop")
    parser.add_argument("--flip-test", action="store_true", help="evaluate with the mirrored crop averaged in")
    parser.add_argument("--no-val", action="store_true", help="do not evaluate after each epoch")
    parser.add_argument("--no-hybridize", dest="hybridize", action="store_false", help="run imperatively")
    parser.add_argument("--save-dir", help="write {model}-{epoch:04d}.params and {model}-best.params here")
    parser.add_argument("--log-interval", type=int, default=20, help="log every N steps (0: per epoch only)")
    parser.add_argument("--steps-per-epoch", type=int, help="stop each epoch after N steps (smoke tests)")
    parser.add_argument("--seed", type=int, default=0)
    return parser


def input_size(args: argparse.Namespace, spec: Any) -> tuple[int, int]:
    """``(height, width)`` of the crops: ``--input-size``, else the model's input."""
    if not args.input_size:
        return int(spec.input.shape[1]), int(spec.input.shape[2])
    try:
        height, width = (int(v) for v in args.input_size.split(","))
    except ValueError:
        raise ValueError(f"--input-size is height,width in pixels, e.g. 256,192; got {args.input_size!r}") from None
    if height < 32 or width < 32 or height % 32 or width % 32:
        raise ValueError(f"--input-size {args.input_size}: both sides must be multiples of 32 (the backbone's "
                         "stride), e.g. 256,192 or 128,96")
    return height, width


def _check(args: argparse.Namespace, spec: Any) -> None:
    if spec.task != "pose-estimation" or not any(f in spec.tags for f in FAMILIES):
        raise ValueError(f"{args.model!r} is a {spec.task} model ({', '.join(spec.tags)}); this script trains "
                         f"the {' and '.join(FAMILIES)} families (simple_pose_*, mobile_pose_*)")
    check_positive(args, "batch_size")
    if args.num_epochs < 1 and not args.eval_only:
        raise ValueError("--num-epochs must be at least 1")
    if args.steps_per_epoch is not None and args.steps_per_epoch < 1:
        raise ValueError("--steps-per-epoch must be at least 1")
    if args.num_workers < 0 or args.warmup_epochs < 0 or args.sigma <= 0:
        raise ValueError("--num-workers and --warmup-epochs cannot be negative, and --sigma must be positive")
    if not 0 <= args.scale_factor < 1 or args.rotation_factor < 0:
        raise ValueError("--scale-factor must be in [0, 1) and --rotation-factor at least 0")
    if args.eval_only and not (args.resume or args.pretrained):
        raise ValueError("--eval-only evaluates trained weights: give --resume FILE or --pretrained")
    if args.resume and not Path(args.resume).is_file():
        raise FileNotFoundError(f"--resume {args.resume}: no such file")


def build_pose_net(args: argparse.Namespace, ctx: Sequence[Any]) -> Any:
    """The network: published weights (``--pretrained``), else the ImageNet backbone (unless
    ``--no-pretrained-base``) and fresh heads, else MSRA-PReLU everywhere, as GluonCV."""
    import gluon_hub

    if args.pretrained:
        return gluon_hub.load(args.model, pretrained=args.pretrained, ctx=list(ctx))
    net = gluon_hub.load(args.model, ctx=list(ctx), pretrained_base=args.pretrained_base)
    if not args.pretrained_base:
        # parameters with their own initialiser (heads, normalisation) keep it
        net.collect_params().initialize(mx.init.MSRAPrelu(), ctx=list(ctx), force_reinit=True)
    return net


def _dataset(args: argparse.Namespace, split: str, transform: Any = None) -> Any:
    from ..datasets.coco_keypoints import COCOKeyPoints, coco_keypoints

    if args.data_root:
        return COCOKeyPoints(args.data_root, split, transform=transform)
    segment = {"person_keypoints_train2017": "train", "person_keypoints_val2017": "val"}.get(split)
    if segment is None:
        raise ValueError(f"split {split!r} is not one of COCO 2017's; give the folder holding it with --data-root")
    return coco_keypoints(segment=segment, transform=transform)


def train(args: argparse.Namespace) -> list[dict[str, float]]:
    """Run the training (or, with ``--eval-only``, the evaluation) the arguments describe;
    returns one record per epoch."""
    import gluon_hub

    from ..common.devices import contexts

    spec = gluon_hub.info(args.model)
    _check(args, spec)
    seed_everything(args.seed)
    ctx = contexts(args.ctx)
    size = input_size(args, spec)
    net = build_pose_net(args, ctx)
    if args.resume:
        net.load_parameters(args.resume, ctx=ctx)
    if args.hybridize:
        net.hybridize(static_alloc=True, static_shape=True)
    val_data = None if args.no_val and not args.eval_only else _dataset(args, args.val_split)

    def validate() -> dict[str, float]:
        return evaluate_pose(net, val_data, ctx, args.batch_size, args.num_workers, args.flip_test, size)

    if args.eval_only:
        scores = validate()
        log.info("OKS %s", ", ".join(f"{k} {v:.4f}" for k, v in scores.items()))
        return [{"epoch": 0, **{f"val_{k}": v for k, v in scores.items()}}]

    if args.no_wd:
        for param in net.collect_params(".*_(bias|gamma|beta)$").values():
            param.wd_mult = 0.0
    transform = PoseTrainTransform(size, sigma=args.sigma, scale_factor=args.scale_factor,
                                   rotation_factor=args.rotation_factor, flip=args.flip, seed=args.seed)
    train_data = _dataset(args, args.train_split, transform)
    global_batch = args.batch_size * len(ctx)
    if len(train_data) < global_batch:
        raise ValueError(f"{len(train_data)} training people do not fill one batch of {global_batch} "
                         f"(--batch-size {args.batch_size} x {len(ctx)} device(s)); lower --batch-size")
    loader = mx.gluon.data.DataLoader(train_data, global_batch, shuffle=True, last_batch="discard",
                                      num_workers=args.num_workers)
    steps_per_epoch = len(train_data) // global_batch
    if args.steps_per_epoch:
        steps_per_epoch = min(steps_per_epoch, args.steps_per_epoch)
    trainer = mx.gluon.Trainer(net.collect_params(), args.optimizer,
                               {"learning_rate": args.lr, "wd": args.wd,
                                "lr_scheduler": lr_schedule(args, steps_per_epoch)})

    history: list[dict[str, float]] = []
    checkpoints = Checkpoints(args.save_dir, args.model)
    for epoch in range(args.num_epochs):
        tic, loss_sum, steps = time.time(), 0.0, 0
        for steps, (images, targets, weights, _) in enumerate(loader, 1):
            parts = [mx.gluon.utils.split_and_load(array, ctx) for array in (images, targets, weights)]
            with mx.autograd.record():
                losses = [heatmap_loss(net(x), y, w) for x, y, w in zip(*parts)]
            mx.autograd.backward(losses)
            trainer.step(global_batch)
            value = sum(float(loss.mean().asscalar()) for loss in losses) / len(losses)
            if not math.isfinite(value):
                raise FloatingPointError(f"epoch {epoch + 1} step {steps}: the loss became {value} at learning "
                                         f"rate {trainer.learning_rate:g}; lower --lr or add --warmup-epochs")
            loss_sum += value
            if args.log_interval and steps % args.log_interval == 0:
                log.info("epoch %d step %d/%d: loss %.6f, lr %.6f, %.1f crops/s", epoch + 1, steps, steps_per_epoch,
                         loss_sum / steps, trainer.learning_rate, steps * global_batch / (time.time() - tic))
            if steps >= steps_per_epoch:
                break
        record: dict[str, float] = {"epoch": epoch + 1, "loss": loss_sum / max(steps, 1),
                                    "lr": trainer.learning_rate, "time_s": time.time() - tic}
        if val_data is not None:
            record.update({f"val_{k}": v for k, v in validate().items()})
        history.append(record)
        log.info("epoch %d: %s", epoch + 1, ", ".join(f"{k} {v:.4g}" for k, v in record.items() if k != "epoch"))
        checkpoints.save(net, epoch, score=record.get("val_AP"))
    return history


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the command line and train; returns the exit code."""
    return train_main("train_pose", build_parser(), train, argv)


if __name__ == "__main__":
    raise SystemExit(main())
