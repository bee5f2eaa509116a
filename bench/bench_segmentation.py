"""Hybridized CPU inference of gluon-cv-core segmentation models against GluonCV's, and
multi-scale evaluation against GluonCV's ``MultiEvalModel``.

Goal (issue 15): ``fcn_resnet50_voc``, ``deeplab_resnet50_ade`` and, once the registry has it,
``mask_rcnn_resnet50_v1b_coco`` within +-5% of GluonCV's time at batch 1; multi-scale
evaluation not slower than GluonCV's. Both sides run the same random weights (GluonCV saves
them, ours loads them strictly, and the outputs are checked to agree) in one process,
hybridized with static memory. GluonCV's semantic models upsample to a size fixed when they are
built, so they are built for the benchmark's input side.

The multi-scale table runs :class:`gluon_cv_core.segmentation.multiscale.MultiScaleEvaluator` on our
``fcn_resnet50_voc`` and GluonCV's ``MultiEvalModel`` on its own, same weights, same image,
GluonCV's six scales (three with ``--quick``) with flipping, after checking that the summed scores agree.

The timing method is ``bench_cv_inference.py``'s (fixed thread count, alternating warm-up,
rounds of back-to-back blocks with the order swapped each round, median of per-round ratios).

Run: ``.venv/bin/python bench/bench_segmentation.py [--quick] [--models ...] [--rounds 10]``.
``--quick`` times 3 rounds of one forward at a 96-pixel input (256 for Mask R-CNN) and
multi-scale evaluation of a 48 x 64 image (base 64, crop 48, scales 0.5, 1 and 1.5): a smoke
run, not a measurement. ``--models`` with no name times multi-scale evaluation alone.
GluonCV is a benchmark-only reference here.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_cv_inference import default_threads, interleaved, pin_threads, summarise  # noqa: E402

MODELS = ["fcn_resnet50_voc", "deeplab_resnet50_ade", "mask_rcnn_resnet50_v1b_coco"]


def _flat(outputs) -> list:
    items = []
    for item in outputs if isinstance(outputs, (list, tuple)) else [outputs]:
        items.extend(_flat(item) if isinstance(item, (list, tuple)) else [item])
    return items


def build_pair(name: str, side: int, hybridize: bool = True):
    """Our model and GluonCV's with the same random weights, and a ``(1, 3, side, side)`` input."""
    import gluon_hub
    from gluon_hub.compat import mx  # first: it restores the numpy aliases mxnet 1.9.1 needs

    import gluoncv

    semantic = gluon_hub.info(name).task == "semantic-segmentation"
    extra = {"crop_size": side, "base_size": side} if semantic else {}
    ref = gluoncv.model_zoo.get_model(name, pretrained=False, pretrained_base=False, **extra)
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
    if hybridize:
        for net in (ours, ref):
            net.hybridize(static_alloc=True, static_shape=True)
    mine, theirs = _flat(ours(x)), _flat(ref(x))
    for a, b in zip(mine, theirs):
        a, b = a.asnumpy(), b.asnumpy()
        if a.shape != b.shape or not np.allclose(a, b, rtol=1e-3, atol=1e-3 * max(1.0, np.abs(b).max())):
            raise SystemExit(f"{name}: outputs differ from GluonCV's")
    return ours, ref, x


def compare(name: str, side: int, rounds: int, iters: int) -> dict[str, float]:
    ours, ref, x = build_pair(name, side)

    def run(net):
        return lambda: [out.wait_to_read() for out in _flat(net(x))]

    return summarise(*interleaved(run(ours), run(ref), rounds, iters, warmup=1 if rounds < 10 else 3))


