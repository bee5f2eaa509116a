"""Measure a detector's mAP on a validation set, as GluonCV's ``eval_*.py`` scripts did.

    python -m gluon_cv_core.detection.evaluate --model ssd_512_resnet50_v1_voc --pretrained --dataset voc
    python -m gluon_cv_core.detection.evaluate --model yolo3_darknet53_coco --pretrained --dataset coco
    python -m gluon_cv_core.detection.evaluate --model center_net_resnet18_v1b_voc \\
        --params trained.params --voc-root ~/mydata --classes cat,dog --val-segment VOC2007/test

Images go through the family's validation preset; VOC-style data is scored with the
VOC2007 11-point mAP, COCO with pycocotools (see :mod:`._detection`).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Sequence

from ..common.training import check_positive
from ._script import add_detection_data_arguments, detection_metric, evaluate_detector, load_detection_split


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m gluon_cv_core.detection.evaluate",
        description="mAP of a hub detector on a validation set.",
    )
    parser.add_argument("--model", required=True, help="detector name, e.g. yolo3_darknet53_voc")
    add_detection_data_arguments(parser, train=False)
    weights = parser.add_mutually_exclusive_group(required=True)
    weights.add_argument("--pretrained", nargs="?", const=True, metavar="TAG", help="published weights")
    weights.add_argument("--params", metavar="FILE", help="a local .params file, e.g. written by train_detection")
    parser.add_argument("--data-shape", type=int, help="input side for fixed-size families (default: the model's)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    return parser


def run(args: argparse.Namespace) -> dict[str, Any]:
    """The mAP (and per-class APs) the arguments ask for, with the image count."""
    import gluon_hub

    from ..common.devices import contexts
    from .training import recipe_for
    from .training.recipe import family_of

    family = family_of(args.model)
    ctx = contexts(args.ctx)
    dataset = load_detection_split(args, "val")
    if args.params:
        net = gluon_hub.load(args.model, ctx=ctx, classes=list(dataset.classes), pretrained_base=False)
        net.load_parameters(args.params, ctx=ctx)
    else:
        net = gluon_hub.load(args.model, pretrained=args.pretrained, ctx=ctx)
        if tuple(net.classes) != tuple(dataset.classes):
            raise ValueError(f"{args.model}'s published weights detect {len(net.classes)} classes "
                             f"({', '.join(net.classes[:3])}, ...) but the data has {len(dataset.classes)}; "
                             "evaluate weights trained on this data with --params")
    data_shape = (args.data_shape, args.data_shape) if args.data_shape else None
    recipe = recipe_for(args.model, net, data_shape=data_shape)
    if args.batch_size is None:
        args.batch_size = 1 if family == "faster_rcnn_" else 8
    check_positive(args, "batch_size")
    net.hybridize(static_alloc=True)
    metric = detection_metric(dataset, family, recipe.data_shape)
    result = evaluate_detector(net, dataset, recipe, metric, args.batch_size, ctx, args.num_workers)
    return {"model": args.model, "images": len(dataset), **result}


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the command line, evaluate and print; returns the exit code."""
    args = build_parser().parse_args(argv)
    try:
        result = run(args)
    except (ValueError, FileNotFoundError) as exc:  # bad data or settings: say what
        print(f"eval_detection: error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result))
    else:
        print(f"{result['model']}: mAP {result['mAP']:.4f} ({result['images']} images)")
        for key, value in result.items():
            if key.startswith("AP/"):
                print(f"  {key[3:]:<20} {value:.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
