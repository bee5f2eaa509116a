"""Train Mask R-CNN with GluonCV's recipe on COCO instances or your own COCO-format data.

Single machine, one or several devices (one image per device, as GluonCV trains)::

    python -m gluon_cv_core.detection.train_instance --model mask_rcnn_fpn_resnet50_v1b_coco \\
        --dataset coco --ctx gpu0,gpu1,gpu2,gpu3,gpu4,gpu5,gpu6,gpu7 --save-dir params

    python -m gluon_cv_core.detection.train_instance --model custom_mask_rcnn_fpn \\
        --coco-root ~/mydata --train-segment instances_train --val-segment instances_val

``--coco-root DIR`` reads ``DIR/annotations/<segment>.json`` with the images in
``DIR/<segment without "instances_">/`` (or the folder named by each image's ``coco_url``);
the classes are the file's categories. The recipe
(:class:`~gluon_cv_core.detection.training.mask_rcnn.MaskRCNNRecipe`) supplies the targets,
the five losses and GluonCV's COCO schedule (``train_mask_rcnn.py``: 26 epochs, decay at 17
and 23, 1000 warm-up iterations from a third of the rate, weight decay 1e-4 and none on
biases); every option given here overrides it. Training samples are checked first
(:class:`~gluon_cv_core.detection.training.mask_rcnn.InstanceTrainingSamples`): an object
without a mask fails naming its sample. Each validation scores COCO box and mask AP with
``pycocotools`` (:class:`~gluon_cv_core.detection.instance_metrics.COCOInstanceMetric`) on the
original images; the best mask AP's weights are kept. GluonCV groups images of similar
aspect ratio into batches; here batches are drawn at random.
"""

from __future__ import annotations

import argparse
import ast
import logging
from typing import Any, Sequence

import numpy as np

from gluon_hub.compat import mx

from ..common.training import check_positive, seed_everything, train_main
from .fit import fill_defaults, fit

log = logging.getLogger("gluon_cv_core.train_instance")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m gluon_cv_core.detection.train_instance",
                                     description="Train a Mask R-CNN model from the hub.")
    parser.add_argument("--model", required=True, help="mask_rcnn_* or custom_mask_rcnn_fpn")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--dataset", choices=("coco",), help="COCO 2017 instances (from --data-root or the cache)")
    source.add_argument("--coco-root", metavar="DIR", help="your own data in the COCO layout")
    parser.add_argument("--data-root", help="with --dataset: the folder that holds its files (default: the cache)")
    parser.add_argument("--train-segment", help="train (COCO) or an annotation file name without .json")
    parser.add_argument("--val-segment", help="val (COCO) or an annotation file name without .json")
    parser.add_argument("--segm-format", choices=("polygon", "mask"), default="polygon",
                        help="read masks as polygons (GluonCV's way) or decode them (needed for RLE objects)")
    parser.add_argument("--batch-size", type=int, help="images per device per step (default 1)")
    parser.add_argument("-j", "--num-workers", type=int, default=4, help="data loading processes")
    parser.add_argument("--ctx", default="cpu", help="devices, e.g. cpu or gpu0,gpu1")
    parser.add_argument("--pretrained", nargs="?", const=True, default=False, metavar="TAG",
                        help="start from the published model's weights (fine-tuning)")
    parser.add_argument("--no-pretrained-base", dest="pretrained_base", action="store_false",
                        help="do not fetch the backbone's ImageNet weights (train from scratch)")
    parser.add_argument("--image-short", type=int, help="training and validation shorter side (default: the model's)")
    parser.add_argument("--image-max-size", type=int, help="longest side (default: the model's)")
    parser.add_argument("--model-option", action="append", default=[], metavar="KEY=VALUE",
                        help="a Mask R-CNN argument, e.g. rpn_train_post_nms=1000 or num_sample=256 (repeatable)")
    parser.add_argument("--num-epochs", type=int)
    parser.add_argument("--optimizer", help="any MXNet optimizer name")
    parser.add_argument("--lr", type=float, help="learning rate for the global batch")
    parser.add_argument("--momentum", type=float)
    parser.add_argument("--wd", type=float, help="weight decay (biases get none)")
    parser.add_argument("--lr-mode", choices=("cosine", "step"))
    parser.add_argument("--lr-decay", type=float, help="step mode: factor at each decay epoch")
    parser.add_argument("--lr-decay-epoch", help="step mode: comma-separated epochs where the rate drops")
    parser.add_argument("--warmup-epochs", type=int, help="linear warm-up length in epochs")
    parser.add_argument("--warmup-lr", type=float, default=0.0, help="learning rate the epoch warm-up starts at")
    parser.add_argument("--lr-warmup", type=int, help="warm up over the first N iterations (default 1000)")
    parser.add_argument("--lr-warmup-factor", type=float, help="the iteration warm-up starts at this fraction of --lr")
    parser.add_argument("--no-hybridize", dest="hybridize", action="store_false", help="run imperatively")
    parser.add_argument("--kvstore", default="device", help="device, local, or dist_* under the launcher")
    parser.add_argument("--save-dir", help="write {model}-{epoch:04d}.params and {model}-best.params here")
    parser.add_argument("--save-frequency", type=int, default=1, help="save every N epochs (and the last)")
    parser.add_argument("--val-interval", type=int, default=1, help="validate every N epochs (and after the last)")
    parser.add_argument("--log-interval", type=int, default=100, help="log every N steps (0: per epoch only)")
    parser.add_argument("--steps-per-epoch", type=int, help="stop each epoch after N steps (smoke tests)")
    parser.add_argument("--seed", type=int, default=233)
    return parser


