"""Tiny real models for the conformance kit's tests (named by fake plugins' factories)."""

from __future__ import annotations

from gluon_hub.compat import mx


def dense_net(classes: int = 3):
    """A dense layer over 4 features: 4*classes + classes parameters."""
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Dense(classes, in_units=4))
    return net


def broken_net(classes: int = 3):
    """A factory that fails, as a plugin's bug would."""
    raise RuntimeError("this factory is broken on purpose")
