"""What every task's ``gluon-hub predict`` module shares: the device and weights the options ask
for, the network with those weights, and the JSON-per-image loop of detectors and Mask R-CNN.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Callable


def start(args: argparse.Namespace, spec: Any) -> tuple[bool | str, Any]:
    """``(pretrained, ctx)`` for a model that runs in MXNet: the weights option (``--pretrained
    [TAG]`` downloads; with no weights option the published weights are used only if they are
    already here) and the ``--ctx`` device. Refuses ``--runtime onnx`` for a model whose spec names
    no ONNX runner (the task modules call :func:`onnx_runner` for ``--runtime onnx``)."""
    if args.runtime == "onnx":
        raise ValueError(f"{spec.qualified_name!r} ({spec.task}) names no ONNX runner (its spec's runner), so "
                         "--runtime onnx cannot run it: run it without --runtime onnx")
    from .devices import contexts

    ctx = contexts(args.ctx)[0]
    if args.random_weights:
        print("gluon-hub predict: the weights are RANDOM (--random-weights); the labels below are "
              "meaningless", file=sys.stderr)
    pretrained = (not args.random_weights) if args.pretrained is None else args.pretrained
    return pretrained, ctx


def onnx_runner(args: argparse.Namespace, spec: Any) -> Any:
    """``--runtime onnx``: the model's runner (``gluon_hub.runtime.load``) on ``--model-file``, else
    on its converted file already in the cache; never imports MXNet, never downloads."""
    mxnet_only = [flag for flag, used in (("--pretrained/--tag", args.pretrained is not None),
                                          ("--params", args.params), ("--random-weights", args.random_weights),
                                          ("--classes", args.classes or args.classes_file),
                                          ("--ctx", args.ctx != "cpu")) if used]
    if mxnet_only:
        raise ValueError(f"{', '.join(mxnet_only)} apply to the MXNet runtime; with --runtime onnx the "
                         "weights and classes are those of --model-file, run on the CPU")
    if not spec.runner:
        start(args, spec)  # refuses: no runner
    return load_runner(spec.qualified_name, args.model_file, "--model-file", "MODEL")


def load_runner(name: str, model_file: str | None, option: str, what: str) -> Any:
    """``gluon_hub.runtime.load(name, model_file)``, else the model's converted file from the cache
    (never downloaded); a missing file is an error naming ``option`` and the export of ``what``."""
    import gluon_hub.runtime
    from gluon_hub.cache import offline

    if model_file:
        return gluon_hub.runtime.load(name, model_file)
    try:
        with offline():
            return gluon_hub.runtime.load(name)
    except (KeyError, FileNotFoundError) as exc:
        reason = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        raise ValueError(f"--runtime onnx needs {option} FILE.onnx, the file written by gluon_hub.export("
                         f"{what}, FILE, format=\"onnx\"), or the model's converted file in the cache ({reason})"
                         ) from None


def network(spec: Any, pretrained: bool | str, params: str | None, ctx: Any, kwargs: dict[str, Any],
            download: bool) -> Any:
    """The model with the weights asked for, not yet hybridized: ``params``, else random ones
    (``pretrained=False``), else the published ones (``download=False``: only from the cache or
    a local mirror)."""
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



def print_each_image(args: argparse.Namespace, spec: Any, pretrained: bool | str, ctx: Any,
                     find: Callable[..., list], draw: Callable[..., None], key: str, what: str) -> int:
    """Detectors and Mask R-CNN: one JSON object per image listing what ``find`` found under
    ``key`` and, with ``--out``, the picture ``draw`` makes of it; ``what`` names the model kind."""
    check_images(args, what)
    net = network(spec, pretrained, args.params, ctx, {}, download=args.pretrained is not None)
    net.hybridize()  # each image keeps its aspect ratio, so shapes vary: no static_shape
    found = find(net, spec, args.images, args.threshold, ctx)
    return print_found(args, found, key, lambda image, items: draw(image, items, net.classes, args.out))


def check_images(args: argparse.Namespace, what: str) -> None:
    """The checks of a model that prints what it finds in each image, before it is built."""
    import os

    if args.out and len(args.images) != 1:
        raise ValueError(f"--out draws one image, but {len(args.images)} were given; pass a single IMAGE")
    if args.classes or args.classes_file:
        raise ValueError(f"--classes is for classifiers; {what}'s --params file must have its classes")
    for path in args.images:  # before the network is built, which takes a while
        if not os.path.isfile(path):
            raise FileNotFoundError(f"image {path!r} does not exist")


def print_found(args: argparse.Namespace, found: list, key: str, draw: Callable[[Any, list], None]) -> int:
    """One JSON object per image of ``(image, items)`` pairs (both runtimes print the same), and
    with ``--out`` the picture ``draw(image, items)`` writes."""
    for path, (image, items) in zip(args.images, found):
        print(json.dumps({"image": path, "width": image.shape[1], "height": image.shape[0],
                          key: [item.as_json() for item in items]}))
        if args.out:
            draw(image, items)
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
