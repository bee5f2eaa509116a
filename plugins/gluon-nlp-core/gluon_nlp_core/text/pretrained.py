"""Vocabularies and tokenizer files GluonNLP published for its pre-trained models, fetched
through the cache; the hub lists each as an entry (``gluon-hub list --kind vocabularies``),
which :func:`gluon_hub.load_vocabulary` loads with the ``*_from_spec`` loaders here."""

from __future__ import annotations

import difflib
import os
from typing import Any

from gluon_hub import FileRef

from .._vocabulary_specs import vocab_ref, vocab_tables
from ._hub_fetch import fetch_entry_file
from .bpe import GPT2BPETokenizer
from .vocab import Vocab
from .wrappers import SentencepieceTokenizer

__all__ = ["bpe_from_spec", "list_vocabs", "load_vocab", "sentencepiece_from_spec", "vocab_file",
           "vocab_from_spec"]


def _hashes() -> dict[str, str]:
    return vocab_tables()["vocabs"]


def _sentencepiece_hashes() -> dict[str, str]:
    """Vocabularies GluonNLP publishes as SentencePiece models (``.spiece``), not JSON."""
    return vocab_tables()["sentencepiece"]


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
    hashes = {**_hashes(), **_sentencepiece_hashes()}
    if name not in hashes:
        close = difflib.get_close_matches(name, hashes, n=3)
        known = ", ".join(close or sorted(hashes))
        hint = f"; did you mean {known}?" if close else f"; known: {known}"
        raise KeyError(f"no published vocabulary named {name!r}{hint}")
    return vocab_ref(name, hashes[name], name in _sentencepiece_hashes())


def load_vocab(name: str, root: str | os.PathLike[str] | None = None) -> Vocab:
    """A published vocabulary by name, fetched (hash-verified) through the hub's cache.

    Offline without the file, the error names ``gluon-hub cache prefetch --kind
    vocabularies nlp/NAME``, which fetches it on a connected machine.

    Parameters
    ----------
    name : one of :func:`list_vocabs`, e.g. ``"book_corpus_wiki_en_uncased"`` for the
        uncased English BERT models.
    root : cache directory to use instead of the default (``GLUON_HUB_HOME``).
    """
    if name in _sentencepiece_hashes():
        raise ValueError(f"{name!r} is published as a SentencePiece model, not a token list: "
                         f"gluon_hub.load_vocabulary({name!r}) gives its SentencepieceTokenizer "
                         "(pip install sentencepiece)")
    path = fetch_entry_file("vocabularies", name, vocab_file(name), root)
    return Vocab.from_json(path.read_text(encoding="utf-8"))


def _only_file(spec: Any, root: str | os.PathLike[str] | None) -> str:
    """The fetched file of a one-file entry (the hub's ``load_vocabulary`` names the prefetch
    command when it is missing offline)."""
    from gluon_hub import fetch

    if len(spec.files) != 1:
        raise ValueError(f"vocabulary {spec.qualified_name!r} lists {len(spec.files)} files; "
                         f"the {spec.family} loader reads one")
    return os.fspath(fetch(spec.files[0], root=root))


def vocab_from_spec(spec: Any, root: str | os.PathLike[str] | None = None) -> Vocab:
    """The loader of the hub's ``token-list`` entries: ``gluon_hub.load_vocabulary(name)``
    calls it with the name's :class:`gluon_hub.VocabularySpec` (a GluonNLP Vocab JSON)."""
    with open(_only_file(spec, root), encoding="utf-8") as f:
        return Vocab.from_json(f.read())


def sentencepiece_from_spec(spec: Any, root: str | os.PathLike[str] | None = None, num_best: int = 0,
                            alpha: float = 1.0) -> SentencepieceTokenizer:
    """The loader of the hub's ``sentencepiece`` entries: a :class:`SentencepieceTokenizer`
    (its ``tokens`` are the vocabulary, in id order); ``num_best`` and ``alpha`` as there."""
    return SentencepieceTokenizer(_only_file(spec, root), num_best=num_best, alpha=alpha)


def bpe_from_spec(spec: Any, root: str | os.PathLike[str] | None = None,
                  cache_size: int = 100_000) -> GPT2BPETokenizer:
    """The loader of the hub's ``bpe-merges`` entries: a :class:`GPT2BPETokenizer` on the merges."""
    return GPT2BPETokenizer(_only_file(spec, root), cache_size=cache_size)
