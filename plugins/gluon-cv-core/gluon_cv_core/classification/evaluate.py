"""Measure a model's top-1 / top-5 accuracy on a validation set.

    python -m gluon_cv_core.classification.evaluate --model resnet50_v1d --pretrained --data-dir ~/imagenet
    python -m gluon_cv_core.classification.evaluate --model cifar_resnet20_v1 --params my.params --dataset cifar10

Images go through the model's evaluation preset (resize, centre crop, normalise).
"""

from __future__ import annotations

import argparse
import json
from typing import Any, Sequence

from gluon_hub.compat import mx

from ..common.training import add_data_arguments, check_positive, evaluate, load_split


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m gluon_cv_core.classification.evaluate",
        description="Top-1 / top-5 accuracy of a hub model on a validation set.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--model", required=True, help="model name, e.g. resnet50_v1d")
    add_data_arguments(parser)
    parser.add_argument("--segment", default="val", help="the split to measure (val; test for datasets without val)")
    parser.add_argument("--classes", type=int, help="number of classes, when not the model's default")
    weights = parser.add_mutually_exclusive_group(required=True)
    weights.add_argument("--pretrained", nargs="?", const=True, metavar="TAG", help="published weights")
    weights.add_argument("--params", metavar="FILE", help="a local .params file, e.g. written by train")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    return parser


def run(args: argparse.Namespace) -> dict[str, Any]:
    """The accuracies the arguments ask for, with the sample count."""
    import gluon_hub

    from ..common.devices import contexts
    from .transforms import eval_transform

    check_positive(args, "batch_size")
    ctx = contexts(args.ctx)
    kwargs = {"classes": args.classes} if args.classes else {}
    data = load_split(args, args.segment).transform_first(eval_transform(args.model))
    loader = mx.gluon.data.DataLoader(data, args.batch_size * len(ctx), num_workers=args.num_workers)
    if args.params:
        net = gluon_hub.load(args.model, ctx=ctx, **kwargs)
        net.load_parameters(args.params, ctx=ctx)
    else:
        net = gluon_hub.load(args.model, pretrained=args.pretrained, ctx=ctx, **kwargs)
    if args.dtype != "float32":
        net.cast(args.dtype)
    net.hybridize(static_alloc=True, static_shape=True)
    return {"model": args.model, "samples": len(data), **evaluate(net, loader, ctx, args.dtype)}


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the command line, evaluate and print; returns the exit code."""
    args = build_parser().parse_args(argv)
    result = run(args)
    if args.json:
        print(json.dumps(result))
    else:
        print(f"{result['model']}: top-1 {result['top1']:.4f}, top-5 {result['top5']:.4f} "
              f"({result['samples']} images)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
