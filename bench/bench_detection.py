"""Hybridized CPU inference of gluon-cv-core detectors against GluonCV's, side by side.

Goal: within +-5% of GluonCV's time at batch 1, post-processing (box decoding and NMS)
included, for ``ssd_512_resnet50_v1_voc``, ``yolo3_darknet53_voc`` and, once the registry
has it, ``faster_rcnn_resnet50_v1b_voc``. Both sides run the same random weights (GluonCV
saves them, ours loads them strictly, and the outputs are checked to agree) in one process,
hybridized with static memory, on the models' default input side.

The timing method is ``bench_cv_inference.py``'s (fixed thread count, alternating warm-up,
rounds of back-to-back blocks with the order swapped each round, median of per-round
ratios), reused from there so both benchmarks measure the same way.

A second table times the validation presets (``SSDValTransform``, ``YOLO3ValTransform``,
``FasterRCNNValTransform``, ``CenterNetValTransform``) against GluonCV's default validation
transforms on the same VOC-sized image (375 x 500, three boxes), after checking that both
give the same arrays. Goal: at least GluonCV's images/s (ratio of times at most 1). A control
row times GluonCV's Faster R-CNN preset against a second instance of itself: its distance from
1.0 is the noise of the measurement.

Run: ``.venv/bin/python bench/bench_detection.py [--quick] [--models ...] [--rounds 15]``.
``--quick`` times 5 rounds of one forward each at a 256-pixel input, for a run of about a
minute. GluonCV is a benchmark-only reference here.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_cv_inference import default_threads, interleaved, pin_threads, summarise  # noqa: E402

MODELS = ["ssd_512_resnet50_v1_voc", "yolo3_darknet53_voc", "faster_rcnn_resnet50_v1b_voc"]


def build_pair(name: str, side: int):
    """Our detector and GluonCV's with the same random weights, hybridized, and an input."""
    import gluon_hub
    from gluon_hub.compat import mx  # first: it restores the numpy aliases mxnet 1.9.1 needs

    import gluoncv

    ref = gluoncv.model_zoo.get_model(name, pretrained=False, pretrained_base=False)
    ref.initialize(force_reinit=True)
    x = mx.nd.array(np.random.default_rng(0).uniform(-1, 1, (1, 3, side, side)).astype(np.float32))
    ref(x)
    mx.random.seed(0)
    for param in ref.collect_params().values():
        if not isinstance(param, mx.gluon.Constant) and param.name.endswith("weight"):
            param.set_data(mx.nd.random.normal(0, float(np.prod(param.shape[1:])) ** -0.5, param.shape))
    ours = gluon_hub.load(name)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "weights.params")
        ref.save_parameters(path)
        ours.load_parameters(path, allow_missing=False, ignore_extra=False)
    for net in (ours, ref):
        net.hybridize(static_alloc=True, static_shape=True)
    mine, theirs = ours(x), ref(x)
    for a, b in zip(mine, theirs):
        a, b = a.asnumpy(), b.asnumpy()
        if a.shape != b.shape or not np.allclose(a, b, rtol=1e-4, atol=1e-4 * max(1.0, np.abs(b).max())):
            raise SystemExit(f"{name}: outputs differ from GluonCV's")
    return ours, ref, x


def compare(name: str, side: int, rounds: int, iters: int) -> dict[str, float]:
    ours, ref, x = build_pair(name, side)

    def run(net):
        return lambda: [out.wait_to_read() for out in net(x)]

    times_ours, times_ref = interleaved(run(ours), run(ref), rounds, iters, warmup=1 if rounds < 10 else 3)
    return summarise(times_ours, times_ref)


def preset_pairs() -> list[tuple[str, object, object]]:
    """(name, ours, GluonCV's) validation presets at each family's default size."""
    from gluon_cv_core.detection import presets as ours

    from gluoncv.data.transforms import presets

    return [
        ("SSD 512", ours.SSDValTransform(512, 512), presets.ssd.SSDDefaultValTransform(512, 512)),
        ("YOLOv3 416", ours.YOLO3ValTransform(416, 416), presets.yolo.YOLO3DefaultValTransform(416, 416)),
        ("Faster R-CNN 600/1000", ours.FasterRCNNValTransform(600, 1000),
         presets.rcnn.FasterRCNNDefaultValTransform(600, 1000)),
        ("CenterNet 512", ours.CenterNetValTransform(512, 512),
         presets.center_net.CenterNetDefaultValTransform(512, 512)),
    ]


