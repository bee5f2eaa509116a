"""Pretrained word embeddings by name (GloVe, fastText, word2vec), loaded fast and memory-mapped.

Every source of GluonNLP 0.10's ``gluonnlp.embedding.list_sources()`` is listed in
``embedding_sources.json`` with the file GluonNLP publishes (a ``.npz`` in its
``TokenEmbedding`` serialization) and that file's sha1; :func:`load_embedding` fetches it
through the hub's hash-verified cache. Local GloVe / word2vec / fastText ``.vec`` text files
load with :func:`load_embedding_file`.

Either way the table is converted once into a raw ``float32`` matrix plus a token list under
the cache's ``extracted/word_embeddings/`` folder and memory-mapped from there on, so a
second load costs the token list only and the vectors stay on disk until used. Unknown
tokens follow GluonNLP's ``TokenEmbedding``: the unknown token gets index 0 and a vector
from ``init_unknown_vec`` (zeros by default), or the file's own vector for it. Nothing
here imports mxnet.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import json
import os
import pickle
import shutil
import tempfile
import warnings
import zipfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterator, Sequence

import numpy as np

from gluon_hub import FileRef

from .vocab import Vocab

__all__ = [
    "EmbeddingSource",
    "WordEmbedding",
    "embedding_source",
    "list_embedding_sources",
    "load_embedding",
    "load_embedding_file",
]

#: The folder under the cache's ``extracted/`` that holds converted tables.
CACHE_FOLDER = "word_embeddings"
_FORMAT = 1  # bump when the converted layout changes, so old conversions are redone
_BLOCK = 1 << 22  # bytes of text parsed at a time: bounds the memory of a first load


@dataclass(frozen=True)
class EmbeddingSource:
    """One published embedding file: its source name, family and where and what it is.

    ``family`` is GluonNLP's class name lower-cased (``glove``, ``fasttext``, ``word2vec``)
    and names the folder on the mirror; ``sha1`` is the published file's hash.
    """

    name: str
    family: str
    filename: str
    sha1: str

    def file_ref(self) -> FileRef:
        """The ``FileRef`` the hub's cache fetches (from ``GLUON_HUB_MIRRORS`` in order)."""
        path = f"gluon/embeddings/{self.family}/{self.filename}"
        return FileRef(hash=f"sha1:{self.sha1}", filename=path, urls=(_table()["_mirror"] + path,))


@functools.lru_cache(maxsize=1)
def _table() -> dict[str, Any]:
    text = resources.files(__package__).joinpath("embedding_sources.json").read_text("utf-8")
    return json.loads(text)


def list_embedding_sources(family: str | None = None) -> list[str]:
    """Names of the published embeddings, of one family (``"glove"``, ``"fasttext"``,
    ``"word2vec"``) when given.

    Examples
    --------
    >>> list_embedding_sources("word2vec")
    ['GoogleNews-vectors-negative300', 'freebase-vectors-skipgram1000', 'freebase-vectors-skipgram1000-en']
    """
    sources = _table()["sources"]
    families = sorted({entry["family"] for entry in sources.values()})
    if family is not None and family.lower() not in families:
        raise KeyError(f"no embedding family {family!r}; families: {', '.join(families)}")
    return sorted(n for n, e in sources.items() if family is None or e["family"] == family.lower())


def embedding_source(name: str) -> EmbeddingSource:
    """The published file of source ``name`` (e.g. ``"glove.6B.50d"``, ``"wiki.en"``).

    Examples
    --------
    >>> embedding_source("glove.6B.50d").file_ref().filename
    'gluon/embeddings/glove/glove.6B.50d.npz'
    """
    sources = _table()["sources"]
    if name not in sources:
        close = difflib.get_close_matches(name, sources, n=5, cutoff=0.6)
        hint = (
            f"; did you mean {', '.join(repr(c) for c in close)}?"
            if close
            else "; list_embedding_sources() lists all"
        )
        raise KeyError(f"no published word embedding named {name!r}{hint}")
    entry = sources[name]
    return EmbeddingSource(name, entry["family"], entry["file"], entry["sha1"])


InitUnknown = Callable[[tuple[int, ...]], Any]


