"""Cityscapes semantic segmentation: the 34 ``labelIds`` -> the 19 train ids, every other id -> -1.

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

from ..segmentation.classes import CITYSCAPES_CLASSES
from ..segmentation.metrics import IGNORE_LABEL
from .masks import SegmentationDataset, _table

__all__ = ["CITYSCAPES_HELP", "CitySegmentation", "cityscapes"]

Transform = Callable[[Any, np.ndarray], Any]


#: Cityscapes ``labelIds`` (0-33) -> the 19 train ids, as GluonCV's ``CitySegmentation`` maps them
_CITYSCAPES_TRAIN_IDS = {7: 0, 8: 1, 11: 2, 12: 3, 13: 4, 17: 5, 19: 6, 20: 7, 21: 8, 22: 9, 23: 10, 24: 11,
                         25: 12, 26: 13, 27: 14, 28: 15, 31: 16, 32: 17, 33: 18}


CITYSCAPES_HELP = (
    "Cityscapes cannot be downloaded automatically: its licence requires an account. Register at "
    "https://www.cityscapes-dataset.com/, download leftImg8bit_trainvaltest.zip and "
    "gtFine_trainvaltest.zip, and unzip both into one folder so that it holds "
    "leftImg8bit/{train,val}/<city>/<city>_<seq>_<frame>_leftImg8bit.png and "
    "gtFine/{train,val}/<city>/<city>_<seq>_<frame>_gtFine_labelIds.png; pass that folder as root."
)


class CitySegmentation(SegmentationDataset):
    """Cityscapes fine annotations from a folder you prepared (see :data:`CITYSCAPES_HELP`).

    ``split`` is ``"train"``, ``"val"`` or ``"trainval"``; ``labelIds`` become the 19 train ids.
    """

    name = "Cityscapes"
    classes = CITYSCAPES_CLASSES
    _lookup = _table({**{i: IGNORE_LABEL for i in range(34)}, **_CITYSCAPES_TRAIN_IDS})
    _valid_values = "Cityscapes labelIds 0..33"

    def __init__(self, root: str | os.PathLike[str], split: str = "train", transform: Transform | None = None) -> None:
        if split not in ("train", "val", "trainval"):
            raise ValueError(f"{self.name} has splits 'train', 'val' and 'trainval', got {split!r}")
        base = Path(root).expanduser()
        images: list[Path] = []
        masks: list[Path] = []
        for part in ("train", "val") if split == "trainval" else (split,):
            image_root, mask_root = base / "leftImg8bit" / part, base / "gtFine" / part
            for folder in (image_root, mask_root):
                if not folder.is_dir():
                    raise FileNotFoundError(f"{self.name}: {folder} does not exist. {CITYSCAPES_HELP}")
            for image in sorted(image_root.glob("*/*_leftImg8bit.png")):
                images.append(image)
                masks.append(mask_root / image.parent.name / image.name.replace("leftImg8bit", "gtFine_labelIds"))
        if not images:
            raise FileNotFoundError(f"{self.name}: no *_leftImg8bit.png images under {base / 'leftImg8bit'}. "
                                    f"{CITYSCAPES_HELP}")
        for i, mask in enumerate(masks):
            if not mask.is_file():
                raise FileNotFoundError(f"{self.where(i, mask)}: the label file does not exist (unzip "
                                        "gtFine_trainvaltest.zip beside leftImg8bit)")
        super().__init__(images, masks, transform=transform)


def cityscapes(root: str | os.PathLike[str] | None = None, segment: str = "train", *,
               transform: Transform | None = None) -> CitySegmentation:
    """Cityscapes from the folder you prepared (see :data:`CITYSCAPES_HELP`)."""
    if root is None:
        raise FileNotFoundError(CITYSCAPES_HELP)
    return CitySegmentation(root, segment, transform=transform)
