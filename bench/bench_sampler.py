"""FixedBucketSampler: gluon_hub.data against GluonNLP 0.10, side by side in one process.

1,000,000 lengths: build the sampler and iterate it once, shuffled (goal: at least 2x
faster), with the batches asserted identical for the same numpy seed. The two sides
alternate and the medians are compared.
Run: ``.venv/bin/python bench/bench_sampler.py [--runs 5]``.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
import warnings
from typing import Any

import numpy as np

import gluon_hub.compat  # noqa: F401  (numpy aliases for gluonnlp's mxnet import)
from gluon_hub.data import sampler as hub_sampler

import gluonnlp.data.sampler as nlp_sampler


def _run(module: Any, lengths: list[int], kwargs: dict[str, Any]) -> tuple[float, float, list[list[int]]]:
    # As timeit does, the garbage collector is paused while timing: the batches of earlier
    # runs would otherwise make its passes cost whichever side happens to trigger them.
    gc.collect()
    gc.disable()
    try:
        np.random.seed(0)
        start = time.perf_counter()
        sampler = module.FixedBucketSampler(lengths, **kwargs)
        built = time.perf_counter()
        batches = list(sampler)
        done = time.perf_counter()
    finally:
        gc.enable()
    return built - start, done - built, batches


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    rng = np.random.RandomState(0)
    cases = {
        "1-D lengths, 10 buckets": (rng.randint(5, 500, size=1_000_000).tolist(),
                                    dict(batch_size=64, num_buckets=10, shuffle=True)),
        "1-D lengths, 30 exp buckets, ratio 0.5": (rng.randint(5, 500, size=1_000_000).tolist(),
                                                   dict(batch_size=32, num_buckets=30, ratio=0.5,
                                                        shuffle=True)),
        "(src, tgt) lengths, 10 buckets": ([tuple(x) for x in
                                            rng.randint(5, 200, size=(1_000_000, 2)).tolist()],
                                           dict(batch_size=64, num_buckets=10, shuffle=True)),
    }
    for name, (lengths, kwargs) in cases.items():
        if "exp" in name:
            ours = dict(kwargs, bucket_scheme=hub_sampler.ExpWidthBucket())
            theirs = dict(kwargs, bucket_scheme=nlp_sampler.ExpWidthBucket())
        else:
            ours = theirs = kwargs
        t_ours, t_theirs = [], []
        for run in range(args.runs):
            b_t, i_t, expected = _run(nlp_sampler, lengths, theirs)
            b_o, i_o, got = _run(hub_sampler, lengths, ours)
            if run == 0 and got != [[int(i) for i in batch] for batch in expected]:
                raise AssertionError(f"{name}: batches differ from GluonNLP's")
            t_ours.append((b_o, i_o))
            t_theirs.append((b_t, i_t))
        total_o = statistics.median(b + i for b, i in t_ours)
        total_t = statistics.median(b + i for b, i in t_theirs)
        print(f"FixedBucketSampler, {name}: build+iterate gluon_hub {total_o:.3f} s "
              f"(build {statistics.median(b for b, _ in t_ours):.3f}), gluonnlp {total_t:.3f} s "
              f"(build {statistics.median(b for b, _ in t_theirs):.3f}), ratio {total_t / total_o:.2f}x "
              "(goal >= 2x)")


if __name__ == "__main__":
    main()
