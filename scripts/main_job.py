"""The main job: the whole gluon_hub loop on one machine, with no internet.

1. train a small CNN on real data that ships with scikit-learn (UCI handwritten digits);
2. publish its weights to a mirror folder (file named by its hash, plus weights.json);
3. serve that folder on a loopback address with ``gluon-hub serve``;
4. in a fresh process with an empty cache, load the model by name with
   ``pretrained=True`` through the loopback mirror and the verified cache, and evaluate
   it: the accuracy must equal the one measured at the end of training;
5. convert the published weights to ONNX into the same mirror (``gluon_hub_deploy.convert``,
   what ``gluon-hub convert`` runs), and in a fresh process that cannot import MXNet, with
   an empty cache, load the converted graph by name through the mirror
   (``gluon_hub.runtime.load``) and run it on the test images: the same classes for every
   image, logits within 1e-4 of their scale and the same accuracy as MXNet, or the job fails;
6. list the plugins and run ``resnet50_v1d`` on a photograph.

Each step prints its timing, and says plainly which weights are real and which are
randomly initialised. Outputs go to ``--workdir`` (default ``.main-job/``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

HERE = Path(__file__).resolve().parent


@contextlib.contextmanager
def step(title: str) -> Iterator[None]:
    print(f"\n=== {title}", flush=True)
    start = time.perf_counter()
    yield
    print(f"--- {time.perf_counter() - start:.2f} s", flush=True)


def sample_image() -> Path:
    """A real photograph that ships with an installed package (no download)."""
    import matplotlib

    path = Path(matplotlib.get_data_path()) / "sample_data" / "grace_hopper.jpg"
    if not path.is_file():
        raise FileNotFoundError(f"sample image {path} is missing; reinstall matplotlib")
    return path


@contextlib.contextmanager
def mirror_server(directory: Path, log: Path) -> Iterator[tuple[str, subprocess.Popen]]:
    """``gluon-hub serve DIR`` in a child process; yields the URL it prints first.

    The server's request log goes to ``log``, not into the job's output."""
    with log.open("w") as log_file:
        process = subprocess.Popen(
            [sys.executable, "-m", "gluon_hub", "serve", str(directory), "--port", "0"],
            stdout=subprocess.PIPE, stderr=log_file, text=True,
        )
    try:
        first = process.stdout.readline().strip()  # "Serving DIR at http://127.0.0.1:PORT/"
        if " at http" not in first:
            raise RuntimeError(f"gluon-hub serve did not start: {first!r}")
        yield first.rsplit(" at ", 1)[1], process
    finally:
        process.terminate()
        process.wait(timeout=10)


def published_weights_reachable(name: str) -> bool:
    """Whether a model's published weights are in the cache or a local mirror (no network)."""
    import gluon_hub

    previous = os.environ.get("GLUON_HUB_OFFLINE")
    os.environ["GLUON_HUB_OFFLINE"] = "1"
    try:
        gluon_hub.fetch(gluon_hub.info(name).weight(True).file, progress=False)
        return True
    except Exception:
        return False
    finally:
        if previous is None:
            del os.environ["GLUON_HUB_OFFLINE"]
        else:
            os.environ["GLUON_HUB_OFFLINE"] = previous


