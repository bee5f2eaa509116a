"""Faster inference than GluonCV's, same answers: ``optimize=True``, int8 and ONNX Runtime
against GluonCV's hybridized model with the same weights, on the CPU, all in one run.

Issue 18's goals, per model (``resnet50_v1d``, ``mobilenet1.0``, ``mobilenetv3_large``) at
batch 1 and 32: ``gluon_hub.optimize`` at least 1.2x GluonCV (geometric mean of the three,
none slower), int8 (``gluon_hub.quantize``, naive calibration) at least 2x at batch 1,
the ONNX Runtime path (``gluon_hub.runtime``) at least 1.5x at batch 1. Each ratio is
GluonCV time / ours, the median of per-round ratios, timed as in ``bench_cv_inference.py``
(one thread count for every side, alternate warm-up, rounds timing both back to back in
alternating order). The output difference is printed beside each ratio and bounded: the
optimized and ONNX outputs within 1e-4 (ONNX 1e-3) relative of GluonCV's, int8 within
:data:`INT8_RTOL` on these random He-initialised weights (a worst case: trained weights
give a few percent, see ``--agreement``).

``--agreement`` prints instead the honest int8 report of the README: the main job's digits
CNN trained here on real data (accuracy drop on its test split, calibration on its train
split), and ``resnet50_v1`` on the photographs that ship with matplotlib and scikit-learn
(top-1 agreement and mean logit error over 10 crops of each), with GluonCV's published
weights when they are in the cache or a local mirror, else random weights, and says which.

Run: ``.venv/bin/python bench/bench_fast_inference.py [--models ...] [--batches 1 32]
[--paths optimize int8 onnx] [--rounds 31] [--threads N]`` or ``... --agreement``.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
from bench_cv_inference import default_threads, interleaved, pin_threads, summarise

HERE = Path(__file__).resolve().parent
#: Largest relative output difference from GluonCV's: fused float32, ONNX Runtime, int8.
RTOL = {"optimize": 1e-4, "onnx": 1e-3, "int8": 0.35}
INT8_RTOL = RTOL["int8"]
GOALS = {"optimize": 1.2, "int8": 2.0, "onnx": 1.5}  # batch 1 for int8 and onnx


def _he(net):
    from gluon_hub.compat import mx

    net.initialize(mx.init.Xavier(rnd_type="gaussian", factor_type="in", magnitude=2), force_reinit=True)
    return net


def build_reference(name: str, x):
    """GluonCV's model with our He-initialised weights, hybridized with static memory, and
    the path of those weights (for our sides)."""
    import gluon_hub

    import gluoncv

    ours = _he(gluon_hub.load(name))
    ours(x)
    path = os.path.join(tempfile.mkdtemp(), f"{name}.params")
    ours.save_parameters(path)
    ref = gluoncv.model_zoo.get_model(name)
    ref.load_parameters(path)
    ref.hybridize(static_alloc=True, static_shape=True)
    return ref, path


def build_ours(kind: str, name: str, weights: str, x, folder: str):
    """Our side of ``kind``: a callable on ``x`` (an NDArray) returning numpy outputs."""
    import gluon_hub

    net = gluon_hub.load(name)
    net.load_parameters(weights)
    if kind == "optimize":
        with warnings.catch_warnings():
            warnings.simplefilter("error", gluon_hub.OptimizeWarning)  # a fallback would time nothing new
            gluon_hub.optimize(net, x)
        return lambda: net(x).wait_to_read(), lambda: net(x).asnumpy()
    if kind == "int8":
        rng = np.random.default_rng(1)
        calib = [rng.random(x.shape, dtype=np.float32) for _ in range(2)]
        # MobileNetV3's multiplications (squeeze-excitation, hard-swish) fail in int8 in MXNet 1.9
        multiplies = ["broadcast_mul", "elemwise_mul"] if name.startswith("mobilenetv3") else []
        int8 = gluon_hub.quantize(net, calib_data=calib, exclude_operators=["FullyConnected", *multiplies])
        return lambda: int8(x).wait_to_read(), lambda: int8(x).asnumpy()
    if kind == "onnx":
        from gluon_hub.runtime import load_onnx

        (path,) = gluon_hub.export(net, os.path.join(folder, f"{name}-{x.shape[0]}.onnx"), format="onnx",
                                   input_shape=x.shape)
        runner = load_onnx(path, name, threads=int(os.environ["OMP_NUM_THREADS"]))
        data = x.asnumpy()
        return lambda: runner(data), lambda: runner(data)
    raise ValueError(f"unknown path {kind!r}")


def relative_error(got: np.ndarray, want: np.ndarray) -> float:
    return float(np.abs(got - want).max() / np.abs(want).max())


def speed(args: argparse.Namespace) -> int:
    from gluon_hub.compat import mx

    print(f"threads: {args.threads}, rounds: {args.rounds}; ms are medians; ratio = GluonCV / ours, the median "
          "of per-round ratios (above 1: ours is faster); error = max |ours - GluonCV| / max |GluonCV|")
    print(f"{'model':<19}{'batch':>6}{'path':>10}{'GluonCV ms':>12}{'ours ms':>10}{'ratio':>8}{'min ratio':>11}"
          f"{'error':>10}{'bound':>9}")
    ratios: dict[tuple[str, int], list[float]] = {}
    failures = []
    with tempfile.TemporaryDirectory() as folder:
        for name in args.models:
            for batch in args.batches:
                x = mx.nd.array(np.random.default_rng(0).random((batch, 3, 224, 224), dtype=np.float32))
                ref, weights = build_reference(name, x)
                want = ref(x).asnumpy()
                for kind in args.paths:
                    run, output = build_ours(kind, name, weights, x, folder)
                    error = relative_error(output(), want)
                    if error > RTOL[kind]:
                        failures.append(f"{name} batch {batch} {kind}: error {error:.2e} > {RTOL[kind]}")
                    iters = max(1, 8 // batch)
                    times_ref, times_ours = interleaved(lambda: ref(x).wait_to_read(), run, args.rounds, iters)  # noqa: B023  (called here)
                    result = summarise(times_ref, times_ours)
                    ratios.setdefault((kind, batch), []).append(result["ratio"])
                    print(f"{name:<19}{batch:>6}{kind:>10}{result['a'] * 1e3:>12.2f}{result['b'] * 1e3:>10.2f}"
                          f"{result['ratio']:>8.2f}{result['min_ratio']:>11.2f}{error:>10.1e}{RTOL[kind]:>9.0e}")
                    sys.stdout.flush()
    print("\ngeometric means of the ratios (goal):")
    for (kind, batch), values in sorted(ratios.items()):
        goal = GOALS[kind] if kind == "optimize" or batch == 1 else None
        mean = math.exp(sum(map(math.log, values)) / len(values))
        note = "" if goal is None else f" (goal {goal}x{'' if kind == 'optimize' else ' at batch 1'}: " \
                                       f"{'met' if mean >= goal else 'NOT met'})"
        print(f"  {kind:>8} batch {batch:>2}: {mean:.2f}x, slowest {min(values):.2f}x{note}")
    if failures:
        raise SystemExit("output differences over their bound:\n  " + "\n  ".join(failures))
    return 0


def _digits_report() -> None:
    sys.path.insert(0, str(HERE.parent / "scripts"))
    import digits_demo

    import gluon_hub
    from gluon_hub.compat import mx

    net, accuracy, epochs = digits_demo.train(seconds=float(os.environ.get("DIGITS_SECONDS", 60)))
    x_train, _, x_test, y_test = digits_demo.digits_split()
    calib = [x_train[i:i + 64] for i in range(0, len(x_train) - 63, 64)]
    want = net(mx.nd.array(x_test)).asnumpy()
    print(f"digits_cnn, trained here {epochs} epochs on the UCI digits; test split {len(x_test)} images, "
          f"calibrated on {len(calib) * 64} training images (batch 64: the int8 model runs at that shape)")
    print(f"  float32 accuracy {accuracy:.4f}")
    for mode in ("naive", "entropy"):
        int8 = gluon_hub.quantize(net, calib_data=calib, calib_mode=mode)
        padded = np.concatenate([x_test, np.zeros((-len(x_test) % 64, *x_test.shape[1:]), x_test.dtype)])
        got = np.concatenate([int8(mx.nd.array(padded[i:i + 64])).asnumpy()
                              for i in range(0, len(padded), 64)])[: len(x_test)]
        acc = float((got.argmax(1) == y_test).mean())
        print(f"  int8 ({mode:>7}) accuracy {acc:.4f} (drop {accuracy - acc:+.4f}); top-1 agreement with "
              f"float32 {(got.argmax(1) == want.argmax(1)).mean():.4f}; mean |logit error| "
              f"{np.abs(got - want).mean():.4f} (logits' mean |value| {np.abs(want).mean():.2f})")


def _photos() -> list[Path]:
    import matplotlib
    import sklearn

    return [Path(matplotlib.get_data_path()) / "sample_data" / "grace_hopper.jpg",
            Path(sklearn.__file__).parent / "datasets" / "images" / "china.jpg",
            Path(sklearn.__file__).parent / "datasets" / "images" / "flower.jpg"]


def _crops(path: Path) -> np.ndarray:
    """10 views of a photograph, preprocessed as for ImageNet: the centre crop, four corner
    crops of the 256-pixel resize, and their mirror images."""
    from gluon_hub.runtime import preprocess, read_image

    def prepared(image: np.ndarray) -> np.ndarray:
        return np.asarray(preprocess(image, "resnet50_v1")).reshape(1, 3, 224, 224)

    image = read_image(path)
    center = prepared(image)
    h, w = image.shape[:2]
    scale = 256 / min(h, w)
    views = [center]
    for top, left in ((0, 0), (0, 1), (1, 0), (1, 1)):
        ch, cw = int(224 / scale), int(224 / scale)
        y0, x0 = top * (h - ch), left * (w - cw)
        views.append(prepared(image[y0:y0 + ch, x0:x0 + cw]))
    views += [v[..., ::-1] for v in views]
    return np.concatenate(views).astype(np.float32)


def _photo_report(root: str | None) -> None:
    import gluon_hub
    from gluon_hub.compat import mx

    os.environ["GLUON_HUB_OFFLINE"] = "1"  # never download in a benchmark: use what is here
    try:
        net = gluon_hub.load("resnet50_v1_int8", pretrained=True, root=root)
        fp32 = gluon_hub.load("resnet50_v1", pretrained=True, root=root)
        weights = "GluonCV's published ImageNet weights, int8 with GluonCV's recorded ranges"
    except Exception as exc:
        net = None
        weights = (f"RANDOM weights (the published file is not in the cache: {type(exc).__name__}; "
                   "`gluon-hub cache prefetch resnet50_v1` on a connected machine), int8 calibrated "
                   "on the first photograph's views")
    views = np.concatenate([_crops(p) for p in _photos()])
    if net is None:
        fp32 = _he(gluon_hub.load("resnet50_v1"))
        net = gluon_hub.quantize(fp32, calib_data=[views[i:i + 1] for i in range(10)],
                                 exclude_operators=["FullyConnected"])
    want = np.concatenate([fp32(mx.nd.array(views[i:i + 1])).asnumpy() for i in range(len(views))])
    got = np.concatenate([net(mx.nd.array(views[i:i + 1])).asnumpy() for i in range(len(views))])
    print(f"resnet50_v1 on {len(views)} views (10 crops each) of {', '.join(p.name for p in _photos())}; {weights}")
    print(f"  top-1 agreement int8 vs float32 {(got.argmax(1) == want.argmax(1)).mean():.4f}; mean |logit "
          f"error| {np.abs(got - want).mean():.4f} (logits' mean |value| {np.abs(want).mean():.2f}); max "
          f"relative error {relative_error(got, want):.3f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["resnet50_v1d", "mobilenet1.0", "mobilenetv3_large"])
    parser.add_argument("--batches", nargs="+", type=int, default=[1, 32])
    parser.add_argument("--paths", nargs="+", choices=sorted(RTOL), default=["optimize", "int8", "onnx"])
    parser.add_argument("--rounds", type=int, default=31)
    parser.add_argument("--threads", type=int, default=default_threads(),
                        help="OpenMP/oneDNN and onnxruntime threads, the same for every side")
    parser.add_argument("--agreement", action="store_true",
                        help="print the int8 agreement report (digits model, photographs) instead")
    parser.add_argument("--root", help="the weight cache to look in for --agreement (default: the hub's)")
    args = parser.parse_args(argv)
    pin_threads(args.threads)
    if args.agreement:
        _digits_report()
        _photo_report(args.root)
        return 0
    return speed(args)


if __name__ == "__main__":
    raise SystemExit(main())
