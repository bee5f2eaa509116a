"""Tiny classifiers for the class-count tests: one marked with ``head_argument``, one not."""

from __future__ import annotations

from gluon_hub import head_argument


def _classifier(classes: int, width: int):
    from gluon_hub.compat import mx

    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Dense(width, in_units=3, activation="relu"), mx.gluon.nn.Dense(classes))
    return net


@head_argument("classes")
def marked(classes: int = 5, width: int = 4):
    """The head's input size is inferred (deferred), as in most zoo models."""
    return _classifier(classes, width)


def unmarked(classes: int = 5, width: int = 4):
    return _classifier(classes, width)


def prebuilt_stem(classes: int = 5):
    """The first layer arrives with values, as a factory's ``pretrained_base`` copy gives it."""
    from gluon_hub.compat import mx

    net = _classifier(classes, 4)
    net[0].initialize(mx.init.Constant(0.5))
    return net
