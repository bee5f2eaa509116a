"""The data API: batchify functions, bucketing samplers and helpers for dataset authors.

Importing this package is cheap: the numpy-based implementations are imported on first
use of one of their names, and MXNet only when a batch is made.

Examples
--------
>>> from gluon_hub.data import FixedBucketSampler, Pad, Stack, Tuple
>>> data = [([1, 2, 3], 0), ([4, 5, 6, 7, 8], 1), ([9, 10], 0), ([11] * 8, 1)]
>>> sampler = FixedBucketSampler([len(tokens) for tokens, _ in data], batch_size=2, num_buckets=2)
>>> list(sampler)
[[3], [0, 1], [2]]
>>> tokens, labels = Tuple(Pad(pad_val=0), Stack())([data[i] for i in [0, 1]])
>>> tokens.shape, labels.asnumpy().tolist()
((2, 5), [0, 1])
"""

from __future__ import annotations

import importlib
from typing import Any

from ._specs import batchify_specs as batchify_specs  # re-exported: __all__ is built below

_LAZY = {
    "Stack": "batchify",
    "Pad": "batchify",
    "Tuple": "batchify",
    "List": "batchify",
    "Dict": "batchify",
    "NamedTuple": "batchify",
    "BucketScheme": "sampler",
    "ConstWidthBucket": "sampler",
    "LinearWidthBucket": "sampler",
    "ExpWidthBucket": "sampler",
    "SortedSampler": "sampler",
    "FixedBucketSampler": "sampler",
    "SortedBucketSampler": "sampler",
    "SplitSampler": "sampler",
    "dataset_file": "files",
    "DatasetFileError": "files",
}

__all__ = sorted([*_LAZY, "batchify_specs"])


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'gluon_hub.data' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