class WordEmbedding:
    """A token -> vector table: ``idx_to_token[i]`` has the vector ``idx_to_vec[i]``.

    ``idx_to_vec`` may be a read-only-on-disk memory map (copy-on-write), so that a table of
    millions of words costs memory only for the rows read. With an ``unknown_token`` it sits
    at index 0 and every other token not in the table looks up its vector; without one such
    lookups raise ``KeyError``. ``lower_fallback`` looks a token up lower-cased before
    giving up on it (useful with the lower-cased GloVe 6B tables).

    Raises
    ------
    ValueError : the number of tokens and of vectors differ (both are named).
    """

    def __init__(
        self,
        idx_to_token: Sequence[str],
        idx_to_vec: np.ndarray,
        unknown_token: str | None = None,
        lower_fallback: bool = False,
    ) -> None:
        if idx_to_vec.ndim != 2:
            raise ValueError(f"idx_to_vec must be 2-D (tokens, dim), got shape {idx_to_vec.shape}")
        if len(idx_to_token) != idx_to_vec.shape[0]:
            raise ValueError(
                f"the table has {len(idx_to_token)} tokens but {idx_to_vec.shape[0]} vectors; "
                "they must be equal, row i being the vector of token i"
            )
        self.idx_to_token = list(idx_to_token)
        self.idx_to_vec = idx_to_vec
        self.token_to_idx = {t: i for i, t in enumerate(self.idx_to_token)}
        if len(self.token_to_idx) != len(self.idx_to_token):
            raise ValueError("idx_to_token lists a token twice")
        if unknown_token is not None and self.token_to_idx.get(unknown_token) != 0:
            raise ValueError(f"the unknown token {unknown_token!r} must be the first token")
        self.unknown_token = unknown_token
        self.lower_fallback = lower_fallback

    @property
    def dim(self) -> int:
        """The length of each vector."""
        return int(self.idx_to_vec.shape[1])

    def __len__(self) -> int:
        return len(self.idx_to_token)

    def __contains__(self, token: object) -> bool:
        return token in self.token_to_idx

    def __repr__(self) -> str:
        return f"WordEmbedding({len(self)} tokens, dim {self.dim}, unknown_token={self.unknown_token!r})"

    def index(self, token: str) -> int:
        """The row of ``token``: its own, its lower-cased one (``lower_fallback``), or the
        unknown token's."""
        idx = self.token_to_idx.get(token)
        if idx is None and self.lower_fallback:
            idx = self.token_to_idx.get(token.lower())
        if idx is None:
            if self.unknown_token is None:
                raise KeyError(
                    f"token {token!r} is not in the embedding and it has no unknown token "
                    "(load it with unknown_token='<unk>' to map such tokens to one vector)"
                )
            return 0
        return idx

    def __getitem__(self, tokens: str | Sequence[str]) -> np.ndarray:
        """The vector of a token (1-D) or the vectors of a list of tokens (2-D), as a copy."""
        if isinstance(tokens, str):
            return np.array(self.idx_to_vec[self.index(tokens)])
        return np.asarray(self.idx_to_vec[[self.index(t) for t in tokens]]).reshape(-1, self.dim)

    def matrix(self, tokens: Vocab | Sequence[str]) -> np.ndarray:
        """A ``(len(tokens), dim)`` matrix aligned with a :class:`Vocab` (``idx_to_token``
        order), ready for ``gluon.nn.Embedding.weight.set_data``.

        Tokens not in the table, the vocabulary's own unknown token included, get the
        unknown vector, as GluonNLP's ``Vocab.set_embedding`` does.
        """
        if isinstance(tokens, Vocab):
            unknown, tokens = tokens.unknown_token, tokens.idx_to_token
        elif isinstance(tokens, str) or not isinstance(tokens, Sequence):
            raise TypeError(f"tokens must be a Vocab or a sequence of tokens, got {type(tokens).__name__}")
        else:
            unknown = None
        rows = [0 if t == unknown and self.unknown_token is not None else self.index(t) for t in tokens]
        return np.asarray(self.idx_to_vec[rows], dtype=np.float32).reshape(len(rows), self.dim)


# -- loading ------------------------------------------------------------------------------


