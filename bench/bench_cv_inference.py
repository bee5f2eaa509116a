"""Hybridized CPU inference of gluon-cv-core models against GluonCV's, side by side.

Goal: within +-3% of GluonCV's time for the same model at batch 1 and batch 32. Both
sides run the same weights (ours are saved and loaded into GluonCV's network, which also
checks that the outputs agree) in one process, hybridized with static memory.

The method is built for a shared machine, where other jobs' load comes and goes and
moves a single median by more than 3%:

- both sides use the same OpenMP/oneDNN thread count (``--threads``, default the CPUs
  this process may use), fixed before MXNet starts;
- both are warmed up, alternately, before any timing;
- rounds then time a short block of forward passes of each side back to back, swapping
  which goes first every round, with the garbage collector off;
- each round gives a ratio of two measurements taken moments apart, so load that changes
  between rounds cancels out; the reported ratio is the median of these per-round ratios,
  and the ratio of the fastest blocks (``min ratio``) is printed as a cross-check.

Run: ``.venv/bin/python bench/bench_cv_inference.py [--models resnet50_v1d mobilenet1.0]
[--rounds 31] [--threads N]``. GluonCV is a benchmark-only reference here.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import tempfile
import time
from typing import Callable

import numpy as np

# A pause between timed blocks, so that threads one side leaves spinning after its work
# are idle again before the other side's clock starts.
SETTLE_S = 0.05


def pin_threads(threads: int) -> None:
    """Fix the OpenMP (and so oneDNN) and MKL pool sizes; MXNet reads them when it starts."""
    if threads < 1:
        raise ValueError(f"--threads must be at least 1, got {threads}")
    if "mxnet" in sys.modules:
        raise RuntimeError("pin_threads must run before mxnet is imported, or it has no effect")
    for variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[variable] = str(threads)


def default_threads() -> int:
    """The CPUs this process may run on (not the host's count, in a container)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def timed(run: Callable[[], None], iters: int) -> float:
    """Seconds per call of ``run``, averaged over ``iters`` calls."""
    start = time.perf_counter()
    for _ in range(iters):
        run()
    return (time.perf_counter() - start) / iters


def interleaved(a: Callable[[], None], b: Callable[[], None], rounds: int, iters: int,
                warmup: int = 3) -> tuple[list[float], list[float]]:
    """Per-round seconds per call of ``a`` and of ``b``, timed back to back in alternating order."""
    for _ in range(warmup):  # first calls allocate memory and pick kernels
        timed(a, iters)
        timed(b, iters)
    times_a: list[float] = []
    times_b: list[float] = []
    gc.disable()
    try:
        for r in range(rounds):
            pair = [(a, times_a), (b, times_b)]
            for run, times in pair if r % 2 == 0 else pair[::-1]:
                time.sleep(SETTLE_S)
                times.append(timed(run, iters))
    finally:
        gc.enable()
    return times_a, times_b


def summarise(times_a: list[float], times_b: list[float]) -> dict[str, float]:
    """Median times, the median per-round ratio a/b, and the ratio of the fastest rounds."""
    return {
        "a": statistics.median(times_a),
        "b": statistics.median(times_b),
        "ratio": statistics.median(x / y for x, y in zip(times_a, times_b)),
        "min_ratio": min(times_a) / min(times_b),
    }


def build_pair(name: str, shape: tuple[int, ...]):
    """Our network and GluonCV's, with the same (He-initialised) weights."""
    import gluon_hub
    from gluon_hub.compat import mx  # first: it restores the numpy aliases mxnet 1.9.1 needs

    import gluoncv

    ours = gluon_hub.load(name)
    ours.initialize(mx.init.Xavier(rnd_type="gaussian", factor_type="in", magnitude=2), force_reinit=True)
    x = mx.nd.array(np.random.default_rng(0).random(shape, dtype=np.float32))
    ours(x)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "weights.params")
        ours.save_parameters(path)
        ref = gluoncv.model_zoo.get_model(name)
        ref.load_parameters(path)
    for net in (ours, ref):
        net.hybridize(static_alloc=True, static_shape=True)
    a, b = ours(x).asnumpy(), ref(x).asnumpy()
    if not np.allclose(a, b, rtol=1e-4, atol=1e-4 * np.abs(b).max()):
        raise SystemExit(f"{name}: outputs differ from GluonCV's (max diff {np.abs(a - b).max()})")
    return ours, ref, x


def operators(net) -> list[str]:
    """The operator of every node of a hybridized network's graph, in order."""
    graph = json.loads(net._cached_graph[1].tojson())
    return [node["op"] for node in graph["nodes"] if node["op"] != "null"]


def compare(name: str, batch: int, rounds: int) -> dict[str, float]:
    ours, ref, x = build_pair(name, (batch, 3, 224, 224))
    ops_ours, ops_ref = operators(ours), operators(ref)
    if ops_ours == ops_ref:
        print(f"  {name} batch {batch}: the same graph as GluonCV's, {len(ops_ours)} operators")
    else:
        print(f"  {name} batch {batch}: graphs differ, {len(ops_ours)} vs {len(ops_ref)} operators")
    # Short blocks (about 8 images) keep the two measurements of a round close in time.
    iters = max(1, 8 // batch)
    times_ours, times_ref = interleaved(lambda: ours(x).wait_to_read(), lambda: ref(x).wait_to_read(),
                                        rounds, iters)
    return summarise(times_ours, times_ref)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["resnet50_v1d", "mobilenet1.0"])
    parser.add_argument("--batches", nargs="+", type=int, default=[1, 32])
    parser.add_argument("--rounds", type=int, default=31)
    parser.add_argument("--threads", type=int, default=default_threads(),
                        help="OpenMP/oneDNN threads, the same for both sides")
    args = parser.parse_args(argv)
    pin_threads(args.threads)
    print(f"threads: {args.threads}, rounds: {args.rounds}; ms are medians, ratio = median of the "
          f"per-round gluon_hub/gluoncv ratios")
    print(f"{'model':<16}{'batch':>6}{'gluon_hub ms':>14}{'gluoncv ms':>12}{'ratio':>8}{'min ratio':>11}"
          f"  goal 0.97-1.03")
    for name in args.models:
        for batch in args.batches:
            result = compare(name, batch, args.rounds)
            ratio = result["ratio"]
            verdict = "ok" if 0.97 <= ratio <= 1.03 else ("faster" if ratio < 0.97 else "MISSED")
            print(f"{name:<16}{batch:>6}{result['a'] * 1e3:>14.2f}{result['b'] * 1e3:>12.2f}{ratio:>8.3f}"
                  f"{result['min_ratio']:>11.3f}  {verdict}")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
