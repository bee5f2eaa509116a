"""Train an object detector (SSD, YOLOv3, Faster R-CNN, CenterNet) with GluonCV's recipes.

Single machine, one or several devices::

    python -m gluon_cv_core.detection.train --model ssd_512_resnet50_v1_voc \\
        --dataset voc --ctx gpu0,gpu1,gpu2,gpu3 --save-dir params

    python -m gluon_cv_core.detection.train --model yolo3_darknet53_custom \\
        --voc-root ~/mydata --classes cat,dog --train-segment VOC2007/trainval \\
        --val-segment VOC2007/test --mixup --label-smoothing

Each family's recipe (:mod:`gluon_cv_core.detection.training`) supplies the targets, the
losses and GluonCV's schedule (learning rate, decay epochs, warm-up, optimizer, batch size,
input size); every option given on the command line overrides the recipe's value. Training
labels are checked first (:class:`~gluon_cv_core.detection.training.TrainingSamples`): a
bad label fails naming its sample, boxes reaching outside the image are clipped and images
without objects skipped, with a warning. A loss that turns NaN or infinite stops the run
with the step it happened at, instead of training on.

YOLOv3 trains on a random square size from 320 to 608 px, a new one every 10 batches
(``--no-random-shape`` keeps ``--data-shape``), as GluonCV's script does. ``--syncbn``
builds SSD and YOLOv3 with SyncBatchNorm over the ``--ctx`` devices (the parameters keep
BatchNorm's names, so published files load); Faster R-CNN's ``*_syncbn_*`` models always
synchronise over the ``--ctx`` devices.

Several machines work as for classification (``--kvstore dist_sync`` under
``python -m gluon_cv_core.launch``): each worker reads its own shard and the
gradients are averaged over every device of every worker.
"""

from __future__ import annotations

import argparse
import logging
from typing import Any, Sequence

from gluon_hub.compat import mx

from ..common.training import check_positive, seed_everything, train_main
from ._script import add_detection_data_arguments, detection_metric, evaluate_detector, load_detection_split
from .fit import fill_defaults, fit

log = logging.getLogger("gluon_cv_core.train_detection")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m gluon_cv_core.detection.train",
        description="Train an object-detection model from the hub.",
    )
    parser.add_argument("--model", required=True, help="detector name, e.g. ssd_512_resnet50_v1_voc")
    add_detection_data_arguments(parser, train=True)
    parser.add_argument("--pretrained", nargs="?", const=True, default=False, metavar="TAG",
                        help="start from the published detector weights (fine-tuning)")
    parser.add_argument("--no-pretrained-base", dest="pretrained_base", action="store_false",
                        help="do not fetch the backbone's ImageNet weights (train from scratch)")
    parser.add_argument("--data-shape", type=int, help="input side for fixed-size families (default: the model's)")
    parser.add_argument("--num-epochs", type=int)
    parser.add_argument("--optimizer", help="any MXNet optimizer name")
    parser.add_argument("--lr", type=float, help="learning rate for the global batch")
    parser.add_argument("--momentum", type=float)
    parser.add_argument("--wd", type=float, help="weight decay")
    parser.add_argument("--lr-mode", choices=("cosine", "step"))
    parser.add_argument("--lr-decay", type=float, help="step mode: factor at each decay epoch")
    parser.add_argument("--lr-decay-epoch", help="step mode: comma-separated epochs where the rate drops")
    parser.add_argument("--warmup-epochs", type=int, help="linear warm-up length")
    parser.add_argument("--warmup-lr", type=float, default=0.0, help="learning rate the warm-up starts at")
    parser.add_argument("--lr-warmup", type=int,
                        help="warm up over the first N iterations of the first epoch (Faster R-CNN on COCO: 1000)")
    parser.add_argument("--lr-warmup-factor", type=float,
                        help="the iteration warm-up starts at this fraction of --lr (default 1/3)")
    parser.add_argument("--mixup", action="store_true", help="YOLOv3: train on mixed image pairs")
    parser.add_argument("--no-mixup-epochs", type=int, help="YOLOv3: train the last N epochs without mixup")
    parser.add_argument("--label-smoothing", action="store_true", help="YOLOv3: smooth the class targets")
    parser.add_argument("--no-random-shape", dest="random_shape", action="store_false",
                        help="YOLOv3: train at --data-shape only, not at a random size every few batches")
    parser.add_argument("--random-shapes", type=_sides, metavar="SIDES",
                        help="YOLOv3: comma-separated training sides, multiples of 32 (default 320,352,...,608)")
    parser.add_argument("--random-shape-interval", type=int, metavar="N",
                        help="YOLOv3: draw a new training side every N batches (default 10)")
    parser.add_argument("--syncbn", action="store_true",
                        help="SSD, YOLOv3: synchronise BatchNorm statistics over the --ctx devices "
                             "(Faster R-CNN: pick a *_syncbn_* model)")
    parser.add_argument("--no-hybridize", dest="hybridize", action="store_false", help="run imperatively")
    parser.add_argument("--kvstore", default="device",
                        help="device, local, or dist_sync / dist_device_sync / dist_async under the launcher")
    parser.add_argument("--save-dir", help="write {model}-{epoch:04d}.params and {model}-best.params here")
    parser.add_argument("--save-frequency", type=int, default=10, help="save every N epochs (and the last)")
    parser.add_argument("--val-interval", type=int, default=1, help="validate every N epochs (and after the last)")
    parser.add_argument("--log-interval", type=int, default=100, help="log every N steps (0: per epoch only)")
    parser.add_argument("--steps-per-epoch", type=int, help="stop each epoch after N steps (smoke tests)")
    parser.add_argument("--seed", type=int, default=233)
    return parser


