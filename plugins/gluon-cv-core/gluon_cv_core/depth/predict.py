"""``gluon-hub predict`` for Monodepth2: the depth of an image, and a colour picture of it.

As GluonCV's depth demo: the image is resized to the model's input (Lanczos) and scaled to
``[0, 1]``; the full-resolution disparity ``d`` in ``(0, 1)`` becomes depth
``1 / (1/100 + (1/0.1 - 1/100) d)`` (0.1 to 100 units), resized back to the image bilinearly.
Models trained with stereo pairs give metres after the 5.4 scale factor (clamped to 0.001-80 m,
GluonCV's range); a monocular model's depths are only relative. ``--out FILE.png`` writes the
disparity in a magma-like colour map (near bright, far dark), clipped at its 95th percentile,
at the image's size.

A pose network (``monodepth2_resnet18_posenet_*``) takes two frames instead and prints the
camera motion between them: axis-angle rotation and translation.

``--runtime onnx`` runs the exported graph with the same numpy steps (:mod:`.onnx_runner`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Sequence

import numpy as np

__all__ = ["DepthSummary", "colorize", "depth_summary", "disparity_to_depth", "draw_depth", "model_pixels",
           "motion_json", "predict_depth", "run"]

#: GluonCV's depth range of the disparity output (units of the training baseline)
MIN_DEPTH, MAX_DEPTH = 0.1, 100.0
#: the range metric depths are clamped to (GluonCV's evaluation range, metres)
METRIC_RANGE = (1e-3, 80.0)
#: magma (matplotlib's, CC0) at 11 evenly spaced points, interpolated linearly between them
_MAGMA = np.array([[0, 0, 4], [20, 14, 54], [59, 15, 112], [100, 26, 128], [140, 41, 129], [183, 55, 121],
                   [222, 73, 104], [247, 112, 92], [254, 159, 109], [254, 207, 146], [252, 253, 191]],
                  dtype=np.float32)


def disparity_to_depth(disp: np.ndarray, min_depth: float = MIN_DEPTH, max_depth: float = MAX_DEPTH) -> np.ndarray:
    """Depth from the network's sigmoid disparity: its inverse, mapped onto ``[min_depth, max_depth]``."""
    return 1.0 / (1.0 / max_depth + (1.0 / min_depth - 1.0 / max_depth) * disp)


def colorize(values: np.ndarray, vmin: float | None = None, vmax: float | None = None) -> np.ndarray:
    """``(H, W, 3)`` uint8 magma-like colours of a 2-D map: ``vmin`` (default its minimum) is
    black-purple, ``vmax`` (default its 95th percentile, as GluonCV's demo) pale yellow."""
    values = np.asarray(values, dtype=np.float32)
    vmin = float(values.min()) if vmin is None else vmin
    vmax = float(np.percentile(values, 95)) if vmax is None else vmax
    scaled = np.clip((values - vmin) / max(vmax - vmin, 1e-12), 0, 1) * (len(_MAGMA) - 1)
    low = np.minimum(np.floor(scaled).astype(np.int64), len(_MAGMA) - 2)
    frac = (scaled - low)[..., None]
    return np.rint(_MAGMA[low] * (1 - frac) + _MAGMA[low + 1] * frac).astype(np.uint8)


class DepthSummary:
    """One image's prediction: the disparity and depth maps at the image's size, and their units."""

    def __init__(self, disparity: np.ndarray, depth: np.ndarray, metric: bool) -> None:
        self.disparity, self.depth, self.metric = disparity, depth, metric

    def as_json(self) -> dict[str, Any]:
        return {"unit": "m" if self.metric else "relative", "min": float(self.depth.min()),
                "median": float(np.median(self.depth)), "max": float(self.depth.max())}


def _open_rgb(path: str) -> Any:
    from PIL import Image, UnidentifiedImageError

    if not os.path.isfile(path):
        raise FileNotFoundError(f"image {path!r} does not exist")
    try:
        with Image.open(path) as image:
            return image.convert("RGB")
    except (UnidentifiedImageError, OSError) as exc:
        raise ValueError(f"cannot decode image {path!r}: {exc}") from None


def model_pixels(image: Any, spec: Any) -> np.ndarray:
    """A Pillow RGB image resized to the spec's input (Lanczos), ``(3, H, W)`` float32 in [0, 1]."""
    from PIL import Image

    height, width = spec.input.shape[1:]
    pixels = np.asarray(image.resize((width, height), Image.LANCZOS), dtype=np.float32) / 255.0
    return np.ascontiguousarray(pixels.transpose(2, 0, 1))


def _model_input(image: Any, spec: Any, ctx: Any) -> Any:
    """:func:`model_pixels` as an MXNet batch of one."""
    from gluon_hub.compat import mx

    return mx.nd.array(model_pixels(image, spec)[None], ctx=ctx)