def run_main_job(workdir: Path, train_seconds: float) -> int:
    import gluon_hub
    from gluon_hub.cli import main as cli

    total = time.perf_counter()
    shutil.rmtree(workdir, ignore_errors=True)
    mirror, cache = workdir / "mirror", workdir / "cache"
    mirror.mkdir(parents=True)

    with step("1. plugins found through entry points, and their models"):
        if cli(["plugins"]) != 0:
            return 1
        for info in gluon_hub.plugins():
            print(f"{info.name:>8}: {len(gluon_hub.list_models(plugin=info.name))} models")
        print("mxnet imported by listing:", "mxnet" in sys.modules)

    with step(f"2. train digits_cnn on the UCI digits for at most {train_seconds:.0f} s"):
        import digits_demo

        net, trained_accuracy, epochs = digits_demo.train(seconds=train_seconds)
        print(f"weights: REAL, trained here for {epochs} epochs; test accuracy "
              f"{trained_accuracy:.4f} on {digits_demo.SPLIT}")

    with step("3. publish the weights to a mirror folder"):
        variant = gluon_hub.publish(net, "digits_cnn", mirror, tag="main-job",
                                    metrics=[digits_demo.metric(trained_accuracy)],
                                    description="trained by the gluon_hub main job")
        print(f"{mirror / variant.file.filename}: {variant.file.size} bytes, {variant.file.hash}")
        print(f"index: {mirror / 'weights.json'}")

    with step("4. serve the mirror on loopback; load by name in a fresh process and evaluate"):
        loaded = evaluate_in_child("--evaluate", mirror, cache, workdir / "mirror-server.log")
        if loaded is None:
            return 1
        print(f"fresh process loaded {loaded['file']} (hash verified) and measured "
              f"accuracy {loaded['accuracy']:.4f}")
        same = loaded["accuracy"] == trained_accuracy
        print(f"same accuracy as at the end of training: {'yes' if same else 'NO'}")
        if not same:
            return 1

    with step("5. convert digits_cnn to ONNX; the ONNX runner in a fresh process without MXNet"):
        if not onnx_check(net, mirror, mirror / variant.file.filename, cache, workdir):
            return 1

    with step("6. plugins, then resnet50_v1d on a photograph"):
        if cli(["plugins"]) != 0:
            return 1
        real = published_weights_reachable("resnet50_v1d")
        print("weights: " + ("REAL, GluonCV's published ImageNet weights" if real else
                             "RANDOMLY INITIALISED: GluonCV's ImageNet file is not in the cache "
                             "or a local mirror, and this job never downloads; the labels "
                             "below are therefore meaningless"))
        # without a weights option predict uses the published weights only if they are here
        args = ["predict", "resnet50_v1d", str(sample_image()), "--topk", "3"]
        if cli(args if real else [*args, "--random-weights"]) != 0:
            return 1

    print(f"\nmain job done in {time.perf_counter() - total:.1f} s")
    return 0


def evaluate_in_child(flag: str, mirror: Path, cache: Path, server_log: Path) -> dict | None:
    """Serve ``mirror`` on loopback and run this script with ``flag`` in a fresh process whose
    only source of weights is that mirror (an empty ``cache``, never offline); returns the
    JSON its last line prints, or None after printing its output when it failed."""
    with mirror_server(mirror, server_log) as (url, _):
        print(f"mirror: {url}  cache: {cache} (empty); server log: {server_log}")
        env = dict(os.environ, GLUON_HUB_MIRRORS=url, GLUON_HUB_HOME=str(cache), GLUON_HUB_PROGRESS="0")
        env.pop("GLUON_HUB_OFFLINE", None)
        result = subprocess.run([sys.executable, str(HERE / "main_job.py"), flag, str(mirror / "weights.json")],
                                env=env, capture_output=True, text=True)
    if result.returncode != 0:
        print(result.stdout + result.stderr, file=sys.stderr)
        return None
    return json.loads(result.stdout.strip().splitlines()[-1])


#: how far the ONNX runner's logits may be from MXNet's, relative to their largest magnitude
#: (float32 arithmetic in another order: about 1e-7 here)
ONNX_TOLERANCE = 1e-4


