"""Speed of a model exported with ``gluon_hub.export(format="onnx")`` under onnxruntime,
against the same model hybridized in MXNet, on the CPU.

No goal: this reports the ratio (MXNet time / onnxruntime time, above 1 means
onnxruntime is faster) so that users can choose a runtime. Both sides use the same He-
initialised weights and their outputs are checked to agree first. The timing method is
``bench_cv_inference.py``'s: the same thread count for both runtimes (MXNet's OpenMP pool
and onnxruntime's intra-op pool, ``--threads``), alternate warm-up, then rounds that time
both back to back in alternating order, with a pause before each block so that neither
runtime's spinning threads overlap the other's clock; the ratio is the median of the
per-round ratios.

Run: ``.venv/bin/python bench/bench_onnx.py [--models resnet50_v1d mobilenet1.0] [--rounds 31]
[--threads N]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

import numpy as np
from bench_cv_inference import default_threads, interleaved, pin_threads, summarise


def compare(name: str, batch: int, rounds: int, threads: int, folder: str) -> tuple[dict[str, float], float]:
    import onnxruntime

    import gluon_hub
    from gluon_hub.compat import mx

    net = gluon_hub.load(name)
    net.initialize(mx.init.Xavier(rnd_type="gaussian", factor_type="in", magnitude=2), force_reinit=True)
    x = np.random.default_rng(0).random((batch, 3, 224, 224), dtype=np.float32)
    (path,) = gluon_hub.export(net, os.path.join(folder, f"{name}-{batch}.onnx"), format="onnx",
                               input_shape=x.shape)
    net.hybridize(static_alloc=True, static_shape=True)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    data = mx.nd.array(x)
    expected = net(data).asnumpy()
    got = session.run(None, {"data": x})[0]
    error = float(np.abs(got - expected).max() / np.abs(expected).max())
    if error > 1e-3:  # the same float32 network in two runtimes: rounding only
        raise SystemExit(f"{name} batch {batch}: onnxruntime's output differs from MXNet's "
                         f"(max relative error {error:.2e})")
    iters = max(1, 8 // batch)
    times_mxnet, times_onnx = interleaved(lambda: net(data).wait_to_read(),
                                          lambda: session.run(None, {"data": x}), rounds, iters)
    return summarise(times_mxnet, times_onnx), error


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["resnet50_v1d", "mobilenet1.0"])
    parser.add_argument("--batches", nargs="+", type=int, default=[1, 32])
    parser.add_argument("--rounds", type=int, default=31)
    parser.add_argument("--threads", type=int, default=default_threads(),
                        help="threads of each runtime's pool, the same for both")
    args = parser.parse_args(argv)
    pin_threads(args.threads)
    print(f"threads: {args.threads}, rounds: {args.rounds}; ms are medians, mxnet/ort = median of the "
          f"per-round ratios")
    print(f"{'model':<16}{'batch':>6}{'mxnet ms':>10}{'onnxruntime ms':>16}{'mxnet/ort':>11}{'min ratio':>11}"
          f"{'rel. error':>12}")
    with tempfile.TemporaryDirectory() as folder:
        for name in args.models:
            for batch in args.batches:
                result, error = compare(name, batch, args.rounds, args.threads, folder)
                print(f"{name:<16}{batch:>6}{result['a'] * 1e3:>10.2f}{result['b'] * 1e3:>16.2f}"
                      f"{result['ratio']:>11.2f}{result['min_ratio']:>11.2f}{error:>12.1e}")
                sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
