"""Random streams that stay distinct in data-loader worker processes.

MXNet's DataLoader gives each worker process a copy of the dataset, transforms included. A
``RandomState`` created in the parent would then draw the same numbers in every worker, so
worker 1's batch would get the crops, flips and mixup weights of worker 0's. MXNet 1.9 has no
worker start-up hook, so the stream notices that it runs in another process and re-seeds
itself there: from its seed and the worker's name (repeatable runs), or from fresh entropy
when it has no seed. In the process that made it, it draws exactly what
``RandomState(seed)`` draws.
"""

from __future__ import annotations

import multiprocessing
import os
import zlib
from typing import Sequence

import numpy as np

Seed = int | Sequence[int] | None


class WorkerRandom:
    """A ``numpy.random.RandomState`` per process: ``.rng`` is the one for the caller's process."""

    def __init__(self, seed: Seed) -> None:
        self._seed = seed
        self._pid = os.getpid()
        self._rng = np.random.RandomState(seed)

    @property
    def rng(self) -> np.random.RandomState:
        if os.getpid() != self._pid:
            self._pid = os.getpid()
            self._rng = np.random.RandomState(self._worker_seed())
        return self._rng

    def _worker_seed(self) -> list[int] | None:
        if self._seed is None:
            return None
        base = [self._seed] if isinstance(self._seed, int) else list(self._seed)
        return base + [zlib.crc32(multiprocessing.current_process().name.encode())]
