"""The converted form of a word-embedding table on disk, and the readers that write it.

A table is converted once into a folder: ``vectors.f32`` (raw float32 rows, C order),
``tokens.json`` (one entry per row, null for a row reserved for the unknown vector) and
``meta.json`` (shape, the reserved row, and whether that row holds a vector from the file:
GluonNLP's ``.npz`` files carry their unknown vector). :mod:`.word_embeddings` memory-maps it.

The readers are written here rather than taken from GluonNLP or numpy's text loaders: a
``.npz`` is read without unpickling anything but string arrays, and text files are parsed in
blocks of many lines at once, large files by one process per core (faster than GluonNLP's
line-by-line parser: ``bench/bench_embeddings.py``), with GluonNLP's rules for headers,
duplicates and undecodable tokens.
"""

from __future__ import annotations

import collections
import concurrent.futures
import json
import multiprocessing
import os
import pickle
import shutil
import sys
import tempfile
import warnings
import zipfile
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterator

import numpy as np

__all__ = ["convert", "convert_npz", "convert_text", "converted"]

_FORMAT = 1  # bump when the converted layout changes, so old conversions are redone
_BLOCK = 1 << 22  # bytes of text parsed at a time: bounds the memory of a first load
_PARALLEL_FROM = 64 << 20  # text files from this size are parsed by several processes


def converted(folder: Path) -> bool:
    try:
        meta = json.loads((folder / "meta.json").read_text("utf-8"))
    except (OSError, ValueError):
        return False
    return meta.get("format") == _FORMAT


def convert(folder: Path, write: Callable[[Path], None]) -> None:
    """Run ``write`` into a fresh temp folder, then move it into place atomically."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        write(tmp)
        if folder.exists():  # a stale or older-format conversion
            shutil.rmtree(folder, ignore_errors=True)
        try:
            os.replace(tmp, folder)
        except OSError:
            if not converted(folder):  # another process won the race with a good copy
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _write_meta(tmp: Path, tokens: list[str | None], dim: int, slot: int | None, loaded: bool) -> None:
    (tmp / "tokens.json").write_text(json.dumps(tokens, ensure_ascii=False), encoding="utf-8")
    meta = {"format": _FORMAT, "rows": len(tokens), "dim": dim, "unknown_row": slot,
            "unknown_loaded": loaded}
    (tmp / "meta.json").write_text(json.dumps(meta), encoding="utf-8")


# -- GluonNLP .npz files ----------------------------------------------------------------

_RECONSTRUCT = np.zeros(1).__reduce__()[0]
_PICKLE_GLOBALS = {
    ("numpy.core.multiarray", "_reconstruct"): _RECONSTRUCT,
    ("numpy._core.multiarray", "_reconstruct"): _RECONSTRUCT,
    ("numpy", "ndarray"): np.ndarray,
    ("numpy", "dtype"): np.dtype,
}


class _ArrayUnpickler(pickle.Unpickler):
    """Unpickles an object array of strings and refuses every other global, so that a
    file's pickle can build nothing but numpy arrays."""

    def find_class(self, module: str, name: str) -> Any:
        try:
            return _PICKLE_GLOBALS[(module, name)]
        except KeyError:
            raise pickle.UnpicklingError(f"refusing to load {module}.{name} from an embedding file") from None


def _npy_header(f: BinaryIO) -> tuple[tuple[int, ...], bool, np.dtype]:
    version = np.lib.format.read_magic(f)
    if version == (1, 0):
        return np.lib.format.read_array_header_1_0(f)
    return np.lib.format.read_array_header_2_0(f)


