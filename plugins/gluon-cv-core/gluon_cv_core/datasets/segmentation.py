"""Segmentation datasets: VOC 2012, SBD (VOC augmented), ADE20K, Cityscapes, COCO.

Semantic datasets (:class:`SegmentationDataset` and its subclasses) yield ``(image, label)``:
without a transform an ``HWC`` ``uint8`` RGB ``NDArray`` and an ``(H, W)`` ``int32``
``NDArray`` of class ids with ``-1`` for ignored pixels (GluonCV 0.10's ``testval`` output);
with one, ``transform(image, label)`` on a ``PIL.Image`` and an ``int32`` numpy label map
(the transforms are in :mod:`gluon_cv_core.segmentation.transforms`). Labels are mapped as GluonCV maps
them:

- VOC 2012 and SBD: ids 0-20 kept, VOC's 255 border -> -1.
- ADE20K: stored 0 (unlabelled) -> -1, 1-150 -> 0-149 (so models predict ``id + 1``:
  ``pred_offset`` is 1, as GluonCV's).
- Cityscapes: the 34 ``labelIds`` -> the 19 train ids, every other id -> -1.
- COCO: instance masks painted onto the 21 VOC classes (first instance wins, other categories
  left as background), images with fewer than ``min_pixels`` labelled pixels dropped.

On well-formed data the items equal those of GluonCV's ``VOCSegmentation``,
``VOCAugSegmentation``, ``ADE20KSegmentation``, ``CitySegmentation`` and
``COCOSegmentation`` (``tests/segmentation/test_segmentation_data.py`` checks each on tiny
files in the real formats); items come in sorted file-name (COCO: image-id) order rather than
the file system's. Bad data fails with a ``ValueError`` / ``FileNotFoundError`` naming the
dataset, the item index and the file: a label value no class or ignore value maps to, an
image and label map of different sizes, a colour (RGB) label PNG, an empty instance mask.

:class:`COCOInstance` yields what Mask R-CNN trains on, as GluonCV's ``COCOInstance``:
``(image, label, segm)`` with ``label`` ``(N, 5)`` ``float32`` ``[x1, y1, x2, y2, class]``
and ``segm`` each object's polygons (``(K, 2)`` ``float32`` arrays), or, with
``segm_format="mask"``, ``(N, H, W)`` ``uint8`` masks decoded by ``pycocotools`` (which also
reads RLE objects). COCO JSON is read by :class:`.detection.COCODetection`.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
from PIL import Image, UnidentifiedImageError

from gluon_hub.compat import mx

from ..detection.classes import COCO_CLASSES
from ..segmentation.classes import ADE20K_CLASSES, CITYSCAPES_CLASSES, VOC_CLASSES
from ..segmentation.metrics import IGNORE_LABEL
from .detection import COCODetection, _fetched

__all__ = [
    "ADE20KSegmentation",
    "CITYSCAPES_HELP",
    "COCOInstance",
    "COCOSegmentation",
    "CitySegmentation",
    "SegmentationDataset",
    "VOCAugSegmentation",
    "VOCSegmentation",
    "ade20k",
    "annotation_mask",
    "cityscapes",
    "coco_instance",
    "coco_segmentation",
    "voc_aug_segmentation",
    "voc_segmentation",
]

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


class VOCSegmentation(SegmentationDataset):
    """PASCAL VOC 2012 segmentation, ``VOC2012/{JPEGImages, SegmentationClass,
    ImageSets/Segmentation/<split>.txt}`` under ``root`` or ``root/VOCdevkit``.

    ``split`` names the image-set file: ``"train"``, ``"val"`` or ``"trainval"``. GluonCV's
    ``split="train"`` reads ``trainval.txt``: pass ``"trainval"`` to train as it does.
    """

    name = "VOC segmentation"
    classes = VOC_CLASSES
    _lookup = _table({**{i: i for i in range(21)}, 255: IGNORE_LABEL})
    _valid_values = "classes 0..20 or the border value 255"

    def __init__(self, root: str | os.PathLike[str], split: str = "train", transform: Transform | None = None) -> None:
        base = Path(root).expanduser()
        folder = next((f for f in (base / "VOC2012", base / "VOCdevkit" / "VOC2012") if f.is_dir()), None)
        if folder is None:
            raise FileNotFoundError(f"{self.name}: no VOC2012 folder under {base} (nor under {base / 'VOCdevkit'}); "
                                    "extract VOCtrainval_11-May-2012.tar there")
        names = _listed(folder / "ImageSets" / "Segmentation" / f"{split}.txt", self.name)
        super().__init__(*_pairs(names, folder / "JPEGImages", folder / "SegmentationClass", ".png", self.name),
                         transform=transform)


class VOCAugSegmentation(SegmentationDataset):
    """The SBD masks (Hariharan et al.) that augment VOC, read from the release's ``.mat`` files.

    ``root`` holds ``VOCaug/dataset`` (GluonCV's name) or ``benchmark_RELEASE/dataset`` (as
    ``benchmark.tgz`` extracts): ``img/<id>.jpg``, ``cls/<id>.mat`` (``GTcls.Segmentation``)
    and ``train.txt`` / ``val.txt``. ``split="trainval"`` is ``trainval.txt`` where it exists,
    else train then val (what GluonCV's download script writes and its ``split="train"`` reads).
    """

    name = "SBD (VOC augmented)"
    classes = VOC_CLASSES
    _lookup = _table({**{i: i for i in range(21)}, 255: IGNORE_LABEL})
    _valid_values = "classes 0..20 or the border value 255"

    def __init__(self, root: str | os.PathLike[str], split: str = "trainval",
                 transform: Transform | None = None) -> None:
        base = Path(root).expanduser()
        candidates = (base / "VOCaug" / "dataset", base / "benchmark_RELEASE" / "dataset", base / "dataset")
        folder = next((f for f in candidates if f.is_dir()), None)
        if folder is None:
            raise FileNotFoundError(f"{self.name}: none of {', '.join(map(str, candidates))} exists; "
                                    "extract benchmark.tgz there")
        if split == "trainval" and not (folder / "trainval.txt").is_file():
            names = _listed(folder / "train.txt", self.name) + _listed(folder / "val.txt", self.name)
        else:
            names = _listed(folder / f"{split}.txt", self.name)
        super().__init__(*_pairs(names, folder / "img", folder / "cls", ".mat", self.name), transform=transform)

    def _stored(self, index: int) -> np.ndarray:
        import scipy.io

        path = self.masks[index]
        try:
            mat = scipy.io.loadmat(path, mat_dtype=True, squeeze_me=True, struct_as_record=False)
            stored = np.asarray(mat["GTcls"].Segmentation)
        except (KeyError, AttributeError):
            raise ValueError(f"{self.where(index)}: no GTcls.Segmentation in the .mat file") from None
        except (ValueError, TypeError, OSError) as exc:
            raise ValueError(f"{self.where(index)}: cannot read the .mat file: {exc}") from None
        if stored.dtype.kind == "f" and not np.array_equal(stored, np.round(stored)):
            raise ValueError(f"{self.where(index)}: GTcls.Segmentation holds non-integer values")
        return stored


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


def annotation_mask(segmentation: Any, height: int, width: int, where: str) -> np.ndarray:
    """One COCO object's ``(height, width)`` ``uint8`` mask from polygons or RLE (``pycocotools``).

    Polygons with fewer than three points are dropped (as GluonCV's ``COCOInstance`` drops
    them); an object left with none is an error naming ``where``.
    """
    from pycocotools import mask as coco_mask

    if isinstance(segmentation, list):
        polygons = [p for p in segmentation if isinstance(p, list) and len(p) >= 6 and len(p) % 2 == 0]
        if not polygons:
            raise ValueError(f"{where}: empty segmentation (no polygon with 3 or more points); "
                             "remove the annotation or give it a mask")
        return np.asarray(coco_mask.decode(coco_mask.frPyObjects(polygons, height, width)).max(axis=2), np.uint8)
    if isinstance(segmentation, dict) and "counts" in segmentation and "size" in segmentation:
        if list(segmentation["size"]) != [height, width]:
            raise ValueError(f"{where}: RLE size {segmentation['size']} is not the image's [{height}, {width}]")
        counts = segmentation["counts"]
        rle = (coco_mask.frPyObjects(segmentation, height, width) if isinstance(counts, list)
               else {"size": [height, width], "counts": counts.encode() if isinstance(counts, str) else counts})
        return np.asarray(coco_mask.decode(rle), np.uint8)
    raise ValueError(f"{where}: segmentation is neither a list of polygons nor an RLE dict")


class _COCOIndex(COCODetection):
    """COCODetection's reading and checks, keeping each image's annotations as they are."""

    def __init__(self, root: Path, split: str) -> None:
        self.annotations: dict[int, list[dict[str, Any]]] = {}
        self.entries: dict[int, dict[str, Any]] = {}
        super().__init__(root, split, classes=None, skip_empty=False)

    def _label(self, anns: list[dict[str, Any]], entry: dict[str, Any], mapping: dict[int, int],
               path: Path) -> np.ndarray:
        self.annotations[entry["id"]], self.entries[entry["id"]] = anns, entry
        return np.zeros((1, 5))  # every image is kept here; COCOSegmentation filters by pixels


class COCOSegmentation(SegmentationDataset):
    """COCO 2017 instances painted onto the 21 VOC classes, for pre-training VOC models.

    ``root`` holds ``annotations/instances_<split>2017.json`` and ``<split>2017/``. Images with
    at most ``min_pixels`` non-background pixels are dropped (GluonCV's rule, 1000). Finding
    them decodes every mask once, so the kept image ids are cached in
    ``annotations/instances_<split>2017.segmentation_ids_<min_pixels>.json`` when the folder is
    writable.
    """

    name = "COCO segmentation"
    classes = VOC_CLASSES
    #: COCO category id of each VOC class (0: background), as GluonCV's ``CAT_LIST``
    CATEGORY_IDS: tuple[int, ...] = (0, 5, 2, 16, 9, 44, 6, 3, 17, 62, 21, 67, 18, 19, 4, 1, 64, 20, 63, 7, 72)
    _lookup = _table({i: i for i in range(21)})
    _valid_values = "classes 0..20"

    def __init__(self, root: str | os.PathLike[str], split: str = "train", transform: Transform | None = None,
                 min_pixels: int = 1000) -> None:
        if split not in ("train", "val"):
            raise ValueError(f"{self.name} has splits 'train' and 'val', got {split!r}")
        self._index = _COCOIndex(Path(root).expanduser(), f"instances_{split}2017")
        self._to_voc = {cat: c for c, cat in enumerate(self.CATEGORY_IDS) if c}
        ids = list(self._index.image_ids)
        paths = dict(zip(ids, self._index.items))
        annotations = self._index.annotation_files[0]
        cache = annotations.with_suffix(f".segmentation_ids_{min_pixels}.json")
        stat = annotations.stat()
        source = [stat.st_size, stat.st_mtime_ns]  # a changed annotation file invalidates the cache
        kept = self._cached_ids(cache, source, set(ids))
        if kept is None:
            kept = [i for i in ids if int((self._paint(i, paths[i]) > 0).sum()) > min_pixels]
            with contextlib.suppress(OSError):
                cache.write_text(json.dumps({"source": source, "ids": kept}))
        self.image_ids = kept
        # the label maps are painted from the annotation file, which ``masks`` names
        super().__init__([paths[i] for i in kept], [annotations] * len(kept), transform=transform)

    @staticmethod
    def _cached_ids(cache: Path, source: list[int], known: set[int]) -> list[int] | None:
        try:
            data = json.loads(cache.read_text())
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or data.get("source") != source or not isinstance(data.get("ids"), list):
            return None
        return data["ids"] if set(data["ids"]) <= known else None

    def _paint(self, image_id: int, path: Path) -> np.ndarray:
        entry = self._index.entries[image_id]
        height, width = entry["height"], entry["width"]
        mask = np.zeros((height, width), dtype=np.uint8)
        for ann in self._index.annotations[image_id]:
            c = self._to_voc.get(ann["category_id"])
            if c is None:
                continue
            where = f"{self.name} image {image_id} ({path}), annotation {ann.get('id')}"
            if "segmentation" not in ann:
                raise ValueError(f"{where}: no segmentation")
            mask[(mask == 0) & (annotation_mask(ann["segmentation"], height, width, where) > 0)] = c
        return mask

    def where(self, index: int, path: Path | None = None) -> str:
        return f"{self.name} item {index} ({path or self.images[index]}, image id {self.image_ids[index]})"

    def _stored(self, index: int) -> np.ndarray:
        return self._paint(self.image_ids[index], self.images[index])


class COCOInstance(COCODetection):
    """COCO instance segmentation for Mask R-CNN: ``(image, label, segm)`` per image.

    GluonCV's ``COCOInstance`` rules: crowd and ``ignore`` objects are left out; boxes are
    ``[x, y, x + w, y + h]`` clipped to the image; objects need ``area > min_object_area`` and
    a box of at least 4 square pixels. ``label`` is ``(N, 5)`` ``float32``.

    Parameters
    ----------
    root, splits, transform, skip_empty, classes : as :class:`.COCODetection`; ``transform``
        is called as ``transform(image, label, segm)``.
    min_object_area : objects whose ``area`` is not larger are left out.
    segm_format : ``"polygon"``: each object's polygons, ``(K, 2)`` ``float32`` arrays (what
        GluonCV's Mask R-CNN transforms take; an RLE object is then an error); ``"mask"``:
        ``(N, H, W)`` ``uint8`` masks decoded from polygons or RLE.

    Raises
    ------
    ValueError
        An object with an empty segmentation (or an RLE one in ``"polygon"`` format), naming
        the annotation file, image and annotation ids.
    """

    def __init__(self, root: str | os.PathLike[str], splits: str | Sequence[str] = ("instances_val2017",),
                 transform: Callable[..., Any] | None = None, min_object_area: float = 1, skip_empty: bool = True,
                 segm_format: str = "polygon", classes: Sequence[str] | None = COCO_CLASSES) -> None:
        if segm_format not in ("polygon", "mask"):
            raise ValueError(f"segm_format is 'polygon' or 'mask', got {segm_format!r}")
        self.segm_format = segm_format
        self._objects: dict[int, list[dict[str, Any]]] = {}
        self._sizes: dict[int, tuple[int, int]] = {}
        super().__init__(root, splits, transform=transform, min_object_area=min_object_area,
                         skip_empty=skip_empty, use_crowd=False, classes=classes)
        self.segms = [self._segm(i) for i in range(len(self.items))] if segm_format == "polygon" else None

    def _label(self, anns: list[dict[str, Any]], entry: dict[str, Any], mapping: dict[int, int],
               path: Path) -> np.ndarray:
        width, height = entry["width"], entry["height"]
        rows, kept = [], []
        for ann in anns:
            if ann.get("ignore", 0) == 1 or ann.get("iscrowd", 0) == 1:
                continue
            x, y, w, h = (float(v) for v in ann["bbox"])
            x1, y1 = min(width, max(0.0, x)), min(height, max(0.0, y))
            x2, y2 = min(width, max(0.0, x + max(0.0, w))), min(height, max(0.0, y + max(0.0, h)))
            if ann.get("area", 0) > self.min_object_area and x2 > x1 and y2 > y1 and (x2 - x1) * (y2 - y1) >= 4:
                where = f"{path}, image {entry['id']}, annotation {ann.get('id')}"
                segmentation = ann.get("segmentation")
                if not segmentation:
                    raise ValueError(f"{where}: empty segmentation; remove the annotation or give it a mask")
                if self.segm_format == "polygon" and not isinstance(segmentation, list):
                    raise ValueError(f"{where}: the object's mask is RLE, not polygons; "
                                     "pass segm_format='mask' to decode it")
                rows.append([x1, y1, x2, y2, mapping[ann["category_id"]]])
                kept.append({**ann, "_where": where})
        self._objects[entry["id"]], self._sizes[entry["id"]] = kept, (height, width)
        return np.array(rows, dtype=np.float32).reshape(-1, 5)

    def _segm(self, index: int) -> list[list[np.ndarray]]:
        segms = []
        for ann in self._objects[self.image_ids[index]]:
            polygons = [np.asarray(p, dtype=np.float32).reshape(-1, 2) for p in ann["segmentation"] if len(p) >= 6]
            if not polygons:
                raise ValueError(f"{ann['_where']}: empty segmentation (no polygon with 3 or more points)")
            segms.append(polygons)
        return segms

    def masks(self, index: int) -> np.ndarray:
        """Item ``index``'s objects as ``(N, H, W)`` ``uint8`` masks, in label order."""
        image_id = self.image_ids[index]
        height, width = self._sizes[image_id]
        found = [annotation_mask(a["segmentation"], height, width, a["_where"]) for a in self._objects[image_id]]
        return np.stack(found) if found else np.zeros((0, height, width), np.uint8)

    def __getitem__(self, index: int) -> Any:
        from ..common.images import read_image

        image, label = read_image(self.items[index]), self.labels[index].astype(np.float32)
        segm: Any = self.segms[index] if self.segms is not None else self.masks(index)
        return self._transform(image, label, segm) if self._transform is not None else (image, label, segm)


def voc_segmentation(root: str | os.PathLike[str] | None = None, segment: str = "train", *,
                     transform: Transform | None = None,
                     cache_root: str | os.PathLike[str] | None = None) -> VOCSegmentation:
    """VOC 2012 segmentation by image set (``"train"``, ``"val"``, ``"trainval"``); without
    ``root`` the 2012 devkit tar comes through the cache (shared with the ``voc`` dataset)."""
    if root is None:
        root = _fetched("voc", [2], cache_root)  # archive 2 of "voc": VOCtrainval_11-May-2012.tar
    return VOCSegmentation(root, segment, transform=transform)


def voc_aug_segmentation(root: str | os.PathLike[str] | None = None, segment: str = "trainval", *,
                         transform: Transform | None = None,
                         cache_root: str | os.PathLike[str] | None = None) -> VOCAugSegmentation:
    """SBD by split (``"train"``, ``"val"``, ``"trainval"``); without ``root`` ``benchmark.tgz``
    comes through the cache."""
    if root is None:
        root = _fetched("voc_aug", [0], cache_root)
    return VOCAugSegmentation(root, segment, transform=transform)


def ade20k(root: str | os.PathLike[str] | None = None, segment: str = "train", *, transform: Transform | None = None,
           cache_root: str | os.PathLike[str] | None = None) -> ADE20KSegmentation:
    """ADE20K by split (``"train"``, ``"val"``); without ``root`` the challenge zip comes
    through the cache."""
    if root is None:
        root = _fetched("ade20k", [0], cache_root)
    return ADE20KSegmentation(root, segment, transform=transform)


def cityscapes(root: str | os.PathLike[str] | None = None, segment: str = "train", *,
               transform: Transform | None = None) -> CitySegmentation:
    """Cityscapes from the folder you prepared (see :data:`CITYSCAPES_HELP`)."""
    if root is None:
        raise FileNotFoundError(CITYSCAPES_HELP)
    return CitySegmentation(root, segment, transform=transform)


def coco_segmentation(root: str | os.PathLike[str] | None = None, segment: str = "train", *,
                      transform: Transform | None = None, cache_root: str | os.PathLike[str] | None = None,
                      min_pixels: int = 1000) -> COCOSegmentation:
    """COCO 2017 on the VOC classes by split; without ``root`` the archives come through the
    cache (shared with the ``coco`` dataset)."""
    if segment not in ("train", "val"):
        raise ValueError(f"{COCOSegmentation.name} has segments 'train' and 'val', got {segment!r}")
    if root is None:
        root = _fetched("coco", [0 if segment == "train" else 1, 2], cache_root)
    return COCOSegmentation(root, segment, transform=transform, min_pixels=min_pixels)


def coco_instance(root: str | os.PathLike[str] | None = None, segment: str = "val", *,
                  transform: Callable[..., Any] | None = None, cache_root: str | os.PathLike[str] | None = None,
                  **kwargs: Any) -> COCOInstance:
    """COCO 2017 instances with masks by split; without ``root`` the archives come through the
    cache (shared with the ``coco`` dataset)."""
    if segment not in ("train", "val"):
        raise ValueError(f"COCO 2017 instances have segments 'train' and 'val', got {segment!r}")
    if root is None:
        root = _fetched("coco", [0 if segment == "train" else 1, 2], cache_root)
    return COCOInstance(root, f"instances_{segment}2017", transform=transform, **kwargs)
