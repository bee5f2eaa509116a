"""Batch samplers that group samples of similar length, and a sharding sampler.

They have GluonNLP 0.10's API (``gluonnlp.data.sampler``) and yield the same batches in
the same order for the same seed: shuffling draws from numpy's global generator (the
``random`` module for :class:`SplitSampler`) exactly as GluonNLP did. The bucketing is
vectorised (``searchsorted`` and one stable sort instead of Python loops), which matters
from a few hundred thousand samples on.

Examples
--------
>>> from gluon_hub.data import FixedBucketSampler
>>> sampler = FixedBucketSampler([5, 3, 9, 4, 8, 2], batch_size=2, num_buckets=2)
>>> list(sampler)
[[2, 4], [0, 1], [3, 5]]
"""

from __future__ import annotations

import abc
import itertools
import math
import random
import warnings
from collections.abc import Iterator, Sequence, Sized
from typing import Any, Union

import numpy as np

__all__ = [
    "BucketScheme",
    "ConstWidthBucket",
    "LinearWidthBucket",
    "ExpWidthBucket",
    "SortedSampler",
    "FixedBucketSampler",
    "SortedBucketSampler",
    "SplitSampler",
]

#: A bucket key: a length, or a tuple of lengths for samples with several sequences.
Key = Union[int, tuple[int, ...]]


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _positive_int(value: Any, name: str) -> int:
    if not _is_int(value) or value < 1:
        raise ValueError(f"{name} must be a positive int, got {value!r}")
    return int(value)


class BucketScheme(abc.ABC):
    """How bucket keys are spread between the shortest and the longest lengths.

    ``scheme(max_lengths, min_lengths, num_buckets)`` returns the keys: ints for single
    lengths, tuples (one entry per sequence) where samples have several lengths.
    """

    def __call__(self, max_lengths: Key | Sequence[int], min_lengths: Key | Sequence[int],
                 num_buckets: int) -> list[Key]:
        if _is_int(max_lengths):
            return list(self._keys(int(max_lengths), int(min_lengths), num_buckets))  # type: ignore[arg-type]
        pairs = zip(max_lengths, min_lengths)  # type: ignore[arg-type]
        per_axis = [self._keys(int(hi), int(lo), num_buckets) for hi, lo in pairs]
        return [tuple(keys) for keys in zip(*per_axis)]

    @abc.abstractmethod
    def _keys(self, max_length: int, min_length: int, num_buckets: int) -> list[int]:
        """Keys for one length axis."""


