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


class _ScaledDense(mx.gluon.HybridBlock):
    """Two inputs, as token ids and valid lengths are for text models."""

    def __init__(self, classes: int) -> None:
        super().__init__()
        self.dense = mx.gluon.nn.Dense(classes, in_units=4)

    def hybrid_forward(self, F, x, scale):
        return F.broadcast_mul(self.dense(x), F.cast(scale, "float32").reshape((-1, 1)))


def two_input_net(classes: int = 3):
    """A dense layer over 4 features, its output scaled by a second, integer input."""
    return _ScaledDense(classes)


def time_major_net(classes: int = 3):
    """Token ids laid out (time, batch) in, scores (time, batch, classes) out, as an LM's."""
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Embedding(10, 4), mx.gluon.nn.Dense(classes, flatten=False, in_units=4))
    return net
