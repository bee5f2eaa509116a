"""Vocab: indexing as GluonNLP 0.10, and its vocab JSON read and written both ways."""

from __future__ import annotations

import hashlib
import json
import pickle
import zipfile
from collections import Counter
from pathlib import Path

import pytest

from gluon_nlp_core.text import (
    BERT_SPECIAL_TOKENS,
    Vocab,
    count_tokens,
    list_vocabs,
    load_vocab,
    pretrained,
    vocab_file,
)

FIXTURES = Path(__file__).parent / "fixtures"
WORDS = "the cat sat on the mat the end a cat b b c".split()


@pytest.mark.mxnet
@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"max_size": 3},
        {"min_freq": 2},
        {"unknown_token": None},
        {"reserved_tokens": ["<r1>", "<r2>"], "bos_token": None},
        {"mask_token": "<mask>", "padding_token": None},
        {"token_to_idx": {"<unk>": 5, "cat": 0}},
    ],
)
def test_indices_match_gluonnlp(gluonnlp, kwargs):
    counter = count_tokens(WORDS)
    ours = Vocab(counter, **kwargs)
    theirs = gluonnlp.Vocab(gluonnlp.data.count_tokens(WORDS), **kwargs)
    assert ours.idx_to_token == theirs.idx_to_token
    assert ours.token_to_idx == dict(theirs.token_to_idx)
    assert ours.reserved_tokens == (theirs.reserved_tokens or [])
    assert ours[["cat", "zebra"] if ours.unknown_token else ["cat"]] == theirs[
        ["cat", "zebra"] if theirs.unknown_token else ["cat"]
    ]


def test_lookups_and_special_attributes():
    vocab = Vocab(count_tokens(WORDS), cls_token="[CLS]")
    assert vocab["the"] == vocab.to_indices("the") == vocab("the")
    assert vocab["never-seen"] == vocab[vocab.unknown_token] == 0
    assert vocab.to_tokens([vocab["cat"], 0]) == ["cat", "<unk>"]
    assert vocab.cls_token == "[CLS]" and vocab.padding_token == "<pad>"
    assert "cat" in vocab and "zebra" not in vocab
    assert list(vocab) == vocab.idx_to_token
    with pytest.raises(AttributeError, match="cls_token"):
        _ = vocab.sep_token
    with pytest.raises(ValueError, match="out of range"):
        vocab.to_tokens(len(vocab))


