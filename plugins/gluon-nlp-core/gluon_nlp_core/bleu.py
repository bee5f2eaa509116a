"""Corpus BLEU as sacreBLEU 2.x computes it (Papineni et al., 2002; Post, 2018).

:func:`corpus_bleu` equals ``sacrebleu.corpus_bleu`` for the same hypotheses, reference
streams and options: the mteval-v13a tokenizer (``"13a"``, the default) or none, optional
lower-casing, closest-reference-length brevity penalty (the shorter one on ties), clipped
n-gram counts against the element-wise maximum over references, and the smoothing methods
``"exp"`` (default), ``"floor"``, ``"add-k"`` and ``"none"``. ``tests/test_bleu.py``
checks it against sacreBLEU on worked cases.

GluonNLP 0.10's ``compute_bleu`` (its machine-translation script) tokenizes ``13a`` the
same way and gives the same n-gram statistics; it reports BLEU on a 0-1 scale, equals
``smooth_method="none"`` here with ``smooth=False``, and with ``smooth=True`` adds one to
the matches and totals of *every* order, unigrams included (sacreBLEU's ``add-k`` skips
unigrams), so that option has no equal here.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Sequence

__all__ = ["BLEUScore", "corpus_bleu", "tokenize_13a"]

#: ASCII punctuation and symbols become tokens of their own (mteval-v13a's first rule).
_13A_RULES = (
    (re.compile(r"([\{-\~\[-\` -\&\(-\+\:-\@\/])"), r" \1 "),
    (re.compile(r"([^0-9])([\.,])"), r"\1 \2 "),  # period/comma not followed by a digit
    (re.compile(r"([\.,])([^0-9])"), r" \1 \2"),  # ... or not preceded by one
    (re.compile(r"([0-9])(-)"), r"\1 \2 "),  # a dash after a digit
)
_ENTITIES = (("&quot;", '"'), ("&amp;", "&"), ("&lt;", "<"), ("&gt;", ">"))
_SMOOTH_DEFAULTS = {"none": None, "floor": 0.1, "add-k": 1, "exp": None}
_TOKENIZERS = ("13a", "none")


def tokenize_13a(line: str) -> str:
    """mteval-v13a tokenization, the one WMT reports BLEU with.

    Examples
    --------
    >>> tokenize_13a("It costs $3.50, isn't it?")
    "It costs $ 3.50 , isn't it ?"
    """
    line = line.replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
    for entity, char in _ENTITIES:
        line = line.replace(entity, char)
    line = f" {line} "
    for pattern, replacement in _13A_RULES:
        line = pattern.sub(replacement, line)
    return " ".join(line.split())


@dataclass(frozen=True)
class BLEUScore:
    """BLEU (0-100) with the statistics it comes from, as sacreBLEU reports them."""

    score: float
    #: Matched and total n-grams of each order (with ``add-k``, k added above unigrams).
    counts: tuple[float, ...]
    totals: tuple[float, ...]
    #: Smoothed n-gram precisions in percent.
    precisions: tuple[float, ...]
    bp: float
    sys_len: int
    ref_len: int

    def __str__(self) -> str:
        precisions = "/".join(f"{p:.1f}" for p in self.precisions)
        return (f"BLEU = {self.score:.2f} {precisions} (BP = {self.bp:.3f} "
                f"ratio = {self.sys_len / max(self.ref_len, 1):.3f} hyp_len = {self.sys_len} "
                f"ref_len = {self.ref_len})")


def _ngrams(tokens: list[str], max_order: int) -> Counter:
    return Counter(tuple(tokens[i:i + n]) for n in range(1, max_order + 1)
                   for i in range(len(tokens) - n + 1))


def _closest_length(hyp_len: int, ref_lens: list[int]) -> int:
    return min(ref_lens, key=lambda length: (abs(length - hyp_len), length))


def _check(hypotheses: Sequence[str], references: Sequence[Sequence[str]], smooth_method: str,
           tokenize: str, max_ngram_order: int) -> None:
    if isinstance(hypotheses, str):
        raise TypeError("hypotheses must be a list of sentences, got one string; wrap it: [hyp]")
    if isinstance(references, str) or not references or isinstance(references[0], str):
        raise TypeError("references must be a list of reference streams, each a list of "
                        "sentences as long as the hypotheses; for one reference per "
                        "sentence pass [refs]")
    for i, stream in enumerate(references):
        if len(stream) != len(hypotheses):
            raise ValueError(f"reference stream {i} has {len(stream)} sentences but there are "
                             f"{len(hypotheses)} hypotheses; every stream needs one per hypothesis")
    if smooth_method not in _SMOOTH_DEFAULTS:
        raise ValueError(f"unknown smooth_method {smooth_method!r}; choose one of "
                         f"{', '.join(_SMOOTH_DEFAULTS)}")
    if tokenize not in _TOKENIZERS:
        raise ValueError(f"unknown tokenize {tokenize!r}; choose one of {', '.join(_TOKENIZERS)}")
    if max_ngram_order < 1:
        raise ValueError(f"max_ngram_order must be at least 1, got {max_ngram_order}")


def corpus_bleu(hypotheses: Sequence[str], references: Sequence[Sequence[str]], *,
                smooth_method: str = "exp", smooth_value: float | None = None,
                tokenize: str = "13a", lowercase: bool = False,
                max_ngram_order: int = 4) -> BLEUScore:
    """Corpus-level BLEU of detokenized ``hypotheses`` against reference streams.

    ``references[j][i]`` is the j-th reference of hypothesis ``i`` (sacreBLEU's layout).

    Examples
    --------
    >>> hyps = ["the cat sat on the mat", "a dog barked"]
    >>> refs = [["the cat sat on the mat", "the dog barked loudly"]]
    >>> round(corpus_bleu(hyps, refs).score, 4)
    79.0665
    """
    _check(hypotheses, references, smooth_method, tokenize, max_ngram_order)

    def prepare(sentence: str) -> list[str]:
        sentence = sentence.lower() if lowercase else sentence
        sentence = sentence.rstrip()
        return (tokenize_13a(sentence) if tokenize == "13a" else sentence).split()

    correct = [0.0] * max_ngram_order
    total = [0.0] * max_ngram_order
    sys_len = ref_len = 0
    for i, hypothesis in enumerate(hypotheses):
        hyp = prepare(hypothesis)
        refs = [prepare(stream[i]) for stream in references]
        ref_counts: Counter = Counter()
        for ref in refs:
            ref_counts |= _ngrams(ref, max_ngram_order)
        sys_len += len(hyp)
        ref_len += _closest_length(len(hyp), [len(r) for r in refs])
        for gram, count in _ngrams(hyp, max_ngram_order).items():
            total[len(gram) - 1] += count
            correct[len(gram) - 1] += min(count, ref_counts[gram])
    return _score(correct, total, sys_len, ref_len, smooth_method, smooth_value)


def _score(correct: list[float], total: list[float], sys_len: int, ref_len: int,
           smooth_method: str, smooth_value: float | None) -> BLEUScore:
    """BLEU from the corpus statistics, smoothing orders without matches as asked."""
    value = _SMOOTH_DEFAULTS[smooth_method] if smooth_value is None else smooth_value
    if sys_len >= ref_len:
        bp = 1.0
    else:
        bp = math.exp(1 - ref_len / sys_len) if sys_len else 0.0
    orders = len(correct)
    precisions = [0.0] * orders
    if not any(correct):
        return BLEUScore(0.0, tuple(correct), tuple(total), tuple(precisions), bp, sys_len,
                         ref_len)
    halvings = 1.0
    for n in range(orders):
        if smooth_method == "add-k" and n > 0:
            correct[n] += value
            total[n] += value
        if total[n] == 0:
            break  # no hypothesis is this long: this and higher orders stay at 0
        if correct[n]:
            precisions[n] = 100.0 * correct[n] / total[n]
        elif smooth_method == "exp":
            halvings *= 2
            precisions[n] = 100.0 / (halvings * total[n])
        elif smooth_method == "floor":
            precisions[n] = 100.0 * value / total[n]
    if min(precisions) > 0:
        score = bp * math.exp(sum(math.log(p) for p in precisions) / orders)
    else:
        score = 0.0
    return BLEUScore(score, tuple(correct), tuple(total), tuple(precisions), bp, sys_len,
                     ref_len)
