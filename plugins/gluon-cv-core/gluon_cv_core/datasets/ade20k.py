"""ADE20K (SceneParsing) semantic segmentation: stored 0 (unlabelled) -> -1, 1-150 -> 0-149, so
models predict ``id + 1`` (``pred_offset`` is 1, as GluonCV's).

Semantic datasets (:class:`~gluon_cv_core.datasets.masks.SegmentationDataset` subclasses)
yield ``(image, label)``: without a transform an ``HWC`` ``uint8`` RGB ``NDArray`` and an
``(H, W)`` ``int32`` ``NDArray`` of class ids with ``-1`` for ignored pixels (GluonCV 0.10's
``testval`` output); with one, ``transform(image, label)`` on a ``PIL.Image`` and an ``int32``
numpy label map (the transforms are in :mod:`gluon_cv_core.segmentation.transforms`). On
well-formed data the items equal GluonCV's (``tests/segmentation/test_segmentation_data.py``
checks each on tiny files in the real formats); items come in sorted file-name order.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ..segmentation.classes import ADE20K_CLASSES
from ..segmentation.metrics import IGNORE_LABEL
from .archives import _fetched
from .masks import SegmentationDataset, _pairs, _table

__all__ = ["ADE20KSegmentation", "ade20k"]

Transform = Callable[[Any, np.ndarray], Any]


class ADE20KSegmentation(SegmentationDataset):
    """ADE20K (MIT SceneParsing), ``ADEChallengeData2016/{images, annotations}/{training,
    validation}`` under ``root``; ``split`` is ``"train"`` or ``"val"``.

    Stored 0 (unlabelled) is ignored and 1-150 become classes 0-149.
    """

    name = "ADE20K"
    classes = ADE20K_CLASSES
    pred_offset = 1
    _lookup = _table({0: IGNORE_LABEL, **{i: i - 1 for i in range(1, 151)}})
    _valid_values = "0 (unlabelled) or classes 1..150"

    def __init__(self, root: str | os.PathLike[str], split: str = "train", transform: Transform | None = None) -> None:
        if split not in ("train", "val"):
            raise ValueError(f"{self.name} has splits 'train' and 'val', got {split!r}")
        base = Path(root).expanduser()
        folder = base / "ADEChallengeData2016" if (base / "ADEChallengeData2016").is_dir() else base
        part = "training" if split == "train" else "validation"
        images = folder / "images" / part
        if not images.is_dir():
            raise FileNotFoundError(f"{self.name}: {images} does not exist; extract ADEChallengeData2016.zip "
                                    f"into {base}")
        names = sorted(p.stem for p in images.iterdir() if p.suffix == ".jpg")
        if not names:
            raise FileNotFoundError(f"{self.name}: no .jpg images in {images}")
        super().__init__(*_pairs(names, images, folder / "annotations" / part, ".png", self.name),
                         transform=transform)


def ade20k(root: str | os.PathLike[str] | None = None, segment: str = "train", *, transform: Transform | None = None,
           cache_root: str | os.PathLike[str] | None = None) -> ADE20KSegmentation:
    """ADE20K by split (``"train"``, ``"val"``); without ``root`` the challenge zip comes
    through the cache."""
    if root is None:
        root = _fetched("ade20k", [0], cache_root)
    return ADE20KSegmentation(root, segment, transform=transform)
