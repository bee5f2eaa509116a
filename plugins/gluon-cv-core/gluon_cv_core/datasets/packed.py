"""GluonCV's packed detection files: ``.lst`` lists of images and RecordIO (``.rec``/``.idx``).

Every detection dataset yields ``(image, label)``: an ``HWC`` ``uint8`` RGB ``NDArray`` and a
float ``numpy`` array with one row per object, ``[xmin, ymin, xmax, ymax, class_id, ...]`` in
pixels, the layout GluonCV 0.10's detection datasets give and its transforms and metrics
take. The readers are written here rather than taken from GluonCV (a test-only reference)
so that bad annotations fail with a message naming the file and object instead of an
``AssertionError`` or a silently dropped box; on well-formed data they return what
GluonCV's readers return (checked in ``tests/detection/test_detection_datasets.py``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from gluon_hub.compat import mx

__all__ = ["LstDetection", "RecordFileDetection", "parse_packed_label"]


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
