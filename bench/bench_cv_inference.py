"""Hybridized CPU inference of gluon-cv-core models against GluonCV's, side by side.

Goal: within +-3% of GluonCV's time for the same model at batch 1 and batch 32. Both
sides run the same weights (ours are saved and loaded into GluonCV's network, which also
checks that the outputs agree) in one process, hybridized with static memory, warmed
up; rounds alternate which side goes first and medians are compared.

Run: ``.venv/bin/python bench/bench_cv_inference.py [--models resnet50_v1d mobilenet1.0]
[--rounds 15]``. GluonCV is a benchmark-only reference here.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

import numpy as np

import gluon_hub
from gluon_hub.compat import mx


def build_pair(name: str, shape: tuple[int, ...]):
    """Our network and GluonCV's, with the same (He-initialised) weights."""
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
    import json

    graph = json.loads(net._cached_graph[1].tojson())
    return [node["op"] for node in graph["nodes"] if node["op"] != "null"]


def time_forward(net, x, iters: int) -> float:
    """Seconds per forward pass, averaged over ``iters`` synchronous passes."""
    start = time.perf_counter()
    for _ in range(iters):
        net(x).wait_to_read()
    return (time.perf_counter() - start) / iters


def compare(name: str, batch: int, rounds: int) -> tuple[float, float]:
    ours, ref, x = build_pair(name, (batch, 3, 224, 224))
    ops_ours, ops_ref = operators(ours), operators(ref)
    if ops_ours == ops_ref:
        print(f"  {name} batch {batch}: the same graph as GluonCV's, {len(ops_ours)} operators")
    else:
        print(f"  {name} batch {batch}: graphs differ, {len(ops_ours)} vs {len(ops_ref)} operators")
    iters = max(1, 32 // batch)
    for net in (ours, ref):  # warm up: first runs allocate and pick kernels
        time_forward(net, x, iters * 2)
    ours_times, ref_times = [], []
    for r in range(rounds):
        pair = [(ours, ours_times), (ref, ref_times)]
        for net, times in pair if r % 2 == 0 else pair[::-1]:
            times.append(time_forward(net, x, iters))
    return statistics.median(ours_times), statistics.median(ref_times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["resnet50_v1d", "mobilenet1.0"])
    parser.add_argument("--batches", nargs="+", type=int, default=[1, 32])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args(argv)
    print(f"CPU threads: {os.environ.get('OMP_NUM_THREADS', os.cpu_count())}, rounds: {args.rounds}")
    print(f"{'model':<16}{'batch':>6}{'gluon_hub ms':>14}{'gluoncv ms':>12}{'ratio':>8}  goal 0.97-1.03")
    for name in args.models:
        for batch in args.batches:
            ours, ref = compare(name, batch, args.rounds)
            ratio = ours / ref
            verdict = "ok" if 0.97 <= ratio <= 1.03 else ("faster" if ratio < 0.97 else "MISSED")
            print(f"{name:<16}{batch:>6}{ours * 1e3:>14.2f}{ref * 1e3:>12.2f}{ratio:>8.3f}  {verdict}")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