def compare_multi_scale(shape: tuple[int, int], base_size: int, crop_size: int, scales: list[float],
                        rounds: int) -> dict[str, float]:
    """Multi-scale, flipped evaluation of one image: ours against GluonCV's ``MultiEvalModel``."""
    from gluon_cv_core.segmentation.multiscale import MultiScaleEvaluator
    from gluon_hub.compat import mx

    from gluoncv.model_zoo.segbase import MultiEvalModel

    ours, ref, _ = build_pair("fcn_resnet50_voc", crop_size)
    ref.base_size = base_size
    image = mx.nd.array(np.random.default_rng(1).uniform(-2, 2, (3, *shape)).astype(np.float32))
    mine = MultiScaleEvaluator(ours, 21, base_size, crop_size, scales)
    theirs = MultiEvalModel(ref, 21, [mx.cpu()], scales=scales)
    a, b = mine(image).asnumpy(), theirs(image).asnumpy()
    if not np.allclose(a, b, rtol=1e-3, atol=1e-3 * np.abs(b).max()):
        raise SystemExit("multi-scale evaluation: scores differ from GluonCV's")
    return summarise(*interleaved(lambda: mine(image).wait_to_read(), lambda: theirs(image).wait_to_read(),
                                  rounds, 1, warmup=1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="*", default=MODELS, help="models to time (none: multi-scale only)")
    parser.add_argument("--no-multi-scale", dest="multi_scale", action="store_false",
                        help="leave out the multi-scale evaluation table")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--iters", type=int, default=2, help="forwards per side in each round")
    parser.add_argument("--side", type=int, help="input side (default: 480 for semantic models, 600 for Mask "
                        "R-CNN, whose ResNet-50 C4 head runs stage 5 on 1000 proposals: about a minute a "
                        "forward on 2 cores at 256; 96 and 256 with --quick)")
    parser.add_argument("--quick", action="store_true", help="a smoke run at small sizes (not a measurement)")
    parser.add_argument("--threads", type=int, default=default_threads(),
                        help="OpenMP/oneDNN threads, the same for both sides")
    args = parser.parse_args(argv)
    pin_threads(args.threads)
    import gluon_hub

    available = set(gluon_hub.list_models())
    rounds, iters = (3, 1) if args.quick else (args.rounds, args.iters)
    print(f"threads: {args.threads}, rounds: {rounds} of {iters} forward(s); ms are medians, "
          f"ratio = median of the per-round gluon_hub/gluoncv ratios")
    print(f"{'model':<32}{'side':>6}{'gluon_hub ms':>14}{'gluoncv ms':>12}{'ratio':>8}{'min ratio':>11}"
          f"  goal 0.95-1.05")
    for name in args.models:
        if name not in available:
            print(f"{name:<32}  skipped: not in the registry (yet)")
            continue
        semantic = gluon_hub.info(name).task == "semantic-segmentation"
        # Mask R-CNN needs more anchors than its 1000 proposals kept after NMS: at least 256 pixels
        side = args.side or {(True, True): 96, (True, False): 256, (False, True): 480, (False, False): 600}[
            (args.quick, semantic)]
        result = compare(name, side, rounds, iters)
        ratio = result["ratio"]
        verdict = "ok" if 0.95 <= ratio <= 1.05 else ("faster" if ratio < 0.95 else "MISSED")
        print(f"{name:<32}{side:>6}{result['a'] * 1e3:>14.2f}{result['b'] * 1e3:>12.2f}{ratio:>8.3f}"
              f"{result['min_ratio']:>11.3f}  {verdict}")
        sys.stdout.flush()
    if not args.multi_scale:
        return 0
    if "fcn_resnet50_voc" not in available:
        print("multi-scale evaluation: skipped, fcn_resnet50_voc is not in the registry (yet)")
        return 0
    shape, base, crop = ((48, 64), 64, 48) if args.quick else ((375, 500), 520, 480)
    scales = [0.5, 1.0, 1.5] if args.quick else [0.5, 0.75, 1.0, 1.25, 1.5, 1.75]
    result = compare_multi_scale(shape, base, crop, scales, 2 if args.quick else rounds)
    verdict = "ok" if result["ratio"] <= 1.0 else "MISSED"
    print(f"\nmulti-scale evaluation, fcn_resnet50_voc, {shape[0]}x{shape[1]} image, base {base}, crop {crop}, "
          f"scales {','.join(map(str, scales))}, flip: gluon_hub {result['a'] * 1e3:.1f} ms, "
          f"gluoncv {result['b'] * 1e3:.1f} ms, "
          f"ratio {result['ratio']:.3f} (min {result['min_ratio']:.3f})  goal <= 1.0: {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