def _model_options(pairs: Sequence[str]) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--model-option {pair!r}: write KEY=VALUE, e.g. num_sample=256")
        try:
            options[key.strip()] = ast.literal_eval(text.strip())
        except (ValueError, SyntaxError):
            options[key.strip()] = text.strip()
    return options


def load_instance_split(args: argparse.Namespace, which: str) -> Any:
    """The ``which`` ("train" or "val") instance dataset the arguments name. Training skips
    images without objects; validation keeps every image (GluonCV's choices)."""
    from ..datasets.coco import COCOInstance, coco_instance

    segment = getattr(args, f"{which}_segment", None)
    options = {"skip_empty": which == "train", "segm_format": args.segm_format}
    if args.dataset:
        return coco_instance(args.data_root, segment or which, **options)
    if not segment:
        raise ValueError(f"--coco-root needs --{which}-segment, the annotation file's name without .json "
                         f"(DIR/annotations/<name>.json), e.g. instances_{which}")
    return COCOInstance(args.coco_root, segment, classes=None, **options)


def _build(args: argparse.Namespace, classes: Sequence[str], ctx: list[Any]) -> Any:
    """Published weights with the classes reset to the data's, or a fresh network for them;
    the region sampler sized for one device's images, SyncBatchNorm over the devices."""
    import gluon_hub

    extra = {"per_device_batch_size": args.batch_size or 1, **_model_options(args.model_option)}
    if "syncbn" in args.model.split("_"):
        extra["num_devices"] = len(ctx)
    if args.pretrained:
        net = gluon_hub.load(args.model, pretrained=args.pretrained, ctx=ctx, **extra)
        if tuple(net.classes) != tuple(classes):
            net.reset_class(list(classes), reuse_weights=[c for c in classes if c in net.classes] or None)
        return net
    return gluon_hub.load(args.model, ctx=ctx, classes=list(classes), pretrained_base=args.pretrained_base, **extra)


def data_shape(args: argparse.Namespace, net: Any) -> tuple[int, int] | None:
    """``(longest, shorter)`` side the images are resized to, or None for the network's own.

    The network's ``max_size`` is capped where its anchors cover less
    (:func:`.instance_predict.rcnn_max_size`: 512 for ``custom_mask_rcnn_fpn``, whose own 1000
    fails in MXNet on larger images), as prediction caps it.
    """
    import gluon_hub

    from .instance_predict import rcnn_max_size

    spec = gluon_hub.info(args.model)
    cap = min(net.max_size, rcnn_max_size(spec))
    if args.image_max_size and args.image_max_size > cap:
        raise ValueError(f"--image-max-size {args.image_max_size} is larger than {spec.name}'s anchors cover "
                         f"({cap} pixels: MXNet fails on such images); give at most {cap}")
    if not (args.image_short or args.image_max_size or cap < net.max_size):
        return None
    short = args.image_short or (net.short[-1] if isinstance(net.short, (tuple, list)) else net.short)
    longest = args.image_max_size or (cap if cap < net.max_size else max(net.max_size, short))
    return longest, min(short, longest)


