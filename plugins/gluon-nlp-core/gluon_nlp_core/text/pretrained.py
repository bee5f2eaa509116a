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
def _tables() -> dict[str, dict[str, str]]:
    text = resources.files(__package__).joinpath("pretrained_vocabs.json").read_text("utf-8")
    return json.loads(text)


def _hashes() -> dict[str, str]:
    return _tables()["vocabs"]


def _sentencepiece_hashes() -> dict[str, str]:
    """Vocabularies GluonNLP publishes as SentencePiece models (``.spiece``), not JSON."""
    return _tables()["sentencepiece"]


def list_vocabs() -> list[str]:
    """Names of the published token-list vocabularies that :func:`load_vocab` reads, e.g.
    ``"book_corpus_wiki_en_uncased"``; KoBERT's SentencePiece model is not one of them,
    though :func:`vocab_file` gives its file."""
    return sorted(_hashes())


def vocab_file(name: str) -> FileRef:
    """The ``FileRef`` of a published vocabulary: the ``.vocab`` JSON inside its zip, or
    for a SentencePiece vocabulary the ``.spiece`` model.

    Examples
    --------
    >>> vocab_file("book_corpus_wiki_en_uncased").extract
    'book_corpus_wiki_en_uncased-a6607397.vocab'
    >>> vocab_file("kobert_news_wiki_ko_cased").extract
    'kobert_news_wiki_ko_cased-f86b1a83.spiece'
    """
    suffix = ".spiece" if name in _sentencepiece_hashes() else ".vocab"
    hashes = {**_hashes(), **_sentencepiece_hashes()}
    if name not in hashes:
        close = difflib.get_close_matches(name, hashes, n=3)
        known = ", ".join(close or sorted(hashes))
        hint = f"; did you mean {known}?" if close else f"; known: {known}"
        raise KeyError(f"no published vocabulary named {name!r}{hint}")
    sha1 = hashes[name]
    stem = f"{name}-{sha1[:8]}"
    filename = f"gluon/dataset/vocab/{stem}.zip"
    return FileRef(
        hash=f"sha1:{sha1}", filename=filename, urls=(_MIRROR + filename,), extract=stem + suffix
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

    if name in _sentencepiece_hashes():
        raise ValueError(f"{name!r} is published as a SentencePiece model, not a token list: "
                         f"fetch it with gluon_hub.fetch(vocab_file({name!r})) and open it "
                         f"with the sentencepiece library (pip install sentencepiece)")
    path = fetch(vocab_file(name), root=root)
    with open(path, encoding="utf-8") as f:
        return Vocab.from_json(f.read())
