"""Samplers: the same batches as GluonNLP 0.10's for the same seed, and clear errors."""

from __future__ import annotations

import random
import warnings
from typing import Any

import numpy as np
import pytest

from gluon_hub.compat import mx
from gluon_hub.data import (
    ConstWidthBucket,
    ExpWidthBucket,
    FixedBucketSampler,
    LinearWidthBucket,
    SortedBucketSampler,
    SortedSampler,
    SplitSampler,
)


def ints(value: Any) -> Any:
    """Nested batches as nested lists of Python ints (GluonNLP mixes in numpy ints)."""
    if isinstance(value, (list, tuple, np.ndarray)):
        return [ints(v) for v in value]
    return int(value)


def epochs(sampler: Any, seed: int, count: int = 2, rng: Any = np.random) -> list:
    rng.seed(seed)
    return [ints(list(sampler)) for _ in range(count)]


def quiet(factory: Any, *args: Any, **kwargs: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return factory(*args, **kwargs)


SCHEMES = [
    (ConstWidthBucket, "ConstWidthBucket", {}),
    (LinearWidthBucket, "LinearWidthBucket", {}),
    (ExpWidthBucket, "ExpWidthBucket", {"bucket_len_step": 1.4}),
]


@pytest.mark.parity
@pytest.mark.parametrize("ours, theirs, kwargs", SCHEMES)
@pytest.mark.parametrize("high, low, count", [(100, 1, 10), (57, 13, 4), (8, 3, 12), ((60, 30), (2, 5), 5)])
def test_bucket_schemes_equal_gluonnlp(nlp: Any, ours: Any, theirs: str, kwargs: dict,
                                       high: Any, low: Any, count: int) -> None:
    reference = getattr(nlp.sampler, theirs)(**kwargs)
    expected = reference(np.array(high, dtype=np.int32), np.array(low, dtype=np.int32), count) if isinstance(
        high, tuple) else reference(np.int32(high), np.int32(low), count)
    assert ints(ours(**kwargs)(high, low, count)) == ints(expected)


CASES = [
    dict(batch_size=8),
    dict(batch_size=5, num_buckets=4, shuffle=True),
    dict(batch_size=4, ratio=0.5, shuffle=True, bucket_scheme="LinearWidthBucket"),
    dict(batch_size=6, num_buckets=7, shuffle=True, bucket_scheme="ExpWidthBucket"),
    dict(batch_size=16, use_average_length=True, shuffle=True),
    dict(batch_size=3, num_shards=3, shuffle=True),
    dict(batch_size=4, num_buckets=None, bucket_keys=[20, 40, 60], shuffle=True),
]


@pytest.mark.parity
@pytest.mark.parametrize("multi", [False, True], ids=["lengths", "pairs"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()))
def test_fixed_bucket_sampler_equals_gluonnlp(nlp: Any, case: dict, multi: bool) -> None:
    rng = np.random.RandomState(len(str(case)))
    lengths = rng.randint(1, 60, size=(150, 2) if multi else 150)
    lengths = [tuple(map(int, x)) for x in lengths] if multi else lengths.tolist()
    ours, theirs = dict(case), dict(case)
    if "bucket_scheme" in case:
        ours["bucket_scheme"] = {"LinearWidthBucket": LinearWidthBucket, "ExpWidthBucket": ExpWidthBucket}[
            case["bucket_scheme"]]()
        theirs["bucket_scheme"] = getattr(nlp.sampler, case["bucket_scheme"])()
    if multi and "bucket_keys" in case:
        ours["bucket_keys"] = theirs["bucket_keys"] = [(k, k) for k in case["bucket_keys"]]
    sampler = quiet(FixedBucketSampler, lengths, **ours)
    reference = quiet(nlp.sampler.FixedBucketSampler, lengths, **theirs)
    assert len(sampler) == len(reference)
    assert epochs(sampler, 7) == epochs(reference, 7)
    assert sampler.stats().splitlines()[:5] == reference.stats().splitlines()
    if not case.get("num_shards"):
        flat = [i for batch in sampler for i in batch]
        assert sorted(flat) == list(range(len(lengths)))  # every sample once per epoch


def test_fixed_bucket_sampler_reports_padding_efficiency() -> None:
    sampler = FixedBucketSampler([2, 4, 6, 8], batch_size=2, bucket_keys=[4, 8], num_buckets=None)
    # Samples 2 and 4 pad to 4, samples 6 and 8 pad to 8: 20 real of 24 padded elements.
    assert sampler.padding_efficiency == pytest.approx(20 / 24)
    assert "padding_efficiency=0.8333" in sampler.stats()
    pairs = FixedBucketSampler([(1, 2), (2, 2)], batch_size=2, bucket_keys=[(2, 4)], num_buckets=None)
    assert pairs.padding_efficiency == pytest.approx((3 / 4, 4 / 8))


def test_empty_buckets_are_dropped_with_a_warning() -> None:
    with pytest.warns(UserWarning, match="Unused bucket keys=\\[5\\]"):
        sampler = FixedBucketSampler([10, 12, 30], batch_size=2, bucket_keys=[5, 15, 30], num_buckets=None)
    assert list(sampler) == [[2], [0, 1]]


@pytest.mark.parity
@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("mult, reverse", [(1, True), (2.5, False), (100, True)])
def test_sorted_bucket_sampler_equals_gluonnlp(nlp: Any, shuffle: bool, mult: float, reverse: bool) -> None:
    keys = np.random.RandomState(1).randint(1, 30, size=97).tolist()
    sampler = SortedBucketSampler(keys, batch_size=7, mult=mult, reverse=reverse, shuffle=shuffle)
    reference = nlp.sampler.SortedBucketSampler(keys, batch_size=7, mult=mult, reverse=reverse,
                                                shuffle=shuffle)
    got = epochs(sampler, 3)
    assert got == epochs(reference, 3)
    assert len(sampler) == len(got[0])


@pytest.mark.parity
@pytest.mark.parametrize("keys", [[3, 1, 2, 3, 1], [(1, 2), (1, 1), (0, 5)], ["b", "a", "c"],
                                  [0.5, 0.25, 0.5]])
@pytest.mark.parametrize("reverse", [True, False])
def test_sorted_sampler_equals_gluonnlp(nlp: Any, keys: list, reverse: bool) -> None:
    assert ints(list(SortedSampler(keys, reverse))) == ints(list(nlp.sampler.SortedSampler(keys, reverse)))


@pytest.mark.parity
@pytest.mark.parametrize("even_size", [False, True])
@pytest.mark.parametrize("length, parts", [(10, 3), (7, 7), (100, 4)])
def test_split_sampler_equals_gluonnlp_and_shards_disjointly(nlp: Any, length: int, parts: int,
                                                              even_size: bool) -> None:
    shards = []
    for index in range(parts):
        kwargs = dict(num_parts=parts, part_index=index, even_size=even_size, repeat=2)
        sampler = SplitSampler(length, **kwargs)
        assert epochs(sampler, index, rng=random) == epochs(nlp.sampler.SplitSampler(length, **kwargs), index,
                                                            rng=random)
        assert len(sampler) == len(list(sampler))
        shards.append(set(SplitSampler(length, num_parts=parts, part_index=index, shuffle=False)))
    assert set().union(*shards) == set(range(length))
    assert sum(map(len, shards)) == length  # disjoint


def test_split_sampler_reads_its_shard_from_a_kvstore() -> None:
    kv = mx.kv.create("local")  # one worker, rank 0: the whole dataset
    assert sorted(SplitSampler.from_kvstore(5, kv)) == [0, 1, 2, 3, 4]


@pytest.mark.parametrize(
    "call, error, words",
    [
        (lambda: FixedBucketSampler([], 2), ValueError, "non-empty"),
        (lambda: FixedBucketSampler([3, 0, 2], 2), ValueError, "sample 1"),
        (lambda: FixedBucketSampler([3, 2], 0), ValueError, "batch_size"),
        (lambda: FixedBucketSampler([3, 2], 2, ratio=-1), ValueError, "ratio"),
        (lambda: FixedBucketSampler([1.5, 2], 2), TypeError, "integers"),
        (lambda: FixedBucketSampler(["a", "b"], 2), TypeError, "integers"),
        (lambda: FixedBucketSampler([(1, 2), (3,)], 2), ValueError, "same size"),
        (lambda: FixedBucketSampler([3, 9], 2, bucket_keys=[5], num_buckets=None), ValueError,
         r"\[9\] fit in none"),
        (lambda: FixedBucketSampler([(3, 1)], 2, bucket_keys=[5]), TypeError, "tuples of 2 ints"),
        (lambda: FixedBucketSampler([3], 2, num_buckets=0), ValueError, "num_buckets"),
        (lambda: SortedBucketSampler([], 2), ValueError, "non-empty"),
        (lambda: SortedBucketSampler([1], 2, mult=0.5), ValueError, "mult"),
        (lambda: SplitSampler(3, num_parts=4), ValueError, "at least the number of parts"),
        (lambda: SplitSampler(3, num_parts=2, part_index=2), ValueError, "part_index"),
        (lambda: ExpWidthBucket(1.0), ValueError, "larger than 1"),
        (lambda: FixedBucketSampler([3] * 60, 2, dataset=[0] * 50), ValueError,
         "lengths has 60 entries but the dataset has 50 samples"),
        (lambda: SortedBucketSampler([3] * 4, 2, dataset=[0] * 5), ValueError,
         "sort_keys has 4 entries but the dataset has 5 samples"),
    ],
)
def test_bad_input_is_refused_clearly(call: Any, error: type, words: str) -> None:
    with pytest.raises(error, match=words):
        call()


def test_lengths_that_match_the_dataset_batch_every_sample_once() -> None:
    dataset = [[7] * n for n in (3, 9, 4, 1, 6)]
    sampler = FixedBucketSampler([len(x) for x in dataset], 2, num_buckets=2, dataset=dataset)
    assert sorted(i for batch in sampler for i in batch) == list(range(len(dataset)))