class _ValTransform:
    """``(image, label, segm)`` -> ``(CHW image, scale)``: the recipe's validation resize."""

    def __init__(self, preset: Any) -> None:
        self._preset = preset

    def __call__(self, image: Any, label: Any, segm: Any = None) -> tuple[Any, float]:
        tensor, _, scale = self._preset(image, label)
        return tensor, float(scale.asscalar())


def _as_list(samples: list[Any]) -> list[Any]:
    return samples


def evaluate_instances(net: Any, dataset: Any, recipe: Any, metric: Any, ctx: Sequence[Any],
                       num_workers: int = 0) -> dict[str, float]:
    """COCO box and mask AP of ``net`` on ``dataset`` (one image per device at a time, as
    GluonCV validates): boxes clipped to the input and scaled back, masks pasted onto the
    original image. Returns ``{"bbox_mAP": ..., "segm_mAP": ...}``."""
    loader = mx.gluon.data.DataLoader(dataset.transform(_ValTransform(recipe.val_transform())), len(ctx),
                                      shuffle=False, last_batch="keep", batchify_fn=_as_list,
                                      num_workers=num_workers)
    metric.reset()
    for batch in loader:
        outputs = [(net(image.expand_dims(0).as_in_context(device)), image.shape[1:], scale)
                   for (image, scale), device in zip(batch, ctx)]
        for (ids, scores, boxes, masks), (height, width), scale in outputs:
            boxes = np.clip(boxes[0].asnumpy(), 0, None)
            boxes = np.minimum(boxes, np.array([width, height, width, height], np.float32)) * scale
            metric.update(boxes, ids[0].asnumpy(), scores[0].asnumpy(), masks[0].asnumpy(), box_masks=True)
    names, values = metric.get()
    return {name.replace(" ", "_"): float(value) for name, value in zip(names, values)}


def train(args: argparse.Namespace) -> list[dict[str, float]]:
    """Run the training the arguments describe; returns one record per epoch."""
    from ..common.devices import contexts
    from .instance_metrics import COCOInstanceMetric
    from .training import recipe_for
    from .training.mask_rcnn import InstanceTrainingSamples, MaskRCNNRecipe

    seed_everything(args.seed)
    ctx = contexts(args.ctx)
    kv = mx.kv.create(args.kvstore)
    train_set, val_set = load_instance_split(args, "train"), load_instance_split(args, "val")
    if tuple(val_set.classes) != tuple(train_set.classes):
        raise ValueError(f"the validation data's classes {list(val_set.classes)[:5]}... differ from the training "
                         f"data's {list(train_set.classes)[:5]}...")
    net = _build(args, train_set.classes, ctx)
    recipe = recipe_for(args.model, net, data_shape=data_shape(args, net), seed=args.seed)
    if not isinstance(recipe, MaskRCNNRecipe):
        raise ValueError(f"{args.model} is not a Mask R-CNN; train detectors with "
                         "python -m gluon_cv_core.detection.train")
    fill_defaults(args, recipe.defaults)
    check_positive(args, "batch_size", "num_epochs", "save_frequency", "val_interval")

    metric = COCOInstanceMetric(val_set)

    def validate() -> dict[str, float]:
        scores = evaluate_instances(net, val_set, recipe, metric, ctx, args.num_workers)
        return {f"val_{name}": value for name, value in scores.items()}

    train_data = recipe.training_data(InstanceTrainingSamples(train_set, len(net.classes)))
    return fit(args, net, recipe, train_data, ctx, kv, validate, "val_segm_mAP", log)


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the command line and train; returns the exit code."""
    return train_main("train_instance", build_parser(), train, argv)


if __name__ == "__main__":
    raise SystemExit(main())
