"""COCO 2017: detection, semantic segmentation (instance masks painted onto the 21 VOC classes,
first instance wins, other categories left as background, images with fewer than
``min_pixels`` labelled pixels dropped) and instances for Mask R-CNN.

Every detection dataset yields ``(image, label)``: an ``HWC`` ``uint8`` RGB ``NDArray`` and a
float ``numpy`` array with one row per object, ``[xmin, ymin, xmax, ymax, class_id, ...]`` in
pixels, the layout GluonCV 0.10's detection datasets give and its transforms and metrics
take. The readers are written here rather than taken from GluonCV (a test-only reference)
so that bad annotations fail with a message naming the file and object instead of an
``AssertionError`` or a silently dropped box; on well-formed data they return what
GluonCV's readers return (checked in ``tests/detection/test_detection_datasets.py``).

COCO annotations are read with the standard library's ``json`` (one pass, errors that name
the annotation); ``pycocotools`` is used only for the ``coco`` object that COCO evaluation
needs, and to decode RLE masks.

:class:`COCOInstance` yields what Mask R-CNN trains on, as GluonCV's ``COCOInstance``:
``(image, label, segm)`` with ``label`` ``(N, 5)`` ``float32`` ``[x1, y1, x2, y2, class]``
and ``segm`` each object's polygons (``(K, 2)`` ``float32`` arrays), or, with
``segm_format="mask"``, ``(N, H, W)`` ``uint8`` masks decoded by ``pycocotools`` (which also
reads RLE objects). An empty instance mask is an error naming the annotation.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import warnings
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from gluon_hub.compat import mx

from ..common.images import read_image
from ..detection.classes import COCO_CLASSES
from ..segmentation.classes import VOC_CLASSES as VOC_SEGMENTATION_CLASSES
from .archives import _fetched
from .masks import SegmentationDataset, _table

__all__ = ["COCODetection", "COCOInstance", "COCOSegmentation", "annotation_mask", "coco", "coco_instance", "coco_segmentation"]

Transform = Callable[[Any, np.ndarray], Any]


class COCODetection(mx.gluon.data.Dataset):
    """COCO detection from ``root/annotations/<split>.json`` and the image folders.

    GluonCV's conventions: ``[x, y, w, h]`` boxes become corners ``[x, y, x + w - 1,
    y + h - 1]`` clipped to the image; objects smaller than ``min_object_area`` (by their
    ``area`` field), marked ``ignore``, or without area are dropped; category ids map to
    ``0 .. len(classes) - 1`` in the JSON's category order (``json_id_to_contiguous``).
    Labels are ``(N, 5)`` float arrays.

    Parameters
    ----------
    root : the folder holding ``annotations/`` and the image folders (``val2017/`` ...).
    splits : annotation file names without ``.json``, e.g. ``"instances_val2017"``.
    transform : called as ``transform(image, label)`` for each item.
    min_object_area : objects with a smaller ``area`` are dropped.
    skip_empty : leave out images with no object left, with one warning saying how many
        (GluonCV's training behaviour); otherwise such images get the label
        ``[[-1, -1, -1, -1, -1]]`` as in GluonCV.
    use_crowd : keep ``iscrowd`` boxes. The default drops them, as GluonCV's Faster R-CNN
        training script asks (its class keeps them unless told).
    classes : category names in JSON order; default the 80 COCO classes, ``None`` takes
        them from the JSON (a custom COCO-format dataset).
    """

    def __init__(self, root: str | os.PathLike[str], splits: str | Sequence[str] = ("instances_val2017",),
                 transform: Transform | None = None, min_object_area: float = 0, skip_empty: bool = True,
                 use_crowd: bool = False, classes: Sequence[str] | None = COCO_CLASSES) -> None:
        self.root = Path(root).expanduser()
        self.splits = (splits,) if isinstance(splits, str) else tuple(splits)
        self._transform = transform
        self.min_object_area, self.skip_empty, self.use_crowd = min_object_area, skip_empty, use_crowd
        self.classes: tuple[str, ...] = tuple(classes) if classes is not None else ()
        self.json_id_to_contiguous: dict[int, int] | None = None
        self.items: list[Path] = []
        self.labels: list[np.ndarray] = []
        self.image_ids: list[int] = []
        self.annotation_files = [self.root / "annotations" / f"{split}.json" for split in self.splits]
        for path in self.annotation_files:
            self._load(path)
        to_contiguous: dict[int, int] = self.json_id_to_contiguous or {}
        self.contiguous_id_to_json = {v: k for k, v in to_contiguous.items()}
        self._coco: Any = None

    def _load(self, path: Path) -> None:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise FileNotFoundError(f"COCO annotation file {path} does not exist") from None
        except json.JSONDecodeError as exc:
            raise ValueError(f"malformed COCO annotation file {path}: {exc}") from None
        missing = [key for key in ("images", "annotations", "categories") if key not in data]
        if missing:
            raise ValueError(f"{path} is not a COCO detection file: it lacks {', '.join(missing)}")
        names = [c["name"] for c in data["categories"]]
        if not self.classes:
            self.classes = tuple(names)
        if tuple(names) != self.classes:
            raise ValueError(f"{path}: categories {names[:5]}... are not the expected classes "
                             f"{list(self.classes[:5])}... in that order; pass classes=None to take them from the file")
        mapping = {c["id"]: i for i, c in enumerate(data["categories"])}
        if self.json_id_to_contiguous is None:
            self.json_id_to_contiguous = mapping
        elif mapping != self.json_id_to_contiguous:
            raise ValueError(f"{path}: category ids differ from those of {self.annotation_files[0]}")
        images = {entry["id"]: entry for entry in data["images"]}
        objects: dict[int, list[dict[str, Any]]] = {key: [] for key in images}
        for ann in data["annotations"]:
            if ann.get("image_id") not in objects:
                raise ValueError(f"{path}: annotation {ann.get('id')} refers to unknown image {ann.get('image_id')}")
            if ann.get("category_id") not in mapping:
                raise ValueError(f"{path}: annotation {ann.get('id')} has unknown category {ann.get('category_id')}")
            objects[ann["image_id"]].append(ann)
        empty = []
        for image_id in sorted(images):
            entry = images[image_id]
            image_path = self._image_path(entry, path)
            if not image_path.is_file():
                raise FileNotFoundError(f"image {image_path} of {path} (id {image_id}) does not exist")
            label = self._label(objects[image_id], entry, mapping, path)
            if not len(label):
                if self.skip_empty:
                    empty.append(image_path.name)
                    continue
                label = np.full((1, 5), -1.0)
            self.items.append(image_path)
            self.labels.append(label)
            self.image_ids.append(image_id)
        if empty:
            warnings.warn(f"{path}: skipped {len(empty)} image(s) without objects ({', '.join(empty[:3])}"
                          f"{', ...' if len(empty) > 3 else ''}); pass skip_empty=False to keep them",
                          stacklevel=3)

    def _image_path(self, entry: dict[str, Any], annotations: Path) -> Path:
        """``root/<folder>/<file>``: the folder from ``coco_url`` as GluonCV does, else from the split."""
        if entry.get("coco_url"):
            folder, name = entry["coco_url"].split("/")[-2:]
            return self.root / folder / name
        return self.root / annotations.stem.split("_", 1)[-1] / entry["file_name"]

    def _label(self, anns: list[dict[str, Any]], entry: dict[str, Any], mapping: dict[int, int],
               path: Path) -> np.ndarray:
        width, height = entry["width"], entry["height"]
        rows = []
        for ann in anns:
            if ann.get("area", 0) < self.min_object_area or ann.get("ignore", 0) == 1:
                continue
            if not self.use_crowd and ann.get("iscrowd", 0):
                continue
            bbox = ann.get("bbox")
            if not isinstance(bbox, list) or len(bbox) != 4:
                raise ValueError(f"{path}: annotation {ann.get('id')} has bbox {bbox!r}, not [x, y, w, h]")
            x, y, w, h = (float(v) for v in bbox)
            xmin, ymin = min(max(x, 0.0), width - 1.0), min(max(y, 0.0), height - 1.0)
            xmax = min(max(x + max(w - 1.0, 0.0), 0.0), width - 1.0)
            ymax = min(max(y + max(h - 1.0, 0.0), 0.0), height - 1.0)
            if ann.get("area", 0) > 0 and xmax > xmin and ymax > ymin:
                rows.append([xmin, ymin, xmax, ymax, mapping[ann["category_id"]]])
        return np.array(rows, dtype=np.float64).reshape(-1, 5)

    @property
    def coco(self) -> Any:
        """The ``pycocotools.coco.COCO`` of the (single) annotation file, for evaluation."""
        if len(self.annotation_files) != 1:
            raise ValueError("COCO evaluation takes one annotation file; this dataset has "
                             f"{len(self.annotation_files)}")
        if self._coco is None:
            from pycocotools.coco import COCO

            with contextlib.redirect_stdout(io.StringIO()):  # pycocotools prints progress
                self._coco = COCO(str(self.annotation_files[0]))
        return self._coco

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: int) -> Any:
        image, label = read_image(self.items[index]), self.labels[index].copy()
        return self._transform(image, label) if self._transform is not None else (image, label)


def coco(root: str | os.PathLike[str] | None = None, segment: str = "val", *, transform: Transform | None = None,
         cache_root: str | os.PathLike[str] | None = None, **kwargs: Any) -> COCODetection:
    """COCO 2017 detection by segment, ``"train"`` or ``"val"``.

    Without ``root``, the image archive of the segment and the annotation archive come
    through the hash-verified cache and are extracted once into the cache's ``extracted/coco``.
    """
    if segment not in ("train", "val"):
        raise ValueError(f"COCO 2017 detection has segments 'train' and 'val', got {segment!r}")
    if root is None:
        # archive order in datasets.json: train2017, val2017, annotations_trainval2017
        root = _fetched("coco", [0 if segment == "train" else 1, 2], cache_root)
    return COCODetection(root, f"instances_{segment}2017", transform=transform, **kwargs)


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
    classes = VOC_SEGMENTATION_CLASSES
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
