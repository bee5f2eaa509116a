"""Semantic-segmentation transforms: GluonCV 0.10's training augmentation and evaluation resizing.

Every transform is called as ``transform(image, label)`` with an RGB image (``PIL.Image``,
or an ``HWC`` ``uint8`` ``NDArray`` / numpy array) and a label map of class ids (an ``(H, W)``
integer array, ``-1`` = ignored, as the datasets of :mod:`gluon_cv_core.datasets.masks` give it),
and returns ``(image, label)``: a normalized ``CHW`` ``float32`` ``NDArray`` and an ``int32``
``NDArray``.

- :class:`SegmentationTrainTransform`: random horizontal flip, random rescale of the long side
  to ``[0.5, 2] * base_size``, padding to ``crop_size``, random ``crop_size`` crop, random
  Gaussian blur (GluonCV's ``SegmentationDataset._sync_transform``). It draws from Python's
  ``random`` in GluonCV's order, so ``seed=s`` gives the crops GluonCV gives after
  ``random.seed(s)`` (checked in ``tests/segmentation/test_segmentation_data.py``).
- :class:`SegmentationValTransform`: short side resized to ``crop_size``, centre crop
  (GluonCV's ``_val_sync_transform``), equal to GluonCV's arrays.
- :class:`SegmentationTestTransform`: no resizing (GluonCV's ``testval`` mode, what its
  evaluation script scores).
- :func:`normalize`: ``ToTensor`` then ``Normalize(mean, std)`` as GluonCV's scripts apply.

Images are resized by Pillow (bilinear) and labels by nearest neighbour, as in GluonCV, so
no class id is ever interpolated.
"""

from __future__ import annotations

import multiprocessing
import os
import random
from typing import Any, Sequence

import numpy as np
from PIL import Image, ImageFilter, ImageOps

from gluon_hub.compat import mx

from .metrics import IGNORE_LABEL

__all__ = [
    "MEAN",
    "STD",
    "SegmentationTestTransform",
    "SegmentationTrainTransform",
    "SegmentationValTransform",
    "normalize",
    "to_pil",
]

#: ImageNet channel statistics GluonCV's segmentation scripts normalize with
MEAN: tuple[float, float, float] = (0.485, 0.456, 0.406)
STD: tuple[float, float, float] = (0.229, 0.224, 0.225)


def to_pil(image: Any) -> Image.Image:
    """An RGB ``PIL.Image`` from a ``PIL.Image`` or an ``HWC`` ``uint8`` array / ``NDArray``."""
    if isinstance(image, Image.Image):
        return image if image.mode == "RGB" else image.convert("RGB")
    array = image.asnumpy() if hasattr(image, "asnumpy") else np.asarray(image)
    if array.ndim != 3 or array.shape[2] != 3 or array.dtype != np.uint8:
        raise ValueError(f"expected an HWC uint8 RGB image, got shape {array.shape} and dtype {array.dtype}")
    return Image.fromarray(array)


def _label_array(label: Any) -> np.ndarray:
    array = label.asnumpy() if hasattr(label, "asnumpy") else np.asarray(label)
    if array.ndim != 2 or array.dtype.kind not in "iu":
        raise ValueError(f"expected an (H, W) integer label map, got shape {array.shape} and dtype {array.dtype}")
    return array.astype(np.int32, copy=False)


def _checked(image: Any, label: Any) -> tuple[Image.Image, np.ndarray]:
    picture, target = to_pil(image), _label_array(label)
    if picture.size != (target.shape[1], target.shape[0]):
        raise ValueError(f"image is {picture.size[0]}x{picture.size[1]} (WxH) but its label map is "
                         f"{target.shape[1]}x{target.shape[0]}; they must be the same size")
    return picture, target