class ConstWidthBucket(BucketScheme):
    """Buckets of equal width, counted down from the longest length."""

    def _keys(self, max_length: int, min_length: int, num_buckets: int) -> list[int]:
        width = max((1 + max_length - min_length) // num_buckets, 1)
        return [max(max_length - i * width, min_length) for i in range(num_buckets)]


class LinearWidthBucket(BucketScheme):
    r"""Buckets whose width grows linearly, :math:`w_i = \alpha i + 1`."""

    def _keys(self, max_length: int, min_length: int, num_buckets: int) -> list[int]:
        # The float expression is written in GluonNLP's order so that keys round alike.
        alpha = 2 * float(max_length - min_length - num_buckets) / (num_buckets * (num_buckets + 1))
        keys = [
            int(round(min_length + alpha * (((i + 1) * (i + 2)) / 2) + i + 1))
            for i in range(num_buckets)
        ]
        keys[-1] = max(keys[-1], max_length)
        return keys


class ExpWidthBucket(BucketScheme):
    r"""Buckets whose width grows geometrically, :math:`w_i = step \cdot w_{i-1}`.

    Parameters
    ----------
    bucket_len_step : the growth factor of the widths (> 1).
    """

    def __init__(self, bucket_len_step: float = 1.1) -> None:
        if not bucket_len_step > 1:
            raise ValueError(f"bucket_len_step must be larger than 1, got {bucket_len_step!r}")
        self.bucket_len_step = bucket_len_step

    def _keys(self, max_length: int, min_length: int, num_buckets: int) -> list[int]:
        step = self.bucket_len_step
        first = (max_length - min_length) * (step - 1) / (math.pow(step, num_buckets) - 1)
        keys = [
            int(round(min_length + first * (math.pow(step, i + 1) - 1) / (step - 1)))
            for i in range(num_buckets)
        ]
        keys[-1] = max(keys[-1], max_length)
        return keys


def _int_tuples(lengths: Any) -> np.ndarray | None:
    """A list of equal-size tuples of ints as an (N, D) array, or None for anything else.

    ``np.asarray`` discovers the shape and the type of a million tuples slowly; counting
    sizes and types first and then reading one flat iterator is several times faster.
    """
    if not isinstance(lengths, (list, tuple)) or not lengths or type(lengths[0]) not in (tuple, list):
        return None
    width = len(lengths[0])
    if not width or set(map(len, lengths)) != {width}:
        return None
    if set(map(type, itertools.chain.from_iterable(lengths))) != {int}:
        return None
    flat = np.fromiter(itertools.chain.from_iterable(lengths), dtype=np.int64, count=len(lengths) * width)
    return flat.reshape(len(lengths), width)


def _as_lengths(lengths: Any) -> np.ndarray:
    """``lengths`` as an (N,) or (N, D) int64 array of positive lengths, or a clear error."""
    array = _int_tuples(lengths)
    if array is None:
        try:
            array = np.asarray(lengths)
        except ValueError:
            array = np.asarray(lengths, dtype=object)
    if array.dtype.kind == "O":
        raise ValueError(
            "lengths must be ints, or tuples of ints that all have the same size "
            "(one per sequence of a sample)"
        )
    if array.dtype.kind == "f" and np.array_equal(array, np.floor(array)):
        array = array.astype(np.int64)
    if array.dtype.kind not in "iu":
        raise TypeError(f"lengths must be integers, got values of dtype {array.dtype}")
    if array.ndim not in (1, 2) or array.shape[0] == 0 or array.size == 0:
        raise ValueError(
            f"lengths must be a non-empty list of ints or of equal-size tuples, got shape {array.shape}"
        )
    array = array.astype(np.int64, copy=False)
    bad = np.flatnonzero((array <= 0).reshape(len(array), -1).any(axis=1))
    if bad.size:
        raise ValueError(
            f"lengths must all be larger than 0; sample {int(bad[0])} has {array[bad[0]].tolist()}"
        )
    return array


def _check_matches_dataset(count: int, dataset: Sized | None, what: str) -> None:
    if dataset is not None and count != len(dataset):
        raise ValueError(
            f"{what} has {count} entries but the dataset has {len(dataset)} samples; compute "
            f"them from this dataset, one per sample (e.g. [len(x[0]) for x in dataset])"
        )


def _as_keys(bucket_keys: Any, lengths: np.ndarray) -> list[Key]:
    """User-given keys, checked against the shape of the lengths."""
    keys = list(bucket_keys)
    if not keys:
        raise ValueError("bucket_keys is empty; give at least one key, or None to generate them")
    if lengths.ndim == 1:
        if not all(_is_int(k) for k in keys):
            raise TypeError(f"bucket_keys must be ints for single lengths, got {keys!r}")
        return [int(k) for k in keys]
    width = lengths.shape[1]
    if not all(isinstance(k, (tuple, list)) and len(k) == width and all(map(_is_int, k)) for k in keys):
        raise TypeError(f"bucket_keys must be tuples of {width} ints, like the lengths; got {keys!r}")
    return [tuple(int(v) for v in k) for k in keys]


def _assign(lengths: np.ndarray, keys: list[Key]) -> np.ndarray:
    """Index of the bucket of each sample: the key that fits with the least padding.

    Ties go to the first of the sorted keys, as GluonNLP's masked argmin did.
    """
    if lengths.ndim == 1:
        bounds = np.asarray(keys, dtype=np.int64)
        longest = int(lengths.max())
        if longest <= 4 * len(lengths):
            # Lengths are small ints: look each up in a table of every length's bucket.
            bucket = np.searchsorted(bounds, np.arange(longest + 1), side="left")[lengths]
        else:
            bucket = np.searchsorted(bounds, lengths, side="left")
        unfit = bucket == len(keys)
    else:
        table = np.asarray(keys, dtype=np.int64)
        columns = np.ascontiguousarray(lengths.T)  # one comparison per column beats np.all(axis=1)
        bucket = np.full(len(lengths), -1, dtype=np.int64)
        for k in np.argsort(table.sum(axis=1), kind="stable").tolist():
            fits = bucket < 0
            for column, key in zip(columns, table[k].tolist()):
                fits &= column <= key
            bucket[fits] = k
        unfit = bucket < 0
    if unfit.any():
        raise ValueError(
            f"lengths {lengths[unfit][:10].tolist()} fit in none of the bucket keys {keys}; "
            "give larger keys"
        )
    return bucket


class FixedBucketSampler:
    r"""Batches of samples that share a bucket of similar lengths.

    Parameters
    ----------
    lengths : the length of each sample, or a tuple of lengths per sample.
    batch_size : samples per batch (in the longest bucket, see ``ratio``).
    num_buckets : how many bucket keys the scheme generates; unused with ``bucket_keys``.
    bucket_keys : the keys (upper length of each bucket) to use instead.
    ratio : scale up the batch size of short buckets: the batch size of bucket :math:`i`
        is :math:`\max(\alpha B \max_j K_j / K_i, B)` for keys :math:`K`.
    shuffle : shuffle the batches, and the samples within buckets, on every iteration.
    use_average_length : make ``batch_size`` count elements, not samples (ignores ``ratio``).
    num_shards : yield lists of ``num_shards`` batches (one per device) instead.
    bucket_scheme : :class:`ConstWidthBucket` (default), :class:`LinearWidthBucket` or
        :class:`ExpWidthBucket`.
    dataset : the dataset the lengths describe; when given, lengths of another size are
        refused here instead of failing later, inside a DataLoader, on an index the
        dataset does not have.
    """

    def __init__(
        self,
        lengths: Any,
        batch_size: int,
        num_buckets: int | None = 10,
        bucket_keys: Sequence[Key] | None = None,
        ratio: float = 0,
        shuffle: bool = False,
        use_average_length: bool = False,
        num_shards: int = 0,
        bucket_scheme: BucketScheme | None = None,
        *,
        dataset: Sized | None = None,
    ) -> None:
        lengths = _as_lengths(lengths)
        _check_matches_dataset(len(lengths), dataset, "lengths")
        batch_size = _positive_int(batch_size, "batch_size")
        if not ratio >= 0:
            raise ValueError(f"the batch size scaling ratio cannot be negative, got {ratio!r}")
        if not _is_int(num_shards) or num_shards < 0:
            raise ValueError(f"num_shards must be an int >= 0, got {num_shards!r}")
        if bucket_keys is None:
            if not _is_int(num_buckets) or num_buckets < 1:  # type: ignore[operator]
                raise ValueError(
                    f"num_buckets must be a positive int when bucket_keys is None, got {num_buckets!r}"
                )
            scheme = ConstWidthBucket() if bucket_scheme is None else bucket_scheme
            high, low = lengths.max(axis=0), lengths.min(axis=0)
            if lengths.ndim == 1:
                keys = scheme(int(high), int(low), int(num_buckets))  # type: ignore[arg-type]
            else:
                keys = scheme(tuple(high.tolist()), tuple(low.tolist()), int(num_buckets))  # type: ignore
        else:
            keys = _as_keys(bucket_keys, lengths)
        keys = sorted(set(keys))
        bucket = _assign(lengths, keys)
        counts = np.bincount(bucket, minlength=len(keys))
        unused = [key for key, count in zip(keys, counts) if count == 0]
        if unused:
            warnings.warn(f"Some buckets are empty and will be removed. Unused bucket keys={unused}",
                          stacklevel=2)
            used = counts > 0
            bucket = (np.cumsum(used) - 1)[bucket]
            keys = [key for key, keep in zip(keys, used) if keep]
            counts = counts[used]
        small = np.int16 if len(keys) < 2**15 else np.int64  # int16 sorts by radix
        self._sample_ids = np.argsort(bucket.astype(small), kind="stable")
        self._offsets = np.concatenate([[0], np.cumsum(counts)])
        self._bucket_keys: list[Key] = keys
        self._lengths = lengths
        self._batch_size = batch_size
        self._ratio = ratio
        self._shuffle = bool(shuffle)
        self._num_shards = int(num_shards)
        self._bucket_batch_sizes = self._batch_sizes(counts, use_average_length)
        self._make_batches(counts)

    def _batch_sizes(self, counts: np.ndarray, use_average_length: bool) -> list[int]:
        batch_size = self._batch_size
        if not use_average_length:
            scale = [k if isinstance(k, int) else sum(k) for k in self._bucket_keys]
            top = max(scale)
            return [max(int(top / float(s) * self._ratio * batch_size), batch_size) for s in scale]
        if self._ratio > 0:
            warnings.warn(f"ratio={self._ratio} is ignored when use_average_length is True", stacklevel=3)
        sizes = []
        for b in range(len(self._bucket_keys)):
            bucket_lengths = self._lengths[self._sample_ids[self._offsets[b] : self._offsets[b + 1]]]
            sizes.append(max(int(batch_size / (np.mean(bucket_lengths) + np.std(bucket_lengths))), 1))
        return sizes

    def _make_batches(self, counts: np.ndarray) -> None:
        # Batches are listed from the last bucket to the first, each bucket's in order.
        sizes = np.asarray(self._bucket_batch_sizes, dtype=np.int64)
        per_bucket = -(-counts // sizes)
        order = np.arange(len(counts))[::-1]
        bucket = np.repeat(order, per_bucket[order])
        first = np.repeat(np.cumsum(per_bucket[order]) - per_bucket[order], per_bucket[order])
        begin = (np.arange(len(bucket)) - first) * sizes[bucket]
        self._starts = self._offsets[bucket] + begin
        self._ends = np.minimum(self._starts + sizes[bucket], self._offsets[bucket + 1])
        # The shuffled order persists across epochs, as GluonNLP's in-place shuffles did.
        self._order = np.arange(len(bucket))

    def __iter__(self) -> Iterator[Any]:
        if self._shuffle:
            np.random.shuffle(self._order)
            for b in range(len(self._bucket_keys)):
                np.random.shuffle(self._sample_ids[self._offsets[b] : self._offsets[b + 1]])
        ids = self._sample_ids
        starts = self._starts[self._order].tolist()
        ends = self._ends[self._order].tolist()
        if self._num_shards == 0:
            for start, end in zip(starts, ends):
                yield ids[start:end].tolist()
            return
        shards, total = self._num_shards, len(starts)
        for i in range(0, total, shards):
            if i + shards > total:
                i = total - shards  # the last group reuses batches to stay num_shards long
            group = range(total)[i : i + shards]
            yield [ids[starts[j] : ends[j]].tolist() for j in group]

    def __len__(self) -> int:
        if self._num_shards > 0:
            return math.ceil(len(self._starts) / self._num_shards)
        return len(self._starts)

    @property
    def padding_efficiency(self) -> float | tuple[float, ...]:
        """Real elements over padded elements when each sample is padded to its bucket key.

        A tuple with one value per sequence where samples have several lengths.
        """
        counts = np.diff(self._offsets)
        keys = np.asarray(self._bucket_keys, dtype=np.float64)
        padded = (keys * (counts if keys.ndim == 1 else counts[:, None])).sum(axis=0)
        real = self._lengths.sum(axis=0)
        if self._lengths.ndim == 1:
            return float(real / padded)
        return tuple((real / padded).tolist())

    def stats(self) -> str:
        """The buckets' keys, sizes and batch sizes, and the padding efficiency."""
        efficiency = self.padding_efficiency
        shown = (f"{efficiency:.4f}" if isinstance(efficiency, float)
                 else "(" + ", ".join(f"{e:.4f}" for e in efficiency) + ")")
        return (
            f"{type(self).__name__}:\n"
            f"  sample_num={len(self._lengths)}, batch_num={len(self._starts)}\n"
            f"  key={self._bucket_keys}\n"
            f"  cnt={np.diff(self._offsets).tolist()}\n"
            f"  batch_size={self._bucket_batch_sizes}\n"
            f"  padding_efficiency={shown} (real / padded elements, padding to the bucket keys)"
        )


def _sort_order(keys: Any, reverse: bool) -> np.ndarray | None:
    """Stable order of numeric ``keys`` (as Python's ``sorted``), or None if not numeric."""
    try:
        array = np.asarray(keys)
    except ValueError:
        return None
    if array.dtype.kind not in "biuf" or array.ndim not in (1, 2):
        return None
    array = array.astype(np.float64 if array.dtype.kind == "f" else np.int64)
    if reverse:
        array = -array
    if array.ndim == 1:
        return np.argsort(array, kind="stable")
    return np.lexsort(array.T[::-1])


def _sort_keys(sort_keys: Any) -> Any:
    if not hasattr(sort_keys, "__len__") or len(sort_keys) == 0:
        raise ValueError("sort_keys must be a non-empty sequence (one key per sample)")
    return sort_keys


class SortedSampler:
    """Every sample, ordered by its sort key (longest first by default).

    Parameters
    ----------
    sort_keys : one key per sample, typically its length.
    reverse : sort in descending order.
    """

    def __init__(self, sort_keys: Sequence[Any], reverse: bool = True) -> None:
        keys = _sort_keys(sort_keys)
        order = _sort_order(keys, reverse)
        if order is None:
            self._sorted_ids = sorted(range(len(keys)), key=keys.__getitem__, reverse=reverse)
        else:
            self._sorted_ids = order.tolist()

    def __iter__(self) -> Iterator[int]:
        return iter(self._sorted_ids)

    def __len__(self) -> int:
        return len(self._sorted_ids)


class SortedBucketSampler:
    """Batches cut from chunks of ``mult * batch_size`` samples sorted by key.

    Parameters
    ----------
    sort_keys : one key per sample, typically its length.
    batch_size : samples per batch.
    mult : the chunk size, in batches.
    reverse : sort each chunk in descending order.
    shuffle : shuffle the samples before chunking, and the batches of each chunk.
    dataset : the dataset the keys describe; keys of another size are refused.
    """

    def __init__(self, sort_keys: Sequence[Any], batch_size: int, mult: float = 100,
                 reverse: bool = True, shuffle: bool = False, *, dataset: Sized | None = None) -> None:
        self._sort_keys = _sort_keys(sort_keys)
        _check_matches_dataset(len(self._sort_keys), dataset, "sort_keys")
        self._batch_size = _positive_int(batch_size, "batch_size")
        if not mult >= 1:
            raise ValueError(f"the bucket size multiplier mult must be at least 1, got {mult!r}")
        self._mult = mult
        self._reverse = reverse
        self._shuffle = shuffle
        self._numeric: np.ndarray | None
        try:
            self._numeric = np.asarray(self._sort_keys)
        except ValueError:
            self._numeric = None
        if self._numeric is not None and (self._numeric.dtype.kind not in "biuf" or self._numeric.ndim > 2):
            self._numeric = None

    def _sorted(self, ids: np.ndarray) -> np.ndarray:
        if self._numeric is None:
            return np.asarray(sorted(ids.tolist(), key=self._sort_keys.__getitem__, reverse=self._reverse),
                              dtype=np.int64)
        order = _sort_order(self._numeric[ids], self._reverse)
        return ids[order]

    def __iter__(self) -> Iterator[list[int]]:
        total = len(self._sort_keys)
        ids = np.random.permutation(total) if self._shuffle else np.arange(total)
        chunk = int(self._mult * self._batch_size)
        for chunk_begin in range(0, total, chunk):
            chunk_ids = self._sorted(ids[chunk_begin : chunk_begin + chunk])
            begins = np.arange(0, len(chunk_ids), self._batch_size)
            if self._shuffle:
                np.random.shuffle(begins)
            for begin in begins.tolist():
                yield chunk_ids[begin : begin + self._batch_size].tolist()

    def __len__(self) -> int:
        total = len(self._sort_keys)
        chunk = int(self._mult * self._batch_size)
        full, rest = divmod(total, chunk)
        return full * math.ceil(chunk / self._batch_size) + math.ceil(rest / self._batch_size)


class SplitSampler:
    """The samples of one of ``num_parts`` disjoint shards, for data-parallel training.

    Each worker of a distributed job (MXNet's ``dist_sync`` kvstore, Horovod) reads its own
    contiguous shard, shuffled on every iteration with Python's ``random`` module.

    Parameters
    ----------
    length : the number of samples in the dataset.
    num_parts : the number of workers (``kv.num_workers``, ``hvd.size()``).
    part_index : this worker's index (``kv.rank``, ``hvd.rank()``).
    even_size : give every shard the same size by adding random samples of the whole
        dataset to the short ones (which then overlap other shards).
    repeat : how many times each sample is yielded per iteration.
    shuffle : shuffle the shard on every iteration.

    Examples
    --------
    >>> sorted(SplitSampler(10, num_parts=3, part_index=1, shuffle=False))
    [4, 5, 6]
    """

    def __init__(self, length: int, num_parts: int = 1, part_index: int = 0, even_size: bool = False,
                 repeat: int = 1, shuffle: bool = True) -> None:
        length = _positive_int(length, "length")
        num_parts = _positive_int(num_parts, "num_parts")
        if not _is_int(part_index) or not 0 <= part_index < num_parts:
            raise ValueError(f"part_index must be an int in [0, {num_parts}), got {part_index!r}")
        if length < num_parts:
            raise ValueError(f"length ({length}) must be at least the number of parts ({num_parts})")
        self._repeat = _positive_int(repeat, "repeat")
        self._total = length
        self._shuffle = shuffle
        self.num_parts = num_parts
        self.even_size = even_size
        if even_size:
            size = -(-length // num_parts)
            self._start = min(size * part_index, length)
            self._end = min(self._start + size, length)
            self._len = size
        else:
            size, rest = divmod(length, num_parts)
            self._start = size * part_index + min(part_index, rest)
            self._end = self._start + size + (part_index < rest)
            self._len = self._end - self._start

    @classmethod
    def from_kvstore(cls, length: int, kvstore: Any, **kwargs: Any) -> SplitSampler:
        """The shard of this worker of ``kvstore`` (``mx.kv.create("dist_sync")``)."""
        return cls(length, num_parts=kvstore.num_workers, part_index=kvstore.rank, **kwargs)

    def __iter__(self) -> Iterator[int]:
        indices: list[int] = []
        for _ in range(self._repeat):
            shard = list(range(self._start, self._end))
            if len(shard) < self._len:
                shard.extend(random.sample(range(self._total), k=self._len - len(shard)))
            if self._shuffle:
                random.shuffle(shard)
            indices.extend(shard)
        return iter(indices)

    def __len__(self) -> int:
        return self._len * self._repeat
