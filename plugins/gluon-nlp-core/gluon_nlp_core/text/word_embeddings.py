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
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from gluon_hub import FileRef

from ._hub_fetch import fetch_entry_file
from .embedding_files import convert, convert_npz, convert_text, converted
from .vocab import Vocab

__all__ = [
    "EmbeddingSource",
    "WordEmbedding",
    "embedding_source",
    "list_embedding_sources",
    "load_embedding",
    "load_embedding_file",
    "load_from_spec",
]

#: The folder under the cache's ``extracted/`` that holds converted tables.
CACHE_FOLDER = "word_embeddings"


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
    spec = source if isinstance(source, EmbeddingSource) else embedding_source(source)
    return _load_ref(spec.name, spec.file_ref(), unknown_token, init_unknown_vec, lower_fallback, root)


def load_from_spec(
    spec: Any,
    unknown_token: str | None = "<unk>",
    init_unknown_vec: InitUnknown | None = np.zeros,
    lower_fallback: bool = False,
    root: str | os.PathLike[str] | None = None,
) -> WordEmbedding:
    """The loader of the hub's embedding entries: ``gluon_hub.load_embedding(name)`` calls it
    with the name's :class:`gluon_hub.EmbeddingSpec`, whose one file is a GluonNLP ``.npz``.
    Arguments as :func:`load_embedding`."""
    if len(spec.files) != 1:
        raise ValueError(f"embedding {spec.qualified_name!r} lists {len(spec.files)} files; "
                         "this loader reads one GluonNLP .npz")
    return _load_ref(spec.name, spec.files[0], unknown_token, init_unknown_vec, lower_fallback, root)


def _load_ref(name: str, ref: FileRef, unknown_token: str | None, init: InitUnknown | None,
              lower_fallback: bool, root: str | os.PathLike[str] | None) -> WordEmbedding:
    """Fetch ``ref`` (a ``.npz``), convert it once, and open the conversion.

    Offline without the file, the miss names the hub command that prefetches the embedding
    by name where the hub lists it (the ``python -c`` fetch of the file itself otherwise).
    """
    from gluon_hub import cache

    folder = cache.extracted_dir(CACHE_FOLDER, root) / f"{name}-{ref.digest[:8]}"
    if not converted(folder):
        path = fetch_entry_file("embeddings", name, ref, root)
        convert(folder, lambda tmp: convert_npz(path, tmp))
    return _open(folder, unknown_token, init, lower_fallback)


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
    if not converted(folder):
        if path.suffix == ".npz":
            convert(folder, lambda tmp: convert_npz(path, tmp))
        else:
            convert(folder, lambda tmp: convert_text(path, tmp, encoding))
    return _open(folder, unknown_token, init_unknown_vec, lower_fallback)


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
