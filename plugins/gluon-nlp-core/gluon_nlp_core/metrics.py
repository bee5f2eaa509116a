"""SQuAD exact match / F1 as the official evaluation scripts define them; GLUE's metrics.

GLUE scores CoLA by the Matthews correlation, MRPC and QQP by accuracy and F1, STS-B by the
Pearson and Spearman correlations, the other tasks by accuracy.

SQuAD answers are compared after normalization: lower-case, drop ASCII punctuation, drop
the articles *a*, *an*, *the*, collapse whitespace. F1 is over the bags of normalized
tokens, and each question scores the best match over its gold answers. Version 2.0 adds
unanswerable questions: their only gold answer is the empty string, which an empty
prediction matches exactly (EM = F1 = 1) and anything else misses; gold answers that
normalize to nothing are dropped first, as the 2.0 script does.
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from typing import Hashable, Mapping, Sequence

__all__ = [
    "normalize_answer",
    "squad_exact_match",
    "squad_f1",
    "squad_evaluate",
    "accuracy",
    "binary_f1",
    "matthews_corrcoef",
    "pearson_corrcoef",
    "spearman_corrcoef",
]

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCTUATION = str.maketrans("", "", string.punctuation)
_VERSIONS = ("1.1", "2.0")


def normalize_answer(text: str) -> str:
    """SQuAD's answer normalization.

    Examples
    --------
    >>> normalize_answer("The  Denver Broncos!")
    'denver broncos'
    """
    text = text.lower().translate(_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def _check_version(version: str) -> None:
    if version not in _VERSIONS:
        raise ValueError(f"SQuAD version must be one of {_VERSIONS}, got {version!r}")


def squad_exact_match(prediction: str, gold: str) -> float:
    """1.0 when prediction and gold answer are equal after normalization, else 0.0."""
    return float(normalize_answer(prediction) == normalize_answer(gold))


def squad_f1(prediction: str, gold: str, version: str = "2.0") -> float:
    """Token-bag F1 of one prediction against one gold answer.

    With ``version="2.0"`` two empty (normalized) answers agree (1.0); version 1.1's script
    scores any pair without a common token 0.0.

    Examples
    --------
    >>> round(squad_f1("the Denver Broncos", "Denver Broncos team"), 4)
    0.8
    """
    _check_version(version)
    pred = normalize_answer(prediction).split()
    truth = normalize_answer(gold).split()
    if version == "2.0" and (not pred or not truth):
        return float(pred == truth)
    common = sum((Counter(pred) & Counter(truth)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(truth)
    return 2 * precision * recall / (precision + recall)


def _gold_answers(answers: Sequence[str], version: str) -> list[str]:
    if version == "2.0":
        kept = [a for a in answers if normalize_answer(a)]
        return kept or [""]
    if not answers:
        raise ValueError("SQuAD 1.1 has no unanswerable questions: every question needs an answer")
    return list(answers)


def squad_evaluate(
    references: Mapping[str, Sequence[str]],
    predictions: Mapping[str, str],
    version: str = "2.0",
) -> dict[str, float]:
    """Exact match and F1 (in percent) over a set of questions.

    Parameters
    ----------
    references : question id -> gold answer texts; an empty list marks an unanswerable
        (SQuAD 2.0) question.
    predictions : question id -> predicted text (``""`` predicts "no answer"). A question
        without a prediction scores 0.
    version : ``"1.1"`` or ``"2.0"``, the evaluation script to follow.

    Returns
    -------
    ``{"exact_match", "f1", "total"}``, plus for 2.0 the same over answerable
    (``HasAns_*``) and unanswerable (``NoAns_*``) questions, where there are any.

    Examples
    --------
    >>> refs = {"q1": ["Denver Broncos", "the Broncos"], "q2": []}
    >>> scores = squad_evaluate(refs, {"q1": "Broncos", "q2": ""})
    >>> scores["exact_match"], scores["f1"], scores["HasAns_total"], scores["NoAns_f1"]
    (100.0, 100.0, 1, 100.0)
    """
    _check_version(version)
    exact: dict[str, float] = {}
    f1: dict[str, float] = {}
    for qid, answers in references.items():
        golds = _gold_answers(answers, version)
        if qid not in predictions:
            exact[qid] = f1[qid] = 0.0
            continue
        pred = predictions[qid]
        exact[qid] = max(squad_exact_match(pred, g) for g in golds)
        f1[qid] = max(squad_f1(pred, g, version) for g in golds)
    result = _summary(exact, f1, list(references))
    if version == "2.0":
        # The 2.0 script splits on whether the question lists answers at all.
        has_answer = [q for q, a in references.items() if a]
        no_answer = [q for q, a in references.items() if not a]
        for prefix, qids in (("HasAns_", has_answer), ("NoAns_", no_answer)):
            if qids:
                result.update({prefix + k: v for k, v in _summary(exact, f1, qids).items()})
    return result


def _summary(
    exact: Mapping[str, float], f1: Mapping[str, float], qids: Sequence[str]
) -> dict[str, float]:
    total = len(qids)
    if total == 0:
        return {"exact_match": 0.0, "f1": 0.0, "total": 0}
    return {
        "exact_match": 100.0 * sum(exact[q] for q in qids) / total,
        "f1": 100.0 * sum(f1[q] for q in qids) / total,
        "total": total,
    }


def _paired(predictions: Sequence[Hashable], labels: Sequence[Hashable]) -> None:
    if len(predictions) != len(labels):
        raise ValueError(f"{len(predictions)} predictions for {len(labels)} labels")
    if not labels:
        raise ValueError("no labels to score")


def accuracy(predictions: Sequence[Hashable], labels: Sequence[Hashable]) -> float:
    """Fraction of predictions equal to their label (GLUE SST-2, MNLI, MRPC ...).

    Examples
    --------
    >>> accuracy([1, 0, 1, 1], [1, 1, 1, 0])
    0.5
    """
    _paired(predictions, labels)
    return sum(p == t for p, t in zip(predictions, labels)) / len(labels)


def binary_f1(
    predictions: Sequence[Hashable], labels: Sequence[Hashable], positive: Hashable = 1
) -> float:
    """F1 of the positive class (GLUE MRPC and QQP report it); 0.0 when nothing is positive.

    Examples
    --------
    >>> round(binary_f1([1, 1, 0, 0], [1, 0, 1, 0]), 4)
    0.5
    """
    _paired(predictions, labels)
    tp = sum(p == positive and t == positive for p, t in zip(predictions, labels))
    fp = sum(p == positive and t != positive for p, t in zip(predictions, labels))
    fn = sum(p != positive and t == positive for p, t in zip(predictions, labels))
    if tp == 0:
        return 0.0
    return 2 * tp / (2 * tp + fp + fn)


def matthews_corrcoef(predictions: Sequence[Hashable], labels: Sequence[Hashable]) -> float:
    """Matthews correlation of predicted and true classes (GLUE CoLA), any number of classes.

    The multi-class form (Gorodkin's R_K), equal to scikit-learn's ``matthews_corrcoef``;
    0.0 when either side holds a single class, where the correlation is undefined.

    Examples
    --------
    >>> round(matthews_corrcoef([1, 1, 0, 0, 1], [1, 0, 0, 0, 1]), 4)
    0.6667
    """
    _paired(predictions, labels)
    n = len(labels)
    correct = sum(p == t for p, t in zip(predictions, labels))
    predicted, true = Counter(predictions), Counter(labels)
    both = sum(predicted[c] * true[c] for c in predicted.keys() & true.keys())
    covariance = correct * n - both
    spread = (n * n - sum(v * v for v in predicted.values())) * (
        n * n - sum(v * v for v in true.values()))
    return covariance / math.sqrt(spread) if spread else 0.0


def _values(predictions: Sequence[float],
            labels: Sequence[float]) -> tuple[list[float], list[float]]:
    _paired(predictions, labels)
    if len(labels) < 2:
        raise ValueError(f"a correlation needs at least 2 pairs, got {len(labels)}")
    return [float(p) for p in predictions], [float(t) for t in labels]


def _pearson(x: list[float], y: list[float]) -> float:
    mean_x, mean_y = math.fsum(x) / len(x), math.fsum(y) / len(y)
    dx, dy = [v - mean_x for v in x], [v - mean_y for v in y]
    spread = math.sqrt(math.fsum(a * a for a in dx) * math.fsum(b * b for b in dy))
    if spread == 0:
        return math.nan  # a constant side: undefined, as scipy reports it
    return max(-1.0, min(1.0, math.fsum(a * b for a, b in zip(dx, dy)) / spread))


def pearson_corrcoef(predictions: Sequence[float], labels: Sequence[float]) -> float:
    """Pearson correlation of predicted and true scores (GLUE STS-B), as
    ``scipy.stats.pearsonr``; NaN when either side is constant.

    Examples
    --------
    >>> round(pearson_corrcoef([1.0, 2.0, 3.0, 5.0], [1.0, 3.0, 2.0, 5.0]), 4)
    0.8857
    """
    return _pearson(*_values(predictions, labels))


def _ranks(values: list[float]) -> list[float]:
    """1-based ranks, ties sharing their average rank (scipy's ``rankdata`` default)."""
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for i in order[start:end + 1]:
            ranks[i] = (start + end) / 2 + 1
        start = end + 1
    return ranks


def spearman_corrcoef(predictions: Sequence[float], labels: Sequence[float]) -> float:
    """Spearman rank correlation (GLUE STS-B): Pearson's on ranks, ties averaged, as
    ``scipy.stats.spearmanr``; NaN when either side is constant.

    Examples
    --------
    >>> spearman_corrcoef([0.1, 0.4, 0.2, 0.9], [1.0, 3.0, 2.0, 5.0])
    1.0
    """
    x, y = _values(predictions, labels)
    return _pearson(_ranks(x), _ranks(y))
