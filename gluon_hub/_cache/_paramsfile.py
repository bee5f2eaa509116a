"""Check that a file is an MXNet NDArray file before MXNet parses it.

MXNet's loader trusts the sizes a file declares and allocates them up front, so a tiny
crafted file can make it allocate gigabytes; a pickle would run code. This walks the
format's headers with ``struct`` and seeks over the array data, so it costs a few reads
however large the file is, and it accepts nothing but a well-formed NDArray list.

The layout (``src/ndarray/ndarray.cc`` of MXNet), all little-endian:

- list header: ``u64 0x112``, ``u64 reserved``, ``u64 count``, then ``count`` arrays,
  then ``u64 n`` names (0 or ``count``), each ``u64 length`` + UTF-8 bytes;
- array: ``u32 magic``: V2 ``0xF993FAC9`` / V3 ``0xF993FACA`` (then ``i32 storage type``
  and, for sparse storage, the storage shape), V1 ``0xF993FAC8``, or a legacy small
  ``ndim`` with ``u32`` dims; the shape (``i32 ndim`` + ``i64`` dims); an empty shape ends
  the array; else ``i32 dev_type``, ``i32 dev_id``, ``i32 dtype``, for sparse storage the
  aux types and shapes, then the data and aux data bytes.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path
from typing import BinaryIO

from ._errors import ParamsFormatError

LIST_MAGIC = 0x112
V1_MAGIC, V2_MAGIC, V3_MAGIC = 0xF993FAC8, 0xF993FAC9, 0xF993FACA
#: Bytes per element of each mshadow type flag MXNet 1.9 writes.
DTYPE_SIZES = {0: 4, 1: 8, 2: 2, 3: 1, 4: 4, 5: 1, 6: 8, 7: 1, 8: 2, 9: 2, 10: 4, 11: 8, 12: 2}
#: Aux arrays per storage type: dense, row_sparse (indices), csr (indptr, indices).
AUX_COUNT = {0: 0, 1: 1, 2: 2}
MAX_NDIM = 32
MAX_NAME = 1 << 16
_DEV_TYPES = {1, 2, 3, 5}


class _Reader:
    def __init__(self, stream: BinaryIO, size: int, path: Path) -> None:
        self.stream, self.size, self.path = stream, size, path

    def fail(self, what: str, where: bool = True) -> ParamsFormatError:
        at = f" (at byte {self.stream.tell()} of {self.size})" if where else ""
        return ParamsFormatError(
            f"{self.path} is not a valid MXNet NDArray file: {what}{at}; refusing to load it"
        )

    def unpack(self, fmt: str, what: str) -> tuple[int, ...]:
        count = struct.calcsize(fmt)
        data = self.stream.read(count)
        if len(data) != count:
            raise self.fail(f"file ends inside the {what}")
        return struct.unpack(fmt, data)

    def skip(self, nbytes: int, what: str) -> None:
        position = self.stream.tell()
        if nbytes > self.size - position:
            raise self.fail(
                f"{what} declares {nbytes} bytes but only {self.size - position} remain"
            )
        self.stream.seek(position + nbytes)

    def shape(self, legacy_ndim: int | None = None) -> tuple[int, ...] | None:
        """A shape, or None for an unknown (V3 ``-1``) shape."""
        if legacy_ndim is not None:
            return self.unpack(f"<{legacy_ndim}I", "legacy shape")
        (ndim,) = self.unpack("<i", "shape")
        if ndim == -1:
            return None
        if not 0 <= ndim <= MAX_NDIM:
            raise self.fail(f"shape has {ndim} dimensions")
        dims = self.unpack(f"<{ndim}q", "shape")
        if any(d < 0 for d in dims):
            return None
        return dims


def _elements(shape: tuple[int, ...]) -> int:
    count = 1
    for dim in shape:
        count *= dim
    return count


def _array(reader: _Reader) -> None:
    (magic,) = reader.unpack("<I", "array header")
    stype = 0
    storage_shape = None
    if magic in (V2_MAGIC, V3_MAGIC):
        (stype,) = reader.unpack("<i", "storage type")
        if stype not in AUX_COUNT:
            raise reader.fail(f"unknown storage type {stype}")
        if AUX_COUNT[stype]:
            storage_shape = reader.shape()
            if storage_shape is None:
                raise reader.fail("sparse array with unknown storage shape")
        shape = reader.shape()
    elif magic == V1_MAGIC:
        shape = reader.shape()
    elif 0 < magic <= MAX_NDIM:
        shape = reader.shape(legacy_ndim=magic)
    else:
        raise reader.fail(f"unknown array magic 0x{magic:08x}")
    if shape is None or (magic != V3_MAGIC and len(shape) == 0):
        return  # an empty array: MXNet reads nothing more for it
    dev_type, _dev_id, dtype = reader.unpack("<iii", "context and dtype")
    if dev_type not in _DEV_TYPES:
        raise reader.fail(f"unknown device type {dev_type}")
    if dtype not in DTYPE_SIZES:
        raise reader.fail(f"unknown dtype flag {dtype}")
    aux = []
    for _ in range(AUX_COUNT[stype]):
        (aux_dtype,) = reader.unpack("<i", "aux dtype")
        aux_shape = reader.shape()
        if aux_dtype not in DTYPE_SIZES or aux_shape is None:
            raise reader.fail("bad sparse aux header")
        aux.append(_elements(aux_shape) * DTYPE_SIZES[aux_dtype])
    data_shape = storage_shape if storage_shape is not None else shape
    reader.skip(_elements(data_shape) * DTYPE_SIZES[dtype], f"array of shape {shape}")
    for nbytes in aux:
        reader.skip(nbytes, "sparse aux data")


def _sniff(head: bytes) -> str | None:
    """A friendlier name for common non-NDArray files."""
    if head[:1] == b"\x80" and head[1:2] in (b"\x02", b"\x03", b"\x04", b"\x05"):
        return "a Python pickle (which could run code)"
    if head[:4] == b"PK\x03\x04":
        return "a zip archive"
    if head[:6] == b"\x93NUMPY":
        return "a NumPy .npy file"
    if head[:2] == b"\x1f\x8b":
        return "a gzip file"
    return None


def check_params_file(path: str | os.PathLike[str]) -> int:
    """Raise :class:`ParamsFormatError` unless ``path`` is a well-formed NDArray file.

    Returns the number of arrays. Every declared array must fit in the bytes the file
    holds, and nothing may follow the names.
    """
    path = Path(path)
    size = path.stat().st_size
    with open(path, "rb") as stream:
        head = stream.read(8)
        kind = _sniff(head)
        reader = _Reader(stream, size, path)
        if kind is not None:
            raise reader.fail(f"it is {kind}", where=False)
        stream.seek(0)
        magic, _reserved, count = reader.unpack("<QQQ", "list header")
        if magic != LIST_MAGIC:
            raise reader.fail(f"list magic is 0x{magic:x}, expected 0x{LIST_MAGIC:x}")
        if count > size // 8:
            raise reader.fail(f"it declares {count} arrays")
        for _ in range(count):
            _array(reader)
        (names,) = reader.unpack("<Q", "name count")
        if names not in (0, count):
            raise reader.fail(f"{names} names for {count} arrays")
        for _ in range(names):
            (length,) = reader.unpack("<Q", "name length")
            if length > MAX_NAME:
                raise reader.fail(f"a name of {length} bytes")
            reader.skip(length, "name")
        if stream.tell() != size:
            raise reader.fail(f"{size - stream.tell()} trailing bytes after the names")
    return count
