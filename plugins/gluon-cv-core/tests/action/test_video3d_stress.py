"""The hub's own 3D action models run repeatedly, at several clip sizes, in one process, on the
CPU's own oneDNN kernels (AVX-512 where the CPU has it; no ``DNNL_MAX_CPU_ISA`` cap).

GluonCV's 3D models crash there (MXNet 1.9.1's 5-D BatchNorm: GluonCV's P3D then its I3D in
one process die with a segmentation fault); the hub's run their BatchNorms through
``BatchNorm3D``'s 4-D view. A crash would kill pytest itself, so the sequence runs in a child
process and the test asserts that it exits cleanly, naming the signal and the last step that
finished when it does not. Run this file as a script to run the sequence in the foreground.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.slow

#: the families, and for each the (batch, frames, height, width) clips it runs: the smallest
#: its layers take, then larger and uneven ones (SlowFast's frames are fixed by its name and
#: C3D's whole clip by its ``fc6``, so those vary what they can)
CLIPS = {
    "i3d_": [(1, 8, 32, 32), (1, 8, 48, 40), (2, 12, 40, 56)],
    "p3d_": [(1, 16, 32, 32), (1, 16, 48, 40), (2, 20, 40, 56)],
    "r2plus1d_": [(1, 2, 16, 16), (1, 4, 48, 40), (2, 8, 40, 56)],
    "slowfast_": [(1, 36, 32, 32), (1, 36, 48, 40), (2, 36, 64, 64)],
    "c3d_": [(1, 16, 112, 112), (2, 16, 112, 112)],
}
ROUNDS = 3


def smallest(family: str) -> str:
    """The registered model of ``family`` (a name prefix) with the fewest parameters."""
    import gluon_hub

    names = [n for n in gluon_hub.list_models(plugin="cv", task="action-recognition")
             if n.startswith(family) and not n.endswith("_custom")]  # a template: the same as its Kinetics model
    return min(names, key=lambda n: (gluon_hub.info(n).num_params, n))


def main() -> None:
    """Every family's smallest model, ``ROUNDS`` times: forward at every clip, plain and
    hybridized; prints one line per step, so a crash shows where it happened."""
    import numpy as np

    import gluon_hub
    from gluon_hub.compat import mx

    models = {family: smallest(family) for family in CLIPS}
    start = time.perf_counter()
    rng = np.random.RandomState(0)
    for round_ in range(ROUNDS):
        for family, name in models.items():
            net = gluon_hub.load(name)  # random weights: initialized by the factory's initializers
            classes = gluon_hub.info(name).output_shape[0]
            for hybridize in (False, True):
                if hybridize:
                    net.hybridize()
                for batch, *clip in CLIPS[family]:
                    out = net(mx.nd.array(rng.uniform(-1, 1, (batch, 3, *clip)))).asnumpy()
                    if out.shape != (batch, classes) or not np.isfinite(out).all():
                        raise SystemExit(f"{name} at {(batch, *clip)} gave shape {out.shape}, "
                                         f"finite: {bool(np.isfinite(out).all())}")
                    print(f"round {round_} {name} {(batch, 3, *clip)} hybridized={hybridize}: ok "
                          f"at {time.perf_counter() - start:.1f} s", flush=True)


def test_the_hubs_3d_models_run_repeatedly_on_the_cpus_own_kernels() -> None:
    from cv_testlib.video import assert_exited_cleanly

    env = {k: v for k, v in os.environ.items() if k != "DNNL_MAX_CPU_ISA"}
    done = subprocess.run([sys.executable, __file__], env=env, capture_output=True, text=True, timeout=600)
    assert_exited_cleanly(done, "the 3D stress process")
    steps = done.stdout.splitlines()
    assert len(steps) == ROUNDS * 2 * sum(len(clips) for clips in CLIPS.values()), steps


if __name__ == "__main__":
    main()
