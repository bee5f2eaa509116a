"""Byte-level BPE: gluon_nlp_core's GPT2BPETokenizer against GluonNLP 0.10's, in one process.

Generated sentences (mixed case, contractions, digits, punctuation, some accents and CJK),
merges learned from other generated text, no downloads; GluonNLP's tokenizer reads the
same merges file (a subclass names it and its sha1). Goal: at least GluonNLP's throughput
with identical tokens (asserted).

Timed, in CPU time (single-threaded, so less noisy than wall time on a loaded machine):
one call per sentence, each side with a fresh tokenizer ("cold", its word cache filling as
it goes) and again on a second pass ("warm"). The sides alternate; medians are compared.
Run: ``.venv/bin/python bench/bench_bpe.py [--runs 3] [--sentences 5000]``.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Callable

import regex

import gluon_hub.compat  # noqa: F401  (numpy aliases for gluonnlp's mxnet import)
from gluon_nlp_core.text import GPT2BPETokenizer
from gluon_nlp_core.text.bpe import byte_to_unicode

import gluonnlp

_SYLLABLES = "ka to ri shu men ber gar la vo in ex ter pre con ing tion al ly ous est".split()
_EXTRA = ["'s", "'ll", "n't", ",", ".", "!", "?", "2024", "3.5", "é", "ü", "中文", "😀", "--"]


def _sentence(rng: random.Random) -> str:
    parts = []
    for _ in range(rng.randint(8, 30)):
        if rng.random() < 0.85:
            word = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(1, 4)))
            parts.append(word.capitalize() if rng.random() < 0.2 else word)
        else:
            parts.append(rng.choice(_EXTRA))
    return " ".join(parts)


def _learn_merges(texts: list[str], count: int) -> list[tuple[str, str]]:
    """The most frequent adjacent pair, ``count`` times, over byte symbols of words."""
    table = byte_to_unicode()
    words = collections.Counter(tuple(table[b] for b in w.encode("utf-8"))
                                for t in texts for w in regex.findall(r" ?\S+", t))
    merges = []
    for _ in range(count):
        pairs: collections.Counter[tuple[str, str]] = collections.Counter()
        for word, freq in words.items():
            for pair in zip(word, word[1:]):
                pairs[pair] += freq
        if not pairs:
            break
        a, b = best = max(pairs, key=lambda p: (pairs[p], p))
        merges.append(best)
        new: collections.Counter[tuple[str, ...]] = collections.Counter()
        for word, freq in words.items():
            out, i = [], 0
            while i < len(word):
                if word[i:i + 2] == best:
                    out.append(a + b)
                    i += 2
                else:
                    out.append(word[i])
                    i += 1
            new[tuple(out)] += freq
        words = new
    return merges


def _time(make: Callable[[], Callable[[str], list[str]]], texts: list[str]) -> tuple[float, float, float]:
    tokenize = make()
    start_cpu, start_wall = time.process_time(), time.perf_counter()
    for t in texts:
        tokenize(t)
    cold, wall = time.process_time() - start_cpu, time.perf_counter() - start_wall
    start_cpu = time.process_time()
    for t in texts:
        tokenize(t)
    return cold, time.process_time() - start_cpu, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sentences", type=int, default=5000)
    args = parser.parse_args()

    rng = random.Random(0)
    texts = [_sentence(rng) for _ in range(args.sentences)]
    merges = _learn_merges([_sentence(rng) for _ in range(300)], 300)
    root = Path(tempfile.mkdtemp())
    path = root / "merges.txt"
    path.write_text("#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in merges), "utf-8")
    sha1 = hashlib.sha1(path.read_bytes()).hexdigest()
    local = type("LocalGPT2BPETokenizer", (gluonnlp.data.GPT2BPETokenizer,),
                 {"bpe_ranks_file_hash": (path.name, sha1)})

    def make_ref() -> Callable[[str], list[str]]:
        return local(root=str(root))

    def make_ours() -> Callable[[str], list[str]]:
        return GPT2BPETokenizer(path)

    ours, ref = make_ours(), make_ref()
    assert [ours(t) for t in texts] == [ref(t) for t in texts], "tokens differ"
    n_tokens = sum(len(ours(t)) for t in texts)

    times: dict[str, list[tuple[float, float, float]]] = {"gluonnlp": [], "ours": []}
    for _ in range(args.runs):
        times["gluonnlp"].append(_time(make_ref, texts))
        times["ours"].append(_time(make_ours, texts))
    med = {side: [statistics.median(run[i] for run in rows) for i in range(3)]
           for side, rows in times.items()}
    print(f"{args.sentences} sentences, {n_tokens} tokens, {len(merges)} merges, "
          f"{args.runs} runs (median CPU s)")
    for side, (cold, warm, wall) in med.items():
        print(f"  {side:9s} cold {cold:.3f}  warm {warm:.3f}  (cold wall {wall:.3f})")
    print(f"  speedup   cold {med['gluonnlp'][0] / med['ours'][0]:.2f}x  "
          f"warm {med['gluonnlp'][1] / med['ours'][1]:.2f}x")


if __name__ == "__main__":
    main()
