"""Byte-level BPE gives GluonNLP 0.10's GPT2BPETokenizer tokens and detokenized text.

Both tokenizers read the same merges file, learned here from generated text; GluonNLP's
class is pointed at it by naming the file and its sha1 in a subclass, so nothing is
downloaded.
"""

from __future__ import annotations

import collections
import hashlib
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import regex

import gluon_nlp_core.text as text
from gluon_nlp_core.text import GPT2BPEDetokenizer, GPT2BPETokenizer, bpe_ranks_file
from gluon_nlp_core.text.bpe import byte_to_unicode, read_bpe_merges

EDGE_CASES = [
    "Hello, World! It's 3:30pm -- isn't it?  (Yes.) we'll they've I'm you'd she's don't",
    "IT'S WE'LL 'tis 'S ''s",  # contractions are lower-case only
    "  leading and trailing spaces   ",
    "tabs\tand\nnew\r\nlines\n\n\n and   runs \t\n of whitespace\x0b\x0c",
    "café naïve résumé Ångström straße ǅemal ΟΔΟΣ σς Ωμέγα",
    "中文，标点！「引号」 日本語のテキスト 한국어 텍스트 𠀀𪜀",
    "emoji 😀👍🏽 flags 🇩🇪 family 👨‍👩‍👧 keycap 1️⃣",
    "digits 123 4,567.89 ²³ ½ Ⅻ ٣٤ १२",
    "a\u0301 e\u0308 combining ́lone \u00a0nbsp\u3000ideo\u200bzw\u00adsoft",
    "control \x00\x01\x1f\x7f\x85 bytes",
    "...!!!???--- $$$ ### @@@ ~~~ <<>> ''' \"\"\"",
    "x" * 300,
    "",
    " ",
    "\n",
]

_SYLLABLES = "ka to ri shu men ber gar la vo in ex ter pre con ing tion al ly".split()


def _sentence(rng: random.Random, pool: list[str]) -> str:
    parts = []
    for _ in range(rng.randint(1, 25)):
        roll = rng.random()
        if roll < 0.6:
            word = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(1, 4)))
            parts.append(word.capitalize() if rng.random() < 0.2 else word)
        elif roll < 0.8:
            parts.append("".join(rng.choice(pool) for _ in range(rng.randint(1, 6))))
        else:
            parts.append(rng.choice(["'s", "'ll", "n't", ",", ".", "!", "123", "  ", "\n"]))
    return rng.choice([" ", "", "\t"]).join(parts)


