"""GluonNLP's published vocabularies and tokenizer files are hub entries (issue 33, item 3):
every token list, KoBERT's SentencePiece model and GPT-2's BPE merges are listed, searched and
described by name, and ``gluon_hub.load_vocabulary`` gives this plugin's ``Vocab``,
``SentencepieceTokenizer`` or ``GPT2BPETokenizer`` through the family's loader. No published
file can be served here (their sha1 is fixed), so each loader runs on a tiny file generated
here (a zip in the published layout), registered under an entry of its own and served from a
loopback mirror. No MXNet.
"""

from __future__ import annotations

import hashlib
import tarfile
import zipfile
from pathlib import Path

import pytest

import gluon_hub
from gluon_hub import FileRef, VocabularySpec, hookimpl
from gluon_hub.publishing import bundle, import_bundle, serve
from gluon_nlp_core._vocabulary_specs import bpe_ranks_name
from gluon_nlp_core.text import (
    BERT_SPECIAL_TOKENS,
    GPT2BPETokenizer,
    SentencepieceTokenizer,
    Vocab,
    bpe_ranks_file,
    list_vocabs,
    vocab_file,
)

TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "##s"]
MERGES = "#version: 0.2\nl o\nlo w\nĠ low\n"
LOADERS = "gluon_nlp_core.text.pretrained"


def test_every_published_vocabulary_and_the_bpe_merges_are_entries():
    gluon_hub.reset_hub()
    names = gluon_hub.list_vocabularies()
    assert sorted(names) == sorted([*list_vocabs(), "kobert_news_wiki_ko_cased", "openai_webtext_bpe_ranks"])
    spec = gluon_hub.vocabulary_info("book_corpus_wiki_en_uncased")
    assert (spec.family, spec.tokens, spec.plugin) == ("token-list", 30522, "nlp")
    assert spec.files == (vocab_file("book_corpus_wiki_en_uncased"),)
    assert "bert_24_1024_16" in spec.tags
    kobert = gluon_hub.vocabulary_info("kobert_news_wiki_ko_cased")
    assert (kobert.family, kobert.files) == ("sentencepiece", (vocab_file("kobert_news_wiki_ko_cased"),))
    merges = gluon_hub.vocabulary_info(bpe_ranks_name())
    assert (merges.family, merges.files) == ("bpe-merges", (bpe_ranks_file(),))
    found = [r["name"] for r in gluon_hub.search("gpt2_117m", kind="vocabularies")]
    assert found == ["openai_webtext", "openai_webtext_bpe_ranks"]
    with pytest.raises(gluon_hub.UnknownNameError, match="did you mean: book_corpus_wiki_en_uncased"):
        gluon_hub.vocabulary_info("book_corpus_wiki_en_uncase")


def _published_zip(mirror: Path, member: str, data: bytes, archive_hash: bool = False) -> FileRef:
    """``data`` as ``member`` of a zip in GluonNLP's vocabulary folder; the member is hashed
    (and the zip too where GluonNLP publishes its hash, as for the BPE merges)."""
    filename = f"gluon/dataset/vocab/{Path(member).stem}.zip"
    (mirror / filename).parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(mirror / filename, "w") as archive:
        archive.writestr(member, data)
    zipped = (mirror / filename).read_bytes()
    return FileRef(hash="sha1:" + hashlib.sha1(data).hexdigest(), filename=filename, extract=member,
                   archive_hash="sha1:" + hashlib.sha1(zipped).hexdigest() if archive_hash else None)


def _spm_model(folder: Path) -> bytes:
    sentencepiece = pytest.importorskip("sentencepiece")
    corpus = folder / "corpus.txt"
    corpus.write_text("\n".join(f"the cat sat on mat number {i} and the dog ran" for i in range(200)),
                      encoding="utf-8")
    sentencepiece.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(folder / "tiny"), vocab_size=30,
                                             model_type="unigram", minloglevel=2, num_threads=1)
    return (folder / "tiny.model").read_bytes()


class _TinyPlugin:
    GLUON_HUB_API = ">=1.2,<2"

    def __init__(self, refs: dict[str, FileRef]) -> None:
        self.refs = refs

    @hookimpl
    def gluon_hub_vocabularies(self):
        loaders = {"tiny_list": "vocab_from_spec", "tiny_spm": "sentencepiece_from_spec", "tiny_bpe": "bpe_from_spec"}
        return [VocabularySpec(name=name, factory=f"{LOADERS}:{loaders[name]}", files=(ref,))
                for name, ref in self.refs.items()]


def test_each_family_prefetches_loads_offline_and_bundles(hub_env: Path, monkeypatch: pytest.MonkeyPatch):
    pytest.importorskip("regex")
    mirror = hub_env / "mirror"
    vocab = Vocab.from_tokens(TOKENS, **BERT_SPECIAL_TOKENS)
    refs = {"tiny_list": _published_zip(mirror, "tiny_list-0.vocab", vocab.to_json().encode()),
            "tiny_spm": _published_zip(mirror, "tiny_spm-0.spiece", _spm_model(hub_env)),
            "tiny_bpe": _published_zip(mirror, "tiny_bpe-0.json", MERGES.encode(), archive_hash=True)}
    gluon_hub.register_plugin(_TinyPlugin(refs), "tinyvocab")
    monkeypatch.setenv("GLUON_HUB_OFFLINE", "1")
    with pytest.raises(gluon_hub.cache.OfflineMissError,
                       match="run: gluon-hub cache prefetch --kind vocabularies tinyvocab/tiny_bpe ;"):
        gluon_hub.load_vocabulary("tiny_bpe")
    monkeypatch.delenv("GLUON_HUB_OFFLINE")
    with serve(mirror) as server:
        monkeypatch.setenv("GLUON_HUB_MIRRORS", server.url)
        paths = gluon_hub.cache.prefetch(list(refs), kind=None)
    assert len(paths) == 3
    monkeypatch.delenv("GLUON_HUB_MIRRORS")
    monkeypatch.setenv("GLUON_HUB_OFFLINE", "1")

    loaded = gluon_hub.load_vocabulary("tiny_list")
    assert isinstance(loaded, Vocab) and loaded == vocab and loaded["cat"] == TOKENS.index("cat")
    spm = gluon_hub.load_vocabulary("tiny_spm", num_best=1)
    assert isinstance(spm, SentencepieceTokenizer) and spm.num_best == 1
    assert spm("the cat sat") == SentencepieceTokenizer(hub_env / "tiny.model")("the cat sat")
    bpe = gluon_hub.load_vocabulary("tiny_bpe", cache_size=10)
    assert isinstance(bpe, GPT2BPETokenizer) and bpe("low lower") == ["low", "Ġlow", "e", "r"]
    with pytest.raises(TypeError, match="accepted: spec, root, cache_size"):
        gluon_hub.load_vocabulary("tiny_bpe", lowercase=True)

    out = hub_env / "vocabs.tar"
    entries = bundle(list(refs), out)
    assert [e.models for e in entries] == [(f"vocabulary tinyvocab/{name}",) for name in refs]
    with tarfile.open(out) as tar:
        assert "weights/tiny_bpe-0.json" in tar.getnames()  # the member: its hash is the one pinned
    elsewhere = hub_env / "elsewhere"
    import_bundle(out, root=elsewhere)
    assert gluon_hub.load_vocabulary("tiny_list", root=str(elsewhere)) == vocab
    assert gluon_hub.load_vocabulary("tiny_bpe", root=str(elsewhere))("low") == ["low"]
