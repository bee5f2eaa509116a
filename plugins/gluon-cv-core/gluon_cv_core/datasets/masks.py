"""What the semantic-segmentation datasets share: :class:`SegmentationDataset` (an image list, a
label-map list and the table that maps stored label values to class ids) and the readers of
their list files.

Semantic datasets (:class:`~gluon_cv_core.datasets.masks.SegmentationDataset` subclasses)
yield ``(image, label)``: without a transform an ``HWC`` ``uint8`` RGB ``NDArray`` and an
``(H, W)`` ``int32`` ``NDArray`` of class ids with ``-1`` for ignored pixels (GluonCV 0.10's
``testval`` output); with one, ``transform(image, label)`` on a ``PIL.Image`` and an ``int32``
numpy label map (the transforms are in :mod:`gluon_cv_core.segmentation.transforms`). On
well-formed data the items equal GluonCV's (``tests/segmentation/test_segmentation_data.py``
checks each on tiny files in the real formats); items come in sorted file-name order.

Bad data fails with a ``ValueError`` / ``FileNotFoundError`` naming the dataset, the item
index and the file: a label value no class or ignore value maps to, an image and label map
of different sizes, a colour (RGB) label PNG.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
from PIL import Image, UnidentifiedImageError

from gluon_hub.compat import mx

__all__ = ["SegmentationDataset"]

Transform = Callable[[Any, np.ndarray], Any]


_INVALID = -2  # marks stored values that no class or ignore value maps to


def _table(pairs: dict[int, int]) -> np.ndarray:
    """A 256-entry lookup from stored label value to class id (-1 ignored, -2 invalid)."""
    table = np.full(256, _INVALID, dtype=np.int32)
    for stored, class_id in pairs.items():
        table[stored] = class_id
    return table


class SegmentationDataset(mx.gluon.data.Dataset):
    """Image files paired with label files; subclasses say where they are and how labels map.

    Attributes
    ----------
    images, masks : the paths of item ``i`` are ``images[i]`` and ``masks[i]``.
    classes : class names; a label ``c`` is ``classes[c]``.
    pred_offset : what GluonCV adds to a predicted class to get the stored label value.
    """

    #: used in error messages ("<name> item <i> (<file>)")
    name = "segmentation dataset"
    classes: tuple[str, ...] = ()
    pred_offset = 0
    #: stored value -> class id, see :func:`_table`
    _lookup: np.ndarray = _table({})
    #: how the stored values are described in errors
    _valid_values = ""

    def __init__(self, images: Sequence[Path], masks: Sequence[Path], transform: Transform | None = None) -> None:
        if len(images) != len(masks):
            raise ValueError(f"{self.name}: {len(images)} images but {len(masks)} label files")
        self.images, self.masks = list(images), list(masks)
        self._transform = transform

    @property
    def num_class(self) -> int:
        return len(self.classes)

    def __len__(self) -> int:
        return len(self.images)

    def where(self, index: int, path: Path | None = None) -> str:
        """``"<dataset> item <index> (<file>)"``, how errors name a sample."""
        return f"{self.name} item {index} ({path if path is not None else self.masks[index]})"

    def read_image(self, index: int) -> Image.Image:
        """Item ``index``'s image as an RGB ``PIL.Image`` (Pillow decodes, as in GluonCV)."""
        path = self.images[index]
        try:
            with Image.open(path) as image:
                return image.convert("RGB")
        except FileNotFoundError:
            raise FileNotFoundError(f"{self.where(index, path)}: the image does not exist") from None
        except (UnidentifiedImageError, OSError) as exc:
            raise ValueError(f"{self.where(index, path)}: cannot decode the image: {exc}") from None

    def _stored(self, index: int) -> np.ndarray:
        """The label file's values as stored (palette indices for PNG masks)."""
        path = self.masks[index]
        try:
            with Image.open(path) as mask:
                if mask.mode not in ("P", "L", "I", "I;16", "1"):
                    raise ValueError(f"{self.where(index)}: the label is a {mask.mode} image; label maps "
                                     "store one class value per pixel (palette or greyscale PNG)")
                return np.array(mask)
        except FileNotFoundError:
            raise FileNotFoundError(f"{self.where(index)}: the label file does not exist") from None
        except UnidentifiedImageError as exc:
            raise ValueError(f"{self.where(index)}: cannot decode the label file: {exc}") from None

    def read_label(self, index: int) -> np.ndarray:
        """Item ``index``'s ``(H, W)`` ``int32`` class ids, ``-1`` where ignored.

        Raises ``ValueError`` naming the item and file for a value no class maps to.
        """
        stored = self._stored(index)
        if stored.ndim != 2:
            raise ValueError(f"{self.where(index)}: the label map has shape {stored.shape}, not (H, W)")
        values = stored.astype(np.int64, copy=False)
        outside = (values < 0) | (values >= len(self._lookup))
        labels = self._lookup[np.where(outside, 0, values)]
        bad = outside | (labels == _INVALID)
        if bad.any():
            found = np.unique(values[bad])
            raise ValueError(f"{self.where(index)}: label values {found[:10].tolist()} are not "
                             f"{self._valid_values}; fix the label file or drop the item from the split")
        return labels

    def __getitem__(self, index: int) -> Any:
        image, label = self.read_image(index), self.read_label(index)
        if image.size != (label.shape[1], label.shape[0]):
            raise ValueError(f"{self.where(index)}: the image {self.images[index]} is {image.size[0]}x"
                             f"{image.size[1]} (WxH) but its label map is {label.shape[1]}x{label.shape[0]}")
        if self._transform is not None:
            return self._transform(image, label)
        return mx.nd.array(np.asarray(image), dtype=np.uint8), mx.nd.array(label, dtype=np.int32)


def _listed(listing: Path, where: str) -> list[str]:
    if not listing.is_file():
        raise FileNotFoundError(f"{where}: split file {listing} does not exist")
    return [line.strip().split()[0] for line in listing.read_text().splitlines() if line.strip()]


def _pairs(names: Sequence[str], images: Path, masks: Path, mask_suffix: str, where: str) -> tuple[list[Path], list[Path]]:
    image_paths = [images / f"{name}.jpg" for name in names]
    mask_paths = [masks / f"{name}{mask_suffix}" for name in names]
    for i, (image, mask) in enumerate(zip(image_paths, mask_paths)):
        for path in (image, mask):
            if not path.is_file():
                raise FileNotFoundError(f"{where} item {i} ({path}): the file does not exist")
    return image_paths, mask_paths
