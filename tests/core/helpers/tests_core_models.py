"""A tiny real model for the core's tests (imported by fake plugins' factory strings)."""

from __future__ import annotations

from gluon_hub.compat import mx


def dense_net(units: int = 4, classes: int = 3):
    """Two dense layers: enough to check building, initialising and loading."""
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Dense(units, activation="relu"), mx.gluon.nn.Dense(classes))
    return net


def text_table(spec, root=None) -> str:
    """An embedding or vocabulary loader for tests: the text of the spec's one file, fetched through the cache."""
    from gluon_hub.cache import fetch

    return fetch(spec.files[0], root=root).read_text()
