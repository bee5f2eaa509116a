"""Whole-process cost of ``gluon_hub.load("resnet50_v1d")`` plus one forward pass, against
``gluoncv.model_zoo.get_model`` plus one forward, each a fresh Python process.

Goal: at most 1.05x GluonCV's time. Both sides build the network with random weights
(published weights need the network; downloads are left out of both), initialise it and
run one 224x224 image. Processes alternate and medians are compared.

Run: ``.venv/bin/python bench/bench_cv_load.py [--model resnet50_v1d] [--runs 15]``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

HUB = """
import gluon_hub
from gluon_hub.compat import mx
net = gluon_hub.load({name!r})
net(mx.nd.zeros((1, 3, 224, 224))).wait_to_read()
"""

GLUONCV = """
import gluon_hub.compat  # the numpy aliases mxnet 1.9.1 needs on numpy>=1.24, as on our side
from gluon_hub.compat import mx
import gluoncv
net = gluoncv.model_zoo.get_model({name!r})
net.initialize()
net(mx.nd.zeros((1, 3, 224, 224))).wait_to_read()
"""


def time_process(code: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="resnet50_v1d")
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args(argv)
    sides = {"gluon_hub": HUB.format(name=args.model), "gluoncv": GLUONCV.format(name=args.model)}
    for code in sides.values():  # warm the OS file cache for both
        time_process(code)
    times: dict[str, list[float]] = {side: [] for side in sides}
    for run in range(args.runs):
        order = list(sides) if run % 2 == 0 else list(sides)[::-1]
        for side in order:
            times[side].append(time_process(sides[side]))
    ours, ref = statistics.median(times["gluon_hub"]), statistics.median(times["gluoncv"])
    print(f"load({args.model!r}) + one forward, whole process, median of {args.runs}:")
    print(f"  gluon_hub {ours:.3f} s   gluoncv {ref:.3f} s   ratio {ours / ref:.3f}  "
          f"(goal <= 1.05: {'ok' if ours / ref <= 1.05 else 'MISSED'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
