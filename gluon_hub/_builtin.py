"""The hub's own plugin: the losses and batchify functions of ``gluon_hub.data``.

It registers through the ``gluon_hub`` entry-point group exactly as a third party would.
"""

from __future__ import annotations

from .hookspecs import hookimpl

GLUON_HUB_API = ">=1,<2"


@hookimpl
def gluon_hub_losses():
    from .losses import loss_specs

    return loss_specs()


@hookimpl
def gluon_hub_batchify():
    from .data import batchify_specs

    return batchify_specs()
