"""The one place where batchify functions meet MXNet: detecting and making NDArrays.

MXNet is imported on first use, so that importing :mod:`gluon_hub.data` stays cheap.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

#: dtypes MXNet 1.9 can adopt from numpy through DLPack without copying the buffer.
_ZERO_COPY = frozenset({"int32", "int64", "uint8", "float16", "float32", "float64"})


def _mx() -> Any:
    from gluon_hub.compat import mx

    return mx


def is_ndarray(value: Any) -> bool:
    """Whether ``value`` is an ``mx.nd.NDArray``, without importing mxnet to find out."""
    return type(value).__module__.startswith("mxnet.") and hasattr(value, "asnumpy")


@lru_cache(maxsize=None)
def _supported_dtypes() -> frozenset[np.dtype]:
    table = _mx().ndarray.ndarray._DTYPE_NP_TO_MX
    return frozenset(np.dtype(t) for t in table if t is not None and np.dtype(t).names is None)


def check_dtype(dtype: Any, owner: str) -> np.dtype:
    """The numpy dtype of ``dtype``, refused with the supported list where NDArrays lack it."""
    try:
        resolved = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"{owner}: {dtype!r} is not a dtype") from None
    supported = _supported_dtypes()
    if resolved not in supported:
        names = ", ".join(sorted(t.name for t in supported))
        raise TypeError(
            f"{owner}: MXNet NDArrays cannot hold {resolved.name}; use one of {names} "
            "(pass dtype=... to convert)"
        )
    return resolved


def to_ndarray(array: np.ndarray) -> Any:
    """A CPU NDArray holding ``array``, which the caller built and hands over for good.

    Where the dtype allows, MXNet adopts the numpy buffer instead of copying it. GluonNLP
    copied every batch into shared memory instead; a DataLoader worker process still
    moves the batch into shared memory itself when it pickles it for the main process,
    so only that copy is kept, and only where it is needed.
    """
    mx = _mx()
    array = np.ascontiguousarray(array)
    if array.size and array.dtype.name in _ZERO_COPY:
        return mx.nd.from_numpy(array, zero_copy=True)
    return mx.nd.array(array, dtype=array.dtype)
