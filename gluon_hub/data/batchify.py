"""Batchify functions: turn the list of samples a DataLoader drew into one batch.

They are plain picklable objects, so they compose (``Tuple(Pad(), Stack())``) and travel
to DataLoader worker processes. The API and the results are those of GluonNLP 0.10's
``gluonnlp.data.batchify``; the implementation builds each batch in one numpy pass and
hands the buffer to MXNet without a copy.

Examples
--------
>>> from gluon_hub.data import Pad, Stack, Tuple
>>> tokens, label = Tuple(Pad(pad_val=0), Stack())([([1, 2, 3], 0), ([4, 5], 1)])
>>> tokens.asnumpy().tolist(), label.asnumpy().tolist()
([[1.0, 2.0, 3.0], [4.0, 5.0, 0.0]], [0, 1])
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ._ndarray import check_dtype, is_ndarray, to_ndarray

__all__ = ["Stack", "Pad", "Tuple", "List", "Dict", "NamedTuple"]

_NUMERIC_KINDS = "biuf"


def _check_batch(data: Any, owner: str) -> None:
    if isinstance(data, (str, bytes, Mapping)) or not isinstance(data, Sequence) and not (
        isinstance(data, np.ndarray) or is_ndarray(data)
    ):
        raise TypeError(f"{owner} takes a list of samples, got {type(data).__name__}")
    if len(data) == 0:
        raise ValueError(f"{owner}: the batch is empty; a batch needs at least one sample")


def _shapes(samples: Sequence[Any]) -> set[str]:
    """The distinct shapes of ``samples``, as text; a ragged nested list is ``"ragged"``."""
    shapes = set()
    for sample in samples:
        try:
            shapes.add(str(np.shape(sample)))
        except ValueError:  # a ragged nested list has no shape
            shapes.add("ragged")
    return shapes


def _check_callable(fn: Any, owner: str, where: str) -> None:
    if not callable(fn):
        raise TypeError(f"{owner}: {where} must be a batchify function, got {type(fn).__name__}")


def _numeric(array: np.ndarray, owner: str, index: int) -> None:
    if array.dtype.kind not in _NUMERIC_KINDS:
        raise TypeError(
            f"{owner}: sample {index} is not numeric (numpy makes it {array.dtype}); "
            "ragged nested lists and text cannot be batched this way; use List() for "
            "fields that stay Python objects"
        )


class Stack:
    """Stack samples of one shape into a batch with a new leading axis.

    Parameters
    ----------
    dtype : the output dtype; default: numpy's dtype for the stacked samples (the first
        sample's dtype for NDArray samples).

    Examples
    --------
    >>> Stack()([[1, 2], [3, 4]]).asnumpy().tolist()
    [[1, 2], [3, 4]]
    """

    def __init__(self, dtype: Any = None) -> None:
        self._dtype = None if dtype is None else check_dtype(dtype, "Stack")

    def __repr__(self) -> str:
        return f"Stack(dtype={None if self._dtype is None else self._dtype.name!r})"

    def __call__(self, data: Sequence[Any]) -> Any:
        """Return the samples of ``data`` stacked as one NDArray."""
        _check_batch(data, "Stack")
        first = data[0]
        dtype: np.dtype | None
        if is_ndarray(first):
            dtype = np.dtype(first.dtype) if self._dtype is None else self._dtype
            arrays = [x.asnumpy() if is_ndarray(x) else np.asarray(x) for x in data]
        else:
            dtype = self._dtype
            arrays = list(data)
        out: np.ndarray | None
        try:
            out = np.array(arrays)
        except ValueError:  # numpy refuses samples of different shapes
            out = None
        shapes = _shapes(arrays) if out is None or out.dtype.kind == "O" else set()
        if len(shapes) > 1 or "ragged" in shapes:
            raise ValueError(f"Stack: samples differ in shape ({', '.join(sorted(shapes))}); "
                             "use Pad() to batch samples of different lengths")
        if out is None or out.dtype.kind not in _NUMERIC_KINDS:  # same shapes: the values are the problem
            for index, sample in enumerate(arrays):
                _numeric(np.asarray(sample), "Stack", index)
            _numeric(out, "Stack", 0)  # type: ignore[arg-type]  # a None out failed on a sample above
        if dtype is None:
            dtype = check_dtype(out.dtype, "Stack")  # type: ignore[union-attr]  # as above
        return to_ndarray(out.astype(dtype, copy=False))  # type: ignore[union-attr]  # as above


class Pad:
    """Pad samples to the longest along ``axis`` and stack them into a batch.

    Parameters
    ----------
    axis : the axis of each sample to pad (samples agree on every other axis).
    pad_val : the value written into the padding.
    ret_length : also return the int32 NDArray of the samples' lengths along ``axis``.
    dtype : the output dtype; default: the first sample's dtype for numpy and NDArray
        samples, float32 for lists (as GluonNLP does).
    round_to : round the padded length up to a multiple of this, to reuse kernels.

    Examples
    --------
    >>> batch, lengths = Pad(pad_val=-1, ret_length=True)([[1, 2, 3], [4]])
    >>> batch.asnumpy().tolist(), lengths.asnumpy().tolist()
    ([[1.0, 2.0, 3.0], [4.0, -1.0, -1.0]], [3, 1])
    """

    def __init__(
        self,
        axis: int = 0,
        pad_val: float = 0,
        ret_length: bool = False,
        dtype: Any = None,
        round_to: int | None = None,
    ) -> None:
        if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
            raise TypeError(f"Pad: axis must be an int, got {axis!r}")
        if pad_val is None:
            pad_val = 0
        if not isinstance(pad_val, (int, float, np.number)) or isinstance(pad_val, np.complexfloating):
            raise TypeError(f"Pad: pad_val must be a real number, got {pad_val!r}")
        if round_to is not None and (
            not isinstance(round_to, (int, np.integer)) or isinstance(round_to, bool) or round_to < 1
        ):
            raise ValueError(f"Pad: round_to must be a positive int or None, got {round_to!r}")
        self._axis = int(axis)
        self._pad_val = pad_val
        self._ret_length = bool(ret_length)
        self._dtype = None if dtype is None else check_dtype(dtype, "Pad")
        self._round_to = None if round_to is None else int(round_to)

    def __repr__(self) -> str:
        dtype = None if self._dtype is None else self._dtype.name
        return (
            f"Pad(axis={self._axis}, pad_val={self._pad_val!r}, ret_length={self._ret_length}, "
            f"dtype={dtype!r}, round_to={self._round_to})"
        )

    def __call__(self, data: Sequence[Any]) -> Any:
        """Return the padded batch, and the lengths too when ``ret_length`` is set."""
        _check_batch(data, "Pad")
        arrays, dtype, same_dtype = self._arrays(data)
        ndim = arrays[0].ndim
        if ndim == 0:
            raise ValueError("Pad: samples are scalars; Pad needs samples with at least one axis")
        if not -ndim <= self._axis < ndim:
            raise ValueError(f"Pad: axis {self._axis} is out of range for {ndim}-dimensional samples")
        axis = self._axis % ndim
        shapes = list(map(_shape_of, arrays))
        if set(map(len, shapes)) != {ndim}:
            _refuse(shapes, axis)
        lengths = list(map(operator.itemgetter(axis), shapes))
        rest: tuple[int, ...] = ()
        if ndim > 1:
            others = {s[:axis] + s[axis + 1 :] for s in shapes}
            if len(others) > 1:
                _refuse(shapes, axis)
            rest = others.pop()
        size = max(lengths)
        if self._round_to is not None:
            size = self._round_to * math.ceil(size / self._round_to)
        shape = (len(arrays),) + rest[:axis] + (size,) + rest[axis:]
        if not same_dtype:
            arrays = [a if a.dtype == dtype else a.astype(dtype) for a in arrays]
        batch = to_ndarray(_padded(arrays, lengths, shape, axis, self._pad_val, dtype))
        if self._ret_length:
            return batch, to_ndarray(np.array(lengths, dtype=np.int32))
        return batch

    def _arrays(self, data: Sequence[Any]) -> tuple[list[np.ndarray], np.dtype, bool]:
        """The samples as numpy arrays, the batch dtype, and whether all samples have it."""
        first = data[0]
        if self._dtype is not None:
            dtype = self._dtype
        elif is_ndarray(first) or isinstance(first, np.ndarray):
            dtype = check_dtype(first.dtype, "Pad")
        else:
            dtype = np.dtype(np.float32)
        try:
            arrays = [
                x if type(x) is np.ndarray else x.asnumpy() if is_ndarray(x) else np.asarray(x)
                for x in data
            ]
        except ValueError:  # numpy refuses ragged nested lists
            bad = next(i for i, x in enumerate(data) if _shapes([x]) == {"ragged"})
            raise TypeError(f"Pad: sample {bad} is a ragged nested list, not a numeric array") from None
        dtypes = set(map(_dtype_of, arrays))
        for i, array in enumerate(arrays) if any(d.kind not in _NUMERIC_KINDS for d in dtypes) else ():
            _numeric(array, "Pad", i)
        return arrays, dtype, dtypes == {dtype}


_shape_of = operator.attrgetter("shape")
_dtype_of = operator.attrgetter("dtype")


def _refuse(shapes: list[tuple[int, ...]], axis: int) -> None:
    ranks = sorted(set(map(len, shapes)))
    if len(ranks) > 1:
        raise ValueError(f"Pad: samples mix ranks {ranks}; every sample needs the same number of axes")
    raise ValueError(
        f"Pad: samples differ outside the padded axis {axis}: shapes "
        f"{', '.join(map(str, sorted(set(shapes))))}"
    )


def _padded(arrays: list[np.ndarray], lengths: list[int], shape: tuple[int, ...], axis: int,
            pad_val: float, dtype: np.dtype) -> np.ndarray:
    """The batch of ``shape``: each sample, then its padding, every element written once.

    The samples already have the batch's ``dtype``.
    """
    # Casting as numpy did before 2.0 (-1 wraps to 255 in uint8), without its warning.
    fill = np.array(pad_val).astype(dtype)
    size = shape[axis + 1]
    outer = math.prod(shape[1 : axis + 1])
    inner = math.prod(shape[axis + 2 :])
    if outer > 1:
        out = np.empty(shape, dtype=dtype)
        rows = out.reshape(shape[0], outer, size * inner)
        for row, array, length in zip(rows, arrays, lengths):
            row[:, : length * inner] = array.reshape(outer, length * inner)
            row[:, length * inner :] = fill
        return out
    # Padding along the leading axis: in memory the batch is sample, padding, sample,
    # padding ... and bytearray.join copies such a list with the least per-piece cost
    # (np.concatenate sets up a cast for every piece; a Python loop of slices is slower).
    step = inner * dtype.itemsize
    padding = memoryview(np.full(size * inner, fill, dtype=dtype)).cast("B")  # type: ignore[arg-type]  # numpy < 2 stubs lack the buffer protocol
    pieces: list[Any] = [None] * (2 * len(arrays))
    pieces[::2] = arrays
    pieces[1::2] = [padding[:stop] for stop in ((size - np.array(lengths)) * step).tolist()]
    try:
        joined = bytearray().join(pieces)
    except TypeError:  # a sample that is not C-contiguous exports no plain buffer
        pieces[::2] = [np.ascontiguousarray(a) for a in arrays]
        joined = bytearray().join(pieces)
    return np.frombuffer(joined, dtype=dtype).reshape(shape)


class Tuple:
    """Apply one batchify function to each field of tuple samples.

    ``Tuple(Pad(), Stack())`` batches ``(tokens, label)`` samples into
    ``(padded_tokens, labels)``. The functions may be given as arguments or as one list.
    """

    def __init__(
        self, fn: Callable[..., Any] | Sequence[Callable[..., Any]], *args: Callable[..., Any]
    ) -> None:
        if isinstance(fn, (list, tuple)):
            if args:
                raise TypeError("Tuple: give the functions as Tuple(a, b) or Tuple([a, b]), not both")
            fns = tuple(fn)
        else:
            fns = (fn,) + args
        if not fns:
            raise ValueError("Tuple: give at least one batchify function")
        for i, f in enumerate(fns):
            _check_callable(f, "Tuple", f"function {i}")
        self._fn = fns

    def __repr__(self) -> str:
        return f"Tuple({', '.join(map(repr, self._fn))})"

    def __call__(self, data: Sequence[Any]) -> tuple[Any, ...]:
        """Return one batch per field, in field order."""
        _check_batch(data, "Tuple")
        n = len(self._fn)
        for i, sample in enumerate(data):
            if isinstance(sample, (str, bytes, Mapping)) or not hasattr(sample, "__len__"):
                raise TypeError(f"Tuple: sample {i} is a {type(sample).__name__}, not a tuple of fields")
            if len(sample) != n:
                raise ValueError(
                    f"Tuple: sample {i} has {len(sample)} fields; Tuple has {n} batchify functions"
                )
        return tuple(fn([sample[i] for sample in data]) for i, fn in enumerate(self._fn))


class List:
    """Keep a field as the plain list of its samples (text, ids, variable objects)."""

    def __repr__(self) -> str:
        return "List()"

    def __call__(self, data: Sequence[Any]) -> list[Any]:
        """Return ``data`` as a list."""
        return list(data)


class Dict:
    """Apply one batchify function per key of dict samples; the batch is a dict."""

    def __init__(self, fn_dict: Mapping[Any, Callable[..., Any]]) -> None:
        if not isinstance(fn_dict, Mapping):
            raise TypeError(f"Dict takes a mapping of key -> batchify function, got {type(fn_dict).__name__}")
        for key, fn in fn_dict.items():
            _check_callable(fn, "Dict", f"the function for {key!r}")
        self._fn_dict = dict(fn_dict)

    def __repr__(self) -> str:
        return f"Dict({self._fn_dict!r})"

    def __call__(self, data: Sequence[Mapping[Any, Any]]) -> dict[Any, Any]:
        """Return a dict with one batch per key."""
        _check_batch(data, "Dict")
        for i, sample in enumerate(data):
            if not isinstance(sample, Mapping):
                raise TypeError(f"Dict: sample {i} is a {type(sample).__name__}, not a mapping")
            missing = [k for k in self._fn_dict if k not in sample]
            if missing:
                raise ValueError(f"Dict: sample {i} lacks the key(s) {', '.join(map(repr, missing))}")
        return {key: fn([sample[key] for sample in data]) for key, fn in self._fn_dict.items()}


class NamedTuple:
    """Apply one batchify function per field of namedtuple samples; the batch is one too.

    Parameters
    ----------
    container : the namedtuple class of the samples (and of the batch).
    fn_info : the functions in field order, or a dict from field name to function.
    """

    def __init__(
        self,
        container: type,
        fn_info: Sequence[Callable[..., Any]] | Mapping[str, Callable[..., Any]],
    ) -> None:
        fields = getattr(container, "_fields", None)
        if not isinstance(container, type) or not isinstance(fields, tuple):
            raise TypeError(f"NamedTuple: container must be a namedtuple class, got {container!r}")
        if isinstance(fn_info, Mapping):
            if set(fn_info) != set(fields):
                raise ValueError(
                    f"NamedTuple: functions are given for {sorted(fn_info)}, "
                    f"but {container.__name__} has the fields {list(fields)}"
                )
            fns = tuple(fn_info[name] for name in fields)
        elif isinstance(fn_info, (list, tuple)):
            if len(fn_info) != len(fields):
                raise ValueError(
                    f"NamedTuple: {len(fn_info)} functions for the {len(fields)} fields "
                    f"{list(fields)} of {container.__name__}"
                )
            fns = tuple(fn_info)
        else:
            raise TypeError("NamedTuple: fn_info must be a list of functions or a dict of them")
        for name, fn in zip(fields, fns):
            _check_callable(fn, "NamedTuple", f"the function for field {name!r}")
        self._container = container
        self._fn = fns

    def __repr__(self) -> str:
        return f"NamedTuple({self._container.__name__}, {list(self._fn)!r})"

    def __call__(self, data: Sequence[Any]) -> Any:
        """Return a ``container`` holding one batch per field."""
        _check_batch(data, "NamedTuple")
        for i, sample in enumerate(data):
            if not isinstance(sample, self._container):
                raise TypeError(
                    f"NamedTuple: sample {i} is a {type(sample).__name__}, "
                    f"not a {self._container.__name__}"
                )
        return self._container(*(fn([s[i] for s in data]) for i, fn in enumerate(self._fn)))
