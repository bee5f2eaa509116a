"""Batchify functions: equal to GluonNLP 0.10's, composable, picklable, clear on bad input."""

from __future__ import annotations

import pickle
import warnings
from collections import namedtuple
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from gluon_hub.compat import mx
from gluon_hub.data import Dict, List, NamedTuple, Pad, Stack, Tuple

Sample = namedtuple("Sample", ["tokens", "label"])


def same(got: Any, expected: Any) -> None:
    """Equal type structure, shapes, dtypes and values."""
    if isinstance(expected, (tuple, list)):
        assert type(got) is type(expected) and len(got) == len(expected)
        for g, e in zip(got, expected):
            same(g, e)
        return
    if isinstance(expected, dict):
        assert got.keys() == expected.keys()
        for key in expected:
            same(got[key], expected[key])
        return
    assert isinstance(got, mx.nd.NDArray)
    assert got.shape == expected.shape
    assert np.dtype(got.dtype) == np.dtype(expected.dtype)
    np.testing.assert_array_equal(got.asnumpy(), expected.asnumpy())


def reference(nlp: Any, name: str, *args: Any, **kwargs: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return getattr(nlp.batchify, name)(*args, **kwargs)


INT_ROWS = [[1, 2, 3, 4], [4, 5, 6], [8, 2]]
ARRAYS_2D = [np.arange(12).reshape(4, 3), np.arange(6).reshape(2, 3), np.ones((3, 3), dtype=np.int64)]


@pytest.mark.parity
@pytest.mark.parametrize(
    "data, kwargs",
    [
        (INT_ROWS, {}),
        (INT_ROWS, dict(pad_val=-1, ret_length=True)),
        (INT_ROWS, dict(round_to=8, dtype="int32")),
        ([np.array(r, dtype=np.int32) for r in INT_ROWS], dict(ret_length=True, pad_val=7)),
        ([np.array(r, dtype=np.float16) for r in INT_ROWS], dict(pad_val=0.5)),
        (ARRAYS_2D, {}),
        ([a.T for a in ARRAYS_2D], dict(axis=1, pad_val=-1, ret_length=True)),
        ([a.T for a in ARRAYS_2D], dict(axis=-1, round_to=3)),
        ([np.zeros((2, n, 3), dtype=np.float32) + n for n in (1, 4, 2)], dict(axis=1, pad_val=9)),
        ([mx.nd.array(r) for r in INT_ROWS], dict(ret_length=True)),
        ([np.array([], dtype=np.int32), np.array([1], dtype=np.int32)], {}),
    ],
)
@pytest.mark.filterwarnings("ignore:Using Pad with NDArrays")
def test_pad_equals_gluonnlp(nlp: Any, data: list, kwargs: dict) -> None:
    same(Pad(**kwargs)(data), reference(nlp, "Pad", **{"pad_val": 0, **kwargs})(data))


@pytest.mark.parity
@pytest.mark.parametrize(
    "data, kwargs",
    [
        ([1, 0, 1], {}),
        ([0.5, 1.5], {}),
        ([0.5, 1.5], dict(dtype="float32")),
        (INT_ROWS[:1] * 3, {}),
        (ARRAYS_2D[:1] * 2, dict(dtype="float16")),
        ([mx.nd.array([1, 2]), mx.nd.array([3, 4])], {}),
        ([np.array(True), np.array(False)], {}),
    ],
)
def test_stack_equals_gluonnlp(nlp: Any, data: list, kwargs: dict) -> None:
    same(Stack(**kwargs)(data), reference(nlp, "Stack", **kwargs)(data))


@pytest.mark.parity
def test_composites_equal_gluonnlp(nlp: Any) -> None:
    bf = nlp.batchify
    pairs = [([1, 2, 3], 0), ([4, 5], 1), ([6], 0)]
    same(Tuple(Pad(), Stack())(pairs), reference(nlp, "Tuple", bf.Pad(pad_val=0), bf.Stack())(pairs))
    same(Tuple([Pad(ret_length=True), List()])(pairs)[0],
         reference(nlp, "Tuple", [bf.Pad(pad_val=0, ret_length=True), bf.List()])(pairs)[0])
    assert Tuple(Pad(), List())(pairs)[1] == [0, 1, 0]
    dicts = [{"tokens": t, "label": y} for t, y in pairs]
    same(Dict({"tokens": Pad(), "label": Stack()})(dicts),
         reference(nlp, "Dict", {"tokens": bf.Pad(pad_val=0), "label": bf.Stack()})(dicts))
    samples = [Sample(t, y) for t, y in pairs]
    got = NamedTuple(Sample, {"label": Stack(), "tokens": Pad()})(samples)
    assert isinstance(got, Sample)
    same(tuple(got), tuple(reference(nlp, "NamedTuple", Sample, [bf.Pad(pad_val=0), bf.Stack()])(samples)))
    nested = [((t, y), y) for t, y in pairs]  # composes: a Tuple inside a Tuple
    (tokens, labels), again = Tuple(Tuple(Pad(), Stack()), Stack())(nested)
    same(labels, again)


@pytest.mark.parity
def test_pad_lists_keep_fractions_that_gluonnlp_truncated(nlp: Any) -> None:
    # GluonNLP filled an int64 buffer (the type of pad_val=0) before converting lists to
    # float32, so 1.5 became 1.0; the documented deviation is to keep the value.
    data = [[1.5, 2.5], [3.25]]
    assert Pad()(data).asnumpy().tolist() == [[1.5, 2.5], [3.25, 0.0]]
    assert reference(nlp, "Pad", pad_val=0)(data).asnumpy().tolist() == [[1.0, 2.0], [3.0, 0.0]]


DTYPES = st.sampled_from([np.int32, np.int64, np.float32, np.float64, np.float16, np.uint8, np.int8])


@st.composite
def ragged_batches(draw: Any) -> tuple[list[np.ndarray], int]:
    ndim = draw(st.integers(1, 3))
    axis = draw(st.integers(-ndim, ndim - 1))
    rest = draw(st.lists(st.integers(1, 3), min_size=ndim, max_size=ndim))
    dtype = draw(DTYPES)
    samples = []
    for _ in range(draw(st.integers(1, 6))):
        shape = list(rest)
        shape[axis] = draw(st.integers(0, 7))
        values = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape) % 100
        samples.append(values.astype(dtype))
    return samples, axis


