"""Listing cost: the whole ``import gluon_hub; list_models()`` process, side by side.

1. Against ``import gluoncv; gluoncv.model_zoo.get_model_list()`` (goal: at most 1/10).
2. With 100 extra plugins of 50 models each, against the first-party plugins alone
   (goal: at most 2x).

Each command runs as a fresh process, the two sides alternating, and medians are
compared. Run: ``.venv/bin/python bench/bench_listing.py [--runs 15]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HUB = "import sys, gluon_hub; n = len(gluon_hub.list_models()); assert 'mxnet' not in sys.modules"
GLUONCV = (
    "import gluon_hub.compat, gluoncv; n = len(gluoncv.model_zoo.get_model_list())"
)  # gluon_hub.compat restores the numpy aliases gluoncv's mxnet import needs on numpy>=1.24

PLUGIN_MODULE = '''
from gluon_hub import hookimpl, ModelSpec, InputSpec

GLUON_HUB_API = ">=1,<2"

@hookimpl
def gluon_hub_models():
    return [
        ModelSpec(name=f"bench{index}_model{i}", factory="bench_models:build", task="demo",
                  input=InputSpec(shape=(3, 224, 224), layout="NCHW"), description="bench")
        for i in range(50)
    ]
'''


def make_plugins(site: Path, count: int) -> None:
    """Write ``count`` fake plugin distributions of 50 models each into ``site``."""
    for i in range(count):
        module = f"bench_plugin_{i}"
        (site / f"{module}.py").write_text(PLUGIN_MODULE.replace("{index}", str(i)))
        info = site / f"bench_plugin_{i}-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: bench-plugin-{i}\nVersion: 1.0\n"
            "Requires-Dist: gluon-hub~=0.1\n"
        )
        (info / "entry_points.txt").write_text(f"[gluon_hub]\nbench{i} = {module}\n")


def time_process(code: str, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    return time.perf_counter() - start


def compare(label: str, a: tuple[str, dict], b: tuple[str, dict], runs: int) -> float:
    times_a, times_b = [], []
    time_process(a[0], a[1]), time_process(b[0], b[1])  # warm the file-system cache
    for _ in range(runs):
        times_a.append(time_process(*a))
        times_b.append(time_process(*b))
    med_a, med_b = statistics.median(times_a), statistics.median(times_b)
    print(f"{label}: {med_a * 1000:.0f} ms vs {med_b * 1000:.0f} ms, ratio {med_a / med_b:.3f}")
    return med_a / med_b


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    env = dict(os.environ)
    ok = True

    ratio = compare("gluon_hub list_models / gluoncv get_model_list", (HUB, env), (GLUONCV, env), args.runs)
    ok &= ratio <= 0.1
    print(f"  goal <= 0.100: {'met' if ratio <= 0.1 else 'NOT met'}")

    with tempfile.TemporaryDirectory() as tmp:
        make_plugins(Path(tmp), 100)
        many = dict(env, PYTHONPATH=os.pathsep.join(filter(None, [tmp, env.get("PYTHONPATH")])))
        count = "import gluon_hub; print(len(gluon_hub.list_models()))"
        listed = subprocess.run([sys.executable, "-c", count], env=many, capture_output=True,
                                text=True, check=True).stdout.strip()
        print(f"models listed with 100 extra plugins: {listed}")
        ratio = compare("100 extra plugins x 50 models / first-party only", (HUB, many), (HUB, env), args.runs)
        ok &= ratio <= 2.0
        print(f"  goal <= 2.0: {'met' if ratio <= 2.0 else 'NOT met'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
