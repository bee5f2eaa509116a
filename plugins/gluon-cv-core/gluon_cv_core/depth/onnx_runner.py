"""The ONNX runner of Monodepth2: the depth map at image size and its colour picture, without MXNet.

``gluon_hub.runtime.load(name)`` builds :class:`DepthEstimator` for every depth model (their specs
name it as ``runner``). It is ``predict``'s recipe with the same numpy functions: the image
resized to the model's input with Pillow's Lanczos filter and scaled to [0, 1], the last
(full-resolution) disparity output turned into depth and resized back to the image
(:func:`~.predict.depth_summary`), the magma picture (:func:`~.predict.draw_depth`). A pose
network's file gives the camera motion between two frames (:meth:`DepthEstimator.motion`).
Same numbers as ``gluon-hub predict`` on MXNet up to the network's float differences: with
trained-like weights about 1e-6 of the disparity, so depths agree within 1e-5 relative.
"""

from __future__ import annotations

import os
from typing import Any, Sequence

import numpy as np

from gluon_hub.runtime import Session, read_image

from .predict import DepthSummary, depth_summary, draw_depth, model_pixels, motion_json
from .specs import metric_scale

__all__ = ["DepthEstimator"]


def _pillow(image: str | os.PathLike[str] | np.ndarray) -> Any:
    """A Pillow RGB image of a file or an ``HWC`` ``uint8`` RGB array."""
    from PIL import Image

    pixels = image if isinstance(image, np.ndarray) else read_image(image)
    if pixels.ndim != 3 or pixels.shape[2] != 3 or pixels.dtype != np.uint8:
        raise ValueError(f"expected an HWC uint8 RGB image, got shape {pixels.shape} and dtype {pixels.dtype}")
    return Image.fromarray(pixels)


class DepthEstimator:
    """An exported Monodepth2 depth or pose network in an onnxruntime :class:`~gluon_hub.runtime.Session`."""

    def __init__(self, session: Session, spec: Any) -> None:
        session.require(spec, tuple(spec.input.shape))
        self.session = session
        self.spec = spec
        #: a pose network stacks two frames (6 channels) and returns the motion between them
        self.posenet = spec.input.shape[0] == 6
        self.scale = metric_scale(spec)

    def to_input(self, image: str | os.PathLike[str] | np.ndarray) -> np.ndarray:
        """The ``(3, H, W)`` network input (the spec's size) of an image file or ``HWC`` ``uint8`` array."""
        return model_pixels(_pillow(image), self.spec)

    def estimate(self, images: Sequence[str | os.PathLike[str] | np.ndarray]) -> list[tuple[np.ndarray, DepthSummary]]:
        """``(image, disparity and depth at the image's size)`` of each image file or ``HWC`` ``uint8`` array."""
        if self.posenet:
            raise ValueError(f"{self.spec.name} is a pose network: call motion(first, second) for two frames")
        results = []
        for image in images:
            picture = _pillow(image)
            outputs = self.session.run(model_pixels(picture, self.spec)[None])
            disp = outputs[-1]  # the last output is the full-resolution one, as in MXNet
            if disp.shape[2:] != tuple(self.spec.input.shape[1:]):
                raise ValueError(f"{str(self.session.path)!r} returned a last output of shape {disp.shape}; "
                                 f"{self.spec.name} ends in the full-resolution disparity (1, 1, "
                                 f"{self.spec.input.shape[1]}, {self.spec.input.shape[2]})")
            results.append((np.asarray(picture), depth_summary(disp[0, 0], picture.height, picture.width,
                                                               self.scale)))
        return results

    def motion(self, first: str | os.PathLike[str], second: str | os.PathLike[str]) -> dict[str, Any]:
        """A pose network's camera motion from frame ``first`` to ``second``: ``{"frames",
        "axisangle", "translation"}``, as ``predict --json`` prints it."""
        if not self.posenet:
            raise ValueError(f"{self.spec.name} estimates depth: call estimate(images); motion() is for "
                             "the pose networks")
        frames = np.concatenate([self.to_input(first), self.to_input(second)])[None]
        axisangle, translation = self.session.run(frames)
        return motion_json([os.fspath(first), os.fspath(second)], axisangle, translation)

    def draw(self, summary: DepthSummary, out: str) -> None:
        """Write the disparity's colour map to ``out`` (as ``predict --out`` does)."""
        draw_depth(summary.disparity, out)