@pytest.mark.parity
@settings(max_examples=60, deadline=None)
@given(batch=ragged_batches(), pad_val=st.integers(-3, 3), round_to=st.none() | st.integers(1, 5),
       ret_length=st.booleans(), out_dtype=st.none() | DTYPES)
def test_pad_matches_gluonnlp_on_random_shapes_and_dtypes(nlp: Any, batch: Any, pad_val: int, round_to: Any,
                                                           ret_length: bool, out_dtype: Any) -> None:
    samples, axis = batch
    kwargs = dict(axis=axis, pad_val=pad_val, round_to=round_to, ret_length=ret_length, dtype=out_dtype)
    if max(s.shape[axis] for s in samples) == 0 and round_to is None:
        kwargs["round_to"] = 1  # both sides agree on an all-empty batch only through round_to
    got = Pad(**kwargs)(samples)
    same(got, reference(nlp, "Pad", **kwargs)(samples))
    padded = (got[0] if ret_length else got).asnumpy()
    for i, sample in enumerate(samples):  # and it is what padding means
        index = [slice(None)] * sample.ndim
        index[axis] = slice(0, sample.shape[axis])
        np.testing.assert_array_equal(padded[i][tuple(index)], sample.astype(padded.dtype))


@pytest.mark.parity
@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(1, 4), max_size=3), count=st.integers(1, 5), dtype=DTYPES)
def test_stack_matches_gluonnlp_on_random_shapes(nlp: Any, shape: list, count: int, dtype: Any) -> None:
    samples = [np.full(shape, i, dtype=dtype) for i in range(count)]
    same(Stack()(samples), reference(nlp, "Stack")(samples))


