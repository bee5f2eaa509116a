"""BERT tokenizers give GluonNLP 0.10's tokens: the reference, the fast tiers, the whole."""

from __future__ import annotations

import pickle
import random
import sys

import pytest

from gluon_nlp_core.text import BERTBasicTokenizer, BERTTokenizer, Vocab, WhitespaceTokenizer
from gluon_nlp_core.text._bert_fast import CachedWordPiece, basic_tokenize_fast
from gluon_nlp_core.text._bert_reference import basic_tokenize

EDGE_CASES = [
    "Hello, World! It's 3:30pm -- isn't it?  (Yes.) [ok] {x} ~a^b` $5 #1 @me",
    "Unaffable café naïve résumé façade Ångström ÆØÅ æøå straße ﬁne ǅemal",
    "ΟΔΟΣ ὈΔΥΣΣΕΎΣ Σ ΣΑ ΑΣ. σς Ωμέγα",  # final sigma, Greek accents
    "İstanbul I\u0307 ı ǰ ß ẞ",  # case mappings that change length
    "gluonnlp: 使NLP变得简单。中文，标点！「引号」",
    "日本語のテキスト、カタカナ ﾊﾝｶｸ 한국어 텍스트 𠀀𪜀 extension B",
    "tab\there\nnew\rline\x00nul\ufffdrepl\u200bzw\u2028ls\x85nel\x0bvt\x1fus\u00a0nbsp\u3000ideo",
    "soft\u00adhyphen zwj\u200d\u200cnon LTR\u200e RTL\u200f BOM\ufeff",
    "a\u0301\u0302b e\u0308 combining: \u0345 \u0903 \u093f ́lone",
    "emoji 😀👍🏽 flags 🇩🇪 family 👨‍👩‍👧 keycap 1️⃣",
    "ｆｕｌｌｗｉｄｔｈ ＡＢＣ！ １２３",
    "अनुच्छेद हिन्दी ਪੰਜਾਬੀ தமிழ் ไทย ພາສາລາວ",
    "عربي نص مع تشكيل: مَرْحَبًا  עִבְרִית",
    "private \ue000\U000f0000 unassigned \u0378\U0003ffff tag \U000e0041 new \u0890\u08ca\u0c3c",
    "x" * 250,
    "",
    "   \t\n ",
    "...!!!???---",
]


def _char_pool() -> list[str]:
    ranges = [(0x20, 0x7E), (0xA0, 0x17F), (0x300, 0x36F), (0x370, 0x3FF), (0x400, 0x45F),
              (0x590, 0x5FF), (0x600, 0x6FF), (0x880, 0x97F), (0x2000, 0x206F), (0x3000, 0x303F),
              (0x3040, 0x30FF), (0x4E00, 0x4E40), (0xAC00, 0xAC40), (0xFF00, 0xFF60),
              (0x1F300, 0x1F320), (0xE000, 0xE005), (0x20000, 0x20010)]
    pool = [chr(c) for a, b in ranges for c in range(a, b + 1)]
    return pool + list("\t\n\r\x00\x0b\x85\ufffd\u200b") + list("abcdefghij ") * 20


