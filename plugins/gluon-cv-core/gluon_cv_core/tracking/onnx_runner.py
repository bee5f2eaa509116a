"""The ONNX runner of the SiamRPN trackers: the object's box in every frame of a video, without MXNet.

``gluon_hub.runtime.load(name)`` builds :class:`ObjectTracker` for the tracking specs, which
name it as ``runner``. It runs the MXNet path's own numpy loop (:class:`.loop.SiamRPNLoop`:
crops around the last position, anchors, scale and aspect penalties, cosine window, size
smoothing) with the exported network in onnxruntime and OpenCV's bilinear crop resize in numpy
(:func:`gluon_hub.runtime.resize_linear`). The exported graph is the whole network, ``(template
crop, search crop) -> (cls, loc)``, so the template's backbone runs again with every frame
(the MXNet path keeps its features): the same numbers, about a fifth more work per frame.
"""

from __future__ import annotations

import os
from typing import Any, Iterator, Sequence

import numpy as np

from gluon_hub.runtime import Session, resize_linear

from .loop import SiamRPNLoop, TrackedBox
from .predict import track_video

__all__ = ["ObjectTracker"]


class ObjectTracker(SiamRPNLoop):
    """An exported SiamRPN network in an onnxruntime :class:`~gluon_hub.runtime.Session`, and the
    tracking loop around it.

    :meth:`track` follows the object of a box through a video file; :meth:`init` and
    :meth:`update` take frames one at a time (H x W x 3 RGB ``uint8``), as the MXNet tracker's do.
    ``**loop`` sets :class:`~.loop.SiamRPNLoop`'s hyper-parameters; the crop sizes are the spec's.
    """

    def __init__(self, session: Session, spec: Any, **loop: Any) -> None:
        template, search = int(spec.input.shape[-1]), int(spec.extra_inputs[0].shape[-1])
        super().__init__(exemplar_size=template, instance_size=search, **loop)
        self.session = session
        self.spec = spec
        self.path = session.path
        if not (session.takes((3, template, template), (3, search, search))
                and len(session.session.get_outputs()) == 2):
            raise ValueError(
                f"{str(self.path)!r} takes {session.described_inputs()}, but {spec.qualified_name!r} feeds a template crop (1, 3, "
                f"{template}, {template}) and a search crop (1, 3, {search}, {search}) and expects two outputs "
                f"(cls, loc): the file was exported from another model or for other crop sizes; export it again "
                f"with gluon_hub.export({spec.name!r}, {str(self.path)!r}, format=\"onnx\")"
            )

    def network_input(self, patch: np.ndarray, out_size: int) -> np.ndarray:
        """``patch`` resized with OpenCV's bilinear arithmetic: a (1, 3, out, out) float32 array."""
        resized = resize_linear(patch, out_size, out_size)
        return np.ascontiguousarray(resized.transpose(2, 0, 1)[None], dtype=np.float32)

    def template(self, crop: np.ndarray) -> np.ndarray:
        """The template crop itself: the exported graph takes it with every search crop."""
        return crop

    def scores(self, crop: np.ndarray, template: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        cls, loc = self.session.run(template, crop)
        return cls, loc

    def track(self, video: str | os.PathLike[str], box: Sequence[float]) -> Iterator[TrackedBox]:
        """The object's box in every frame of the video file, starting from ``box`` (x0, y0, x1,
        y1 pixels) in its first frame, which must lie inside it; decoded with decord."""
        for _, tracked in track_video(self, os.fspath(video), box):
            yield tracked