@pytest.mark.parametrize(
    "fn, data, error, words",
    [
        (Pad(), [], ValueError, "empty"),
        (Stack(), [], ValueError, "empty"),
        (Pad(), [[1, 2], [[1, 2]]], ValueError, "mix ranks"),
        (Pad(), [np.ones((2, 3)), np.ones((2, 4))], ValueError, "differ outside the padded axis"),
        (Pad(), [1, 2], ValueError, "scalars"),
        (Pad(axis=2), [[1, 2]], ValueError, "out of range"),
        (Pad(), [["a", "b"], ["c"]], TypeError, "not numeric"),
        (Pad(), [[1, [2, 3]]], TypeError, "ragged"),
        (Stack(), [[1, 2], [3]], ValueError, "differ in shape"),
        (Stack(), ["a", "b"], TypeError, "not numeric"),
        (Stack(), [None, None], TypeError, "sample 0 is not numeric"),
        (Stack(), [{"a": 1}], TypeError, "sample 0 is not numeric"),
        (Stack(), [[1, 2], [3, None]], TypeError, "sample 1 is not numeric"),
        (Stack(), [[1, [2, 3]], [4, [5]]], ValueError, "differ in shape \\(ragged\\)"),
        (Stack(), "ab", TypeError, "list of samples"),
        (Tuple(Pad(), Stack()), [([1], 0, 5)], ValueError, "3 fields"),
        (Tuple(Pad(), Stack()), [5], TypeError, "not a tuple"),
        (Dict({"x": Stack()}), [{"y": 1}], ValueError, "'x'"),
        (NamedTuple(Sample, [Pad(), Stack()]), [([1], 0)], TypeError, "not a Sample"),
        (Pad(dtype="float32"), [np.array(["x"])], TypeError, "not numeric"),
    ],
)
def test_bad_input_is_refused_clearly(fn: Any, data: Any, error: type, words: str) -> None:
    with pytest.raises(error, match=words):
        fn(data)


def test_bad_arguments_are_refused_clearly() -> None:
    with pytest.raises(TypeError, match="cannot hold int16"):
        Pad(dtype="int16")
    with pytest.raises(TypeError, match="axis"):
        Pad(axis=1.0)
    with pytest.raises(ValueError, match="round_to"):
        Pad(round_to=0)
    with pytest.raises(TypeError, match="batchify function"):
        Tuple(Pad(), 3)
    with pytest.raises(ValueError, match="fields"):
        NamedTuple(Sample, [Pad()])
    with pytest.raises(TypeError, match="namedtuple class"):
        NamedTuple(tuple, [Pad()])
    with pytest.raises(TypeError, match="mapping"):
        Dict([Pad()])


def test_batchify_functions_pickle_and_still_work() -> None:
    fn = Tuple(Pad(pad_val=-1, ret_length=True, round_to=2), Dict({"a": Stack()}), List(),
               NamedTuple(Sample, [Pad(), Stack()]))
    again = pickle.loads(pickle.dumps(fn))
    data = [([1, 2, 3], {"a": 1}, "x", Sample([1], 0)), ([4], {"a": 2}, "y", Sample([2, 3], 1))]
    same(again(data)[0], fn(data)[0])
    assert repr(again) == repr(fn)


class _Pairs(mx.gluon.data.Dataset):
    """Deterministic (tokens, label) samples of varying length; module level, so it pickles."""

    def __len__(self) -> int:
        return 40

    def __getitem__(self, idx: int) -> tuple[np.ndarray, int]:
        return np.arange(idx % 7 + 1, dtype=np.int32) + idx, idx % 3


@pytest.mark.parametrize("loader_kwargs", [dict(num_workers=2), dict(num_workers=2, thread_pool=True)])
def test_works_in_a_dataloader_with_workers(loader_kwargs: dict) -> None:
    from gluon_hub.data import FixedBucketSampler

    dataset = _Pairs()
    batchify = Tuple(Pad(pad_val=-1, ret_length=True), Stack())
    lengths = [len(dataset[i][0]) for i in range(len(dataset))]
    sampler = FixedBucketSampler(lengths, batch_size=6, num_buckets=3)
    loader = mx.gluon.data.DataLoader(dataset, batch_sampler=sampler, batchify_fn=batchify, **loader_kwargs)
    serial = [batchify([dataset[i] for i in batch]) for batch in sampler]
    batches = list(loader)
    assert len(batches) == len(serial) == len(sampler)
    for got, expected in zip(batches, serial):
        same(got, expected)