def _resize_label(label: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """Nearest-neighbour resize to ``size`` (W, H) through Pillow, which picks GluonCV's pixels."""
    return np.asarray(Image.fromarray(label.astype(np.int32)).resize(size, Image.NEAREST), dtype=np.int32)


def normalize(image: Any, mean: Sequence[float] = MEAN, std: Sequence[float] = STD) -> Any:
    """``HWC`` ``uint8`` RGB -> ``CHW`` ``float32`` NDArray, ``(x / 255 - mean) / std`` per channel."""
    array = np.asarray(to_pil(image), dtype=np.float32) / np.float32(255)
    array = (array - np.asarray(mean, np.float32)) / np.asarray(std, np.float32)
    return mx.nd.array(array.transpose(2, 0, 1), dtype=np.float32)


class _Output:
    """The last step every transform shares: normalized image and ``int32`` label NDArrays."""

    mean: Sequence[float]
    std: Sequence[float]

    def _finish(self, image: Image.Image, label: np.ndarray) -> tuple[Any, Any]:
        return normalize(image, self.mean, self.std), mx.nd.array(label, dtype=np.int32)


class SegmentationTrainTransform(_Output):
    """GluonCV's segmentation training augmentation, seeded.

    Parameters
    ----------
    base_size : the long side is rescaled to a random integer in
        ``[int(0.5 * base_size), int(2 * base_size)]``.
    crop_size : side of the square crop (padded first where the rescaled image is smaller).
    pad_label : the class id padded label pixels get. The default ignores them. GluonCV pads
        the *raw* mask with 0, which is ignored for ADE20K and Cityscapes but *background*
        for VOC, SBD and COCO: pass ``pad_label=0`` there to reproduce its training exactly.
    seed : seeds this transform's ``random.Random``; draws match GluonCV's after
        ``random.seed(seed)``. Each data-loader worker re-seeds from the seed and its name,
        so workers crop differently but repeatably. ``None``: fresh entropy.
    mean, std : normalization of the output image.
    """

    def __init__(self, base_size: int = 520, crop_size: int = 480, pad_label: int = IGNORE_LABEL,
                 seed: int | None = None, mean: Sequence[float] = MEAN, std: Sequence[float] = STD) -> None:
        if base_size < 2 or crop_size < 1:
            raise ValueError(f"base_size must be >= 2 and crop_size >= 1, got {base_size} and {crop_size}")
        self.base_size, self.crop_size, self.pad_label = int(base_size), int(crop_size), int(pad_label)
        self.mean, self.std = tuple(mean), tuple(std)
        self._seed, self._pid = seed, os.getpid()
        self._rng = random.Random(seed)

    @property
    def rng(self) -> random.Random:
        """This process's stream: a data-loader worker holds a copy and re-seeds it (see ``seed``)."""
        if os.getpid() != self._pid:
            self._pid = os.getpid()
            name = multiprocessing.current_process().name
            self._rng = random.Random(None if self._seed is None else f"{self._seed}/{name}")
        return self._rng

    def augment(self, image: Any, label: Any) -> tuple[Image.Image, np.ndarray]:
        """The augmented ``PIL.Image`` and ``int32`` label map, before normalization."""
        img, mask = _checked(image, label)
        rng, crop = self.rng, self.crop_size
        if rng.random() < 0.5:
            img, mask = img.transpose(Image.FLIP_LEFT_RIGHT), mask[:, ::-1]
        long_side = rng.randint(int(self.base_size * 0.5), int(self.base_size * 2.0))
        w, h = img.size
        if h > w:
            oh, ow = long_side, int(1.0 * w * long_side / h + 0.5)
        else:
            ow, oh = long_side, int(1.0 * h * long_side / w + 0.5)
        img, mask = img.resize((ow, oh), Image.BILINEAR), _resize_label(mask, (ow, oh))
        padw, padh = max(crop - ow, 0), max(crop - oh, 0)
        if padw or padh:
            img = ImageOps.expand(img, border=(0, 0, padw, padh), fill=0)
            mask = np.pad(mask, ((0, padh), (0, padw)), constant_values=self.pad_label)
        w, h = img.size
        x1, y1 = rng.randint(0, w - crop), rng.randint(0, h - crop)
        img, mask = img.crop((x1, y1, x1 + crop, y1 + crop)), mask[y1:y1 + crop, x1:x1 + crop]
        if rng.random() < 0.5:  # PSPNet's blur
            img = img.filter(ImageFilter.GaussianBlur(radius=rng.random()))
        return img, np.ascontiguousarray(mask, dtype=np.int32)

    def __call__(self, image: Any, label: Any) -> tuple[Any, Any]:
        return self._finish(*self.augment(image, label))


class SegmentationValTransform(_Output):
    """Short side resized to ``crop_size`` (the long side in proportion, truncated), then a
    centre ``crop_size`` square: GluonCV's validation during training."""

    def __init__(self, crop_size: int = 480, mean: Sequence[float] = MEAN, std: Sequence[float] = STD) -> None:
        if crop_size < 1:
            raise ValueError(f"crop_size must be >= 1, got {crop_size}")
        self.crop_size, self.mean, self.std = int(crop_size), tuple(mean), tuple(std)

    def resize(self, image: Any, label: Any) -> tuple[Image.Image, np.ndarray]:
        """The resized and cropped ``PIL.Image`` and ``int32`` label map, before normalization."""
        img, mask = _checked(image, label)
        side = self.crop_size
        w, h = img.size
        if w > h:
            oh, ow = side, int(1.0 * w * side / h)
        else:
            ow, oh = side, int(1.0 * h * side / w)
        img, mask = img.resize((ow, oh), Image.BILINEAR), _resize_label(mask, (ow, oh))
        # Python's round (half to even) places the crop where GluonCV's does
        x1, y1 = int(round((ow - side) / 2.0)), int(round((oh - side) / 2.0))
        img, mask = img.crop((x1, y1, x1 + side, y1 + side)), mask[y1:y1 + side, x1:x1 + side]
        return img, np.ascontiguousarray(mask)

    def __call__(self, image: Any, label: Any) -> tuple[Any, Any]:
        return self._finish(*self.resize(image, label))


class SegmentationTestTransform(_Output):
    """Normalization only, full size: what GluonCV's ``testval`` evaluation scores."""

    def __init__(self, mean: Sequence[float] = MEAN, std: Sequence[float] = STD) -> None:
        self.mean, self.std = tuple(mean), tuple(std)

    def __call__(self, image: Any, label: Any) -> tuple[Any, Any]:
        return self._finish(*_checked(image, label))
