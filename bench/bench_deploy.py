"""Latency of one model on the ways out of Python, on this machine (docs/deploy.md's table).

Each way runs the same exported network (random weights) on the same batch-1 tensor:

- the MXNet C predict API from the programs ``gluon-hub deploy`` writes (C++, Java, Clojure),
  timed inside each program (``run x.f32 --repeat N``: set input, forward, copy outputs out);
- the ONNX export in onnxruntime, through ``gluon_hub.runtime`` (the Python binding of the
  engine every onnxruntime binding calls);
- MXNet in Python (``gluon_hub.load`` + ``hybridize``), the reference.

It prints the median per-forward latency of each, and the cold wall time of one
``run`` (process start to JSON) for the deployed programs, and fails when a program's
outputs differ from Python's.

    python bench/bench_deploy.py --rounds 20
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np


def _median_ms(fn, rounds: int) -> float:
    fn()
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return float(np.median(times))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="resnet18_v1")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--langs", default="cpp,java,clojure")
    args = parser.parse_args()

    import gluon_hub
    from gluon_hub.compat import mx
    from gluon_hub.runtime import load_onnx
    from gluon_hub_deploy import deploy

    spec = gluon_hub.info(args.model)
    shape = (1, *spec.input.shape)
    x = np.random.default_rng(0).standard_normal(shape).astype("<f4")
    net = gluon_hub.load(args.model)
    net.hybridize()
    expected = net(mx.nd.array(x)).asnumpy()
    rows = [("MXNet in Python (Gluon, hybridized)", _median_ms(lambda: net(mx.nd.array(x)).asnumpy(), args.rounds), None)]

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        net.save_parameters(str(folder / "net.params"))
        x.tofile(folder / "x.f32")
        gluon_hub.export(net, folder / "net.onnx", format="onnx", input_shape=shape)
        onnx = load_onnx(folder / "net.onnx", args.model)
        rows.append(("ONNX Runtime (gluon_hub.runtime)", _median_ms(lambda: onnx(x), args.rounds), None))
        for lang in args.langs.split(","):
            project = deploy(args.model, folder / lang, lang, params=folder / "net.params")
            subprocess.run([str(project / "build.sh")], check=True)
            start = time.perf_counter()
            cold = subprocess.run([str(project / "run"), str(folder / "x.f32")], check=True, capture_output=True, text=True)
            wall = time.perf_counter() - start
            got = np.asarray(json.loads(cold.stdout)["outputs"][0], np.float32)
            if not np.allclose(got, expected, rtol=1e-5, atol=1e-5 * np.abs(expected).max()):
                raise SystemExit(f"{lang}: outputs differ from Python's by {np.abs(got - expected).max()}")
            timed = subprocess.run([str(project / "run"), str(folder / "x.f32"), "--repeat", str(args.rounds)],
                                   check=True, capture_output=True, text=True)
            median = json.loads(timed.stdout)["latency_ms"]["median"]
            rows.append((f"MXNet C predict API from {lang} (gluon-hub deploy)", median, wall))

    print(f"{args.model}, batch 1, {args.rounds} rounds after one warm-up; median ms per forward")
    for name, ms, wall in rows:
        cold = f"   (one cold run: {wall:.2f} s)" if wall is not None else ""
        print(f"  {name:<52} {ms:8.2f}{cold}")


if __name__ == "__main__":
    main()
