"""SQuAD EM/F1 (official definitions) and GLUE accuracy/F1 on hand-worked examples."""

from __future__ import annotations

import math
import random
import warnings

import pytest
from scipy import stats
from sklearn.metrics import matthews_corrcoef as sk_matthews

from gluon_nlp_core.metrics import (
    accuracy,
    binary_f1,
    matthews_corrcoef,
    normalize_answer,
    pearson_corrcoef,
    spearman_corrcoef,
    squad_evaluate,
    squad_exact_match,
    squad_f1,
)


@pytest.mark.parametrize(
    "text, normalized",
    [
        ("The Denver Broncos", "denver broncos"),
        ("  an apple, a pear & THE plum!  ", "apple pear plum"),
        ("theatre another", "theatre another"),  # articles only as whole words
        ("U.S.-led", "usled"),
        ("café—naïve", "café—naïve"),  # only ASCII punctuation is removed
        ("A", ""),
    ],
)
def test_normalize_answer(text, normalized):
    assert normalize_answer(text) == normalized


def test_exact_match_and_f1_by_hand():
    assert squad_exact_match("the Broncos!", "Broncos") == 1.0
    assert squad_exact_match("Denver Broncos", "Broncos") == 0.0
    # pred {denver, broncos, team}, gold {denver, broncos}: P=2/3, R=1, F1=0.8
    assert squad_f1("Denver Broncos team", "the Denver Broncos") == pytest.approx(0.8)
    # token bags, not sets: pred [x, x, y], gold [x, y, y] share x once and y once: P=R=2/3
    assert squad_f1("x x y", "x y y") == pytest.approx(2 / 3)
    assert squad_f1("nothing shared", "other words") == 0.0


def test_empty_answers_differ_between_versions():
    assert squad_f1("", "", version="2.0") == 1.0
    assert squad_f1("the", "", version="2.0") == 1.0  # normalizes to empty
    assert squad_f1("something", "", version="2.0") == 0.0
    assert squad_f1("", "", version="1.1") == 0.0
    with pytest.raises(ValueError, match="version"):
        squad_f1("a", "b", version="3")


def test_squad_v2_evaluate_by_hand():
    references = {
        "q1": ["Denver Broncos", "The Denver Broncos"],  # answerable
        "q2": [],  # unanswerable
        "q3": ["in 1066"],
        "q4": [],
    }
    predictions = {"q1": "Broncos", "q2": "", "q3": "1066 AD", "q4": "France"}
    # q1: EM 0, F1 = best over golds: pred [broncos] vs [denver, broncos]: P=1, R=1/2 -> 2/3
    # q2: EM 1, F1 1 (no answer predicted); q3: [1066, ad] vs [in, 1066]: P=R=1/2 -> 1/2
    # q4: EM 0, F1 0 (answered an unanswerable question)
    result = squad_evaluate(references, predictions, version="2.0")
    assert result["total"] == 4
    assert result["exact_match"] == pytest.approx(100 * 1 / 4)
    assert result["f1"] == pytest.approx(100 * (2 / 3 + 1 + 1 / 2 + 0) / 4)
    assert result["HasAns_total"] == 2 and result["NoAns_total"] == 2
    assert result["HasAns_f1"] == pytest.approx(100 * (2 / 3 + 1 / 2) / 2)
    assert result["NoAns_exact_match"] == pytest.approx(50.0)


def test_squad_v1_evaluate_and_missing_predictions():
    references = {"a": ["Paris", "the city of Paris"], "b": ["42"]}
    result = squad_evaluate(references, {"a": "city of Paris"}, version="1.1")
    assert result == {"exact_match": 50.0, "f1": 50.0, "total": 2}
    assert "HasAns_f1" not in result
    with pytest.raises(ValueError, match="needs an answer"):
        squad_evaluate({"c": []}, {"c": ""}, version="1.1")


def test_glue_accuracy_and_positive_class_f1():
    predictions, labels = [1, 1, 0, 1, 0, 0], [1, 0, 0, 1, 1, 0]
    assert accuracy(predictions, labels) == pytest.approx(4 / 6)
    # tp=2, fp=1, fn=1 -> F1 = 4 / (4 + 2) = 2/3
    assert binary_f1(predictions, labels) == pytest.approx(2 / 3)
    assert binary_f1(["0", "1"], ["1", "1"], positive="1") == pytest.approx(2 / 3)
    assert binary_f1([0, 0], [1, 0]) == 0.0
    with pytest.raises(ValueError, match="predictions for"):
        accuracy([1], [1, 0])
    with pytest.raises(ValueError, match="no labels"):
        binary_f1([], [])


def test_matthews_by_hand_and_equal_to_sklearn():
    # tp=2, tn=2, fp=1, fn=0: (2*2 - 1*0) / sqrt(3 * 2 * 2 * 3) = 4/6
    assert matthews_corrcoef([1, 1, 0, 0, 1], [1, 0, 0, 0, 1]) == pytest.approx(2 / 3)
    assert matthews_corrcoef(["1", "0"], ["0", "1"]) == pytest.approx(-1.0)
    assert matthews_corrcoef([1, 1, 1], [1, 0, 1]) == 0.0  # one predicted class: undefined
    rng = random.Random(0)
    for classes in (2, 3):
        for _ in range(20):
            labels = [rng.randrange(classes) for _ in range(rng.randrange(2, 30))]
            predictions = [t if rng.random() < 0.6 else rng.randrange(classes) for t in labels]
            assert matthews_corrcoef(predictions, labels) == pytest.approx(
                sk_matthews(labels, predictions), abs=1e-12)
    with pytest.raises(ValueError, match="predictions for"):
        matthews_corrcoef([1], [1, 0])


def test_pearson_and_spearman_equal_scipy_ties_included():
    # deviations from the mean 2.75: 7.75 / 8.75
    assert pearson_corrcoef([1, 2, 3, 5], [1, 3, 2, 5]) == pytest.approx(31 / 35)
    # ranks with ties averaged: x -> 1, 2.5, 2.5, 4; y -> 1, 2, 3, 4
    assert spearman_corrcoef([0.0, 1.0, 1.0, 2.0], [1.0, 2.0, 3.0, 4.0]) == pytest.approx(
        4.5 / math.sqrt(4.5 * 5))
    rng = random.Random(1)
    for _ in range(20):
        n = rng.randrange(3, 25)
        labels = [round(rng.uniform(0, 5), 1) for _ in range(n)]
        predictions = [t + rng.gauss(0, 1.5) for t in labels]
        predictions[0] = predictions[-1]  # a tie in the predictions too
        assert pearson_corrcoef(predictions, labels) == pytest.approx(
            stats.pearsonr(predictions, labels)[0], abs=1e-12)
        assert spearman_corrcoef(predictions, labels) == pytest.approx(
            stats.spearmanr(predictions, labels)[0], abs=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns about the constant input
        assert math.isnan(stats.pearsonr([1.0, 1.0, 1.0], [1.0, 2.0, 3.0])[0])
    assert math.isnan(pearson_corrcoef([1.0, 1.0, 1.0], [1.0, 2.0, 3.0]))
    assert math.isnan(spearman_corrcoef([1.0, 2.0, 3.0], [2.0, 2.0, 2.0]))
    with pytest.raises(ValueError, match="at least 2"):
        pearson_corrcoef([1.0], [2.0])