def convert_npz(path: Path, tmp: Path) -> None:
    """GluonNLP's ``TokenEmbedding.serialize`` layout: ``idx_to_token`` (object array),
    ``idx_to_vec`` and ``unknown_token`` ('' for none). Vectors are streamed to disk."""
    with zipfile.ZipFile(path) as zf:
        names = set(zf.namelist())
        missing = {"idx_to_token.npy", "idx_to_vec.npy", "unknown_token.npy"} - names
        if missing:
            raise ValueError(f"{path} is not a GluonNLP embedding file: it lacks {sorted(missing)}")
        with zf.open("unknown_token.npy") as f:
            unknown = str(np.lib.format.read_array(f, allow_pickle=False)) or None
        with zf.open("idx_to_token.npy") as f:
            shape, _, dtype = _npy_header(f)
            if dtype.hasobject:
                tokens = _ArrayUnpickler(f).load()
            else:
                tokens = np.lib.format.read_array(zf.open("idx_to_token.npy"), allow_pickle=False)
        tokens = [str(t) for t in np.asarray(tokens).reshape(-1)]
        with zf.open("idx_to_vec.npy") as f, open(tmp / "vectors.f32", "wb") as out:
            shape, fortran, dtype = _npy_header(f)
            if len(shape) != 2 or shape[0] != len(tokens) or fortran:
                raise ValueError(
                    f"{path}: idx_to_vec has shape {shape} for {len(tokens)} tokens; "
                    "expected one C-order row per token"
                )
            row_bytes = shape[1] * dtype.itemsize
            rows_per_block = max(1, _BLOCK // max(row_bytes, 1))
            for start in range(0, shape[0], rows_per_block):
                count = min(rows_per_block, shape[0] - start)
                block = np.frombuffer(f.read(count * row_bytes), dtype=dtype)
                if block.size != count * shape[1]:
                    raise ValueError(f"{path}: idx_to_vec is truncated")
                out.write(block.astype(np.float32).tobytes())
    if len(set(tokens)) != len(tokens):
        raise ValueError(f"{path} lists a token twice")
    slot = tokens.index(unknown) if unknown is not None and unknown in tokens else None
    table: list[str | None] = list(tokens)
    if slot is not None:
        table[slot] = None
    _write_meta(tmp, table, shape[1], slot, slot is not None)


# -- text files -----------------------------------------------------------------------------


def _blocks(path: Path) -> Iterator[tuple[int, bytes]]:
    """(number of the first line, whole lines) in blocks of about ``_BLOCK`` bytes."""
    number, rest = 1, b""
    with open(path, "rb") as f:
        while True:
            data = f.read(_BLOCK)
            if not data:
                break
            cut = data.rfind(b"\n") + 1
            if not cut:
                rest += data
                continue
            block, rest = rest + data[:cut], data[cut:]
            yield number, block
            number += block.count(b"\n")
    if rest:
        yield number, rest + b"\n"


class _TextTable:
    """State of one text file's conversion: the rows written so far and their tokens."""

    def __init__(self, path: Path, out: BinaryIO, encoding: str) -> None:
        self.path, self.out, self.encoding = path, out, encoding
        self.tokens: list[str | None] = [None]  # row 0: the unknown token's slot
        self.seen: set[str] = set()
        self.dim: int | None = None

    def add_block(self, first: int, block: bytes) -> None:
        if self.dim is None:
            first, block = self._first_line(first, block)
        if block:
            self.add_parsed(first, block, _parse_plain_block(block, self.dim or 0, self.encoding))

    def _first_line(self, first: int, block: bytes) -> tuple[int, bytes]:
        """Set ``dim`` from the first line with a vector (skipping word2vec's header)."""
        while block and self.dim is None:
            line, _, block = block.partition(b"\n")
            rest = line.rstrip().partition(b" ")[2]
            fields = rest.count(b" ") + 1 if rest else 0
            if fields >= 1 and not (first == 1 and fields == 1):
                self.dim = fields
                self.out.write(bytes(4 * fields))  # the unknown slot, zeros
                self._careful(first, [line])
            elif line.strip() and first != 1:
                raise ValueError(f"{self.path}:{first}: expected a word and its vector, got {line[:60]!r}")
            first += 1
        return first, block

    def add_parsed(self, first: int, block: bytes, parsed: tuple[list[str], np.ndarray] | None) -> None:
        """Keep a block :func:`_parse_plain_block` parsed, or go through it line by line
        when that could not (``None``) or when a word of it came earlier in the file."""
        if parsed is None or not self.seen.isdisjoint(parsed[0]):
            self._careful(first, block.split(b"\n")[:-1])
            return
        tokens, values = parsed
        self.out.write(values.tobytes())
        self.seen.update(tokens)
        self.tokens.extend(tokens)

    def _careful(self, first: int, lines: list[bytes]) -> None:
        """Line by line, with GluonNLP's rules and errors that name the line."""
        dim = self.dim or 0
        numbers: list[bytes] = []
        for number, line in enumerate(lines, first):
            line = line.rstrip()
            if not line:
                continue
            raw, _, rest = line.partition(b" ")
            if rest.count(b" ") != dim - 1 or not rest:
                raw, rest = _odd_line(self.path, number, line, dim)
            try:
                token = raw.decode(self.encoding)
            except UnicodeDecodeError:
                warnings.warn(f"{self.path}:{number}: the token does not decode as {self.encoding}; line skipped",
                              stacklevel=1)
                continue
            if token in self.seen:
                continue  # the first vector wins, as in GluonNLP
            self.seen.add(token)
            self.tokens.append(token)
            numbers.append(rest)
        if numbers:
            self.out.write(_parse_numbers(self.path, first, lines, numbers, dim).tobytes())


def _parse_plain_block(block: bytes, dim: int, encoding: str) -> tuple[list[str], np.ndarray] | None:
    """The tokens and float32 rows of a block of plain lines, in a few passes over it; None
    when any line needs the careful path (odd spacing, bad bytes, a word twice...)."""
    block = block.replace(b" \n", b"\n")  # fastText's .vec ends lines with a space
    if b"\r" in block or b"\n\n" in block or block.startswith(b"\n"):
        return None
    heads = [line.partition(b" ") for line in block[:-1].split(b"\n")]
    try:
        tokens = b"\n".join([h[0] for h in heads]).decode(encoding).split("\n")
    except UnicodeDecodeError:
        return None
    if len(set(tokens)) != len(tokens) or len(tokens) != len(heads):
        return None
    numbers = b"\n".join([h[2] for h in heads]) + b"\n"
    try:
        values = _decimals(numbers, len(heads) * dim, dim)
    except ValueError:
        return None
    return None if values is None else (tokens, values.astype(np.float32))


def _workers(path: Path) -> int:
    """Processes to parse ``path`` with: one per available core (at most 8) for files of
    ``_PARALLEL_FROM`` bytes or more on Linux, where forked workers start at once (and, unlike
    spawned ones, do not import the caller's script again)."""
    if (not sys.platform.startswith("linux") or path.stat().st_size < _PARALLEL_FROM
            or multiprocessing.current_process().daemon):  # a daemon (a loader's worker) may not fork
        return 1
    return min(8, len(os.sched_getaffinity(0)))


def _parsed_blocks(blocks: Iterator[tuple[int, bytes]], dim: int, encoding: str,
                   workers: int) -> Iterator[tuple[int, bytes, tuple[list[str], np.ndarray] | None]]:
    """``(first line, block, parsed)`` in file order, the parsing spread over ``workers``
    forked processes with a few blocks in flight each (so memory stays bounded)."""
    if workers <= 1:
        for first, block in blocks:
            yield first, block, _parse_plain_block(block, dim, encoding)
        return
    pending: collections.deque = collections.deque()
    context = multiprocessing.get_context("fork")
    with concurrent.futures.ProcessPoolExecutor(workers, mp_context=context) as pool:
        for first, block in blocks:
            pending.append((first, block, pool.submit(_parse_plain_block, block, dim, encoding)))
            if len(pending) >= 2 * workers:
                first, block, future = pending.popleft()
                yield first, block, future.result()
        while pending:
            first, block, future = pending.popleft()
            yield first, block, future.result()


def convert_text(path: Path, tmp: Path, encoding: str) -> None:
    with open(tmp / "vectors.f32", "wb") as out:
        table = _TextTable(path, out, encoding)
        blocks = _blocks(path)
        for first, block in blocks:  # up to the first vector, which sets the width
            table.add_block(first, block)
            if table.dim is not None:
                break
        for first, block, parsed in _parsed_blocks(blocks, table.dim or 0, encoding, _workers(path)):
            table.add_parsed(first, block, parsed)
    if table.dim is None:
        raise ValueError(f"{path} holds no word vectors")
    _write_meta(tmp, table.tokens, table.dim, 0, False)


def _odd_line(path: Path, number: int, line: bytes, dim: int) -> tuple[bytes, bytes]:
    """Token and numbers of a line whose field count is not ``1 + dim``: a word with spaces
    (GloVe 840B has some) when there are more fields; an error naming the line otherwise."""
    fields = line.split(b" ")
    if len(fields) > dim + 1 and all(fields[-dim:]):
        return b" ".join(fields[:-dim]), b" ".join(fields[-dim:])
    raise ValueError(
        f"{path}:{number}: expected a word and {dim} numbers separated by single spaces, "
        f"got {len(fields)} field(s) ({line[:60]!r}...)"
    )


def _parse_numbers(path: Path, first: int, lines: list[bytes], numbers: list[bytes], dim: int) -> np.ndarray:
    """The ``(len(numbers), dim)`` float32 matrix of the lines' numbers.

    Parsed as doubles and rounded to float32, which is what GluonNLP's ``float()`` then
    ``nd.array`` give, bit for bit.
    """
    count = len(numbers) * dim
    try:
        values = _decimals(b"\n".join(numbers) + b"\n", count, dim)
        if values is not None:
            return values.astype(np.float32).reshape(-1, dim)
    except ValueError:
        pass
    for number, line in enumerate(lines, first):  # find the culprit for the message
        for field in line.rstrip().split(b" ")[-dim:]:
            try:
                float(field)
            except ValueError:
                raise ValueError(f"{path}:{number}: {field[:30]!r} is not a number") from None
    raise ValueError(f"{path}:{first}: a vector in lines {first}-{first + len(lines) - 1} is malformed")


_POW10 = 10.0 ** np.arange(23)  # exact doubles up to 1e22


def _laid_out(buf: bytes, a: np.ndarray, ends: np.ndarray, count: int, dim: int) -> bool:
    """``ends`` (the separators) close ``count`` non-empty numbers, ``dim`` to a line."""
    return bool(
        ends.size == count
        and count
        and ends[0] > 0
        and (np.diff(ends) > 1).all()
        and buf.count(b"\n") == count // dim
        and (a[ends[dim - 1 :: dim]] == 10).all()
    )


def _signs_first(a: np.ndarray, minus: np.ndarray) -> bool:
    """Every minus sign starts its number."""
    return bool(((minus == 0) | (a[np.maximum(minus - 1, 0)] < 45)).all())


def _decimals(buf: bytes, count: int, dim: int) -> np.ndarray | None:
    """The numbers of ``buf``, ``dim`` per line (single spaces between, ``\\n`` after each
    line), as float64 equal to ``float()`` of each; None unless there are ``count`` numbers
    laid out so, ValueError when one is not a number.

    Decimals with one dot (all of GloVe's, fastText's and word2vec's text files) take the
    fast path: with the dot removed numpy parses the digits as an exact integer ``M``, and
    for ``M < 2**53`` and ``f <= 22`` fraction digits the one IEEE division ``M / 10**f``
    is the correctly rounded double that ``float()`` (strtod) returns. Anything else goes
    through ``float()`` itself (numpy's own parsers skip junk silently).
    """
    if not buf.translate(None, b"0123456789 \n.-"):
        a = np.frombuffer(buf, np.uint8)
        ends = np.flatnonzero(a < 45)  # spaces and newlines, the only bytes below "-"
        if not _laid_out(buf, a, ends, count, dim):
            return None
        dots = np.flatnonzero(a == 46)
        minus = np.flatnonzero(a == 45)
        if dots.size == count and (minus.size == 0 or _signs_first(a, minus)):
            previous = np.empty_like(ends)
            previous[0], previous[1:] = -1, ends[:-1]
            around = np.append(a, np.uint8(32))
            if (
                ((dots > previous) & (dots < ends)).all()  # one dot in each number
                and (((around[dots - 1] - 48) < 10) | ((around[dots + 1] - 48) < 10)).all()
            ):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", DeprecationWarning)  # a short read is checked
                    mantissa = np.fromstring(buf.replace(b".", b""), dtype=np.int64, sep=" ")
                fraction = ends - dots - 1
                if mantissa.size == count and fraction.max() <= 22 and np.abs(mantissa).max() < 2**53:
                    values = mantissa.astype(np.float64) / _POW10[fraction]
                    zero = np.flatnonzero(mantissa == 0)
                    values[zero[a[previous[zero] + 1] == 45]] = -0.0  # "-0.0" stays negative
                    return values
    else:
        a = np.frombuffer(buf, np.uint8)
        if not _laid_out(buf, a, np.flatnonzero((a == 32) | (a == 10)), count, dim):
            return None
    fields = buf.split()
    if len(fields) != count:
        return None
    return np.array([float(field) for field in fields], dtype=np.float64)
