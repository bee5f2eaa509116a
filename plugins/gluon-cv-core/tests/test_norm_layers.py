"""SyncBatchNorm layers named alike (ours are named as GluonCV's, without counters) keep
their own cross-device statistics buffers."""

from __future__ import annotations

import numpy as np
import pytest

from gluon_hub.compat import mx

from gluon_cv_core.models.norm import SyncBatchNorm


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


def test_mxnets_own_layer_fails_where_ours_does_not() -> None:
    plain = mx.gluon.contrib.nn.SyncBatchNorm
    _train_step(plain, 32)
    with pytest.raises(mx.base.MXNetError, match="shape mismatch"):
        _train_step(plain, 128)
