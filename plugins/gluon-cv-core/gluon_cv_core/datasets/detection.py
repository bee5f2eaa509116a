"""Object-detection datasets: PASCAL VOC, COCO 2017, and GluonCV's ``.lst`` / RecordIO files.

Every dataset yields ``(image, label)``: an ``HWC`` ``uint8`` RGB ``NDArray`` and a float
``numpy`` array with one row per object, ``[xmin, ymin, xmax, ymax, class_id, ...]`` in
pixels, the layout GluonCV 0.10's detection datasets give and its transforms and metrics
take. The readers are written here rather than taken from GluonCV (a test-only reference)
so that bad annotations fail with a message naming the file and object instead of an
``AssertionError`` or a silently dropped box; on well-formed data they return what
GluonCV's ``VOCDetection``, ``COCODetection``, ``LstDetection`` and
``RecordFileDetection`` return (checked in ``tests/detection/test_detection_datasets.py``).

COCO annotations are read with the standard library's ``json`` (one pass, errors that name
the annotation); ``pycocotools`` is used only for the ``coco`` object that COCO evaluation
needs.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import tarfile
import warnings
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from gluon_hub.compat import mx

from ..common.images import read_image
from ..detection.classes import COCO_CLASSES, VOC_CLASSES

__all__ = [
    "COCODetection",
    "LstDetection",
    "RecordFileDetection",
    "VOCDetection",
    "coco",
    "extracted_archive",
    "parse_packed_label",
    "voc",
]

Transform = Callable[[Any, np.ndarray], Any]


def extracted_archive(archive: str | os.PathLike[str], into: str | os.PathLike[str]) -> Path:
    """``into``, holding the members of a ``.tar`` / ``.tar.gz`` / ``.zip``, extracted once.

    Several archives may share ``into`` (VOC's trainval and test tars both fill
    ``VOCdevkit/VOC2007``). A marker written after the last member says an archive is
    complete, so an interrupted extraction is redone instead of trusted.
    """
    archive, target = Path(archive), Path(into)
    marker = target / f".{archive.name}.complete"
    if marker.is_file():
        return target
    target.mkdir(parents=True, exist_ok=True)
    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as bundle:
            bundle.extractall(target)
    elif tarfile.is_tarfile(archive):
        with tarfile.open(archive) as bundle:
            if hasattr(tarfile, "data_filter"):  # refuses absolute paths and links out of the target
                bundle.extractall(target, filter="data")
            else:  # Python < 3.10.12 / 3.11.4
                bundle.extractall(target)
    else:
        raise ValueError(f"{archive} is neither a tar nor a zip archive")
    marker.touch()
    return target


def _fetched(dataset: str, wanted: Iterable[int], cache_root: str | os.PathLike[str] | None) -> Path:
    """One folder holding the extracted archives (by index in the spec) of a registered dataset.

    It is the cache's ``extracted/<dataset>``: ``gluon-hub cache ls`` shows it and ``cache
    purge`` removes it; hash verification covers the archives, not this folder.
    """
    from gluon_hub.cache import extracted_dir
    from gluon_hub.data.files import dataset_file

    from .specs import dataset_specs

    files = next(spec.files for spec in dataset_specs() if spec.name == dataset)
    target = extracted_dir(dataset, cache_root)
    for i in wanted:
        extracted_archive(dataset_file(files[i], cache_root=cache_root), target)
    return target


def _text(node: ET.Element, path: str, where: str) -> str:
    found = node.find(path)
    if found is None or found.text is None or not found.text.strip():
        raise ValueError(f"{where}: missing <{path}>")
    return found.text.strip()


def _number(node: ET.Element, path: str, where: str) -> float:
    text = _text(node, path, where)
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"{where}: <{path}> is {text!r}, not a number") from None


class VOCDetection(mx.gluon.data.Dataset):
    """PASCAL VOC detection in the devkit layout, ``VOC<year>/{Annotations,ImageSets/Main,JPEGImages}``.

    Labels are ``(N, 6)`` float arrays ``[xmin, ymin, xmax, ymax, class_id, difficult]``
    with the devkit's 1-based pixel corners moved to 0-based, as GluonCV gives them;
    *difficult* objects are kept (the VOC metric ignores them), and an image without
    objects has a ``(0, 6)`` label.

    Parameters
    ----------
    root : the folder holding ``VOC2007/`` and ``VOC2012/`` (or ``VOCdevkit/VOC2007`` ...,
        as the archives extract), read as it is.
    splits : ``(year, image set)`` pairs, e.g. ``((2007, "trainval"), (2012, "trainval"))``;
        a year may also be a folder name under ``root`` (a custom VOC-style dataset).
    transform : called as ``transform(image, label)`` for each item.
    classes : class names in label order (default: the 20 VOC classes). An object of
        another class is an error: drop it from the XML or add it here.
    preload_label : parse every XML at construction (errors surface at once).

    Raises
    ------
    ValueError
        A malformed XML file, an unknown class name, or a box outside its image, with
        the file and the object's index in it.
    """

    def __init__(self, root: str | os.PathLike[str],
                 splits: Sequence[tuple[int | str, str]] = ((2007, "trainval"), (2012, "trainval")),
                 transform: Transform | None = None, classes: Sequence[str] = VOC_CLASSES,
                 preload_label: bool = True) -> None:
        self.root = Path(root).expanduser()
        self.classes = tuple(classes)
        self.index_map = {name: i for i, name in enumerate(self.classes)}
        self._transform = transform
        self.items: list[tuple[Path, str]] = []
        for year, image_set in splits:
            folder = self._year_folder(year)
            listing = folder / "ImageSets" / "Main" / f"{image_set}.txt"
            if not listing.is_file():
                raise FileNotFoundError(f"VOC image set {listing} does not exist")
            ids = [line.split()[0] for line in listing.read_text().splitlines() if line.strip()]
            self.items.extend((folder, image_id) for image_id in ids)
        self._labels = [self._parse(i) for i in range(len(self.items))] if preload_label else None

    def _year_folder(self, year: int | str) -> Path:
        name = f"VOC{year}" if isinstance(year, int) else str(year)
        for folder in (self.root / name, self.root / "VOCdevkit" / name):
            if folder.is_dir():
                return folder
        raise FileNotFoundError(f"no {name} folder under {self.root} (nor under {self.root / 'VOCdevkit'})")

    def annotation_path(self, index: int) -> Path:
        folder, image_id = self.items[index]
        return folder / "Annotations" / f"{image_id}.xml"

    def image_path(self, index: int) -> Path:
        folder, image_id = self.items[index]
        return folder / "JPEGImages" / f"{image_id}.jpg"

    def _parse(self, index: int) -> np.ndarray:
        path = self.annotation_path(index)
        try:
            tree = ET.parse(path).getroot()
        except ET.ParseError as exc:
            raise ValueError(f"malformed VOC annotation {path}: {exc}") from None
        except FileNotFoundError:
            raise FileNotFoundError(f"VOC annotation {path} does not exist") from None
        width, height = _number(tree, "size/width", str(path)), _number(tree, "size/height", str(path))
        rows = []
        for k, obj in enumerate(tree.iter("object")):
            where = f"{path}, object {k}"
            name = _text(obj, "name", where).lower()
            if name not in self.index_map:
                raise ValueError(f"{where}: unknown class {name!r}; known classes are {', '.join(self.classes)}")
            flag = obj.find("difficult")
            try:
                difficult = int(flag.text) if flag is not None and flag.text else 0
            except ValueError:
                difficult = 0  # GluonCV reads an unparsable flag as not difficult
            box = [_number(obj, f"bndbox/{c}", where) - 1 for c in ("xmin", "ymin", "xmax", "ymax")]
            xmin, ymin, xmax, ymax = box
            if not (0 <= xmin < xmax <= width and 0 <= ymin < ymax <= height):
                raise ValueError(
                    f"{where}: box {[v + 1 for v in box]} (1-based) is empty or outside the "
                    f"{width:g}x{height:g} image; fix or remove the object"
                )
            rows.append([xmin, ymin, xmax, ymax, self.index_map[name], difficult])
        return np.array(rows, dtype=np.float64).reshape(-1, 6)

    def label(self, index: int) -> np.ndarray:
        """The label of item ``index`` (a copy)."""
        return (self._labels[index] if self._labels is not None else self._parse(index)).copy()

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: int) -> Any:
        image, label = read_image(self.image_path(index)), self.label(index)
        return self._transform(image, label) if self._transform is not None else (image, label)


def voc(root: str | os.PathLike[str] | None = None, segment: str = "2007_test", *,
        transform: Transform | None = None, cache_root: str | os.PathLike[str] | None = None) -> VOCDetection:
    """PASCAL VOC by segment name: ``"2007_trainval"``, ``"2007_test"``, ``"2012_trainval"``,
    or several joined with ``+`` (``"2007_trainval+2012_trainval"``, the usual training set).

    Without ``root``, the published archives the segments need come through the
    hash-verified cache and are extracted once into the cache's ``extracted/voc``.
    """
    splits = []
    for part in segment.split("+"):
        year, _, image_set = part.partition("_")
        known = ("train", "val", "trainval") + (("test",) if year == "2007" else ())
        if year not in ("2007", "2012") or image_set not in known:
            raise ValueError(f"unknown VOC segment {part!r}; use 2007_trainval, 2007_test, 2012_trainval "
                             "(or train/val), joined with '+'")
        splits.append((int(year), image_set))
    if root is None:
        # archive order in datasets.json: 2007 trainval, 2007 test, 2012 trainval
        wanted = sorted({(1 if s == "test" else 0) if y == 2007 else 2 for y, s in splits})
        root = _fetched("voc", wanted, cache_root)
    return VOCDetection(root, splits, transform=transform)


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


def parse_packed_label(raw: Sequence[float] | np.ndarray, width: float | None = None,
                       height: float | None = None, where: str = "label") -> np.ndarray:
    """A detection label in the ``.lst`` / RecordIO packing, as ``(N, label_width)`` rows.

    The packing is ``[header_len, label_width, <header_len - 2 more header values>,
    then per object: class_id, xmin, ymin, xmax, ymax, <extras>]`` (MXNet's
    ``ImageDetIter`` layout); rows come back as ``[xmin, ymin, xmax, ymax, class_id,
    <extras>]``. With ``width`` and ``height``, corners normalised to [0, 1] are scaled to
    pixels.
    """
    label = np.asarray(raw).ravel()
    if label.dtype.kind != "f":
        label = label.astype(np.float64)  # RecordIO headers stay float32, as GluonCV returns them
    if label.size < 2:
        raise ValueError(f"{where}: a packed detection label needs at least header_len and label_width")
    header, per_object = int(label[0]), int(label[1])
    if header < 2 or per_object < 5:
        raise ValueError(f"{where}: header_len {header} must be >= 2 and label_width {per_object} >= 5")
    body = label[header:]
    if body.size == 0 or body.size % per_object:
        raise ValueError(f"{where}: {body.size} values after the {header}-value header are not whole "
                         f"objects of {per_object} values")
    rows = body.reshape(-1, per_object)
    out = np.concatenate([rows[:, 1:5], rows[:, :1], rows[:, 5:]], axis=1)
    if width is not None and height is not None:
        out[:, (0, 2)] *= width
        out[:, (1, 3)] *= height
    return out


def _scale(normalized: bool, width: int, height: int) -> tuple[int | None, int | None]:
    """The sizes normalised corners are scaled by; none for corners already in pixels."""
    return (width, height) if normalized else (None, None)


class LstDetection(mx.gluon.data.Dataset):
    """Images listed in a ``.lst`` file, ``index<TAB>packed label...<TAB>relative path`` per line.

    Parameters
    ----------
    filename : the ``.lst`` file (see :func:`parse_packed_label` for the label packing).
    root : the folder the image paths are relative to.
    flag : 1 for colour images, 0 for grey.
    coord_normalized : corners are fractions of the image size (scaled to pixels here).
    """

    def __init__(self, filename: str | os.PathLike[str], root: str | os.PathLike[str] = "", flag: int = 1,
                 coord_normalized: bool = True) -> None:
        self._flag, self._normalized = flag, coord_normalized
        self.items: list[Path] = []
        self._labels: list[np.ndarray] = []
        path = Path(filename).expanduser()
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if not line.strip():
                continue
            fields = line.strip().split("\t")
            where = f"{path}, line {number}"
            if len(fields) < 4:
                raise ValueError(f"{where}: expected index, label values and image path separated by tabs")
            try:
                values = np.array(fields[1:-1], dtype=np.float64)
            except ValueError:
                raise ValueError(f"{where}: label values {fields[1:-1]} are not all numbers") from None
            parse_packed_label(values, where=where)  # check the packing now, not mid-epoch
            self.items.append(Path(root).expanduser() / fields[-1])
            self._labels.append(values)

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: int) -> tuple[Any, np.ndarray]:
        path = os.fspath(self.items[index])
        if not os.path.isfile(path):
            raise FileNotFoundError(f"image {path!r} (item {index}) does not exist")
        image = mx.image.imread(path, self._flag)
        height, width = image.shape[:2]
        return image, parse_packed_label(self._labels[index], *_scale(self._normalized, width, height),
                                         where=f"item {index} ({path})")


class RecordFileDetection(mx.gluon.data.Dataset):
    """Images and packed labels from a RecordIO ``.rec`` file with its ``.idx`` beside it.

    The records are those MXNet's ``im2rec.py --pack-label`` writes: an ``IRHeader`` whose
    label is the packed detection label (:func:`parse_packed_label`), then the encoded image.
    """

    def __init__(self, filename: str | os.PathLike[str], coord_normalized: bool = True) -> None:
        path = Path(filename).expanduser()
        if not path.is_file() or not path.with_suffix(".idx").is_file():
            raise FileNotFoundError(f"RecordIO detection needs {path} and {path.with_suffix('.idx')}")
        self.filename, self._normalized = path, coord_normalized
        self._records = mx.gluon.data.RecordFileDataset(os.fspath(path))

    def __len__(self) -> int:
        return len(self._records)

    def __getitem__(self, index: int) -> tuple[Any, np.ndarray]:
        header, payload = mx.recordio.unpack(self._records[index])
        image = mx.image.imdecode(payload, 1)
        height, width = image.shape[:2]
        return image, parse_packed_label(header.label, *_scale(self._normalized, width, height),
                                         where=f"{self.filename}, record {index}")
