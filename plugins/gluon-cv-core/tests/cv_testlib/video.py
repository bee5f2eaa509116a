"""Helpers the video tests share: generated videos (action recognition: a moving band; tracking: a
moving square), GluonCV's 3D models in a child process."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import cv2
import numpy as np

from gluon_cv_core.common.norm import BatchNorm3D
from gluon_hub.compat import mx


def write_video(path: Path, frames: int = 40) -> Path:
    """A small MPEG-4 video at ``path`` (64 x 48, 10 frames a second) whose frames differ: the blue
    level steps and a red band moves down, so every sampled frame tells which one it is."""
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"), 10, (64, 48))
    for i in range(frames):
        frame = np.full((48, 64, 3), 30, np.uint8)
        frame[:, :, 2] = (i * 6) % 256
        frame[(i % 40):(i % 40) + 8, :, 0] = 220
        writer.write(frame)
    writer.release()
    return path


def square_at(frame: int, size: int = 14) -> tuple[int, int, int, int]:
    """The box (x0, y0, x1, y1) of :func:`write_square_video`'s square in ``frame``: it moves 3
    pixels right and 2 down a frame."""
    x, y = 6 + 3 * frame, 8 + 2 * frame
    return x, y, x + size, y + size


def write_square_video(path: Path, frames: int = 12, side: int = 64, size: int = 14,
                       colour: tuple[int, int, int] = (230, 230, 230)) -> Path:
    """A Motion-JPEG video at ``path`` (``side`` x ``side``, 10 frames a second): a bright ``size``
    pixel square of ``colour`` (RGB) at :func:`square_at` on a dark background, the object the
    tracking tests follow."""
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10, (side, side))
    assert writer.isOpened()
    for k in range(frames):
        frame = np.full((side, side, 3), 20, np.uint8)
        x0, y0, x1, y1 = square_at(k, size)
        frame[y0:y1, x0:x1] = colour[::-1]  # OpenCV writes BGR
        writer.write(frame)
    writer.release()
    return path


def gluoncv_clip(path: Path, size: int, mean: Any, std: Any, **sampling: int) -> Any:
    """GluonCV 0.10's validation input of the video at ``path`` (``VideoClsCustom``: decord at
    340 x 256, its frame sampling given ``sampling``; ``VideoGroupValTransform``: centre ``size``
    crop, normalised with ``mean`` and ``std``): an NDArray of ``(1, 3, T, H, W)`` for a clip,
    ``(segments, 3, H, W)`` for frames."""
    from gluoncv.data import VideoClsCustom
    from gluoncv.data.transforms import video as gvideo

    setting = path.with_name(f"{path.stem}-gluoncv-list.txt")
    setting.write_text(f"{path} 40 0\n")  # GluonCV reads the real frame count from the video
    dataset = VideoClsCustom("", str(setting), train=False, video_loader=True, use_decord=True, target_width=size,
                             target_height=size, transform=gvideo.VideoGroupValTransform(size, mean, std),
                             **sampling)
    return dataset[0][0]


def norms(net: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """``(structural name, block)`` of every BatchNorm in ``net`` (a block registered under
    two names, as GluonCV's I3D ResNets do, comes twice)."""
    for name, child in net._children.items():
        key = f"{prefix}{name}"
        if isinstance(child, mx.gluon.nn.BatchNorm):
            yield key, child
        yield from norms(child, key + ".")


def trainable_on_cpu(reference: Any) -> Any:
    """GluonCV's 3D model with its BatchNorms computing as ours do (:class:`BatchNorm3D`: the
    same statistics over a 4-D view of the clip). MXNet 1.9's oneDNN BatchNorm cannot run
    backward after a Conv3D (``Check failed: !is_view``), so GluonCV's own layers fail to
    train on CPU; the swap changes no parameter and no number."""
    for _, norm in norms(reference):
        assert type(norm) in (mx.gluon.nn.BatchNorm, BatchNorm3D), type(norm)
        norm.__class__ = BatchNorm3D
    return reference


@contextlib.contextmanager
def no_initialization() -> Iterator[None]:
    """GluonCV's video constructors initialise every weight (and move them to a context);
    structure checks need none of them."""
    originals = mx.gluon.Block.initialize, mx.gluon.Parameter.reset_ctx
    mx.gluon.Block.initialize = mx.gluon.Parameter.reset_ctx = lambda self, *args, **kwargs: None
    try:
        yield
    finally:
        mx.gluon.Block.initialize, mx.gluon.Parameter.reset_ctx = originals


def assert_exited_cleanly(done: subprocess.CompletedProcess, what: str) -> None:
    """A child process ended with status 0; otherwise fail naming the signal that killed it
    (MXNet turns a segmentation fault into SIGABRT) and the end of its output."""
    if done.returncode == 0:
        return
    why = (f"killed by {signal.Signals(-done.returncode).name}" if done.returncode < 0
           else f"exit status {done.returncode}")
    raise AssertionError(f"{what} failed ({why}):\n{done.stdout[-1000:]}\n{done.stderr[-3000:]}")


def gluoncv_outputs(name: str, params: str, clips: dict[str, np.ndarray], folder: Path,
                    **kwargs: Any) -> dict[str, np.ndarray]:
    """GluonCV's model ``name`` (its factory given ``kwargs``), loaded strictly from ``params``,
    scores each of ``clips``: the outputs, under the same keys.

    It runs in a child process on oneDNN's AVX2 kernels: GluonCV's 3D models use MXNet's 5-D
    BatchNorm, which on the AVX-512 kernels of MXNet 1.9.1 can kill the process with a
    segmentation fault (GluonCV's P3D, then its I3D, in one process), and that would take
    pytest and every later test with it. The hub's models, compared in this process, run on
    the CPU's own kernels."""
    folder.mkdir(parents=True, exist_ok=True)
    request = {"name": name, "kwargs": kwargs, "params": params,
               "inputs": str(folder / f"{name}-inputs.npz"), "outputs": str(folder / f"{name}-outputs.npz")}
    np.savez(request["inputs"], **clips)
    (folder / f"{name}-request.json").write_text(json.dumps(request), encoding="utf-8")
    # the child imports this package as pytest does: from the tests folder (pyproject's pythonpath)
    tests = str(Path(__file__).parent.parent)
    env = {**os.environ, "DNNL_MAX_CPU_ISA": "AVX2",
           "PYTHONPATH": os.pathsep.join(filter(None, [tests, os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-m", "cv_testlib.gluoncv_reference", str(folder / f"{name}-request.json")],
                          env=env, capture_output=True, text=True, timeout=600)
    assert_exited_cleanly(done, f"GluonCV's {name} in a child process")
    with np.load(request["outputs"]) as outputs:
        return {key: outputs[key] for key in outputs.files}