def test_no_unknown_token_raises_on_unknown():
    vocab = Vocab(count_tokens(WORDS), unknown_token=None)
    with pytest.raises(KeyError, match="no unknown_token"):
        vocab["zebra"]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"min_freq": 0}, "min_freq"),
        ({"reserved_tokens": ["<unk>"]}, "unknown token"),
        ({"reserved_tokens": ["x", "x"]}, "repeat"),
        ({"reserved_tokens": ["<pad>"]}, "repeat"),
        ({"special": "x"}, "_token"),
        ({"token_to_idx": {"zebra": 1}}, "not in the vocabulary"),
        ({"token_to_idx": {"cat": 99}}, "size"),
    ],
)
def test_bad_arguments_raise(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Vocab(count_tokens(WORDS), **kwargs)


def test_from_tokens_keeps_order_and_checks_specials():
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hi"]
    vocab = Vocab.from_tokens(tokens, **BERT_SPECIAL_TOKENS)
    assert vocab.idx_to_token == tokens and vocab["hi"] == 5 and vocab["zz"] == 1
    assert vocab.bos_token is None and vocab.mask_token == "[MASK]"
    with pytest.raises(ValueError, match="not in the vocabulary"):
        Vocab.from_tokens(["a"], unknown_token="[UNK]")
    with pytest.raises(ValueError, match="repeat"):
        Vocab.from_tokens(["a", "a"], unknown_token=None)


@pytest.mark.mxnet
@pytest.mark.parametrize("kwargs", [{}, {"unknown_token": None}, {"mask_token": "<m>", "reserved_tokens": ["<r>"]}])
def test_gluonnlp_reads_our_json_and_we_read_theirs(gluonnlp, kwargs):
    ours = Vocab(count_tokens(WORDS), **kwargs)
    theirs = gluonnlp.Vocab.from_json(ours.to_json())
    assert theirs.idx_to_token == ours.idx_to_token
    assert dict(theirs.token_to_idx) == ours.token_to_idx
    assert theirs.unknown_token == ours.unknown_token
    assert (theirs.reserved_tokens or []) == ours.reserved_tokens
    for name, token in ours.special_tokens.items():
        assert getattr(theirs, name) == token

    back = Vocab.from_json(theirs.to_json())
    assert back == ours
    assert json.loads(back.to_json()) == json.loads(theirs.to_json())


@pytest.mark.mxnet
def test_reads_published_bert_layout_like_gluonnlp(gluonnlp):
    text = (FIXTURES / "vocab" / "bert_legacy.vocab").read_text()
    ours = Vocab.from_json(text)
    theirs = gluonnlp.vocab.BERTVocab.from_json(text)
    assert ours.idx_to_token == theirs.idx_to_token
    assert ours.token_to_idx == dict(theirs.token_to_idx)
    for name in ("padding_token", "cls_token", "sep_token", "mask_token", "bos_token", "eos_token"):
        assert getattr(ours, name) == getattr(theirs, name)
    assert sorted(ours.reserved_tokens) == sorted(theirs.reserved_tokens)
    assert ours["[UNK]"] == 1 and ours["never"] == 1
    # and what we write, GluonNLP's BERTVocab reads the same
    again = gluonnlp.vocab.BERTVocab.from_json(ours.to_json())
    assert again.idx_to_token == ours.idx_to_token and again.cls_token == "[CLS]"


@pytest.mark.mxnet
def test_reads_duplicate_index_quirk_of_old_vocabularies(gluonnlp):
    # GluonNLP before 0.7 could write one token at two indices (eos == padding).
    data = {"idx_to_token": ["<unk>", "<eos>", "<eos>", "a"], "token_to_idx": {"<unk>": 0, "<eos>": 2, "a": 3},
            "reserved_tokens": ["<eos>"], "unknown_token": "<unk>", "padding_token": "<eos>", "bos_token": None, "eos_token": "<eos>"}
    vocab = Vocab.from_json(json.dumps(data))
    with pytest.warns(UserWarning, match="corrupted"):
        theirs = gluonnlp.Vocab.from_json(json.dumps(data))
    assert vocab.idx_to_token == theirs.idx_to_token
    assert vocab["<eos>"] == 2 and vocab.to_tokens(1) == "<eos>"


@pytest.mark.parametrize(
    "document, message",
    [
        ("[1, 2]", "object"),
        ('{"idx_to_token": ["a"]}', "token_to_idx"),
        ('{"idx_to_token": ["a"], "token_to_idx": {"a": 3}}', "outside"),
        ('{"idx_to_token": ["a", "b"], "token_to_idx": {"a": 1, "b": 0}}', "disagree"),
        ('{"idx_to_token": ["a", "b"], "token_to_idx": {"a": 0}}', "no index"),
        ('{"idx_to_token": ["a"], "token_to_idx": {"a": 0}, "unknown_token": "<unk>"}', "not in the vocabulary"),
        ("{not json", "not a vocabulary"),
    ],
)
def test_bad_json_is_refused(document, message):
    with pytest.raises(ValueError, match=message):
        Vocab.from_json(document)


def test_pickles_and_counts():
    vocab = Vocab(count_tokens(WORDS), mask_token="<mask>")
    again = pickle.loads(pickle.dumps(vocab))
    assert again == vocab and again.mask_token == "<mask>"
    assert count_tokens(["A", "a"], to_lower=True) == Counter(a=2)
    counter = Counter(a=1)
    assert count_tokens(["a", "b"], counter=counter) is counter and counter == Counter(a=2, b=1)


def test_published_vocab_files_are_named_as_gluonnlp_publishes_them():
    ref = vocab_file("book_corpus_wiki_en_uncased")
    assert ref.hash == "sha1:a66073971aa0b1a262453fe51342e57166a8abcf"
    assert ref.filename == "gluon/dataset/vocab/book_corpus_wiki_en_uncased-a6607397.zip"
    assert ref.extract == "book_corpus_wiki_en_uncased-a6607397.vocab"
    assert "wiki_multilingual_cased" in list_vocabs() and "kobert_news_wiki_ko_cased" not in list_vocabs()
    with pytest.raises(KeyError, match="book_corpus_wiki_en_cased"):
        vocab_file("book_corpus_wiki_en_casd")


def test_load_vocab_fetches_through_the_cache(tmp_path, monkeypatch):
    """A published-layout zip on a local mirror is fetched, verified, unpacked and parsed."""
    text = (FIXTURES / "vocab" / "bert_legacy.vocab").read_bytes()
    sha1 = hashlib.sha1(text).hexdigest()
    stem = f"tiny_bert-{sha1[:8]}"
    archive = tmp_path / "mirror" / "gluon" / "dataset" / "vocab" / f"{stem}.zip"
    archive.parent.mkdir(parents=True)
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr(f"{stem}.vocab", text)
    monkeypatch.setattr(pretrained, "_hashes", lambda: {"tiny_bert": sha1})
    monkeypatch.setenv("GLUON_HUB_MIRRORS", str(tmp_path / "mirror"))
    monkeypatch.setenv("GLUON_HUB_OFFLINE", "1")  # local mirrors only, never the network
    vocab = load_vocab("tiny_bert", root=str(tmp_path / "cache"))
    assert vocab == Vocab.from_json(text.decode()) and vocab.cls_token == "[CLS]"
    archive.unlink()  # now only the cache has it
    assert load_vocab("tiny_bert", root=str(tmp_path / "cache")) == vocab
