"""``gluon-hub predict siamrpn_alexnet_v2_otb15 VIDEO --box X0 Y0 X1 Y1``: follow one object.

The video is decoded with decord (``pip install decord``, the plugin's ``[video]`` extra), one frame at a time;
the box is the object in the first frame, in pixels. It prints one line per frame, ``frame
x0 y0 x1 y1 score`` (``--json``: one object per frame), the first frame being the given box with
score 1. ``--out FILE.png`` writes the video's last frame with its tracked box drawn (one
picture, not a video). ``--runtime onnx [--model-file FILE.onnx]`` runs the same loop with the
exported network in onnxruntime (:mod:`.onnx_runner`), without MXNet.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Iterator, Sequence

import numpy as np

__all__ = ["read_frames", "run", "track_video"]


def read_frames(path: str) -> Iterator[np.ndarray]:
    """The frames of the video at ``path`` as H x W x 3 RGB ``uint8`` arrays, in order."""
    try:
        import decord
    except ImportError:
        raise ImportError("tracking reads videos with decord, which is not installed: "
                          "pip install 'decord>=0.6' (the plugin's [video] extra)") from None
    if not os.path.isfile(path):
        raise FileNotFoundError(f"video {path!r} does not exist")
    try:
        reader = decord.VideoReader(path, ctx=decord.cpu(0))
    except (decord.DECORDError, RuntimeError):  # decord says only "Error reading PATH..."
        raise ValueError(f"cannot read video {path!r}: decord cannot open it (not a video, or "
                         "a codec FFmpeg lacks)") from None
    if len(reader) == 0:
        raise ValueError(f"video {path!r} has no frames")
    for index in range(len(reader)):
        yield reader[index].asnumpy()


def track_video(tracker: Any, path: str, box: Sequence[float]) -> Iterator[tuple[np.ndarray, Any]]:
    """``(frame, TrackedBox)`` for every frame of the video, starting ``tracker`` on ``box``."""
    frames = read_frames(path)
    first = next(frames)
    height, width = first.shape[:2]
    x0, y0, x1, y1 = box
    if not (0 <= x0 < x1 <= width and 0 <= y0 < y1 <= height):
        raise ValueError(f"--box {x0:g} {y0:g} {x1:g} {y1:g} is not a box inside the first frame of {path!r} "
                         f"({width}x{height}): give X0 Y0 X1 Y1 with 0 <= X0 < X1 <= {width} and "
                         f"0 <= Y0 < Y1 <= {height}")
    yield first, tracker.init(first, box)
    for frame in frames:
        yield frame, tracker.update(frame)


def _draw(frame: np.ndarray, box: tuple[float, ...], out: str) -> None:
    try:
        from PIL import Image, ImageDraw
    except ImportError:
        raise ImportError("--out draws with Pillow, which is not installed: pip install Pillow") from None
    directory = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"cannot write {out!r}: the folder {directory!r} does not exist")
    picture = Image.fromarray(frame)
    ImageDraw.Draw(picture).rectangle(box, outline=(255, 220, 0), width=max(1, round(min(picture.size) / 200)))
    try:
        picture.save(out)
    except ValueError as exc:  # Pillow's "unknown file extension"
        raise ValueError(f"cannot write {out!r}: {exc}; use a .png or .jpg name") from None


def run(args: argparse.Namespace, spec: Any) -> int:
    """``gluon-hub predict`` with a tracker: one box per frame of the (single) video (``--json``:
    the same objects for ``--runtime mxnet`` and ``--runtime onnx``)."""
    from ..common.prediction import network, onnx_runner, start

    if args.runtime != "onnx":
        pretrained, ctx = start(args, spec)
    if args.box is None:
        raise ValueError(f"{spec.qualified_name!r} tracks an object: give its box in the first frame with "
                         "--box X0 Y0 X1 Y1 (pixels)")
    if len(args.images) != 1:
        raise ValueError(f"a tracker follows one object through one video, but {len(args.images)} files were "
                         "given; pass a single VIDEO")
    if args.classes:
        raise ValueError("--classes is for classifiers; a tracker has no classes")
    path = args.images[0]
    if not os.path.isfile(path):  # before the network is built, which takes a while
        raise FileNotFoundError(f"video {path!r} does not exist")
    if args.runtime == "onnx":
        tracker = onnx_runner(args, spec)
    else:
        from .tracker import SiamRPNTracker

        net = network(spec, pretrained, args.params, ctx, {}, download=args.pretrained is not None)
        net.hybridize(static_alloc=True, static_shape=True)  # the crops keep their sizes
        tracker = SiamRPNTracker(net, ctx)
    last = None
    for index, (frame, tracked) in enumerate(track_video(tracker, path, tuple(args.box))):
        if args.json:
            print(json.dumps({"video": path, "frame": index, **tracked.as_json()}))
        else:
            print(index, " ".join(f"{v:.2f}" for v in tracked.box), f"{tracked.score:.4f}")
        last = frame, tracked.box
    if args.out and last is not None:
        _draw(last[0], last[1], args.out)
    sys.stdout.flush()
    return 0
