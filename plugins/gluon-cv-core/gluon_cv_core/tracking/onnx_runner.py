"""The ONNX runner of the SiamRPN trackers: the object's box in every frame of a video, without MXNet.

``gluon_hub.runtime.load(name)`` builds :class:`ObjectTracker` for the tracking specs, which
name it as ``runner``. It runs the MXNet path's own numpy loop (:class:`.loop.SiamRPNLoop`:
crops around the last position, anchors, scale and aspect penalties, cosine window, size
smoothing) with the exported network in onnxruntime and OpenCV's bilinear crop resize in numpy
(:func:`gluon_hub.runtime.resize_linear`). The network is exported as two graphs
(:mod:`.export_graphs`): ``template`` runs once per object and ``search`` with every frame,
against the template's features, as the MXNet tracker runs it.
"""

from __future__ import annotations

import os
from typing import Any, Iterator, Sequence

import numpy as np

from gluon_hub.runtime import Session, resize_linear

from .geometry import FEATURES, feature_size
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

    graphs = ("template", "search")

    def __init__(self, sessions: dict[str, Session], spec: Any, **loop: Any) -> None:
        template, search = int(spec.input.shape[-1]), int(spec.extra_inputs[0].shape[-1])
        super().__init__(exemplar_size=template, instance_size=search, **loop)
        if not isinstance(sessions, dict) or set(sessions) != set(self.graphs):
            raise TypeError(f"the runner of {spec.qualified_name!r} takes {{graph: Session}} for the graphs "
                            f"{', '.join(self.graphs)}, as gluon_hub.runtime.load builds it")
        self.template_session, self.search_session = sessions["template"], sessions["search"]
        #: the search graph's session: it runs with every frame (``session.provider``)
        self.session = self.search_session
        self.spec = spec
        grid = feature_size(template)
        fits = (self.template_session.takes((3, template, template))
                and len(self.template_session.session.get_outputs()) == 1
                and self.search_session.takes((FEATURES, grid, grid), (3, search, search))
                and len(self.search_session.session.get_outputs()) == 2)
        if not fits:
            raise ValueError(
                f"{str(self.template_session.path)!r} and {str(self.search_session.path)!r} take "
                f"{self.template_session.described_inputs()} and {self.search_session.described_inputs()}, but "
                f"{spec.qualified_name!r} feeds a template crop (1, 3, {template}, {template}), then its features "
                f"(1, {FEATURES}, {grid}, {grid}) with a search crop (1, 3, {search}, {search}): the files were "
                f"exported from another model or for other crop sizes; export them again with "
                f"gluon_hub.export({spec.name!r}, FILE, format=\"onnx\")"
            )

    def network_input(self, patch: np.ndarray, out_size: int) -> np.ndarray:
        """``patch`` resized with OpenCV's bilinear arithmetic: a (1, 3, out, out) float32 array."""
        resized = resize_linear(patch, out_size, out_size)
        return np.ascontiguousarray(resized.transpose(2, 0, 1)[None], dtype=np.float32)

    def template(self, crop: np.ndarray) -> np.ndarray:
        """The template's backbone features, computed once per object."""
        (features,) = self.template_session.run(crop)
        return features

    def scores(self, crop: np.ndarray, template: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        cls, loc = self.search_session.run(template, crop)
        return cls, loc

    def track(self, video: str | os.PathLike[str], box: Sequence[float]) -> Iterator[TrackedBox]:
        """The object's box in every frame of the video file, starting from ``box`` (x0, y0, x1,
        y1 pixels) in its first frame, which must lie inside it; decoded with decord."""
        for _, tracked in track_video(self, os.fspath(video), box):
            yield tracked