def load_embedding(
    source: str | EmbeddingSource,
    unknown_token: str | None = "<unk>",
    init_unknown_vec: InitUnknown | None = np.zeros,
    lower_fallback: bool = False,
    root: str | os.PathLike[str] | None = None,
) -> WordEmbedding:
    """A published embedding by name, fetched (sha1-verified) through the hub's cache.

    Parameters
    ----------
    source : a name of :func:`list_embedding_sources` (``"glove.6B.50d"``, ``"wiki.en"``,
        ``"GoogleNews-vectors-negative300"`` ...), or an :class:`EmbeddingSource` for a file
        of your own on a mirror.
    unknown_token : the token at index 0 that unknown tokens map to; ``None`` for none.
    init_unknown_vec : ``f(shape) -> array`` giving the unknown vector when the file has
        none (GluonNLP's files carry one, which wins, as in GluonNLP).
    lower_fallback : look tokens up lower-cased when not found as given.
    root : cache directory instead of the default (``GLUON_HUB_HOME``).

    The file is fetched once (``gluon-hub cache`` lists it), converted once into
    ``extracted/word_embeddings/`` and memory-mapped on every later load.
    """
    from gluon_hub import cache

    spec = source if isinstance(source, EmbeddingSource) else embedding_source(source)
    folder = cache.extracted_dir(CACHE_FOLDER, root) / f"{spec.name}-{spec.sha1[:8]}"
    if not _converted(folder):
        path = cache.fetch(spec.file_ref(), root=root)
        _convert(folder, lambda tmp: _convert_npz(path, tmp))
    return _open(folder, unknown_token, init_unknown_vec, lower_fallback)


def load_embedding_file(
    path: str | os.PathLike[str],
    unknown_token: str | None = "<unk>",
    init_unknown_vec: InitUnknown | None = np.zeros,
    lower_fallback: bool = False,
    root: str | os.PathLike[str] | None = None,
    encoding: str = "utf-8",
) -> WordEmbedding:
    """A GloVe, word2vec (text) or fastText ``.vec`` file, or a GluonNLP ``.npz``.

    Text lines are ``token v1 ... vd`` separated by single spaces; a first line of two
    fields (word2vec's ``count dim`` header) is skipped; a token listed twice keeps its
    first vector; a line whose token does not decode is skipped with a warning. These are
    GluonNLP's ``TokenEmbedding.from_file`` rules, and the vectors equal its ones. Words with
    spaces (GloVe 840B) are read as the fields before the last ``dim`` numbers.

    The parsed table is kept in the cache (keyed by the file's path, size and modification
    time), so loading the same file again only memory-maps it. Arguments as
    :func:`load_embedding`.

    Raises
    ------
    FileNotFoundError : ``path`` is not a file.
    ValueError : a malformed line (the message gives ``file:line``), or no vectors at all.
    """
    from gluon_hub import cache

    path = Path(path).expanduser().resolve()
    if not path.is_file():
        raise FileNotFoundError(f"word embedding file {str(path)!r} does not exist")
    stat = path.stat()
    key = hashlib.sha1(f"{path}\0{stat.st_size}\0{stat.st_mtime_ns}\0{encoding}".encode()).hexdigest()
    folder = cache.extracted_dir(CACHE_FOLDER, root) / f"{path.name}-{key[:16]}"
    if not _converted(folder):
        if path.suffix == ".npz":
            _convert(folder, lambda tmp: _convert_npz(path, tmp))
        else:
            _convert(folder, lambda tmp: _convert_text(path, tmp, encoding))
    return _open(folder, unknown_token, init_unknown_vec, lower_fallback)


# -- the converted layout -----------------------------------------------------------------
# vectors.f32: raw float32 rows, C order. tokens.json: one entry per row, null for a row
# reserved for the unknown vector. meta.json: shape, the reserved row, and whether that row
# holds a vector from the file (GluonNLP's .npz files carry their unknown vector).


def _converted(folder: Path) -> bool:
    try:
        meta = json.loads((folder / "meta.json").read_text("utf-8"))
    except (OSError, ValueError):
        return False
    return meta.get("format") == _FORMAT


def _convert(folder: Path, write: Callable[[Path], None]) -> None:
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
            if not _converted(folder):  # another process won the race with a good copy
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _write_meta(tmp: Path, tokens: list[str | None], dim: int, slot: int | None, loaded: bool) -> None:
    (tmp / "tokens.json").write_text(json.dumps(tokens, ensure_ascii=False), encoding="utf-8")
    meta = {"format": _FORMAT, "rows": len(tokens), "dim": dim, "unknown_row": slot,
            "unknown_loaded": loaded}
    (tmp / "meta.json").write_text(json.dumps(meta), encoding="utf-8")


