"""The vocabularies and tokenizer files gluon-nlp-core registers (the hub's ``vocabularies``):
every vocabulary GluonNLP 0.10 published (``text/pretrained_vocabs.json``: token lists and
KoBERT's SentencePiece model) and GPT-2's byte-level BPE merges (``text/bpe_ranks.json``).

Imports only the hub's specs and the stdlib (listing must stay cheap). The tables are read
as JSON here, and :mod:`gluon_nlp_core.text.pretrained` and :mod:`gluon_nlp_core.text.bpe`
build their ``FileRef`` with the same functions, so a file has one reference whichever way
it is fetched. Each entry's token count and the models that use it come from the weight
variants of ``_model_data.json``. The loaders (``text.pretrained``) are imported on first load.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any

from gluon_hub import FileRef, VocabularySpec

MIRROR = "https://apache-mxnet.s3-accelerate.dualstack.amazonaws.com/"

_LOADERS = "gluon_nlp_core.text.pretrained"
#: family -> (loader, what the file is).
_FAMILIES = {
    "token-list": (f"{_LOADERS}:vocab_from_spec", "GluonNLP token list (Vocab JSON)"),
    "sentencepiece": (f"{_LOADERS}:sentencepiece_from_spec", "SentencePiece model"),
    "bpe-merges": (f"{_LOADERS}:bpe_from_spec", "GPT-2 byte-level BPE merges"),
}
#: The token lists whose tokens GPT-2's merges make (GPT-2's and RoBERTa's, text/bpe.py).
_BPE_VOCABS = ("openai_webtext", "openwebtext_ccnews_stories_books_cased")


def _read(*parts: str) -> Any:
    """A JSON file of the package (``joinpath`` one part at a time: Python 3.10's takes one)."""
    path = resources.files("gluon_nlp_core")
    for part in parts:
        path = path.joinpath(part)
    return json.loads(path.read_text("utf-8"))


@functools.lru_cache(maxsize=1)
def vocab_tables() -> dict[str, Any]:
    """``pretrained_vocabs.json``: sha1 by name, token lists and SentencePiece models apart."""
    return _read("text", "pretrained_vocabs.json")


def vocab_ref(name: str, sha1: str, sentencepiece: bool) -> FileRef:
    """A published vocabulary: the ``.vocab`` JSON (or ``.spiece`` model) in its zip."""
    stem = f"{name}-{sha1[:8]}"
    filename = f"gluon/dataset/vocab/{stem}.zip"
    return FileRef(hash=f"sha1:{sha1}", filename=filename, urls=(MIRROR + filename,),
                   extract=stem + (".spiece" if sentencepiece else ".vocab"))


def bpe_ranks_name() -> str:
    """The entry name of GPT-2's merges (the one key of ``bpe_ranks.json``)."""
    [name] = (k for k in _bpe_table() if not k.startswith("_"))
    return name


def bpe_ranks_ref() -> FileRef:
    """GPT-2's merges file inside its zip, with the zip's own hash."""
    entry = _bpe_table()[bpe_ranks_name()]
    return FileRef(hash=f"sha1:{entry['sha1']}", filename=entry["archive"], urls=(MIRROR + entry["archive"],),
                   extract=entry["extract"], archive_hash=f"sha1:{entry['archive_sha1']}")


@functools.lru_cache(maxsize=1)
def _bpe_table() -> dict[str, Any]:
    return _read("text", "bpe_ranks.json")


def _uses() -> dict[str, tuple[list[str], int | None]]:
    """Vocabulary name -> (the models whose weights use it, its token count)."""
    uses: dict[str, tuple[list[str], int | None]] = {}
    for model, entry in _read("_model_data.json")["models"].items():
        for variant in entry["weights"]:
            if "vocab" in variant:
                models, size = uses.setdefault(variant["vocab"], ([], variant.get("vocab_size")))
                if model not in models:
                    models.append(model)
    return uses


def _spec(name: str, family: str, ref: FileRef, models: list[str], tokens: int | None) -> VocabularySpec:
    factory, what = _FAMILIES[family]
    count = f", {tokens} tokens" if tokens else ""
    used = f"; used by {', '.join(models)}" if models else ""
    return VocabularySpec(name=name, factory=factory, description=f"{what}{count}{used}", family=family,
                          tokens=tokens, files=(ref,), tags=(family, *models))


@functools.lru_cache(maxsize=1)
def vocabulary_specs() -> tuple[VocabularySpec, ...]:
    """One spec per published vocabulary, and one for GPT-2's BPE merges."""
    tables, uses = vocab_tables(), _uses()
    specs = []
    for family, table in (("token-list", tables["vocabs"]), ("sentencepiece", tables["sentencepiece"])):
        for name, sha1 in sorted(table.items()):
            models, tokens = uses.get(name, ([], None))
            specs.append(_spec(name, family, vocab_ref(name, sha1, family == "sentencepiece"), models, tokens))
    bpe_models = [m for name in _BPE_VOCABS for m in uses.get(name, ([], None))[0]]
    specs.append(_spec(bpe_ranks_name(), "bpe-merges", bpe_ranks_ref(), bpe_models, None))
    return tuple(specs)