def compare_presets(rounds: int, iters: int) -> None:
    from gluon_hub.compat import mx

    rng = np.random.default_rng(0)
    image = mx.nd.array(rng.integers(0, 256, (375, 500, 3)), dtype="uint8")
    label = np.array([[10, 20, 200, 300, 3], [100, 50, 480, 360, 14], [0, 0, 499, 374, 8]], np.float32)
    print(f"\n{'validation preset':<32}{'gluon_hub ms':>14}{'gluoncv ms':>12}{'ratio':>8}{'min ratio':>11}"
          f"  goal <= 1.0 (images/s at least GluonCV's)")

    def run(preset):
        return lambda: preset(image, label.copy())[0].wait_to_read()

    pairs = preset_pairs()
    for name, mine, theirs in pairs:
        a, b = mine(image, label.copy()), theirs(image, label.copy())
        if not all(np.array_equal(np.asarray(x.asnumpy() if hasattr(x, "asnumpy") else x),
                                  np.asarray(y.asnumpy() if hasattr(y, "asnumpy") else y)) for x, y in zip(a, b)):
            raise SystemExit(f"{name}: the preset's arrays differ from GluonCV's")

        result = summarise(*interleaved(run(mine), run(theirs), rounds, iters, warmup=2))
        verdict = "ok" if result["ratio"] <= 1.0 else "MISSED"
        print(f"{name:<32}{result['a'] * 1e3:>14.2f}{result['b'] * 1e3:>12.2f}{result['ratio']:>8.3f}"
              f"{result['min_ratio']:>11.3f}  {verdict}")
        sys.stdout.flush()
    # the same preset timed against a second instance of itself: how far from 1.0 a ratio
    # strays when nothing differs (the presets above share MXNet's resize and tensor ops)
    _, _, first = pairs[2]
    _, _, second = preset_pairs()[2]
    control = summarise(*interleaved(run(first), run(second), rounds, iters, warmup=2))
    print(f"{'control: Faster R-CNN vs itself':<32}{control['a'] * 1e3:>14.2f}{control['b'] * 1e3:>12.2f}"
          f"{control['ratio']:>8.3f}{control['min_ratio']:>11.3f}  (measurement noise)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=MODELS)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--side", type=int, help="input side (default: each model's, 256 with --quick)")
    parser.add_argument("--quick", action="store_true", help="5 rounds of one forward at a 256-pixel input")
    parser.add_argument("--presets-only", action="store_true", help="time only the validation presets table")
    parser.add_argument("--threads", type=int, default=default_threads(),
                        help="OpenMP/oneDNN threads, the same for both sides")
    args = parser.parse_args(argv)
    pin_threads(args.threads)
    import gluon_hub

    if args.presets_only:
        compare_presets(5 if args.quick else args.rounds, 5 if args.quick else 20)
        return 0
    available = set(gluon_hub.list_models())
    rounds, iters = (5, 1) if args.quick else (args.rounds, 2)
    print(f"threads: {args.threads}, rounds: {rounds} of {iters} forward(s); ms are medians, "
          f"ratio = median of the per-round gluon_hub/gluoncv ratios")
    print(f"{'model':<32}{'side':>6}{'gluon_hub ms':>14}{'gluoncv ms':>12}{'ratio':>8}{'min ratio':>11}"
          f"  goal 0.95-1.05")
    for name in args.models:
        if name not in available:
            print(f"{name:<32}  skipped: not in the registry (yet)")
            continue
        side = args.side or (256 if args.quick else gluon_hub.info(name).input.shape[-1])
        result = compare(name, side, rounds, iters)
        ratio = result["ratio"]
        verdict = "ok" if 0.95 <= ratio <= 1.05 else ("faster" if ratio < 0.95 else "MISSED")
        print(f"{name:<32}{side:>6}{result['a'] * 1e3:>14.2f}{result['b'] * 1e3:>12.2f}{ratio:>8.3f}"
              f"{result['min_ratio']:>11.3f}  {verdict}")
        sys.stdout.flush()
    compare_presets(rounds, 5 if args.quick else 20)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
