"""PASCAL VOC: detection (VOC 2007/2012 XML annotations) and semantic segmentation (VOC 2012
and SBD, the augmented VOC: ids 0-20 kept, VOC's 255 border -> -1).

Every detection dataset yields ``(image, label)``: an ``HWC`` ``uint8`` RGB ``NDArray`` and a
float ``numpy`` array with one row per object, ``[xmin, ymin, xmax, ymax, class_id, ...]`` in
pixels, the layout GluonCV 0.10's detection datasets give and its transforms and metrics
take. The readers are written here rather than taken from GluonCV (a test-only reference)
so that bad annotations fail with a message naming the file and object instead of an
``AssertionError`` or a silently dropped box; on well-formed data they return what
GluonCV's readers return (checked in ``tests/detection/test_detection_datasets.py``).

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
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from gluon_hub.compat import mx

from ..common.images import read_image
from ..detection.classes import VOC_CLASSES
from ..segmentation.classes import VOC_CLASSES as VOC_SEGMENTATION_CLASSES
from ..segmentation.metrics import IGNORE_LABEL
from .archives import _fetched
from .masks import SegmentationDataset, _listed, _pairs, _table

__all__ = ["VOCAugSegmentation", "VOCDetection", "VOCSegmentation", "voc", "voc_aug_segmentation", "voc_segmentation"]

Transform = Callable[[Any, np.ndarray], Any]


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


class VOCSegmentation(SegmentationDataset):
    """PASCAL VOC 2012 segmentation, ``VOC2012/{JPEGImages, SegmentationClass,
    ImageSets/Segmentation/<split>.txt}`` under ``root`` or ``root/VOCdevkit``.

    ``split`` names the image-set file: ``"train"``, ``"val"`` or ``"trainval"``. GluonCV's
    ``split="train"`` reads ``trainval.txt``: pass ``"trainval"`` to train as it does.
    """

    name = "VOC segmentation"
    classes = VOC_SEGMENTATION_CLASSES
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
    classes = VOC_SEGMENTATION_CLASSES
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