def onnx_check(net, mirror: Path, params: Path, cache: Path, workdir: Path) -> bool:
    """Step 5: convert ``params`` to ONNX into ``mirror``, run it by name without MXNet, and
    compare with MXNet's logits of ``net`` on the test images; prints what it found."""
    import digits_demo
    import numpy as np

    import gluon_hub
    from gluon_hub_deploy import convert

    # convert reads the model's spec; the plugin is this process's only while converting
    gluon_hub.register_plugin(digits_demo.DigitsPlugin(mirror / "weights.json"), "main-job")
    try:
        (converted,) = convert(["digits_cnn"], mirror, params=params, tag="main-job", progress=False)
    finally:
        gluon_hub.unregister_plugin("main-job")
    print(f"{mirror / converted.file.filename}: {converted.file.size} bytes, tag {converted.tag}, "
          f"{converted.file.hash}")
    loaded = evaluate_in_child("--evaluate-onnx", mirror, cache / "onnx", workdir / "mirror-server-onnx.log")
    if loaded is None:
        return False
    _, _, x_test, y_test = digits_demo.digits_split()
    want = digits_demo.logits(net, x_test)
    got = np.asarray(loaded["logits"], dtype=np.float32)
    print(f"fresh process without MXNet (mxnet imported: {loaded['mxnet_imported']}) loaded "
          f"{loaded['file']} by name through the mirror with onnxruntime ({loaded['provider']}) and "
          f"measured accuracy {loaded['accuracy']:.4f}")
    rel = float(np.abs(got - want).max() / np.abs(want).max()) if got.shape == want.shape else float("inf")
    same_classes = got.shape == want.shape and bool((got.argmax(axis=1) == want.argmax(axis=1)).all())
    mxnet_accuracy = float((want.argmax(axis=1) == y_test).mean())
    same = (same_classes and rel <= ONNX_TOLERANCE and loaded["accuracy"] == mxnet_accuracy
            and not loaded["mxnet_imported"])
    print(f"ONNX against MXNet on the {len(x_test)} test images: classes "
          f"{'all equal' if same_classes else 'DIFFER'}, largest logit difference {rel:.1e} of their scale "
          f"(at most {ONNX_TOLERANCE:g}), accuracy {loaded['accuracy']:.4f} against {mxnet_accuracy:.4f}")
    print(f"same answers from ONNX as from MXNet: {'yes' if same else 'NO'}")
    return same


#: Run in the ONNX check's fresh process: ``import mxnet`` fails there, as where MXNet is not installed.
class _NoMXNet:
    @classmethod
    def find_spec(cls, name: str, path: object = None, target: object = None) -> None:
        if name.split(".")[0] == "mxnet":
            raise ModuleNotFoundError(f"No module named {name!r} (the main job's ONNX check runs without MXNet)",
                                      name=name)


def evaluate_onnx(weights_index: Path) -> int:
    """The fresh process of step 5: without MXNet, loads the converted graph by name through the
    cache and prints one JSON line with its logits on the test images."""
    sys.meta_path.insert(0, _NoMXNet)
    import digits_demo

    import gluon_hub
    import gluon_hub.runtime

    gluon_hub.register_plugin(digits_demo.DigitsPlugin(weights_index), "main-job")
    runner = gluon_hub.runtime.load("digits_cnn")
    _, _, x_test, y_test = digits_demo.digits_split()
    logits = runner(x_test)
    print(json.dumps({"accuracy": float((logits.argmax(axis=1) == y_test).mean()),
                      "file": runner.session.path.name,
                      "provider": runner.session.provider, "mxnet_imported": "mxnet" in sys.modules,
                      "logits": logits.tolist()}))
    return 0


def evaluate(weights_index: Path) -> int:
    """The fresh process of step 4: prints one JSON line with what it loaded and measured."""
    import digits_demo

    import gluon_hub

    accuracy = digits_demo.evaluate_published(weights_index)
    spec = gluon_hub.info("digits_cnn")
    print(json.dumps({"accuracy": accuracy, "file": spec.weight(True).file.filename}))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, default=HERE.parent / ".main-job")
    parser.add_argument("--train-seconds", type=float, default=60.0)
    parser.add_argument("--evaluate", type=Path, metavar="WEIGHTS_JSON", help=argparse.SUPPRESS)
    parser.add_argument("--evaluate-onnx", type=Path, metavar="WEIGHTS_JSON", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.evaluate:
        return evaluate(args.evaluate)
    if args.evaluate_onnx:
        return evaluate_onnx(args.evaluate_onnx)
    return run_main_job(args.workdir.resolve(), args.train_seconds)


if __name__ == "__main__":
    sys.exit(main())
