"""Pad: gluon_hub.data.Pad against GluonNLP 0.10's Pad, side by side in one process.

4,096 int32 sequences of lengths 10-500 (goal: at least 2x faster), with the outputs
asserted identical (values, dtype, shape, lengths). The two sides alternate and the
medians are compared. Run: ``.venv/bin/python bench/bench_batchify.py [--runs 15]``.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
import warnings
from typing import Any, Callable

import numpy as np

import gluon_hub.compat  # noqa: F401  (numpy aliases for gluonnlp's mxnet import)
from gluon_hub.data import Pad

import gluonnlp.data.batchify as nlp_batchify


def _time(fn: Callable[[], Any]) -> float:
    gc.disable()  # as timeit does
    try:
        start = time.perf_counter()
        out = fn()
        for array in out if isinstance(out, tuple) else (out,):
            array.wait_to_read()
        return time.perf_counter() - start
    finally:
        gc.enable()


def _same(a: Any, b: Any) -> None:
    for x, y in zip(a, b):
        if x.shape != y.shape or x.dtype != y.dtype or not np.array_equal(x.asnumpy(), y.asnumpy()):
            raise AssertionError(f"outputs differ: {x.shape} {x.dtype} vs {y.shape} {y.dtype}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    rng = np.random.RandomState(0)
    data = [rng.randint(0, 30000, size=n).astype(np.int32) for n in rng.randint(10, 501, size=4096)]
    cases = {
        "int32 arrays": (data, {}),
        "int32 arrays, lengths, round_to=8": (data, dict(ret_length=True, round_to=8, pad_val=-1)),
        "Python lists (no goal: numpy converting lists dominates both)": (
            [a.tolist() for a in data[:1024]], {}),
    }
    for name, (samples, kwargs) in cases.items():
        ours, theirs = Pad(**kwargs), nlp_batchify.Pad(**{"pad_val": 0, **kwargs})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = theirs(samples)
        got = ours(samples)
        _same(got if isinstance(got, tuple) else (got,),
              expected if isinstance(expected, tuple) else (expected,))
        t_ours, t_theirs = [], []
        for _ in range(args.runs):
            t_theirs.append(_time(lambda: theirs(samples)))  # noqa: B023  (called in this iteration)
            t_ours.append(_time(lambda: ours(samples)))  # noqa: B023  (called in this iteration)
        a, b = statistics.median(t_ours), statistics.median(t_theirs)
        goal = "" if "no goal" in name else " (goal >= 2x)"
        print(f"Pad, {len(samples)} {name}: gluon_hub {a * 1e3:.1f} ms, gluonnlp {b * 1e3:.1f} ms, "
              f"ratio {b / a:.2f}x{goal}")


if __name__ == "__main__":
    main()
