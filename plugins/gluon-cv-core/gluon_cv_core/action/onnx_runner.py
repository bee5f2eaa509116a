"""The ONNX runner of the video action recognisers: top-k classes of each video, without MXNet.

``gluon_hub.runtime.load(name)`` builds :class:`ActionRecognizer` for the 3D models (I3D,
SlowFast, R(2+1)D, P3D, C3D) and the 2D (TSN) ones; their specs name it as ``runner``. It
follows ``gluon-hub predict``'s MXNet pipeline (:mod:`.predict`) with that module's own numpy
code: the video decoded by decord and sampled as GluonCV's presets sample it, centre-cropped
and normalised (:func:`.predict.read_clip`: one ``(1, 3, T, H, W)`` clip for a 3D model, one
frame a segment for a 2D model), the network in onnxruntime, then the rows' scores averaged
and turned into probabilities (:func:`.predict.top_classes`) with the spec's Kinetics, UCF101,
HMDB51 or Something-Something labels. The clips are the MXNet path's to the bit, so only the
network's float differences separate the answers.
"""

from __future__ import annotations

import os
from typing import Any, Sequence

import numpy as np

from gluon_hub.runtime import Session

from .predict import read_clip, top_classes

__all__ = ["ActionRecognizer"]


class ActionRecognizer:
    """An exported action-recognition network in an onnxruntime :class:`~gluon_hub.runtime.Session`.

    Calling it runs a clip array (as :meth:`to_input` makes it) and returns the ``(rows,
    classes)`` scores; :meth:`classify` takes video files.
    """

    def __init__(self, session: Session, spec: Any) -> None:
        self.session = session
        self.spec = spec
        self.path = session.path
        expected = tuple(int(d) for d in spec.input.shape)
        outputs = session.session.get_outputs()
        if not (session.takes(expected) and len(outputs) == 1 and len(outputs[0].shape) == 2):
            raise ValueError(
                f"{str(self.path)!r} takes {session.described_inputs()}, but {spec.qualified_name!r} feeds (batch, "
                f"{', '.join(map(str, expected))}) in layout {spec.input.layout} and expects one output of "
                f"(batch, classes): the file was exported from another model or for another input size; export "
                f"it again with gluon_hub.export({spec.name!r}, {str(self.path)!r}, format=\"onnx\")"
            )
        #: The batch size fixed in the file, or None where the file leaves it free.
        batch = session.inputs[0].shape[0]
        self.batch: int | None = batch if isinstance(batch, int) else None

    def to_input(self, video: str | os.PathLike[str]) -> np.ndarray:
        """The network input of the video file: ``(1, 3, T, H, W)`` for a 3D model, ``(segments,
        3, H, W)`` for a 2D one, ``float32`` (what the MXNet path feeds its network)."""
        return read_clip(self.spec, video)

    def __call__(self, clip: np.ndarray) -> np.ndarray:
        """The network's ``(rows, classes)`` scores for ``clip`` (a 2D model's segments are rows;
        a file exported with a fixed batch runs them that many at a time)."""
        clip = np.ascontiguousarray(clip, dtype=np.float32)
        if self.batch is None or len(clip) == self.batch:
            return self.session.run(clip)[0]
        if len(clip) % self.batch:
            raise ValueError(f"{str(self.path)!r} was exported for batches of {self.batch}, which do not divide "
                             f"the {len(clip)} rows of a clip; export it with dynamic_batch=True")
        return np.concatenate([self.session.run(clip[start : start + self.batch])[0]
                               for start in range(0, len(clip), self.batch)])

    def classify(self, videos: Sequence[str | os.PathLike[str]], topk: int = 5) -> list[list[tuple[str, float]]]:
        """The ``topk`` ``(label, softmax probability)`` pairs of each video file, best first.

        Labels are the spec's class names, or ``class <i>`` where the model has other classes.
        """
        if topk < 1:
            raise ValueError("topk must be at least 1")
        return [top_classes(self(self.to_input(video)), self.spec, topk) for video in videos]
