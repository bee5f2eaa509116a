"""Entry point of the gluon-contrib plugin: declares specs, imports no model code or mxnet.

gluon-contrib uses only gluon_hub's public API, so it is also the model a third-party
plugin can copy.
"""

from __future__ import annotations

from gluon_hub import hookimpl

GLUON_HUB_API = ">=1,<2"


@hookimpl
def gluon_hub_models():
    from ._model_specs import model_specs

    return model_specs()
