"""Speed of a model exported with ``gluon_hub.export(format="onnx")`` under onnxruntime,
against the same model hybridized in MXNet, on the CPU.

No goal: this reports the ratio (MXNet time / onnxruntime time, above 1 means
onnxruntime is faster) so that users can choose a runtime. Both sides use the same He-
initialised weights and their outputs are checked to agree first; rounds alternate which
runtime goes first and medians are compared.

Run: ``.venv/bin/python bench/bench_onnx.py [--models resnet50_v1d mobilenet1.0] [--rounds 11]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import numpy as np

import gluon_hub
from gluon_hub.compat import mx


def timed(run, iters: int) -> float:
    start = time.perf_counter()
    for _ in range(iters):
        run()
    return (time.perf_counter() - start) / iters


def compare(name: str, batch: int, rounds: int, folder: str) -> tuple[float, float, float]:
    import onnxruntime

    net = gluon_hub.load(name)
    net.initialize(mx.init.Xavier(rnd_type="gaussian", factor_type="in", magnitude=2), force_reinit=True)
    x = np.random.default_rng(0).random((batch, 3, 224, 224), dtype=np.float32)
    (path,) = gluon_hub.export(net, os.path.join(folder, f"{name}-{batch}.onnx"), format="onnx",
                               input_shape=x.shape)
    net.hybridize(static_alloc=True, static_shape=True)
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    data = mx.nd.array(x)
    expected = net(data).asnumpy()
    got = session.run(None, {"data": x})[0]
    error = float(np.abs(got - expected).max() / np.abs(expected).max())

    def run_mxnet():
        net(data).wait_to_read()

    def run_onnx():
        session.run(None, {"data": x})

    iters = max(1, 32 // batch)
    for run in (run_mxnet, run_onnx):
        timed(run, iters * 2)
    times: dict[str, list[float]] = {"mxnet": [], "onnx": []}
    for r in range(rounds):
        order = [("mxnet", run_mxnet), ("onnx", run_onnx)]
        for side, run in order if r % 2 == 0 else order[::-1]:
            times[side].append(timed(run, iters))
    return statistics.median(times["mxnet"]), statistics.median(times["onnx"]), error


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["resnet50_v1d", "mobilenet1.0"])
    parser.add_argument("--batches", nargs="+", type=int, default=[1, 32])
    parser.add_argument("--rounds", type=int, default=11)
    args = parser.parse_args(argv)
    print(f"{'model':<16}{'batch':>6}{'mxnet ms':>10}{'onnxruntime ms':>16}{'mxnet/ort':>11}{'rel. error':>12}")
    with tempfile.TemporaryDirectory() as folder:
        for name in args.models:
            for batch in args.batches:
                mxnet_s, onnx_s, error = compare(name, batch, args.rounds, folder)
                print(f"{name:<16}{batch:>6}{mxnet_s * 1e3:>10.2f}{onnx_s * 1e3:>16.2f}"
                      f"{mxnet_s / onnx_s:>11.2f}{error:>12.1e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
