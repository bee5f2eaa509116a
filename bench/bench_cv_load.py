"""Whole-process cost of ``gluon_hub.load("resnet50_v1d")`` plus one forward pass, against
``gluoncv.model_zoo.get_model`` plus one forward, each a fresh Python process.

Goal: at most 1.05x GluonCV's time. Both sides build the network with random weights
(published weights need the network; downloads are left out of both), initialise it and
run one 224x224 image. MXNet 1.9.1 imports on numpy 1.26 only with numpy's removed type
aliases put back; both processes start with the same few lines that do that, so GluonCV's
side does not pay for importing gluon_hub. Both run once untimed (file cache), then
alternately; the ratio is the median of the per-run ratios, the ratio of the fastest runs
a cross-check.

Run: ``.venv/bin/python bench/bench_cv_load.py [--model resnet50_v1d] [--runs 21]``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

from bench_cv_inference import summarise

# gluon_hub.compat's alias list, written out rather than imported (see the docstring).
PRELUDE = """
import numpy
for _name, _type in {"bool": bool, "int": int, "float": float, "complex": complex, "object": object,
                     "str": str, "long": int, "unicode": str}.items():
    if _name not in numpy.__dict__:
        setattr(numpy, _name, _type)
"""

HUB = """
import gluon_hub
from gluon_hub.compat import mx
net = gluon_hub.load({name!r})
net(mx.nd.zeros((1, 3, 224, 224))).wait_to_read()
"""

GLUONCV = """
import mxnet as mx
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
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args(argv)
    if args.runs < 1:
        raise ValueError(f"--runs must be at least 1, got {args.runs}")
    sides = {"gluon_hub": PRELUDE + HUB.format(name=args.model),
             "gluoncv": PRELUDE + GLUONCV.format(name=args.model)}
    for code in sides.values():  # warm the OS file cache for both
        time_process(code)
    times: dict[str, list[float]] = {side: [] for side in sides}
    for run in range(args.runs):
        order = list(sides) if run % 2 == 0 else list(sides)[::-1]
        for side in order:
            times[side].append(time_process(sides[side]))
    result = summarise(times["gluon_hub"], times["gluoncv"])
    ratio = result["ratio"]
    print(f"load({args.model!r}) + one forward, whole process, median of {args.runs}:")
    print(f"  gluon_hub {result['a']:.3f} s   gluoncv {result['b']:.3f} s   ratio {ratio:.3f}  "
          f"min ratio {result['min_ratio']:.3f}  (goal <= 1.05: {'ok' if ratio <= 1.05 else 'MISSED'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
