"""Hybridized CPU inference of gluon-cv-core's pose and video models against GluonCV's.

Goal (issue 16): ``simple_pose_resnet50_v1b`` (one 256x192 person crop) and
``i3d_resnet50_v1_kinetics400`` (one 32-frame 224x224 clip) within +-5% of GluonCV's time.
Both sides run the same random weights (ours initialised, saved, loaded by GluonCV's model,
outputs checked to agree) in one process, hybridized with static memory. A model the registry
does not list yet (the action models arrive with their own work) is reported and skipped.

Each model first prints whether its hybridized graph has GluonCV's operators in GluonCV's
order (the same work, whatever the load on the machine). The timing method is
``bench_cv_inference.py``'s (fixed thread count, alternating warm-up, rounds of back-to-back
blocks with the order swapped each round, median of per-round ratios).

Run: ``.venv/bin/python bench/bench_video_pose.py [--quick] [--models ...] [--rounds 10]``.
``--quick`` times 2 rounds of one forward at a smaller input (128x96 crops; 8-frame 112x112
clips): a smoke run, not a measurement. GluonCV is a benchmark-only reference here.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_cv_inference import default_threads, interleaved, operators, pin_threads, summarise  # noqa: E402

POSE = "simple_pose_resnet50_v1b"
ACTION = "i3d_resnet50_v1_kinetics400"
MODELS = [POSE, ACTION]
#: one sample's input, full and --quick
SHAPES = {POSE: ((3, 256, 192), (3, 128, 96)), ACTION: ((3, 32, 224, 224), (3, 8, 112, 112))}


def build_pair(name: str, shape: tuple[int, ...]):
    """Our network and GluonCV's with the same random weights, and a batch-1 input of ``shape``."""
    import gluon_hub
    from gluon_hub.compat import mx  # first: it restores the numpy aliases mxnet 1.9.1 needs

    import gluoncv

    ours = gluon_hub.load(name)
    ours.initialize(mx.init.Xavier(rnd_type="gaussian", factor_type="in", magnitude=2), force_reinit=True)
    x = mx.nd.array(np.random.default_rng(0).uniform(-1, 1, (1, *shape)).astype(np.float32))
    ours(x)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "weights.params")
        ours.save_parameters(path)
        ref = gluoncv.model_zoo.get_model(name, pretrained=False, pretrained_base=False)
        ref.load_parameters(path, allow_missing=False, ignore_extra=False)
    for net in (ours, ref):
        net.hybridize(static_alloc=True, static_shape=True)
    a, b = ours(x).asnumpy(), ref(x).asnumpy()
    if a.shape != b.shape or not np.allclose(a, b, rtol=1e-3, atol=1e-3 * max(1.0, float(np.abs(b).max()))):
        raise SystemExit(f"{name}: outputs differ from GluonCV's")
    return ours, ref, x


def compare(name: str, shape: tuple[int, ...], rounds: int, iters: int) -> dict[str, float]:
    ours, ref, x = build_pair(name, shape)
    # the same operators in the same order mean the same work: a check that load on the machine cannot blur
    ops_ours, ops_ref = operators(ours), operators(ref)
    same = "the same graph as GluonCV's" if ops_ours == ops_ref else "graphs differ from GluonCV's"
    print(f"  {name}: {same}, {len(ops_ours)} vs {len(ops_ref)} operators")
    return summarise(*interleaved(lambda: ours(x).wait_to_read(), lambda: ref(x).wait_to_read(), rounds, iters,
                                  warmup=1 if rounds < 10 else 3))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="*", default=MODELS, choices=MODELS, help="models to time")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--quick", action="store_true", help="a smoke run at small sizes (not a measurement)")
    parser.add_argument("--threads", type=int, default=default_threads(),
                        help="OpenMP/oneDNN threads, the same for both sides")
    args = parser.parse_args(argv)
    pin_threads(args.threads)
    import gluon_hub

    available = set(gluon_hub.list_models(task="pose-estimation")) | set(
        gluon_hub.list_models(task="action-recognition"))
    rounds, iters = (2, 1) if args.quick else (args.rounds, 2)
    print(f"threads: {args.threads}, rounds: {rounds} of {iters} forward(s); ms are medians, "
          f"ratio = median of the per-round gluon_hub/gluoncv ratios")
    print(f"{'model':<32}{'input':>16}{'gluon_hub ms':>14}{'gluoncv ms':>12}{'ratio':>8}{'min ratio':>11}"
          f"  goal 0.95-1.05")
    for name in args.models:
        if name not in available:
            print(f"{name:<32}  skipped: not in the registry yet (gluon_hub.list_models does not list it)")
            continue
        shape = SHAPES[name][1 if args.quick else 0]
        result = compare(name, shape, rounds, iters)
        ratio = result["ratio"]
        verdict = "ok" if 0.95 <= ratio <= 1.05 else ("faster" if ratio < 0.95 else "MISSED")
        print(f"{name:<32}{'x'.join(map(str, shape[1:])):>16}{result['a'] * 1e3:>14.2f}{result['b'] * 1e3:>12.2f}"
              f"{ratio:>8.3f}{result['min_ratio']:>11.3f}  {verdict}")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