def _open(
    folder: Path, unknown_token: str | None, init: InitUnknown | None, lower_fallback: bool
) -> WordEmbedding:
    meta = json.loads((folder / "meta.json").read_text("utf-8"))
    tokens: list[str | None] = json.loads((folder / "tokens.json").read_text("utf-8"))
    rows, dim, slot = meta["rows"], meta["dim"], meta["unknown_row"]
    # Copy-on-write: setting the unknown row touches one page of memory, never the file.
    vecs: np.ndarray = np.memmap(folder / "vectors.f32", np.float32, "c", shape=(rows, dim))
    loaded = meta["unknown_loaded"]
    if unknown_token is None:
        if slot is not None:  # GluonNLP drops the file's unknown row
            vecs = vecs[1:] if slot == 0 else np.delete(vecs, slot, axis=0)
            del tokens[slot]
        return WordEmbedding(tokens, vecs, None, lower_fallback)  # type: ignore[arg-type]
    if slot is None:  # a table without an unknown row: prepend one (copies the table)
        vecs = np.concatenate([np.zeros((1, dim), np.float32), vecs])
        tokens.insert(0, None)
        slot, loaded = 0, False
    elif slot != 0:
        vecs = np.concatenate([vecs[slot : slot + 1], np.delete(vecs, slot, axis=0)])
        tokens.insert(0, tokens.pop(slot))
        slot = 0
    if unknown_token in tokens[1:]:
        # The file has a vector for the unknown token itself: it becomes row 0, as in GluonNLP.
        at = tokens.index(unknown_token, 1)
        vecs = np.concatenate([vecs[at : at + 1], np.delete(vecs[1:], at - 1, axis=0)])
        del tokens[at]
    elif not loaded:
        if init is None:
            raise ValueError(
                f"the table has no vector for the unknown token {unknown_token!r} and "
                "init_unknown_vec is None: give one of them"
            )
        vecs[0] = np.asarray(init((dim,)), dtype=np.float32).reshape(dim)
    tokens[0] = unknown_token
    return WordEmbedding(tokens, vecs, unknown_token, lower_fallback)  # type: ignore[arg-type]


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


def _convert_npz(path: Path, tmp: Path) -> None:
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
        if block and not self._fast(block):
            self._careful(first, block.split(b"\n")[:-1])

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

    def _fast(self, block: bytes) -> bool:
        """Convert a block of plain lines in a few passes; False (nothing done) when any
        line needs the careful path (odd spacing, bad bytes, repeated words...)."""
        dim = self.dim or 0
        block = block.replace(b" \n", b"\n")  # fastText's .vec ends lines with a space
        if b"\r" in block or b"\n\n" in block or block.startswith(b"\n"):
            return False
        heads = [line.partition(b" ") for line in block[:-1].split(b"\n")]
        try:
            tokens = b"\n".join([h[0] for h in heads]).decode(self.encoding).split("\n")
        except UnicodeDecodeError:
            return False
        fresh = set(tokens)
        if len(fresh) != len(tokens) or not self.seen.isdisjoint(fresh) or len(tokens) != len(heads):
            return False
        numbers = b"\n".join([h[2] for h in heads]) + b"\n"
        try:
            values = _decimals(numbers, len(heads) * dim, dim)
        except ValueError:
            return False
        if values is None:
            return False
        self.out.write(values.astype(np.float32).tobytes())
        self.seen |= fresh
        self.tokens.extend(tokens)
        return True

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
                warnings.warn(f"{self.path}:{number}: the token does not decode as {self.encoding}; line skipped")
                continue
            if token in self.seen:
                continue  # the first vector wins, as in GluonNLP
            self.seen.add(token)
            self.tokens.append(token)
            numbers.append(rest)
        if numbers:
            self.out.write(_parse_numbers(self.path, first, lines, numbers, dim).tobytes())


def _convert_text(path: Path, tmp: Path, encoding: str) -> None:
    with open(tmp / "vectors.f32", "wb") as out:
        table = _TextTable(path, out, encoding)
        for first, block in _blocks(path):
            table.add_block(first, block)
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
