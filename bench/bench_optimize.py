"""``gluon_hub.optimize`` (oneDNN fusion + static memory) against the same model hybridized
plainly (static memory only), on the CPU, both in one run.

Both sides run the same He-initialised weights; the optimized outputs must equal the plain
ones within 1e-4 relative, or the script fails. The ratio printed is plain time / optimized
time (above 1: optimize is faster), the median of per-round ratios, timed as in
``bench_cv_inference.py`` (the same thread count, alternate warm-up, rounds that time both
back to back in alternating order).

Run: ``.venv/bin/python bench/bench_optimize.py [--models resnet50_v1d mobilenet1.0]
[--batches 1] [--rounds 31] [--threads N]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import warnings

import numpy as np

from bench_cv_inference import default_threads, interleaved, pin_threads, summarise

#: Largest relative output difference the fused graph may have (the issue's bound).
RTOL = 1e-4


def build_pair(name: str, batch: int):
    """The model hybridized plainly and a copy with the same weights optimized, and an input."""
    import gluon_hub
    from gluon_hub.compat import mx

    plain = gluon_hub.load(name)
    plain.initialize(mx.init.Xavier(rnd_type="gaussian", factor_type="in", magnitude=2), force_reinit=True)
    x = mx.nd.array(np.random.default_rng(0).random((batch, 3, 224, 224), dtype=np.float32))
    plain(x)
    fused = gluon_hub.load(name)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "weights.params")
        plain.save_parameters(path)
        fused.load_parameters(path)
    plain.hybridize(static_alloc=True, static_shape=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", gluon_hub.OptimizeWarning)  # a fallback would time nothing new
        gluon_hub.optimize(fused, x)
    want, got = plain(x).asnumpy(), fused(x).asnumpy()
    error = float(np.abs(got - want).max() / np.abs(want).max())
    if error > RTOL:
        raise SystemExit(f"{name} batch {batch}: optimized outputs differ from the plain model's "
                         f"(max relative error {error:.2e} > {RTOL})")
    return plain, fused, x, error


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["resnet50_v1d", "mobilenet1.0"])
    parser.add_argument("--batches", nargs="+", type=int, default=[1])
    parser.add_argument("--rounds", type=int, default=31)
    parser.add_argument("--threads", type=int, default=default_threads(),
                        help="OpenMP/oneDNN threads, the same for both sides")
    args = parser.parse_args(argv)
    pin_threads(args.threads)
    print(f"threads: {args.threads}, rounds: {args.rounds}; ms are medians, plain/optimized = median "
          f"of the per-round ratios (above 1: optimize is faster)")
    print(f"{'model':<16}{'batch':>6}{'plain ms':>10}{'optimized ms':>14}{'plain/opt':>11}{'min ratio':>11}"
          f"{'rel. error':>12}")
    for name in args.models:
        for batch in args.batches:
            plain, fused, x, error = build_pair(name, batch)
            iters = max(1, 8 // batch)
            times_plain, times_fused = interleaved(lambda: plain(x).wait_to_read(),
                                                   lambda: fused(x).wait_to_read(), args.rounds, iters)
            result = summarise(times_plain, times_fused)
            print(f"{name:<16}{batch:>6}{result['a'] * 1e3:>10.2f}{result['b'] * 1e3:>14.2f}"
                  f"{result['ratio']:>11.2f}{result['min_ratio']:>11.2f}{error:>12.1e}")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
