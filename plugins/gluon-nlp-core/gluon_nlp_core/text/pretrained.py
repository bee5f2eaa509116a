"""Vocabularies GluonNLP published for its pre-trained models, fetched through the cache."""

from __future__ import annotations

import difflib
import functools
import json
import os
from importlib import resources

from gluon_hub import FileRef

from .vocab import Vocab

__all__ = ["list_vocabs", "load_vocab", "vocab_file"]

_MIRROR = "https://apache-mxnet.s3-accelerate.dualstack.amazonaws.com/"


@functools.lru_cache(maxsize=1)
def _hashes() -> dict[str, str]:
    text = resources.files(__package__).joinpath("pretrained_vocabs.json").read_text("utf-8")
    return json.loads(text)["vocabs"]


def list_vocabs() -> list[str]:
    """Names of the published vocabularies, e.g. ``"book_corpus_wiki_en_uncased"``."""
    return sorted(_hashes())


def vocab_file(name: str) -> FileRef:
    """The ``FileRef`` of a published vocabulary: the ``.vocab`` JSON inside its zip.

    Examples
    --------
    >>> vocab_file("book_corpus_wiki_en_uncased").extract
    'book_corpus_wiki_en_uncased-a6607397.vocab'
    """
    hashes = _hashes()
    if name not in hashes:
        close = difflib.get_close_matches(name, hashes, n=3)
        known = ", ".join(close or sorted(hashes))
        hint = f"; did you mean {known}?" if close else f"; known: {known}"
        raise KeyError(f"no published vocabulary named {name!r}{hint}")
    sha1 = hashes[name]
    stem = f"{name}-{sha1[:8]}"
    filename = f"gluon/dataset/vocab/{stem}.zip"
    return FileRef(
        hash=f"sha1:{sha1}", filename=filename, urls=(_MIRROR + filename,), extract=f"{stem}.vocab"
    )


def load_vocab(name: str, root: str | os.PathLike[str] | None = None) -> Vocab:
    """A published vocabulary by name, fetched (hash-verified) through the hub's cache.

    Parameters
    ----------
    name : one of :func:`list_vocabs`, e.g. ``"book_corpus_wiki_en_uncased"`` for the
        uncased English BERT models.
    root : cache directory to use instead of the default (``GLUON_HUB_HOME``).
    """
    from gluon_hub import fetch

    path = fetch(vocab_file(name), root=root)
    with open(path, encoding="utf-8") as f:
        return Vocab.from_json(f.read())
