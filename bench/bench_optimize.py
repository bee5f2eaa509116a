"""``gluon_hub.optimize`` (oneDNN fusion + static memory) alone: ``bench_fast_inference.py``
with ``--paths optimize``, by default for resnet50_v1d and mobilenet1.0 at batch 1.

The reference is GluonCV's hybridized model with the same weights (ours hybridized plainly
times within 3% of it, ``bench_cv_inference.py``); outputs must agree within 1e-4 relative.

Run: ``.venv/bin/python bench/bench_optimize.py [--models resnet50_v1d mobilenet1.0]
[--batches 1] [--rounds 31] [--threads N]``.
"""

from __future__ import annotations

import sys

from bench_fast_inference import main as fast_inference


def main(argv: list[str] | None = None) -> int:
    given = sys.argv[1:] if argv is None else argv
    defaults = ["--models", "resnet50_v1d", "mobilenet1.0", "--batches", "1"]
    return fast_inference(["--paths", "optimize", *defaults, *given])


if __name__ == "__main__":
    raise SystemExit(main())
