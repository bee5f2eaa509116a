"""``gluon-hub predict MODEL IMAGE...``: print the top-k classes of images with a model.

Images are decoded with MXNet's OpenCV and preprocessed with the model's evaluation
preset (its ``InputSpec``); scores are softmax probabilities. For an object detector the
command prints each image's boxes as JSON instead, and ``--out FILE.png`` draws them (see
:mod:`.detection_predict`); a semantic-segmentation model prints each image's class pixel
fractions and ``--out`` writes a colour overlay (:mod:`.segmentation_predict`); Mask R-CNN
prints its instances and ``--out`` draws their masks and boxes (:mod:`.instance_predict`).
Pose estimators, action recognisers (on videos), depth estimators and trackers have a
module each too (``_TASK_MODULES``).

It never downloads unless asked. By default it uses the model's published weights if they
are already in the cache or on a local mirror, and otherwise stops and says how to get
them: ``--pretrained`` downloads them, ``--params FILE`` loads a local file, and
``--random-weights`` runs the untrained network (its labels are meaningless).

``--runtime onnx --model-file FILE.onnx`` runs a classifier exported with
``gluon_hub.export(..., format="onnx")`` in onnxruntime instead, with the same
preprocessing (:mod:`gluon_hub.runtime`), and never imports MXNet.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from typing import Any, Callable, Sequence


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gluon-hub predict",
        description="Classify images with an image-classification model and print the top-k classes; "
        "with an object detector, print the boxes of each image as JSON (and draw them with --out); "
        "with a segmentation model, print class pixel fractions or instances (--out draws the masks); "
        "with a pose model, the keypoints of each person; with an action model, the top-k classes of "
        "each video; with a depth model, depth statistics (--out draws the depth map); with a tracker, "
        "the object's box in each frame of a video (--box gives it in the first).",
    )
    parser.add_argument("model", help="model name, for example resnet50_v1d")
    parser.add_argument("images", nargs="+", metavar="IMAGE",
                        help="image files (JPEG, PNG ...); video files for action recognition and tracking")
    parser.add_argument("-k", "--topk", type=int, default=5, help="how many classes to print (default 5)")
    weights = parser.add_mutually_exclusive_group()
    weights.add_argument(
        "--pretrained",
        nargs="?",
        const=True,
        default=None,
        metavar="TAG",
        help="use the published weights (the default ones, or those tagged TAG), downloading "
        "them if they are not cached. Without any weights option, the published weights are "
        "used only if already cached or on a local mirror: nothing is downloaded",
    )
    weights.add_argument("--tag", dest="pretrained", metavar="TAG", help="same as --pretrained TAG")
    weights.add_argument("--params", metavar="FILE", help="load weights from a local .params file instead")
    weights.add_argument("--random-weights", action="store_true",
                         help="run the randomly initialised network (to try the command; the "
                         "labels are then meaningless)")
    names = parser.add_mutually_exclusive_group()
    names.add_argument("--classes", type=_class_names, metavar="A,B,C",
                       help="the class names of a --params file trained on other classes, in label order "
                       "(comma-separated; a bare number N prints 'class 0' ... 'class N-1')")
    names.add_argument("--classes-file", metavar="FILE",
                       help="the same as --classes, one name a line (the labels.txt the training script writes)")
    parser.add_argument("--batch-size", type=int, default=32, help="images per forward pass (default 32)")
    parser.add_argument("--ctx", default="cpu", help="device, for example cpu or gpu0 (default cpu)")
    parser.add_argument("--json", action="store_true", help="print one JSON object per image")
    parser.add_argument("--threshold", type=float, default=0.5,
                        help="detectors and Mask R-CNN: print boxes scoring at least this (default 0.5)")
    parser.add_argument("--out", metavar="FILE.png",
                        help="write a picture of the (single) input: boxes (detectors), masks (segmentation), "
                        "skeletons (pose), a colour depth map (depth), or the last frame with its box (tracking)")
    parser.add_argument("--detector", metavar="MODEL",
                        help="pose estimation: the registry detector that finds the persons (default: the pose "
                        "module's choice)")
    parser.add_argument("--box", type=float, nargs=4, metavar=("X0", "Y0", "X1", "Y1"),
                        help="in pixels: tracking, the object's box in the video's first frame; pose, the "
                        "person's box (instead of a detector)")
    parser.add_argument("--runtime", choices=("mxnet", "onnx"), default="mxnet",
                        help="mxnet (default) runs the model in MXNet; onnx runs --model-file in onnxruntime "
                        "without importing MXNet (classifiers; pip install onnxruntime Pillow)")
    parser.add_argument("--model-file", metavar="FILE.onnx",
                        help="with --runtime onnx: the file gluon_hub.export(MODEL, FILE, format=\"onnx\") wrote; "
                        "MODEL still names the preprocessing and the class names")
    return parser


def _class_names(value: str) -> list[str] | int:
    """``--classes``: comma-separated names, or a count for files trained without names."""
    if value.strip().isdigit():
        return int(value)
    names = [name.strip() for name in value.split(",")]
    if not all(names):
        raise argparse.ArgumentTypeError(f"empty class name in {value!r}; give names as a,b,c")
    return names


def _read_classes(path: str) -> list[str]:
    """``--classes-file``: one class name a line, blank lines skipped."""
    with open(path, encoding="utf-8") as file:
        names = [line.strip() for line in file if line.strip()]
    if not names:
        raise ValueError(f"--classes-file {path} names no classes; write one class name a line")
    return names


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

    from .classification.transforms import eval_transform
    from .common.images import read_image

    if topk < 1 or batch_size < 1:
        raise ValueError("--topk and --batch-size must be at least 1")
    spec = gluon_hub.info(model)
    ctx = ctx or mx.cpu()
    count = classes if isinstance(classes, int) or classes is None else len(classes)
    kwargs = {"classes": count} if count else {}
    net = _network(spec, pretrained, params, ctx, kwargs, download)
    net.hybridize(static_alloc=True, static_shape=True)
    transform = eval_transform(spec)
    labels: list[str] | None = None if classes is None or isinstance(classes, int) else list(classes)
    results: list[list[tuple[str, float]]] = []
    for start in range(0, len(images), batch_size):
        chunk = images[start : start + batch_size]
        batch = mx.nd.stack(*[transform(read_image(path)) for path in chunk]).as_in_context(ctx)
        probs = mx.nd.softmax(net(batch)).asnumpy()
        labels = labels or spec.class_names(probs.shape[1])
        for row in probs:
            best = row.argsort()[::-1][:topk]
            results.append([(labels[i], float(row[i])) for i in best])
    return results


def _network(spec: Any, pretrained: bool | str, params: str | None, ctx: Any, kwargs: dict[str, Any],
             download: bool) -> Any:
    """The model with the weights asked for (see :func:`predict`), not yet hybridized."""
    import gluon_hub
    from gluon_hub.compat import mx

    if params is not None or pretrained is False:
        net = gluon_hub.load(spec.qualified_name, pretrained=False, ctx=ctx, **kwargs)  # initialised at random
        if params is not None:
            try:
                net.load_parameters(params, ctx=ctx)
            except (AssertionError, ValueError, mx.base.MXNetError) as exc:  # MXNet's words for a misfit
                detail = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
                count = f" with {kwargs['classes']} classes" if "classes" in kwargs else ""
                raise ValueError(
                    f"--params {params} does not fit {spec.qualified_name!r}{count} ({detail}); a file "
                    "trained on your own classes needs their names, in label order: pass --classes "
                    "a,b,c or --classes-file labels.txt (the file the training script writes)") from None
        return net
    if not spec.pretrained:
        raise ValueError(f"model {spec.qualified_name!r} has no published weights; pass --params FILE "
                         "(or --random-weights to try the untrained network)")
    if download:
        return gluon_hub.load(spec.qualified_name, pretrained=pretrained, ctx=ctx, **kwargs)
    return _load_cached(spec, pretrained, ctx, kwargs)


def _detect(args: argparse.Namespace, spec: Any, pretrained: bool | str, ctx: Any) -> int:
    """Detectors: one JSON object of boxes per image and, with ``--out``, the picture of them."""
    from .detection.predict import detect, draw_detections

    return print_each_image(args, spec, pretrained, ctx, detect, draw_detections, "detections", "a detector")


def print_each_image(args: argparse.Namespace, spec: Any, pretrained: bool | str, ctx: Any,
                     find: Callable[..., list], draw: Callable[..., None], key: str, what: str) -> int:
    """Detectors and Mask R-CNN: one JSON object per image listing what ``find`` found under
    ``key`` and, with ``--out``, the picture ``draw`` makes of it; ``what`` names the model kind."""
    import os

    if args.out and len(args.images) != 1:
        raise ValueError(f"--out draws one image, but {len(args.images)} were given; pass a single IMAGE")
    if args.classes or args.classes_file:
        raise ValueError(f"--classes is for classifiers; {what}'s --params file must have its classes")
    for path in args.images:  # before the network is built, which takes a while
        if not os.path.isfile(path):
            raise FileNotFoundError(f"image {path!r} does not exist")
    net = _network(spec, pretrained, args.params, ctx, {}, download=args.pretrained is not None)
    net.hybridize()  # each image keeps its aspect ratio, so shapes vary: no static_shape
    for path, (image, found) in zip(args.images, find(net, spec, args.images, args.threshold, ctx)):
        print(json.dumps({"image": path, "width": image.shape[1], "height": image.shape[0],
                          key: [item.as_json() for item in found]}))
        if args.out:
            draw(image, found, net.classes, args.out)
    sys.stdout.flush()
    return 0


def _load_cached(spec: Any, pretrained: bool | str, ctx: Any, kwargs: dict[str, Any]) -> Any:
    """The model with its published weights from the cache or a local mirror, never the network."""
    import gluon_hub
    from gluon_hub.cache import OfflineMissError, offline

    try:
        with offline():
            return gluon_hub.load(spec.qualified_name, pretrained=pretrained, ctx=ctx, **kwargs)
    except OfflineMissError:
        size = spec.weight(pretrained).file.size
        what = f" ({size / 2**20:.0f} MB)" if size else ""
        raise FileNotFoundError(
            f"the published weights of {spec.qualified_name!r}{what} are not in the cache or on a "
            "local mirror, and predict downloads only when asked: pass --pretrained to download "
            "them, --params FILE to use your own, or --random-weights to run the untrained network"
        ) from None


def _run_onnx(args: argparse.Namespace, spec: Any) -> list[list[tuple[str, float]]]:
    """``--runtime onnx``: the exported classifier in onnxruntime; MXNet is never imported."""
    from gluon_hub.runtime import load_onnx

    if not args.model_file:
        raise ValueError("--runtime onnx needs --model-file FILE.onnx, the file written by "
                         "gluon_hub.export(MODEL, FILE, format=\"onnx\")")
    mxnet_only = [flag for flag, used in (("--pretrained/--tag", args.pretrained is not None),
                                          ("--params", args.params), ("--random-weights", args.random_weights),
                                          ("--classes", args.classes or args.classes_file), ("--out", args.out),
                                          ("--ctx", args.ctx != "cpu")) if used]
    if mxnet_only:
        raise ValueError(f"{', '.join(mxnet_only)} apply to the MXNet runtime; with --runtime onnx the "
                         "weights and classes are those of --model-file, run on the CPU")
    if spec.task == "object-detection":
        raise ValueError(f"--runtime onnx runs image classifiers; {spec.qualified_name!r} is an object "
                         "detector: run it without --runtime onnx")
    return load_onnx(args.model_file, spec.qualified_name).classify(args.images, args.topk, args.batch_size)


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


#: tasks whose module in the task's package has ``run(args, spec, pretrained, ctx) -> exit code``
_TASK_MODULES = {
    "semantic-segmentation": "segmentation.predict",
    "instance-segmentation": "detection.instance_predict",
    "pose-estimation": "pose.predict",
    "action-recognition": "action.predict",
    "depth-estimation": "depth.predict",
    "object-tracking": "tracking.predict",
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``gluon-hub predict``; returns the exit code."""
    args = build_parser().parse_args(argv)
    if args.runtime == "onnx":
        import gluon_hub

        _print_top(args, _run_onnx(args, gluon_hub.info(args.model)))
        return 0
    if args.model_file:
        raise ValueError("--model-file is the exported file that --runtime onnx runs; add --runtime onnx")
    from .common.devices import contexts

    ctx = contexts(args.ctx)[0]
    if args.random_weights:
        print("gluon-hub predict: the weights are RANDOM (--random-weights); the labels below are "
              "meaningless", file=sys.stderr)
    # --pretrained [TAG] asks for the published weights, downloading them if needed; with
    # no weights option they are used only if they are already here.
    pretrained = (not args.random_weights) if args.pretrained is None else args.pretrained
    import gluon_hub

    spec = gluon_hub.info(args.model)
    if spec.task == "object-detection":
        return _detect(args, spec, pretrained, ctx)
    if spec.task in _TASK_MODULES:
        run = importlib.import_module(f".{_TASK_MODULES[spec.task]}", __package__).run
        return run(args, spec, pretrained, ctx)
    classes = _read_classes(args.classes_file) if args.classes_file else args.classes
    results = predict(args.model, args.images, args.topk, pretrained, args.params, args.batch_size, ctx,
                      classes, download=args.pretrained is not None)
    _print_top(args, results)
    return 0
