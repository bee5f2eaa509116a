"""``gluon-hub predict`` with an image classifier: the top-k classes of each image.

Images are decoded with MXNet's OpenCV and preprocessed with the model's evaluation preset
(its ``InputSpec``); scores are softmax probabilities. ``--runtime onnx --model-file
FILE.onnx`` runs a classifier exported with ``gluon_hub.export(..., format="onnx")`` in
onnxruntime instead, with the same preprocessing (:mod:`.onnx_runner`), and never
imports MXNet.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Sequence

from ..common.prediction import network, start


def run(args: argparse.Namespace, spec: Any) -> int:
    """Print each image's top ``--topk`` classes (``--json``: one JSON object per image)."""
    if args.runtime == "onnx":
        _print_top(args, _run_onnx(args, spec))
        return 0
    pretrained, ctx = start(args, spec)
    classes = _read_classes(args.classes_file) if args.classes_file else args.classes
    results = predict(spec.qualified_name, args.images, args.topk, pretrained, args.params, args.batch_size, ctx,
                      classes, download=args.pretrained is not None)
    _print_top(args, results)
    return 0


def predict(
    model: str,
    images: Sequence[str],
    topk: int = 5,
    pretrained: bool | str = True,
    params: str | None = None,
    batch_size: int = 32,
    ctx: Any = None,
    classes: int | Sequence[str] | None = None,
    download: bool = True,
) -> list[list[tuple[str, float]]]:
    """The ``topk`` (label, probability) pairs of each image, best first.

    Labels are ``classes`` where they are names, else the spec's class names, or ``class <i>``
    when the model has another number of classes (``classes`` as a count).
    ``pretrained=False`` (and no ``params``) runs the randomly initialised network;
    ``download=False`` takes published weights only from the cache or a local mirror.
    """
    import gluon_hub
    from gluon_hub.compat import mx

    from ..common.images import read_image
    from .transforms import eval_transform

    if topk < 1 or batch_size < 1:
        raise ValueError("--topk and --batch-size must be at least 1")
    spec = gluon_hub.info(model)
    ctx = ctx or mx.cpu()
    count = classes if isinstance(classes, int) or classes is None else len(classes)
    kwargs = {"classes": count} if count else {}
    net = network(spec, pretrained, params, ctx, kwargs, download)
    net.hybridize(static_alloc=True, static_shape=True)
    transform = eval_transform(spec)
    labels: list[str] | None = None if classes is None or isinstance(classes, int) else list(classes)
    results: list[list[tuple[str, float]]] = []
    for first in range(0, len(images), batch_size):
        chunk = images[first : first + batch_size]
        batch = mx.nd.stack(*[transform(read_image(path)) for path in chunk]).as_in_context(ctx)
        probs = mx.nd.softmax(net(batch)).asnumpy()
        labels = labels or spec.class_names(probs.shape[1])
        for row in probs:
            best = row.argsort()[::-1][:topk]
            results.append([(labels[i], float(row[i])) for i in best])
    return results



def _read_classes(path: str) -> list[str]:
    """``--classes-file``: one class name a line, blank lines skipped."""
    with open(path, encoding="utf-8") as file:
        names = [line.strip() for line in file if line.strip()]
    if not names:
        raise ValueError(f"--classes-file {path} names no classes; write one class name a line")
    return names



def _run_onnx(args: argparse.Namespace, spec: Any) -> list[list[tuple[str, float]]]:
    """``--runtime onnx``: the exported classifier in onnxruntime; MXNet is never imported."""
    from ..common.prediction import onnx_runner

    if args.out:
        raise ValueError("--out draws detections, masks, poses and depth maps; a classifier prints its classes")
    return onnx_runner(args, spec).classify(args.images, args.topk, args.batch_size)



def _print_top(args: argparse.Namespace, results: list[list[tuple[str, float]]]) -> None:
    """Each image's top classes, as text or (``--json``) one JSON object per line; both runtimes."""
    for path, top in zip(args.images, results):
        if args.json:
            print(json.dumps({"image": path, "top": [{"label": label, "score": s} for label, s in top]}))
            continue
        print(path)
        width = max(len(label) for label, _ in top)
        for rank, (label, score) in enumerate(top, 1):
            print(f"  {rank}. {label:<{width}}  {score:.4f}")
    sys.stdout.flush()
