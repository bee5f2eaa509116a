"""OTB2015 (Object Tracking Benchmark, Wu et al., TPAMI 2015) in its published layout, and the
one-pass evaluation's success and precision.

The benchmark is user-provided (http://cvlab.hanyang.ac.kr/tracker_benchmark/datasets.html):
``root/<Sequence>/img/0001.jpg ...`` and ``root/<Sequence>/groundtruth_rect.txt``, one box
``x,y,w,h`` per frame (1-based pixel corners, separated by commas, tabs or spaces depending on
the sequence). The two sequences with two targets (Jogging, Skating2) have
``groundtruth_rect.1.txt`` and ``.2.txt`` and are listed as ``Jogging-1`` and ``Jogging-2``.
A few sequences annotate only part of their frames; give their first annotated frame in
``start_frames`` (``{"David": 300}``), otherwise a count mismatch is an error.

Metrics follow the OTB toolkit and pysot (which GluonCV's ``OPEBenchmark`` copies, and against
which :func:`success_curve` and :func:`precision_curve` are tested): a frame succeeds at
threshold ``t`` when its IoU exceeds ``t`` (``t`` = 0, 0.05 ... 1; the success score is the
curve's mean, its area under the curve), and is precise at ``d`` pixels when the boxes' centres
``x + (w - 1) / 2`` are at most ``d`` apart (``d`` = 0 ... 50; the precision score is the value
at 20). For success, frames whose ground truth is empty (width or height not positive) count as
failures; for precision, pysot counts frames whose true centre is not positive as precise.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

__all__ = ["OTB2015", "OTBSequence", "read_groundtruth", "success_curve", "success_score",
           "precision_curve", "precision_score", "overlaps", "SUCCESS_THRESHOLDS", "PRECISION_THRESHOLDS"]

#: IoU thresholds of the success plot
SUCCESS_THRESHOLDS = np.arange(0, 1.05, 0.05)
#: centre-distance thresholds (pixels) of the precision plot
PRECISION_THRESHOLDS = np.arange(0, 51, 1)
_IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp")


@dataclass(frozen=True)
class OTBSequence:
    """One target of one sequence: its frame files in order and its ``(N, 4)`` x, y, w, h boxes."""

    name: str
    frames: tuple[str, ...]
    boxes: np.ndarray

    def __len__(self) -> int:
        return len(self.frames)


def read_groundtruth(path: str | os.PathLike[str]) -> np.ndarray:
    """``(N, 4)`` float64 boxes (x, y, w, h) from an OTB ``groundtruth_rect*.txt``; commas, tabs and
    spaces all separate values, as they do across OTB's files."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"ground-truth file {str(path)!r} does not exist")
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
        if not line.strip():
            continue
        values = [v for v in re.split(r"[,\s]+", line.strip()) if v]
        try:
            row = [float(v) for v in values]
        except ValueError:
            row = []
        if len(row) != 4:
            raise ValueError(f"{str(path)!r} line {number}: expected 4 numbers x, y, w, h, got {line.strip()!r}")
        rows.append(row)
    if not rows:
        raise ValueError(f"ground-truth file {str(path)!r} has no boxes")
    return np.array(rows, dtype=np.float64)


