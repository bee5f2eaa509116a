"""Similarity and analogy functions equal GluonNLP 0.10's evaluation blocks on generated tables."""

from __future__ import annotations

import numpy as np
import pytest

import gluon_hub.compat  # noqa: F401  (numpy aliases for mxnet, before gluonnlp)
from gluon_nlp_core.text.embedding_evaluation import cosine_similarity, three_cos_add, three_cos_mul

import gluonnlp

mx = gluon_hub.compat.mx
ev = gluonnlp.embedding.evaluation


@pytest.fixture
def table() -> np.ndarray:
    return np.random.RandomState(0).standard_normal((40, 8)).astype(np.float32)


def _questions(n: int = 25):
    rng = np.random.RandomState(1)
    return [rng.randint(0, 40, n) for _ in range(3)]


def test_cosine_similarity_equals_gluonnlp(table) -> None:
    w1, w2, _ = _questions()
    block = ev.WordEmbeddingSimilarity(mx.nd.array(table))
    block.initialize()
    theirs = block(mx.nd.array(w1), mx.nd.array(w2)).asnumpy()
    np.testing.assert_allclose(cosine_similarity(table[w1], table[w2]), theirs, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name, ours, kwargs", [
    ("ThreeCosAdd", three_cos_add, {}),
    ("ThreeCosAdd", three_cos_add, {"normalize": False}),
    ("ThreeCosMul", three_cos_mul, {}),
])
@pytest.mark.parametrize("exclude", [True, False])
def test_analogies_equal_gluonnlp(table, name, ours, kwargs, exclude) -> None:
    w1, w2, w3 = _questions()
    block = ev.create("analogy", name, idx_to_vec=mx.nd.array(table), k=3,
                      exclude_question_words=exclude, **kwargs)
    block.initialize()
    theirs = block(*(mx.nd.array(w) for w in (w1, w2, w3))).asnumpy().astype(np.int64)
    np.testing.assert_array_equal(ours(table, w1, w2, w3, k=3, exclude_question_words=exclude, **kwargs), theirs)


def test_bad_arguments_are_refused(table) -> None:
    with pytest.raises(ValueError, match="differ in length"):
        three_cos_add(table, [1, 2], [3], [4])
    with pytest.raises(IndexError, match="40 rows"):
        three_cos_mul(table, [1], [2], [40])
    with pytest.raises(ValueError, match="k must be"):
        three_cos_add(table, [1], [2], [3], k=0)