def depth_summary(disp: np.ndarray, height: int, width: int, scale: float | None) -> DepthSummary:
    """The network's full-resolution ``(h, w)`` disparity as the disparity and depth maps at the
    image's ``height`` and ``width`` (metres when ``scale`` is the stereo factor)."""
    from .metrics import resize_bilinear

    scaled = resize_bilinear(1.0 / disparity_to_depth(disp), height, width)
    depth = 1.0 / scaled
    if scale is not None:
        depth = np.clip(depth * scale, *METRIC_RANGE)
    return DepthSummary(scaled, depth, scale is not None)


def draw_depth(disparity: np.ndarray, out: str) -> None:
    """Write the colour map of ``disparity`` to ``out`` (``predict --out``)."""
    from PIL import Image

    try:
        Image.fromarray(colorize(disparity)).save(out)
    except ValueError as exc:  # Pillow's "unknown file extension"
        raise ValueError(f"cannot write {out!r}: {exc}; use a .png name") from None


def predict_depth(net: Any, spec: Any, images: Sequence[str], ctx: Any = None) -> list[DepthSummary]:
    """Each image's disparity and depth at its own size (see the module docstring)."""
    from gluon_hub.compat import mx

    from .specs import metric_scale

    ctx = ctx or mx.cpu()
    scale = metric_scale(spec)
    results = []
    for path in images:
        image = _open_rgb(path)
        outputs = net(_model_input(image, spec, ctx))
        disp = outputs[-1][0, 0].asnumpy()  # the last output is the full-resolution one
        results.append(depth_summary(disp, image.height, image.width, scale))
    return results


def _pose(net: Any, spec: Any, images: Sequence[str], ctx: Any) -> dict[str, Any]:
    """The pose network's motion from the first frame to the second."""
    from gluon_hub.compat import mx

    frames = [_model_input(_open_rgb(path), spec, ctx) for path in images]
    axisangle, translation = net(mx.nd.concat(*frames, dim=1))
    return motion_json(images, axisangle.asnumpy(), translation.asnumpy())


def motion_json(images: Sequence[str], axisangle: np.ndarray, translation: np.ndarray) -> dict[str, Any]:
    """The pose network's ``(1, 1, 1, 3)`` outputs as ``predict --json`` prints them."""
    return {"frames": list(images), "axisangle": axisangle[0, 0, 0].tolist(),
            "translation": translation[0, 0, 0].tolist()}


def run(args: argparse.Namespace, spec: Any) -> int:
    """``gluon-hub predict`` with a Monodepth2 model: print each image's depth range (``--json``:
    one object per image) and write the colour map with ``--out``; a pose network takes two frames.
    ``--runtime onnx`` runs the exported graph in :class:`~.onnx_runner.DepthEstimator` instead."""
    from ..common.prediction import network, onnx_runner, start

    if args.runtime != "onnx":
        pretrained, ctx = start(args, spec)
    if args.classes:
        raise ValueError("--classes is for classifiers; a depth model has no classes")
    posenet = spec.input.shape[0] == 6
    if posenet and len(args.images) != 2:
        raise ValueError(f"{spec.name} estimates the camera motion between two frames; pass exactly two "
                         f"images, got {len(args.images)}")
    if args.out and (posenet or len(args.images) != 1):
        raise ValueError("--out draws the depth of one image; pass a single IMAGE with a depth model")
    if args.out:
        directory = os.path.dirname(os.path.abspath(args.out))
        if not os.path.isdir(directory):
            raise FileNotFoundError(f"cannot write {args.out!r}: the folder {directory!r} does not exist")
    for path in args.images:  # before the network is built, which takes a while
        if not os.path.isfile(path):
            raise FileNotFoundError(f"image {path!r} does not exist")
    if args.runtime == "onnx":
        runner = onnx_runner(args, spec)
        if posenet:
            motion = runner.motion(*args.images)
        else:
            results = [summary for _, summary in runner.estimate(args.images)]
    else:
        net = network(spec, pretrained, args.params, ctx, {}, download=args.pretrained is not None)
        net.hybridize(static_alloc=True, static_shape=True)  # every image is resized to the one input shape
        if posenet:
            motion = _pose(net, spec, args.images, ctx)
        else:
            results = predict_depth(net, spec, args.images, ctx)
    if posenet:
        print(json.dumps(motion) if args.json else
              "axis-angle " + " ".join(f"{v:.6f}" for v in motion["axisangle"])
              + "\ntranslation " + " ".join(f"{v:.6f}" for v in motion["translation"]))
        sys.stdout.flush()
        return 0
    for path, result in zip(args.images, results):
        summary = result.as_json()
        height, width = result.depth.shape
        if args.json:
            print(json.dumps({"image": path, "width": width, "height": height, "depth": summary}))
        else:
            unit = "m" if result.metric else "(relative: a monocular model's scale is unknown)"
            print(f"{path}: depth min {summary['min']:.3f}  median {summary['median']:.3f}  "
                  f"max {summary['max']:.3f} {unit}")
        if args.out:
            draw_depth(result.disparity, args.out)
    sys.stdout.flush()
    return 0
