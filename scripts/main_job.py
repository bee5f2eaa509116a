"""The main job: the whole gluon_hub loop on one machine, with no internet.

1. train a small CNN on real data that ships with scikit-learn (UCI handwritten digits);
2. publish its weights to a mirror folder (file named by its hash, plus weights.json);
3. serve that folder on a loopback address with ``gluon-hub serve``;
4. in a fresh process with an empty cache, load the model by name with
   ``pretrained=True`` through the loopback mirror and the verified cache, and evaluate
   it: the accuracy must equal the one measured at the end of training;
5. list the plugins and run ``resnet50_v1d`` on a photograph.

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
        with mirror_server(mirror, workdir / "mirror-server.log") as (url, _):
            print(f"mirror: {url}  cache: {cache} (empty); server log: {workdir / 'mirror-server.log'}")
            env = dict(os.environ, GLUON_HUB_MIRRORS=url, GLUON_HUB_HOME=str(cache),
                       GLUON_HUB_PROGRESS="0")
            env.pop("GLUON_HUB_OFFLINE", None)
            result = subprocess.run(
                [sys.executable, str(HERE / "main_job.py"), "--evaluate", str(mirror / "weights.json")],
                env=env, capture_output=True, text=True,
            )
        if result.returncode != 0:
            print(result.stdout + result.stderr, file=sys.stderr)
            return 1
        loaded = json.loads(result.stdout.strip().splitlines()[-1])
        print(f"fresh process loaded {loaded['file']} (hash verified) and measured "
              f"accuracy {loaded['accuracy']:.4f}")
        same = loaded["accuracy"] == trained_accuracy
        print(f"same accuracy as at the end of training: {'yes' if same else 'NO'}")
        if not same:
            return 1

    with step("5. plugins, then resnet50_v1d on a photograph"):
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
    args = parser.parse_args(argv)
    if args.evaluate:
        return evaluate(args.evaluate)
    return run_main_job(args.workdir.resolve(), args.train_seconds)


if __name__ == "__main__":
    sys.exit(main())
