"""``gluon-hub predict MODEL VIDEO...`` for action recognition: the top-k classes of each video.

Each video is decoded with ``decord`` and sampled as GluonCV's ``scripts/action-recognition/inference.py``
does for the model's input (its spec's ``layout`` and ``shape``):

- a 3D model (``NCTHW``, input ``(3, T, H, W)``) sees one clip of ``T`` frames from the middle of the
  video, ``step`` frames apart: the ``s`` of a name's ``fNsM`` ("f16s4": step 4), else 2 for I3D (its
  recipe's 32 frames at rate 2) and 1 for the others. A SlowFast model ("slowfast_AxB") gets
  GluonCV's packing: ``A x B`` consecutive frames, the fast pathway's then the slow one's;
- a 2D (TSN) model (``NCHW``) sees :data:`SEGMENTS_2D` frames, one from the middle of each equal part
  of the video, and the per-frame scores are averaged (as the network's own segment consensus does);
  an int8 TSN, quantized for the ``num_segments`` frames it averages itself (7 for the ResNet ones,
  GluonCV's), sees that many.

Frames are decoded at GluonCV's 340 x 256 (scaled up for inputs larger than 224), centre-cropped to
the input size and normalised with the spec's mean and std (:func:`read_clip`, numpy and decord
only). Scores are softmax probabilities of the averaged rows (:func:`top_classes`). Short videos
are padded as :mod:`.clips` documents; unreadable ones are errors naming the file. ``--runtime
onnx`` runs the exported network in onnxruntime (:mod:`.onnx_runner`) on the same clips.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .clips import ClipSampler

__all__ = ["SEGMENTS_2D", "classify_videos", "clip_sampler", "read_clip", "run", "top_classes"]

#: frames (segments) a 2D model sees of each video
SEGMENTS_2D = 3


@dataclass(frozen=True)
class _Input:
    """What one sample of the model looks like."""

    layout: str
    frames: int
    height: int
    width: int


def _input(spec: Any) -> _Input:
    shape = tuple(spec.input.shape)
    layout = spec.input.layout
    if layout == "NCTHW" and len(shape) == 4:
        return _Input(layout, shape[1], shape[2], shape[3])
    if layout == "NCHW" and len(shape) == 3:  # a network built for fixed segments takes that many
        return _Input(layout, int(spec.kwargs.get("num_segments") or SEGMENTS_2D), shape[1], shape[2])
    raise ValueError(f"{spec.qualified_name!r} has input {shape} in layout {layout!r}; an action model takes "
                     "(3, T, H, W) clips (NCTHW) or (3, H, W) frames (NCHW)")


def clip_sampler(spec: Any) -> ClipSampler:
    """The frames one prediction reads, for the model ``spec`` describes (see the module docstring)."""
    sample = _input(spec)
    if sample.layout == "NCHW":
        return ClipSampler(num_segments=sample.frames)
    name = spec.name
    slowfast = re.search(r"slowfast_(\d+)x(\d+)", name)
    if slowfast:
        slow_frames, slow_stride = int(slowfast.group(1)), int(slowfast.group(2))
        length, fast_frames = slow_frames * slow_stride, sample.frames - slow_frames
        if fast_frames < 1 or length % fast_frames:
            raise ValueError(f"{name!r}: cannot split its {sample.frames} input frames into {slow_frames} slow "
                             f"frames and a whole fast stride over {length} frames")
        return ClipSampler(new_length=length, slowfast=True, slow_temporal_stride=slow_stride,
                           fast_temporal_stride=length // fast_frames)
    rate = re.search(r"_f(\d+)s(\d+)", name)
    step = int(rate.group(2)) if rate else 2 if name.startswith("i3d") else 1
    return ClipSampler(new_length=sample.frames, new_step=step)


def read_clip(spec: Any, path: str | os.PathLike[str]) -> np.ndarray:
    """The network input of the video at ``path``, sampled and preprocessed for the model ``spec``
    describes (see the module docstring): ``(1, 3, T, H, W)`` for a 3D model, ``(segments, 3, H, W)``
    for a 2D one, ``float32``. Both runtimes feed this array (numpy and decord, no MXNet)."""
    from .clips import VideoReader
    from .transforms import VideoValTransform

    sample = _input(spec)
    sampler = clip_sampler(spec)
    # GluonCV decodes at 340 x 256 and crops 224; larger inputs get the same margins
    scale = max(1.0, max(sample.height, sample.width) / 224.0)
    reader = VideoReader(path, width=int(round(340 * scale)), height=int(round(256 * scale)))
    transform = VideoValTransform((sample.height, sample.width), spec.input.mean, spec.input.std)
    frames = transform(reader.frames(sampler.frame_indices(len(reader), "val")))  # (N, 3, H, W)
    if sample.layout == "NCTHW":
        frames = frames.transpose(1, 0, 2, 3)[None]  # one clip: (1, 3, T, H, W)
    return np.ascontiguousarray(frames)


def top_classes(scores: np.ndarray, spec: Any, topk: int) -> list[tuple[str, float]]:
    """The ``topk`` ``(label, probability)`` pairs of one video from the network's ``(rows,
    classes)`` scores: the rows (a 2D model's segments) averaged, then softmax, best first."""
    mean = np.asarray(scores, np.float64).mean(axis=0)
    probs = np.exp(mean - mean.max())
    probs /= probs.sum()
    labels = spec.class_names(probs.shape[0])
    return [(labels[i], float(probs[i])) for i in np.argsort(-probs, kind="stable")[:topk]]


def classify_videos(net: Any, spec: Any, videos: Sequence[str], topk: int = 5,
                    ctx: Any = None) -> list[list[tuple[str, float]]]:
    """The ``topk`` ``(label, probability)`` pairs of each video file, best first, by the MXNet ``net``."""
    from gluon_hub.compat import mx

    ctx = ctx or mx.cpu()
    results = []
    for path in videos:
        scores = net(mx.nd.array(read_clip(spec, path), ctx=ctx))
        scores = scores[0] if isinstance(scores, (list, tuple)) else scores
        results.append(top_classes(scores.asnumpy(), spec, topk))
    return results


def run(args: argparse.Namespace, spec: Any) -> int:
    """``gluon-hub predict`` with an action-recognition model: print each video's top-k classes
    (``--json``: one object per video, the same for ``--runtime mxnet`` and ``--runtime onnx``)."""
    from ..common.prediction import network, onnx_runner, start

    if args.runtime != "onnx":
        pretrained, ctx = start(args, spec)
    if args.topk < 1:
        raise ValueError("--topk must be at least 1")
    if args.out:
        raise ValueError("--out draws pictures for detection and segmentation; action recognition prints classes")
    for path in args.images:  # before the network is built, which takes a while
        if not os.path.isfile(path):
            raise FileNotFoundError(f"video {path!r} does not exist")
    if args.runtime == "onnx":
        tops = onnx_runner(args, spec).classify(args.images, args.topk)
    else:
        kwargs = {"nclass": args.classes} if args.classes else {}
        net = network(spec, pretrained, args.params, ctx, kwargs, download=args.pretrained is not None)
        net.hybridize(static_alloc=True, static_shape=True)
        tops = classify_videos(net, spec, args.images, args.topk, ctx)
    for path, top in zip(args.images, tops):
        if args.json:
            print(json.dumps({"video": path, "top": [{"label": label, "score": score} for label, score in top]}))
            continue
        print(path)
        width = max(len(label) for label, _ in top)
        for rank, (label, score) in enumerate(top, 1):
            print(f"  {rank}. {label:<{width}}  {score:.4f}")
    sys.stdout.flush()
    return 0
