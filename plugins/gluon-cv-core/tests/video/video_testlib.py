"""Helpers the 3D action-model tests share."""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

from gluon_hub.compat import mx

from gluon_cv_core.models.norm import BatchNorm3D


def norms(net: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """``(structural name, block)`` of every BatchNorm in ``net`` (a block registered under
    two names, as GluonCV's I3D ResNets do, comes twice)."""
    for name, child in net._children.items():
        key = f"{prefix}{name}"
        if isinstance(child, mx.gluon.nn.BatchNorm):
            yield key, child
        yield from norms(child, key + ".")


def trainable_on_cpu(reference: Any) -> Any:
    """GluonCV's 3D model with its BatchNorms computing as ours do (:class:`BatchNorm3D`: the
    same statistics over a 4-D view of the clip). MXNet 1.9's oneDNN BatchNorm cannot run
    backward after a Conv3D (``Check failed: !is_view``), so GluonCV's own layers fail to
    train on CPU; the swap changes no parameter and no number."""
    for _, norm in norms(reference):
        assert type(norm) in (mx.gluon.nn.BatchNorm, BatchNorm3D), type(norm)
        norm.__class__ = BatchNorm3D
    return reference


@contextlib.contextmanager
def no_initialization() -> Iterator[None]:
    """GluonCV's video constructors initialise every weight (and move them to a context);
    structure checks need none of them."""
    originals = mx.gluon.Block.initialize, mx.gluon.Parameter.reset_ctx
    mx.gluon.Block.initialize = mx.gluon.Parameter.reset_ctx = lambda self, *args, **kwargs: None
    try:
        yield
    finally:
        mx.gluon.Block.initialize, mx.gluon.Parameter.reset_ctx = originals