def _corpus(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    pool = [chr(c) for c in [*range(0x20, 0x7F), *range(0xA0, 0x180), *range(0x370, 0x3D0),
                             *range(0x4E00, 0x4E40), 0x1F600, 0x1F44D, 0x200D, 0x0301]]
    return [_sentence(rng, pool) for _ in range(n)]


def _learn_merges(texts: list[str], count: int) -> list[tuple[str, str]]:
    """Plain BPE learning over byte symbols of space-led words: the most frequent pair."""
    table = byte_to_unicode()
    words = collections.Counter(
        tuple(table[b] for b in word.encode("utf-8"))
        for line in texts for word in regex.findall(r" ?\S+", line)
    )
    merges = []
    for _ in range(count):
        pairs: collections.Counter[tuple[str, str]] = collections.Counter()
        for word, freq in words.items():
            for pair in zip(word, word[1:]):
                pairs[pair] += freq
        if not pairs:
            break
        best = max(pairs, key=lambda p: (pairs[p], p))
        merges.append(best)
        merged: collections.Counter[tuple[str, ...]] = collections.Counter()
        for word, freq in words.items():
            out, i = [], 0
            while i < len(word):
                if word[i:i + 2] == best:
                    out.append(best[0] + best[1])
                    i += 2
                else:
                    out.append(word[i])
                    i += 1
            merged[tuple(out)] += freq
        words = merged
    return merges


@pytest.fixture(scope="module")
def merges_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    merges = _learn_merges(_corpus(150, seed=1) + EDGE_CASES, 200)
    merges.append(merges[3])  # listed twice: the later rank counts, on both sides
    path = tmp_path_factory.mktemp("bpe") / "merges.txt"
    lines = ["#version: 0.2"] + [f"{a} {b}" for a, b in merges]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def reference(gluonnlp, merges_file: Path):
    """GluonNLP's tokenizer on our merges: its root holds the file under the name and
    sha1 the subclass declares, so it reads it instead of downloading."""
    sha1 = hashlib.sha1(merges_file.read_bytes()).hexdigest()
    local = type("LocalGPT2BPETokenizer", (gluonnlp.data.GPT2BPETokenizer,),
                 {"bpe_ranks_file_hash": (merges_file.name, sha1)})
    return local(root=str(merges_file.parent))


@pytest.mark.mxnet
def test_byte_table_is_gluonnlps(gluonnlp) -> None:
    assert dict(enumerate(byte_to_unicode())) == gluonnlp.data.GPT2BPEDetokenizer()._byte_encoder
    assert len(set(byte_to_unicode())) == 256


@pytest.mark.mxnet
def test_tokens_equal_gluonnlp(merges_file: Path, reference) -> None:
    ours = GPT2BPETokenizer(merges_file)
    texts = EDGE_CASES + _corpus(400, seed=2)
    expected = [reference(t) for t in texts]
    assert ours.tokenize_batch(texts) == expected
    assert [ours(t) for t in texts] == expected  # second pass: from the word cache
    assert any(len(piece) > 2 for tokens in expected for piece in tokens)  # merges applied
    for size in (0, 3):  # no cache, and a cache that keeps emptying
        assert GPT2BPETokenizer(merges_file, cache_size=size).tokenize_batch(texts) == expected


@pytest.mark.mxnet
def test_detokenizer_round_trips_like_gluonnlp(gluonnlp, merges_file: Path) -> None:
    tokenize, detokenize = GPT2BPETokenizer(merges_file), GPT2BPEDetokenizer()
    reference = gluonnlp.data.GPT2BPEDetokenizer()
    for sentence in EDGE_CASES + _corpus(200, seed=3):
        tokens = tokenize(sentence)
        assert detokenize(tokens) == sentence == reference(tokens)
    table = byte_to_unicode()
    # tokens cut inside a UTF-8 sequence: the broken bytes decode to U+FFFD on both sides
    broken = [table[0xE4], "a", table[0xB8] + table[0xAD], table[0xF0]]
    assert detokenize(broken) == reference(broken) == "\ufffda\ufffd\ufffd\ufffd"


@pytest.mark.parametrize("stray", ["A\x00", "tab\t", "Ġ\u00ad", "\u4e2d", "\uffff"])
def test_detokenizer_refuses_non_symbols(stray: str) -> None:
    with pytest.raises(ValueError, match="not a byte-level BPE symbol") as info:
        GPT2BPEDetokenizer()(["ok", stray])
    assert f"U+{ord(stray[-1]):04X}" in str(info.value)


def test_merges_file_format(tmp_path: Path) -> None:
    path = tmp_path / "merges.txt"
    path.write_text("#version: 0.2\na b\n\nab c\na b\n", encoding="utf-8")
    assert read_bpe_merges(path) == {("a", "b"): 2, ("ab", "c"): 1}  # a b repeated: rank 2
    path.write_text("#version: 0.2\na b\nabc\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"merges.txt, line 3: .*'abc'"):
        GPT2BPETokenizer(path)
    with pytest.raises(ValueError, match="cache_size"):
        GPT2BPETokenizer(tmp_path / "merges.txt", cache_size=-1)


@pytest.mark.mxnet
def test_published_merges_are_gluonnlps(gluonnlp) -> None:
    ref = bpe_ranks_file()
    cls = gluonnlp.data.GPT2BPETokenizer
    assert (ref.extract, ref.digest) == cls.bpe_ranks_file_hash
    assert (Path(ref.filename).name, ref.archive_hash) == (
        cls.bpe_ranks_archive_hash[0], "sha1:" + cls.bpe_ranks_archive_hash[1])
    assert ref.filename == "gluon/dataset/vocab/" + cls.bpe_ranks_archive_hash[0]
    # the vocabularies that go with it (GPT-2's and RoBERTa's) are published too
    assert {"openai_webtext", "openwebtext_ccnews_stories_books_cased"} <= set(text.list_vocabs())


def test_public_api() -> None:
    for name in ("GPT2BPETokenizer", "GPT2BPEDetokenizer", "bpe_ranks_file"):
        assert name in text.__all__ and hasattr(text, name)


def test_missing_regex_names_the_package(merges_file: Path) -> None:
    code = textwrap.dedent(f"""
        import sys
        sys.modules["regex"] = None  # as if not installed
        from gluon_nlp_core.text import GPT2BPETokenizer
        try:
            GPT2BPETokenizer({str(merges_file)!r})
        except ImportError as err:
            print(err)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, check=True).stdout
    assert "pip install regex" in out
