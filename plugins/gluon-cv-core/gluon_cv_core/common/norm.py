"""Normalization layers: group normalization with GluonCV 0.10's parameter layout
(``resnet*_v1b_gn``), and SyncBatchNorm with a statistics buffer of its own per layer.

MXNet 1.9's ``nn.GroupNorm`` keeps one scale and one shift per group; GluonCV's layer (and the
paper, arXiv:1803.08494) keeps one per channel, so its files need this layer. GluonCV's version
reads shapes at run time and cannot be hybridized; this one can.

MXNet keeps SyncBatchNorm's cross-device buffers in a process-wide table keyed by the layer's
``key`` (its prefix by default), sized by the first layer that uses a key. Our layers are named
as GluonCV's, without per-process counters, so two models in one process (a ResNet-50 and a
ResNet-18 Faster R-CNN) would share keys: statistics would mix, and a layer of another width
fails inside MXNet. :class:`SyncBatchNorm` and :func:`sync_key` give every layer its own key.

MXNet 1.9's oneDNN BatchNorm fails in the backward pass of a 5-D (video) input on CPU
(``Check failed: !is_view``), GluonCV's 3D models included. :class:`BatchNorm3D` normalises the
same numbers as a 4-D array, which oneDNN trains.
"""

from __future__ import annotations

import itertools
from typing import Any

from gluon_hub.compat import mx

from .blocks import HybridBlock

__all__ = ["BatchNorm3D", "GroupNorm", "SyncBatchNorm", "sync_key"]

_sync_layers = itertools.count()


class BatchNorm3D(mx.gluon.nn.BatchNorm):
    """BatchNorm (same parameters and names) for ``(N, C, T, H, W)`` inputs that trains on
    CPU: time and height are merged before normalising, which changes no statistic (they are
    per channel, over every other axis)."""

    def _alias(self) -> str:
        return "batchnorm"

    def hybrid_forward(self, F, x, gamma, beta, running_mean, running_var):
        merged = F.reshape(x, shape=(0, 0, -3, -2))
        out = super().hybrid_forward(F, merged, gamma, beta, running_mean, running_var)
        return F.reshape_like(out, x)


def sync_key(name: str) -> str:
    """A SyncBatchNorm key that no other layer of this process has (see the module docstring)."""
    return f"{name}#{next(_sync_layers)}"


class SyncBatchNorm(mx.gluon.contrib.nn.SyncBatchNorm):
    """MXNet's SyncBatchNorm (same parameters and names) with a key of its own: the copies of
    one layer on several devices still share it, which is what they synchronise through."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._kwargs["key"] = sync_key(self._kwargs["key"])


class GroupNorm(HybridBlock):
    """Normalize each sample over groups of ``in_channels / num_groups`` channels (and all
    positions), then scale and shift each channel.

    ``in_channels`` is required: a per-channel scale after a reshape cannot take its size from
    shape inference, so a deferred width would stop hybridized models from building.
    """

    def __init__(self, num_groups: int = 32, in_channels: int = 0, epsilon: float = 1e-5,
                 beta_initializer: Any = "zeros", gamma_initializer: Any = "ones", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if in_channels <= 0 or in_channels % num_groups:
            raise ValueError(f"GroupNorm needs in_channels, a positive multiple of num_groups={num_groups}; "
                             f"got in_channels={in_channels}")
        self._num_groups = num_groups
        self._epsilon = epsilon
        self.gamma = self.params.get("gamma", shape=(in_channels,), init=gamma_initializer)
        self.beta = self.params.get("beta", shape=(in_channels,), init=beta_initializer)

    def hybrid_forward(self, F, x, gamma, beta):
        # MXNet's operator normalizes per group; its per-group affine is left as the identity
        # (made from gamma so that they follow its context and dtype)
        per_group = F.slice_axis(gamma, axis=0, begin=0, end=self._num_groups)
        y = F.GroupNorm(x, F.ones_like(per_group), F.zeros_like(per_group), num_groups=self._num_groups,
                        eps=self._epsilon)
        flat = F.reshape(y, (0, 0, -1))
        out = F.broadcast_add(F.broadcast_mul(flat, F.reshape(gamma, (1, -1, 1))), F.reshape(beta, (1, -1, 1)))
        return F.reshape_like(out, x)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(num_groups={self._num_groups}, in_channels={self.gamma.shape[0]})"
