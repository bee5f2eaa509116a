"""The C tokenizer (``text/_wordpiece.c``) gives exactly the Python tiers' tokens.

The Python engine is itself checked against the reference and GluonNLP in
``test_text_tokenizers.py``; here the two engines run side by side on every BMP
character, on mixed corpora (ASCII, BMP, astral, controls), on WordPiece edge cases, and
with a cache small enough to be cleared mid-text.
"""

from __future__ import annotations

import random

import pytest

from gluon_nlp_core.text import BERTTokenizer, Vocab, _bert_fast
from gluon_nlp_core.text._bert_reference import basic_tokenize, wordpiece

UNK = "[UNK]"


def _vocab_for(texts: list[str]) -> dict[str, int]:
    """Prefixes and ## suffixes of the texts' words; every fifth word left unsplittable."""
    pieces = {UNK}
    for lower in (True, False):
        for i, word in enumerate(w for t in texts for w in basic_tokenize(t, lower)):
            if i % 5:
                pieces.update(word[:k] for k in (1, 2, 4))
                pieces.update("##" + word[k:] for k in range(1, len(word)))
    return {token: i for i, token in enumerate(sorted(pieces))}


def _engines(vocab: dict[str, int], max_chars: int = 200, max_entries: int = 1 << 18):
    return (
        _bert_fast.wordpiece_engine(vocab, UNK, max_chars, native=True, max_entries=max_entries),
        _bert_fast.wordpiece_engine(vocab, UNK, max_chars, native=False, max_entries=max_entries),
    )


def _assert_same(texts: list[str], vocab: dict[str, int], **kwargs) -> None:
    native, python = _engines(vocab, **kwargs)
    for lower in (True, False):
        expected = [python.tokenize(t, lower) for t in texts]
        assert [native.tokenize(t, lower) for t in texts] == expected
        assert [native.tokenize(t, lower) for t in texts] == expected  # from the cache
        assert any(UNK in e for e in expected) and any(len(e) > 3 for e in expected)


def test_the_extension_is_built_and_used():
    # CI installs with a compiler; a silently missing extension would only be slow.
    assert _bert_fast.NATIVE
    vocab = Vocab.from_tokens([UNK, "a"], unknown_token=UNK)
    assert type(BERTTokenizer(vocab)._engine).__name__ == "WordPiece"


def test_every_bmp_character_in_context():
    chars = [chr(cp) for cp in range(0x10000) if not 0xD800 <= cp <= 0xDFFF]
    # Small texts, so that the few characters routed to the fallback (NFD leaves the BMP)
    # take only their own text there; neighbours, doubling and final sigma around each.
    texts = ["".join(f"a{c}b {c}{c}Σ X{c} " for c in chars[i : i + 48])
             for i in range(0, len(chars), 48)]
    texts.append("".join(f"a{chr(cp)}b {chr(cp)}{chr(cp)} " for cp in range(128)))
    _assert_same(texts, _vocab_for(texts[::7]))


def test_mixed_corpus_with_a_tiny_cache():
    rng = random.Random(11)
    pool = [chr(c) for a, b in [(0x20, 0x7E), (0xC0, 0x17F), (0x300, 0x36F), (0x391, 0x3C9),
                                (0x3000, 0x303F), (0x4E00, 0x4E20), (0x1F600, 0x1F610),
                                (0x20000, 0x20008)] for c in range(a, b + 1)]
    pool += list("\t\n\r\x00\x0b\x7f\x85\u00ad\u200b\ufffd\ufa6c") + list("abcdefgh   ") * 12
    texts = ["".join(rng.choice(pool) for _ in range(rng.randint(0, 60))) for _ in range(300)]
    texts += ["", "   ", "HeLLo, WORLD!", "x" * 250, "Café 中文 𠀀 ΟΔΟΣ."]
    vocab = _vocab_for(texts)
    _assert_same(texts, vocab)
    _assert_same(texts, vocab, max_chars=3, max_entries=4)
    native, _ = _engines(vocab, max_entries=4)
    for text in texts:
        native.tokenize(text, True)
        assert len(native) <= 4


@pytest.mark.parametrize("max_chars", [0, 2, 5, 200])
def test_split_matches_the_reference(max_chars):
    rng = random.Random(max_chars)
    alphabet = "ab#é中\U0001f600"
    words = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 9))) for _ in range(400)]
    vocab = {UNK: 0, "##": 1, "###": 2}
    for word in rng.sample(words, 200):
        k = rng.randint(1, 3)
        vocab.setdefault(word[:k], len(vocab))
        vocab.setdefault("##" + word[k:], len(vocab))
    native, python = _engines(vocab, max_chars=max_chars)
    for word in words:
        expected = wordpiece(word, vocab, UNK, max_chars)
        assert native.split(word) == python.split(word) == expected, word
    assert native.pieces(words) == python.pieces(words)
    assert native.pieces(words) == [p for w in words for p in wordpiece(w, vocab, UNK, max_chars)]


def test_results_are_fresh_lists_and_bad_arguments_raise():
    native, _ = _engines({UNK: 0, "ab": 1, "##c": 2})
    first = native.tokenize("abc ab", True)
    assert first == ["ab", "##c", "ab"]
    first.append("mutated")
    assert native.tokenize("abc ab", True) == ["ab", "##c", "ab"]
    assert native.split("abc") == ["ab", "##c"] and native.split("x") == [UNK]
    longest, _ = _engines({UNK: 0, "abcdefgh": 1, "##ijklmnop": 2})  # the longest token counts
    assert longest.split("abcdefghijklmnop") == ["abcdefgh", "##ijklmnop"]
    with pytest.raises(TypeError, match="tokenize"):
        native.tokenize(b"abc", True)
    with pytest.raises(TypeError, match="must be str"):
        native.pieces(["ab", 3])
    with pytest.raises(TypeError):
        _bert_fast._wordpiece.WordPiece([UNK], UNK, 5, 10, _bert_fast.native_table, basic_tokenize)
    with pytest.raises(ValueError, match="max_entries"):
        _bert_fast._wordpiece.WordPiece({UNK: 0}, UNK, 5, 0, _bert_fast.native_table, basic_tokenize)
    broken = _bert_fast._wordpiece.WordPiece({UNK: 0}, UNK, 5, 10, lambda: b"short", basic_tokenize)
    assert broken.tokenize("ascii is fine", True) == [UNK, UNK, UNK]
    with pytest.raises(ValueError, match="65536"):
        broken.tokenize("café", True)
    with pytest.raises(RuntimeError, match="__init__"):
        _bert_fast._wordpiece.WordPiece.__new__(_bert_fast._wordpiece.WordPiece).split("a")
