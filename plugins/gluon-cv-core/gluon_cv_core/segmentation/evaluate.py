"""Measure a semantic-segmentation model's pixAcc and mIoU, as GluonCV's ``test.py --eval`` did.

    python -m gluon_cv_core.segmentation.evaluate --model fcn_resnet101_voc --pretrained --dataset voc
    python -m gluon_cv_core.segmentation.evaluate --model psp_resnet101_ade --pretrained --dataset ade20k \\
        --single-scale
    python -m gluon_cv_core.segmentation.evaluate --model fcn_resnet50_voc --params trained.params \\
        --dataset voc --data-root ~/mydata --mode val

``--mode testval`` (the default, what GluonCV's model-zoo table reports) scores every image at its
own size with GluonCV's multi-scale evaluation: scales ``--scales`` (0.5 to 1.75) of
``--base-size``, flipped, in ``--crop-size`` sliding windows (:mod:`gluon_cv_core.segmentation.multiscale`);
``--single-scale`` keeps scale 1 without flipping. ``--mode val`` is GluonCV's validation during
training: short side to ``--crop-size``, centre crop, one pass. pixAcc and mIoU are GluonCV's
definitions (:mod:`gluon_cv_core.segmentation.metrics`; label ``-1`` ignored).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Sequence

from ..common.training import check_positive
from ._script import (
    add_segmentation_data_arguments,
    build_segmenter,
    evaluate_segmenter,
    load_segmentation_split,
    multi_scale,
    parse_scales,
    sizes,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m gluon_cv_core.segmentation.evaluate",
        description="pixAcc and mIoU of a hub semantic-segmentation model on a validation set.",
    )
    parser.add_argument("--model", required=True, help="model name, e.g. fcn_resnet101_voc")
    add_segmentation_data_arguments(parser, train=False)
    weights = parser.add_mutually_exclusive_group(required=True)
    weights.add_argument("--pretrained", nargs="?", const=True, metavar="TAG", help="published weights")
    weights.add_argument("--params", metavar="FILE", help="a local .params file, e.g. written by train_segmentation")
    parser.add_argument("--mode", choices=("testval", "val"), default="testval",
                        help="testval: whole images, multi-scale; val: centre crops of --crop-size, one pass")
    parser.add_argument("--scales", default="0.5,0.75,1.0,1.25,1.5,1.75", help="testval: scales of --base-size")
    parser.add_argument("--no-flip", dest="flip", action="store_false", help="testval: do not add mirrored scores")
    parser.add_argument("--single-scale", action="store_true", help="testval: scale 1 only, without flipping")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    return parser


def run(args: argparse.Namespace) -> dict[str, Any]:
    """The pixAcc and mIoU the arguments ask for, with the image count and how they were measured."""
    from ..common.devices import contexts
    from .transforms import SegmentationTestTransform, SegmentationValTransform

    check_positive(args, "batch_size")
    scales, flip = ((1.0,), False) if args.single_scale else (parse_scales(args.scales), args.flip)
    ctx = contexts(args.ctx)
    classes = load_segmentation_split(args, "val").classes
    args.pretrained_base = False  # the weights come from --params or the published file
    net = build_segmenter(args, classes, ctx)
    if args.params:
        net.load_parameters(args.params, ctx=ctx)
    base_size, crop_size = sizes(args, net)
    net.hybridize(static_alloc=True)
    if args.mode == "val":
        data = load_segmentation_split(args, "val", SegmentationValTransform(crop_size))
        result = evaluate_segmenter(net, data, ctx, len(classes), args.batch_size, args.num_workers)
        how = f"val: centre {crop_size}x{crop_size} crops"
    else:
        data = load_segmentation_split(args, "val", SegmentationTestTransform())
        evaluator = multi_scale(net, len(classes), base_size, crop_size, scales, flip)
        result = evaluate_segmenter(net, data, ctx, len(classes), num_workers=args.num_workers, evaluator=evaluator)
        how = (f"testval: scales {','.join(f'{s:g}' for s in scales)} of {base_size}"
               f"{', flipped' if flip else ''}, {crop_size}-pixel windows")
    return {"model": args.model, "images": len(data), "evaluation": how, **result}


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the command line, evaluate and print; returns the exit code."""
    args = build_parser().parse_args(argv)
    try:
        result = run(args)
    except (ValueError, FileNotFoundError) as exc:  # bad data or settings: say what
        print(f"eval_segmentation: error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result))
    else:
        print(f"{result['model']}: pixAcc {result['pixAcc']:.4f}, mIoU {result['mIoU']:.4f} "
              f"({result['images']} images; {result['evaluation']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
