"""Corpus BLEU against sacreBLEU on worked cases, and GluonNLP's ``compute_bleu`` values
worked out by hand from its definition (its script is not a package to import)."""

from __future__ import annotations

import math

import pytest
import sacrebleu
import sacrebleu.metrics
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

from gluon_nlp_core.bleu import corpus_bleu, tokenize_13a

HYPS = ["The cat sat on the mat.", "It costs $3.50, isn't it?", "Gut@@en Morgen &amp; hallo",
        "a b c d e f g", "no match here"]
REFS = [["The cat is on the mat.", "It costs 3.50 dollars, doesn't it?",
         "Gut@@en Morgen & hallo !", "a b c d e f g", "nothing alike"],
        ["There is a cat on the mat.", "It is $3.50, isn't it?", "Guten Morgen",
         "a b x d e f", "nope"]]
#: Orders 3 and 4 without any match but with candidates: where the smoothing shows.
SPARSE = (["the red fox runs", "a dog"], [["the red dog walks far", "one dog"]])


@pytest.mark.parametrize("smooth_method", ["exp", "none", "floor", "add-k"])
@pytest.mark.parametrize("lowercase", [False, True])
@pytest.mark.parametrize("case", ["corpus", "sparse", "one_reference", "empty_hypothesis"])
def test_equals_sacrebleu(smooth_method, lowercase, case):
    hyps, refs = {"corpus": (HYPS, REFS), "sparse": SPARSE, "one_reference": (HYPS, REFS[:1]),
                  "empty_hypothesis": (["", "the cat"], [["a cat", "the cat sat"]])}[case]
    ours = corpus_bleu(hyps, refs, smooth_method=smooth_method, lowercase=lowercase)
    theirs = sacrebleu.corpus_bleu(hyps, refs, smooth_method=smooth_method, lowercase=lowercase)
    assert ours.score == pytest.approx(theirs.score, abs=1e-12)
    assert list(ours.counts) == list(theirs.counts) and list(ours.totals) == list(theirs.totals)
    assert list(ours.precisions) == pytest.approx(theirs.precisions, abs=1e-12)
    assert (ours.bp, ours.sys_len, ours.ref_len) == pytest.approx(
        (theirs.bp, theirs.sys_len, theirs.ref_len))


def test_smoothing_matters_on_the_sparse_case():
    scores = {m: corpus_bleu(*SPARSE, smooth_method=m).score for m in ("exp", "none", "floor")}
    assert scores["none"] == 0 and 0 < scores["floor"] and 0 < scores["exp"]
    assert scores["exp"] == pytest.approx(sacrebleu.corpus_bleu(*SPARSE).score)


def test_options_equal_sacrebleus():
    for (hyps, refs), kwargs in (((HYPS, REFS), dict(tokenize="none")),
                                 ((HYPS, REFS), dict(max_ngram_order=2)),
                                 (SPARSE, dict(smooth_method="floor", smooth_value=0.3))):
        ours = corpus_bleu(hyps, refs, **kwargs).score
        theirs = sacrebleu.metrics.BLEU(**kwargs).corpus_score(hyps, refs).score
        assert ours == pytest.approx(theirs) and ours != corpus_bleu(hyps, refs).score


def test_tokenizer_is_sacrebleus_13a():
    reference = Tokenizer13a()
    lines = HYPS + [r for refs in REFS for r in refs] + [
        "Hello-world 1-2 &quot;x&quot; <skipped> end", "3,000.5 x.y (a) [b] {c} ~^_` 'q' a/b"]
    for line in lines:
        assert tokenize_13a(line) == reference(line)


def _gluonnlp_bleu(matches, totals, ref_len, hyp_len, add_one=False):
    """GluonNLP's compute_bleu from its n-gram statistics: no smoothing, or add-one on every
    order; 0-1 scale."""
    c = 1 if add_one else 0
    precisions = [(m + c) / (t + c) if t > 0 else 0.0 for m, t in zip(matches, totals)]
    if min(precisions) == 0:
        return 0.0
    bp = 1.0 if hyp_len > ref_len else (math.exp(1 - ref_len / hyp_len) if hyp_len else 0.0)
    return bp * math.exp(sum(math.log(p) for p in precisions) / len(precisions))


def test_gluonnlps_compute_bleu_is_sacrebleu_without_smoothing():
    # GluonNLP's compute_bleu(tokenized=False, tokenizer='13a') tokenizes as 13a too, so the
    # statistics are these; it reports 0-1 and equals smooth_method="none" x 100.
    for hyps, refs in ((HYPS, REFS), SPARSE):
        ours = corpus_bleu(hyps, refs, smooth_method="none")
        expected = _gluonnlp_bleu(ours.counts, ours.totals, ours.ref_len, ours.sys_len)
        assert ours.score == pytest.approx(100 * expected, abs=1e-9)
    # Worked by hand: "the cat sat" vs "the cat sat down": 3/3, 2/2, 1/1, no 4-gram.
    assert corpus_bleu(["the cat sat"], [["the cat sat down"]], smooth_method="none").score == 0
    # Its smooth=True adds one to unigrams too: not sacreBLEU's add-k (which skips them).
    ours = corpus_bleu(*SPARSE, smooth_method="add-k")
    unsmoothed = corpus_bleu(*SPARSE, smooth_method="none")
    gluonnlp_add_one = _gluonnlp_bleu(unsmoothed.counts, unsmoothed.totals, unsmoothed.ref_len,
                                      unsmoothed.sys_len, add_one=True)
    assert abs(ours.score - 100 * gluonnlp_add_one) > 1


def test_bad_input_is_explained():
    with pytest.raises(TypeError, match=r"pass \[refs\]"):
        corpus_bleu(["a b"], ["a b"])
    with pytest.raises(ValueError, match="reference stream 1 has 1 sentences but there are 2"):
        corpus_bleu(["a", "b"], [["a", "b"], ["a"]])
    with pytest.raises(ValueError, match="unknown smooth_method 'add1'"):
        corpus_bleu(["a"], [["a"]], smooth_method="add1")
