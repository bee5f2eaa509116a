"""WordPiece: gluon_nlp_core's BERTTokenizer against GluonNLP 0.10's, side by side in one process.

10,000 generated sentences (mixed case, punctuation, accents, some CJK and unknown words)
over a vocabulary built from generated text, no downloads; both tokenizers get the same
token list. Goal: at least 5x GluonNLP's throughput with identical tokens (asserted).

Timed: one call per sentence on both sides; ours both with a fresh tokenizer (its word
cache filling as it goes, "cold") and on a second pass ("warm"). CPU time is the
measure (the process is single-threaded, so it is the throughput without the noise of
other load on the machine); wall time is printed too. The sides alternate and the
medians are compared. Ours runs its C extension when built; ``--python`` times the
pure-Python fallback instead. Run:
``.venv/bin/python bench/bench_wordpiece.py [--runs 5] [--sentences 10000] [--python]``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from typing import Callable

import gluon_hub.compat  # noqa: F401  (numpy aliases for gluonnlp's mxnet import)
from gluon_nlp_core.text import BERT_SPECIAL_TOKENS, BERTBasicTokenizer, BERTTokenizer, Vocab, _bert_fast, count_tokens

import gluonnlp

_SYLLABLES = "ka to ri shu men ber gar la vo in ex ter pre con ing tion al ly ous est ment".split()
_EXTRA = ["é", "ü", "ñ", "ø", "中", "文", "字"]
_PUNCT = list(",.;:!?()'\"-")


def _word(rng: random.Random) -> str:
    word = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(1, 4)))
    if rng.random() < 0.05:
        word += rng.choice(_EXTRA)
    if rng.random() < 0.2:
        word = word.capitalize()
    return word


def _sentence(rng: random.Random) -> str:
    parts = []
    for _ in range(rng.randint(8, 30)):
        parts.append(_word(rng))
        if rng.random() < 0.15:
            parts.append(rng.choice(_PUNCT))
    return " ".join(parts)


def _vocab_tokens(rng: random.Random) -> list[str]:
    """Frequent whole words of generated text, plus syllables as prefixes and ## pieces."""
    counts = count_tokens(_word(rng).lower() for _ in range(60_000))
    words = [w for w, _ in counts.most_common(8_000)]
    pieces = _SYLLABLES + ["##" + s for s in _SYLLABLES] + list("abcdefghijklmnopqrstuvwxyz")
    pieces += ["##" + c for c in "abcdefghijklmnopqrstuvwxyz"] + _EXTRA + _PUNCT
    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    return special + sorted(set(words + pieces) - set(special))


def _ours(vocab: Vocab, python: bool) -> BERTTokenizer:
    tokenizer = BERTTokenizer(vocab, lower=True)
    if python:  # what an install without a C compiler runs
        tokenizer._engine = _bert_fast.wordpiece_engine(
            vocab.token_to_idx, vocab.unknown_token, tokenizer.max_input_chars_per_word, native=False
        )
    return tokenizer


def _timed(fn: Callable[[], object]) -> tuple[float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    fn()
    return time.process_time() - cpu, time.perf_counter() - wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--sentences", type=int, default=10_000)
    parser.add_argument("--python", action="store_true", help="time the pure-Python fallback")
    args = parser.parse_args()

    rng = random.Random(0)
    tokens = _vocab_tokens(rng)
    sentences = [_sentence(rng) for _ in range(args.sentences)]

    our_vocab = Vocab.from_tokens(tokens, **BERT_SPECIAL_TOKENS)
    ours = _ours(our_vocab, args.python)
    their_vocab = gluonnlp.vocab.BERTVocab(count_tokens(tokens[5:]))  # same token set
    if set(their_vocab.idx_to_token) != set(tokens):
        raise AssertionError("the two vocabularies hold different tokens")
    theirs = gluonnlp.data.BERTTokenizer(their_vocab, lower=True)

    expected = [theirs(s) for s in sentences]
    if [ours(s) for s in sentences] != expected or ours.tokenize_batch(sentences) != expected:
        raise AssertionError("tokens differ from GluonNLP's BERTTokenizer")
    n_pieces = sum(map(len, expected))
    unknown = sum(p.count("[UNK]") for p in expected)
    words = len({w for s in sentences for w in BERTBasicTokenizer()(s)})
    print(f"{len(sentences)} sentences, {n_pieces} word pieces ({unknown} [UNK]), {words} distinct "
          f"words, vocab {len(tokens)} tokens; tokens identical")
    print(f"ours: {type(ours._engine).__module__}.{type(ours._engine).__name__}")

    results: dict[str, list[tuple[float, float]]] = {"gluonnlp": [], "ours cold": [], "ours warm": []}
    for _ in range(args.runs):  # alternate the sides so that drift hits both alike
        results["gluonnlp"].append(_timed(lambda: [theirs(s) for s in sentences]))
        fresh = _ours(our_vocab, args.python)
        results["ours cold"].append(_timed(lambda: [fresh(s) for s in sentences]))  # noqa: B023  (called here)
        results["ours warm"].append(_timed(lambda: [fresh(s) for s in sentences]))  # noqa: B023  (called here)
    base_cpu = statistics.median(t[0] for t in results["gluonnlp"])
    base_wall = statistics.median(t[1] for t in results["gluonnlp"])
    for name, times in results.items():
        cpu = statistics.median(t[0] for t in times)
        wall = statistics.median(t[1] for t in times)
        print(f"{name:>10}: cpu {cpu * 1e3:7.1f} ms  {len(sentences) / cpu:8.0f} sentences/s  "
              f"{base_cpu / cpu:5.1f}x GluonNLP   (wall {wall * 1e3:7.1f} ms, {base_wall / wall:4.1f}x)")


if __name__ == "__main__":
    main()
