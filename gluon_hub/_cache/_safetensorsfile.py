"""Check that a file is a well-formed safetensors file before anything reads its arrays.

The format (https://huggingface.co/docs/safetensors): ``u64`` little-endian header length
``N``, ``N`` bytes of a UTF-8 JSON object mapping each tensor name to its ``dtype``,
``shape`` and ``data_offsets`` (``[begin, end)`` into the data that follows), plus an
optional ``__metadata__`` object of strings. This reads the header only (standard library,
no safetensors, no numpy), so the cache can refuse a damaged or hostile file as cheaply as
it refuses a bad ``.params`` file, with the same :class:`ParamsFormatError`.
"""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path

from ._errors import ParamsFormatError

#: The first eight bytes of an MXNet NDArray list: ``u64 0x112``.
_PARAMS_HEAD = struct.pack("<Q", 0x112)
#: Bytes per element of each safetensors dtype.
DTYPE_SIZES = {"BOOL": 1, "U8": 1, "I8": 1, "F8_E5M2": 1, "F8_E4M3": 1, "I16": 2, "U16": 2, "F16": 2,
               "BF16": 2, "I32": 4, "U32": 4, "F32": 4, "I64": 8, "U64": 8, "F64": 8}
#: The safetensors library refuses larger headers; so does this check.
MAX_HEADER = 100 << 20


def is_safetensors(path: str | os.PathLike[str]) -> bool:
    """Whether the file starts like a safetensors file (a header length, then ``{``)."""
    with open(path, "rb") as stream:
        head = stream.read(9)
    return len(head) == 9 and head[:8] != _PARAMS_HEAD and head[8:9] == b"{"


def check_safetensors_file(path: str | os.PathLike[str]) -> dict[str, tuple[str, tuple[int, ...]]]:
    """Each tensor's ``(dtype, shape)``; :class:`ParamsFormatError` unless ``path`` is well formed.

    Every tensor must lie inside the file, the tensors must cover the data exactly (no gaps,
    no overlaps, nothing after them), and each one's size must be its shape times its dtype's.
    """
    path = Path(path)

    def fail(what: str) -> ParamsFormatError:
        return ParamsFormatError(f"{path} is not a valid safetensors file: {what}; refusing to load it")

    size = path.stat().st_size
    with open(path, "rb") as stream:
        head = stream.read(8)
        if len(head) != 8:
            raise fail(f"it has {size} bytes, fewer than the 8 of the header length")
        (length,) = struct.unpack("<Q", head)
        if length > min(MAX_HEADER, size - 8):
            raise fail(f"the header declares {length} bytes but the file has {size - 8} after the length")
        raw = stream.read(length)
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise fail(f"the header is not UTF-8 JSON ({exc})") from None
    if not isinstance(header, dict):
        raise fail("the header is not a JSON object")
    metadata = header.pop("__metadata__", {})
    if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
        raise fail("__metadata__ must map names to strings")
    data = size - 8 - length
    tensors: dict[str, tuple[str, tuple[int, ...]]] = {}
    spans = []
    for name, entry in header.items():
        where = f"tensor {name!r}"
        if not isinstance(entry, dict) or set(entry) != {"dtype", "shape", "data_offsets"}:
            raise fail(f"{where} must have exactly dtype, shape and data_offsets")
        dtype, shape, offsets = entry["dtype"], entry["shape"], entry["data_offsets"]
        if dtype not in DTYPE_SIZES:
            raise fail(f"{where} has the unknown dtype {dtype!r}")
        if not isinstance(shape, list) or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0
                                                  for d in shape):
            raise fail(f"{where} has the shape {shape!r}, not a list of non-negative ints")
        if (not isinstance(offsets, list) or len(offsets) != 2
                or not all(isinstance(o, int) and not isinstance(o, bool) for o in offsets)
                or not 0 <= offsets[0] <= offsets[1] <= data):
            raise fail(f"{where} has data_offsets {offsets!r} outside the {data} data bytes")
        elements = 1
        for d in shape:
            elements *= d
        if elements * DTYPE_SIZES[dtype] != offsets[1] - offsets[0]:
            raise fail(f"{where} of shape {tuple(shape)} and dtype {dtype} needs "
                       f"{elements * DTYPE_SIZES[dtype]} bytes, its offsets span {offsets[1] - offsets[0]}")
        tensors[name] = (dtype, tuple(shape))
        spans.append((offsets[0], offsets[1], name))
    end = 0
    for begin, stop, name in sorted(spans):
        if begin != end:
            raise fail(f"tensor {name!r} starts at byte {begin} of the data, expected {end} "
                       "(tensors overlap or leave a gap)")
        end = stop
    if end != data:
        raise fail(f"{data - end} bytes after the last tensor")
    return tensors