def random_corpus(n: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    pool = _char_pool()
    return ["".join(rng.choice(pool) for _ in range(rng.randint(1, 40))) for _ in range(n)]


def _vocab_for(texts: list[str]) -> Vocab:
    """Whole words, prefixes and ## suffixes of the texts' words (some words stay unknown)."""
    pieces: set[str] = set()
    for lower in (True, False):
        for i, word in enumerate(w for t in texts for w in basic_tokenize(t, lower)):
            if i % 5 == 0:
                continue  # leave some words unsplittable
            pieces.update(word[:k] for k in (1, 2, 4))
            pieces.update("##" + word[k:] for k in range(1, len(word)))
    return Vocab.from_tokens(["[PAD]", "[UNK]", *sorted(pieces)], unknown_token="[UNK]")


CORPUS = EDGE_CASES + random_corpus(400)
VOCAB = _vocab_for(CORPUS)


@pytest.mark.mxnet
@pytest.mark.parametrize("lower", [True, False])
def test_wordpiece_matches_gluonnlp_on_diverse_corpus(gluonnlp, lower):
    reference = gluonnlp.data.BERTTokenizer(gluonnlp.Vocab.from_json(VOCAB.to_json()), lower=lower)
    ours = BERTTokenizer(VOCAB, lower=lower)
    expected = [reference(t) for t in CORPUS]
    assert [ours(t) for t in CORPUS] == expected
    assert [ours(t) for t in CORPUS] == expected  # again, from the word cache
    assert ours.tokenize_batch(CORPUS) == expected
    assert any("[UNK]" in e for e in expected) and any(len(e) > 3 for e in expected)


@pytest.mark.mxnet
@pytest.mark.parametrize("lower", [True, False])
def test_basic_tokenizer_matches_gluonnlp(gluonnlp, lower):
    reference = gluonnlp.data.BERTBasicTokenizer(lower=lower)
    ours = BERTBasicTokenizer(lower=lower)
    assert [ours(t) for t in CORPUS] == [reference(t) for t in CORPUS]


def _contexts(chars: list[str]) -> str:
    # Before/after letters, doubled, between capitals, after a sigma and before a space:
    # the neighbourhoods lower-casing (final sigma), NFD and splitting look at.
    return "\n".join(f"a{c} {c}b {c}{c} X{c}Y Σ{c} ΑΣ{c}Β" for c in chars)


@pytest.mark.parametrize("lower", [True, False])
def test_fast_tiers_equal_the_reference_on_every_bmp_character(lower):
    chars = [chr(cp) for cp in range(0x10000) if not 0xD800 <= cp <= 0xDFFF]
    for start in range(0, len(chars), 4096):
        text = _contexts(chars[start : start + 4096])
        assert basic_tokenize_fast(text, lower) == basic_tokenize(text, lower), hex(start)
    ascii_text = _contexts([chr(cp) for cp in range(128)]).encode("ascii", "ignore").decode()
    assert ascii_text.isascii()
    assert basic_tokenize_fast(ascii_text, lower) == basic_tokenize(ascii_text, lower)


@pytest.mark.mxnet
def test_reference_equals_gluonnlp_on_sampled_astral_and_bmp_characters(gluonnlp):
    rng = random.Random(3)
    sample = [chr(rng.randrange(0x32000)) for _ in range(3000)]
    sample += [chr(rng.randrange(0x32000, sys.maxunicode + 1)) for _ in range(300)]
    sample = [c for c in sample if not 0xD800 <= ord(c) <= 0xDFFF]
    text = _contexts(sample)
    for lower in (True, False):
        expected = gluonnlp.data.BERTBasicTokenizer(lower=lower)(text)
        assert basic_tokenize(text, lower) == expected
        assert basic_tokenize_fast(text, lower) == expected


def test_behaviour_on_hand_checked_examples():
    uncased, cased = BERTBasicTokenizer(lower=True), BERTBasicTokenizer(lower=False)
    assert uncased(" \tHeLLo!how  \n Are yoU?  ") == ["hello", "!", "how", "are", "you", "?"]
    assert cased("HeLLo!how") == ["HeLLo", "!", "how"]
    assert uncased("Café naïve") == ["cafe", "naive"]
    assert cased("Café") == ["Cafe"]  # GluonNLP 0.10 strips accents in cased mode too
    assert uncased("使NLP变") == ["使", "nlp", "变"]
    assert uncased("a\x00b\u200bc\x07d") == ["abcd"]
    assert uncased("ΟΔΟΣ ΟΔΟΣ\u200bΑ") == ["οδος", "οδοσα"]  # final sigma; \u200b dropped first
    assert uncased("$5^") == ["$", "5", "^"]
    assert uncased("\ufa6c!") == ["\U000242ee", "!"]  # NFD leaves the BMP


@pytest.mark.mxnet
@pytest.mark.parametrize("limit", [0, 3, 5])
def test_max_input_chars_per_word(gluonnlp, limit):
    vocab = Vocab.from_tokens(["[UNK]", "abc", "##de", "a", "##b", "##c"], unknown_token="[UNK]")
    theirs = gluonnlp.data.BERTTokenizer(
        gluonnlp.Vocab.from_json(vocab.to_json()), max_input_chars_per_word=limit
    )
    ours = BERTTokenizer(vocab, max_input_chars_per_word=limit)
    for text in ("abcde abc ab a", "abcdef", "ABCDE"):
        assert ours(text) == theirs(text)
    assert BERTTokenizer(vocab, max_input_chars_per_word=5)("abcde abcdef") == ["abc", "##de", "[UNK]"]


def test_word_cache_is_bounded_and_results_are_fresh_lists():
    calls = []
    cache = CachedWordPiece(lambda w: calls.append(w) or [w.upper(), "##x"], max_entries=2)
    assert cache.pieces(["a", "b", "a"]) == ["A", "##x", "B", "##x", "A", "##x"]
    assert sorted(calls) == ["a", "b"]
    assert cache.pieces(["a"]) == ["A", "##x"] and len(calls) == 2  # from the cache
    assert cache.pieces(["c", "a"]) == ["C", "##x", "A", "##x"]  # full: cleared, refilled
    assert sorted(calls) == ["a", "a", "b", "c"]
    tokenizer = BERTTokenizer(VOCAB)
    first = tokenizer("hello")
    first.append("mutated")
    assert tokenizer("hello") != first


def test_pickles_and_checks_arguments():
    tokenizer = BERTTokenizer(VOCAB, lower=False)
    tokenizer("warm the word cache up")
    again = pickle.loads(pickle.dumps(tokenizer))
    assert again("Some Text, here!") == tokenizer("Some Text, here!")
    assert again.convert_tokens_to_ids(["[UNK]", "[PAD]"]) == [1, 0]
    assert BERTTokenizer.is_first_subword("un") and not BERTTokenizer.is_first_subword("##aff")
    with pytest.raises(ValueError, match="unknown_token"):
        BERTTokenizer(Vocab.from_tokens(["a"], unknown_token=None))
    with pytest.raises(TypeError, match="Vocab"):
        BERTTokenizer({"a": 0})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_input_chars_per_word"):
        BERTTokenizer(VOCAB, max_input_chars_per_word=-1)


def test_whitespace_tokenizer():
    assert WhitespaceTokenizer()(" a\tb\n c\u00a0d \u3000e ") == ["a", "b", "c", "d", "e"]
