"""``gluon-hub predict MODEL IMAGE...``: print the top-k classes of images with a model.

Images are decoded with MXNet's OpenCV and preprocessed with the model's evaluation
preset (its ``InputSpec``); scores are softmax probabilities. Weights are the model's
published ones unless ``--params`` points at a local ``.params`` file.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from typing import Any, Sequence


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gluon-hub predict",
        description="Classify images with an image-classification model and print the top-k classes.",
    )
    parser.add_argument("model", help="model name, for example resnet50_v1d")
    parser.add_argument("images", nargs="+", metavar="IMAGE", help="image files (JPEG, PNG ...)")
    parser.add_argument("-k", "--topk", type=int, default=5, help="how many classes to print (default 5)")
    weights = parser.add_mutually_exclusive_group()
    weights.add_argument(
        "--pretrained",
        nargs="?",
        const=True,
        default=True,
        metavar="TAG",
        help="published weights to use: the default ones, or those tagged TAG (the default)",
    )
    weights.add_argument("--tag", dest="pretrained", metavar="TAG", help="same as --pretrained TAG")
    weights.add_argument("--params", metavar="FILE", help="load weights from a local .params file instead")
    parser.add_argument("--classes", type=int, help="number of classes of a --params file trained with other classes")
    parser.add_argument("--batch-size", type=int, default=32, help="images per forward pass (default 32)")
    parser.add_argument("--ctx", default="cpu", help="device, for example cpu or gpu0 (default cpu)")
    parser.add_argument("--json", action="store_true", help="print one JSON object per image")
    return parser


def _labels(spec: Any, num_classes: int) -> list[str]:
    """Class names from the spec's ``labels`` path, or ``class <i>`` where it has none."""
    path = spec.input.labels if spec.input is not None else None
    if path:
        module, _, attr = path.partition(":")
        names = list(getattr(importlib.import_module(module), attr))
        if len(names) == num_classes:
            return [str(n) for n in names]
    return [f"class {i}" for i in range(num_classes)]


def predict(
    model: str,
    images: Sequence[str],
    topk: int = 5,
    pretrained: bool | str = True,
    params: str | None = None,
    batch_size: int = 32,
    ctx: Any = None,
    classes: int | None = None,
) -> list[list[tuple[str, float]]]:
    """The ``topk`` (label, probability) pairs of each image, best first.

    Labels are the spec's class names, or ``class <i>`` when the model has other classes.
    """
    import gluon_hub
    from gluon_hub.compat import mx

    from .data.images import read_image
    from .data.transforms import eval_transform

    if topk < 1 or batch_size < 1:
        raise ValueError("--topk and --batch-size must be at least 1")
    spec = gluon_hub.info(model)
    ctx = ctx or mx.cpu()
    kwargs = {"classes": classes} if classes else {}
    if params is not None:
        net = gluon_hub.load(model, pretrained=False, ctx=ctx, **kwargs)
        net.load_parameters(params, ctx=ctx)
    elif not spec.pretrained:
        raise ValueError(f"model {spec.qualified_name!r} has no published weights; pass --params FILE")
    else:
        net = gluon_hub.load(model, pretrained=pretrained, ctx=ctx, **kwargs)
    net.hybridize(static_alloc=True, static_shape=True)
    transform = eval_transform(spec)
    labels: list[str] | None = None
    results: list[list[tuple[str, float]]] = []
    for start in range(0, len(images), batch_size):
        chunk = images[start : start + batch_size]
        batch = mx.nd.stack(*[transform(read_image(path)) for path in chunk]).as_in_context(ctx)
        probs = mx.nd.softmax(net(batch)).asnumpy()
        labels = labels or _labels(spec, probs.shape[1])
        for row in probs:
            best = row.argsort()[::-1][:topk]
            results.append([(labels[i], float(row[i])) for i in best])
    return results


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``gluon-hub predict``; returns the exit code."""
    from ._devices import contexts

    args = build_parser().parse_args(argv)
    ctx = contexts(args.ctx)[0]
    results = predict(args.model, args.images, args.topk, args.pretrained, args.params, args.batch_size, ctx,
                      args.classes)
    for path, top in zip(args.images, results):
        if args.json:
            print(json.dumps({"image": path, "top": [{"label": l, "score": s} for l, s in top]}))
            continue
        print(path)
        width = max(len(label) for label, _ in top)
        for rank, (label, score) in enumerate(top, 1):
            print(f"  {rank}. {label:<{width}}  {score:.4f}")
    sys.stdout.flush()
    return 0