def _sides(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(side) for side in text.split(",") if side.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: write whole pixel sides, e.g. 320,352,384") from None


def _family_options(args: argparse.Namespace) -> dict[str, Any]:
    """The family switches the user set, passed to the recipe (which rejects unknown ones)."""
    options: dict[str, Any] = {}
    if not args.random_shape:
        options["random_shape"] = False
    if args.random_shapes is not None:
        options["random_shapes"] = args.random_shapes
    if args.random_shape_interval is not None:
        options["random_shape_interval"] = args.random_shape_interval
    if args.mixup:
        options["mixup"] = True
    if args.label_smoothing:
        options["label_smoothing"] = True
    if args.no_mixup_epochs is not None:
        options["no_mixup_epochs"] = args.no_mixup_epochs
    return options


def _build(args: argparse.Namespace, classes: Sequence[str], ctx: list[Any]) -> Any:
    """The network: published weights with its classes reset to the data's, or a fresh
    one for the data's classes (on a pretrained backbone unless --no-pretrained-base)."""
    import gluon_hub

    from .training.recipe import family_of

    # Faster R-CNN sizes its region sampler for the images one device sees (GluonCV's
    # recipes train it with one per device, the default here too)
    extra = {"per_device_batch_size": args.batch_size or 1} if family_of(args.model) == "faster_rcnn_" else {}
    extra.update(_norm_options(args.model, args.syncbn, len(ctx)))
    if args.pretrained:
        net = gluon_hub.load(args.model, pretrained=args.pretrained, ctx=ctx, **extra)
        if tuple(net.classes) != tuple(classes):
            net.reset_class(list(classes), reuse_weights=[c for c in classes if c in net.classes] or None)
        return net
    return gluon_hub.load(args.model, ctx=ctx, classes=list(classes), pretrained_base=args.pretrained_base, **extra)


def _norm_options(model: str, syncbn: bool, num_devices: int) -> dict[str, Any]:
    """The normalization arguments of the network's factory, as GluonCV's scripts choose them:
    ``--syncbn`` puts SyncBatchNorm over ``num_devices`` in SSD's and YOLOv3's BatchNorm
    places; Faster R-CNN's ``*_syncbn_*`` models synchronise over the training devices."""
    from ._script import SyncBatchNorm
    from .training.recipe import family_of

    family = family_of(model)
    if family == "faster_rcnn_":
        if "syncbn" in model.split("_"):
            return {"num_devices": num_devices}
        if syncbn:
            raise ValueError(f"Faster R-CNN chooses SyncBatchNorm by its name: train a faster_rcnn_fpn_syncbn_* "
                             f"model instead of {model} with --syncbn")
        return {}
    if not syncbn:
        return {}
    if family not in ("ssd_", "yolo3_"):
        raise ValueError(f"--syncbn applies to SSD and YOLOv3 (as in GluonCV's scripts); {model} trains with "
                         "BatchNorm: leave --syncbn out")
    if "vgg16" in model.split("_"):  # GluonCV's script accepts the flag and changes nothing
        raise ValueError(f"--syncbn: {model}'s VGG16-atrous network has no BatchNorm layer to synchronise; "
                         "leave --syncbn out")
    return {"norm_layer": SyncBatchNorm, "norm_kwargs": {"num_devices": num_devices}}


def train(args: argparse.Namespace) -> list[dict[str, float]]:
    """Run the training the arguments describe; returns one record per epoch."""
    from ..common.devices import contexts
    from .training import TrainingSamples, recipe_for
    from .training.recipe import family_of

    family = family_of(args.model)
    seed_everything(args.seed)
    ctx = contexts(args.ctx)
    kv = mx.kv.create(args.kvstore)
    train_set, val_set = load_detection_split(args, "train"), load_detection_split(args, "val")
    net = _build(args, train_set.classes, ctx)
    data_shape = (args.data_shape, args.data_shape) if args.data_shape else None
    recipe = recipe_for(args.model, net, data_shape=data_shape, seed=args.seed, **_family_options(args))
    fill_defaults(args, recipe.defaults)
    check_positive(args, "batch_size", "num_epochs", "save_frequency", "val_interval")

    metric = detection_metric(val_set, family, recipe.data_shape)

    def validate() -> dict[str, float]:
        result = evaluate_detector(net, val_set, recipe, metric, args.batch_size, ctx, args.num_workers)
        return {"val_mAP": result["mAP"]}

    train_data = recipe.training_data(TrainingSamples(train_set, len(net.classes)))
    return fit(args, net, recipe, train_data, ctx, kv, validate, "val_mAP", log)


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the command line and train; returns the exit code."""
    return train_main("train_detection", build_parser(), train, argv)


if __name__ == "__main__":
    raise SystemExit(main())
