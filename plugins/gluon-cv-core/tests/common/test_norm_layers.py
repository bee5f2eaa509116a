"""SyncBatchNorm layers named alike (ours are named as GluonCV's, without counters) keep
their own cross-device statistics buffers."""

from __future__ import annotations

import subprocess
import sys

import numpy as np

from gluon_cv_core.common.norm import SyncBatchNorm
from gluon_hub.compat import mx


def _train_step(layer_class, width: int) -> np.ndarray:
    layer = layer_class(in_channels=width, num_devices=1, prefix="resnetv1b_layers1_syncbatchnorm0_")
    layer.initialize()
    x = mx.nd.arange(2 * width * 9).reshape((2, width, 3, 3)) / 100
    with mx.autograd.record():
        y = layer(x)
    y.backward()
    return y.asnumpy()


def test_layers_of_one_name_and_other_widths_train_in_one_process() -> None:
    # the second width reuses the first one's name: MXNet's buffer for a shared key is sized
    # by its first user, so the plain MXNet layer fails here (the control below)
    outputs = [_train_step(SyncBatchNorm, width) for width in (64, 256, 64)]
    for y in outputs:  # normalised over batch and positions: each channel has mean 0
        np.testing.assert_allclose(y.mean(axis=(0, 2, 3)), 0, atol=1e-5)
    np.testing.assert_array_equal(outputs[0], outputs[2])


#: MXNet's own layer at two widths under one name, in a child process: the failure leaves
#: MXNet's process-wide buffers and engine in a state later tests must not inherit
_PLAIN_LAYER_RUN = """
import sys
from gluon_hub.compat import mx
for width in (32, 128):
    layer = mx.gluon.contrib.nn.SyncBatchNorm(in_channels=width, num_devices=1,
                                              prefix="resnetv1b_layers1_syncbatchnorm0_")
    layer.initialize()
    x = mx.nd.arange(2 * width * 9).reshape((2, width, 3, 3)) / 100
    try:
        with mx.autograd.record():
            y = layer(x)
        y.backward()
        y.asnumpy()
        print("width", width, "trained")
    except mx.base.MXNetError as exc:
        print("width", width, "failed:", str(exc).strip().splitlines()[-1])
"""


def test_mxnets_own_layer_fails_where_ours_does_not() -> None:
    done = subprocess.run([sys.executable, "-c", _PLAIN_LAYER_RUN], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [line for line in done.stdout.splitlines() if line.startswith("width")]
    assert lines[0] == "width 32 trained"
    assert lines[1].startswith("width 128 failed:") and "shape mismatch" in lines[1]
