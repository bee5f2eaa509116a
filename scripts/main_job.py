"""The main job: the whole gluon_hub loop on one machine, with no internet.

Each step prints what it did and how long it took, and says plainly whether the weights
it used are real (trained or published) or randomly initialised.
"""

from __future__ import annotations

import contextlib
import sys
import time
from pathlib import Path
from typing import Iterator

import gluon_hub
from gluon_hub.cli import main as cli


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


def main() -> int:
    total = time.perf_counter()
    with step("1. plugins found through entry points"):
        if cli(["plugins"]) != 0:
            return 1
    with step("2. models by plugin (listing imports no mxnet)"):
        for info in gluon_hub.plugins():
            print(f"{info.name:>8}: {len(gluon_hub.list_models(plugin=info.name))} models")
        print("mxnet imported:", "mxnet" in sys.modules)
    with step("3. resnet50_v1d on a photograph"):
        weights = "published ImageNet weights" if _weights_available() else None
        args = ["predict", "resnet50_v1d", str(sample_image()), "--topk", "3"]
        if weights:
            args.append("--pretrained")
        print(f"weights: {weights or 'RANDOMLY INITIALISED (no mirror holds the ImageNet file)'}")
        if cli(args) != 0:
            return 1
    print(f"\nmain job done in {time.perf_counter() - total:.1f} s")
    return 0


def _weights_available() -> bool:
    """Whether resnet50_v1d's published weights can be had without the internet."""
    import os

    from gluon_hub import fetch

    os.environ.setdefault("GLUON_HUB_OFFLINE", "1")
    try:
        fetch(gluon_hub.info("resnet50_v1d").weight(True).file)
    except Exception:
        return False
    return True


if __name__ == "__main__":
    sys.exit(main())