class OTB2015:
    """The sequences under ``root``, in name order; ``dataset[i]`` or ``dataset["Basketball"]``.

    Parameters
    ----------
    root : the folder holding one folder per sequence (each with ``img/`` and ground truth).
    start_frames : 1-based number of the first annotated frame of sequences that annotate only
        their later frames.
    """

    def __init__(self, root: str | os.PathLike[str], start_frames: Mapping[str, int] | None = None) -> None:
        self.root = Path(root)
        if not self.root.is_dir():
            raise FileNotFoundError(
                f"OTB2015 folder {str(self.root)!r} does not exist: download the sequences from "
                "http://cvlab.hanyang.ac.kr/tracker_benchmark/datasets.html and unpack them there "
                "(root/<Sequence>/img/*.jpg and root/<Sequence>/groundtruth_rect.txt)")
        starts = dict(start_frames or {})
        self._sequences: list[OTBSequence] = []
        for folder in sorted(p for p in self.root.iterdir() if p.is_dir()):
            truths = sorted(folder.glob("groundtruth_rect*.txt"))
            if not (folder / "img").is_dir() and not truths:
                continue  # not a sequence (a results folder ...)
            if not (folder / "img").is_dir():
                raise FileNotFoundError(f"sequence {str(folder)!r} has no img/ folder of frames")
            if not truths:
                raise FileNotFoundError(f"sequence {str(folder)!r} has no groundtruth_rect.txt")
            frames = tuple(str(p) for p in sorted((folder / "img").iterdir())
                           if p.suffix.lower() in _IMAGE_SUFFIXES)
            for truth in truths:
                suffix = truth.name[len("groundtruth_rect"):-len(".txt")]  # "" or ".1", ".2"
                name = folder.name + (f"-{suffix[1:]}" if suffix else "")
                boxes = read_groundtruth(truth)
                first = starts.get(name, starts.get(folder.name, 1)) - 1
                chosen = frames[first:]
                if len(chosen) != len(boxes):
                    raise ValueError(
                        f"{str(truth)!r} has {len(boxes)} boxes but {str(folder / 'img')!r} has "
                        f"{len(frames) - first} frames from frame {first + 1}; if the sequence annotates "
                        f"only later frames, pass start_frames={{{name!r}: FIRST_ANNOTATED_FRAME}}")
                self._sequences.append(OTBSequence(name, chosen, boxes))
        if not self._sequences:
            raise FileNotFoundError(f"no OTB sequences under {str(self.root)!r}: expected "
                                    "<Sequence>/img/*.jpg and <Sequence>/groundtruth_rect.txt folders")

    def __len__(self) -> int:
        return len(self._sequences)

    def __getitem__(self, key: int | str) -> OTBSequence:
        if isinstance(key, str):
            for sequence in self._sequences:
                if sequence.name == key:
                    return sequence
            raise KeyError(f"no sequence {key!r} in {str(self.root)!r}; have: {', '.join(self.names)}")
        return self._sequences[key]

    @property
    def names(self) -> list[str]:
        return [s.name for s in self._sequences]


def _pairs(truth: Sequence, predicted: Sequence) -> tuple[np.ndarray, np.ndarray]:
    truth, predicted = np.asarray(truth, dtype=np.float64), np.asarray(predicted, dtype=np.float64)
    if truth.ndim != 2 or truth.shape[1] != 4 or truth.shape != predicted.shape:
        raise ValueError(f"expected two (N, 4) arrays of x, y, w, h boxes, got {truth.shape} and {predicted.shape}")
    return truth, predicted


def overlaps(truth: Sequence, predicted: Sequence) -> np.ndarray:
    """IoU of each frame's x, y, w, h boxes; -1 where the ground truth is empty."""
    truth, predicted = _pairs(truth, predicted)
    ix = np.minimum(truth[:, 0] + truth[:, 2], predicted[:, 0] + predicted[:, 2]) - np.maximum(truth[:, 0], predicted[:, 0])
    iy = np.minimum(truth[:, 1] + truth[:, 3], predicted[:, 1] + predicted[:, 3]) - np.maximum(truth[:, 1], predicted[:, 1])
    inter = np.maximum(ix, 0) * np.maximum(iy, 0)
    union = truth[:, 2] * truth[:, 3] + predicted[:, 2] * predicted[:, 3] - inter
    valid = (truth[:, 2] > 0) & (truth[:, 3] > 0)
    iou = np.full(len(truth), -1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        iou[valid] = np.clip(inter[valid] / union[valid], 0, 1)
    return iou


def success_curve(truth: Sequence, predicted: Sequence) -> np.ndarray:
    """Fraction of frames whose IoU exceeds each of :data:`SUCCESS_THRESHOLDS`."""
    iou = overlaps(truth, predicted)
    return (iou[None, :] > SUCCESS_THRESHOLDS[:, None]).mean(axis=1)


def success_score(truth: Sequence, predicted: Sequence) -> float:
    """Area under the success curve (OTB's "success", GluonCV's and pysot's AUC)."""
    return float(success_curve(truth, predicted).mean())


def precision_curve(truth: Sequence, predicted: Sequence) -> np.ndarray:
    """Fraction of frames whose box centres are within each of :data:`PRECISION_THRESHOLDS` pixels."""
    truth, predicted = _pairs(truth, predicted)
    centre = lambda b: b[:, :2] + (b[:, 2:] - 1) / 2  # noqa: E731 (OTB's pixel-centre convention)
    # pysot's rule: a frame whose true centre is not inside the positive quadrant is not measured
    # and counts as precise (its distance is -1)
    distance = np.full(len(truth), -1.0)
    valid = (centre(truth) > 0).all(axis=1)
    distance[valid] = np.sqrt(((centre(truth) - centre(predicted)) ** 2).sum(axis=1))[valid]
    return (distance[None, :] <= PRECISION_THRESHOLDS[:, None]).mean(axis=1)


def precision_score(truth: Sequence, predicted: Sequence, pixels: int = 20) -> float:
    """Fraction of frames whose centre error is at most ``pixels`` (OTB's precision at 20 px)."""
    return float(precision_curve(truth, predicted)[int(pixels)])
