"""A tiny model and a plugin whose weights come from a published ``weights.json``.

Imported by the publishing tests in-process and by the fresh subprocesses that load the
model by name, so that both sides build exactly the same network.
"""

from __future__ import annotations

from gluon_hub import ModelSpec, hookimpl
from gluon_hub.publishing import weights_from_index

MODEL = "tiny_pub"
IN_UNITS = 5


def tiny_net(units: int = 8, classes: int = 3):
    """Two dense layers with fixed input size, so parameters exist before the first call."""
    from gluon_hub.compat import mx

    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Dense(units, activation="relu", in_units=IN_UNITS),
            mx.gluon.nn.Dense(classes, in_units=units))
    return net


class PublishedWeightsPlugin:
    """A third-party plugin that ships a weights index and builds its spec from it."""

    GLUON_HUB_API = ">=1,<2"

    def __init__(self, index_path: str) -> None:
        self.index_path = index_path

    @hookimpl
    def gluon_hub_models(self):
        weights = weights_from_index(self.index_path)
        return [ModelSpec(name=MODEL, factory="tests_publishing_models:tiny_net", task="demo",
                          description="a tiny dense net with published weights",
                          weights=weights.get(MODEL, ()))]


def load_and_run(index_path: str, inputs_path: str, outputs_path: str) -> None:
    """What a user does in a fresh process: register the plugin, load by name, predict."""
    import numpy as np

    import gluon_hub
    from gluon_hub.compat import mx

    gluon_hub.register_plugin(PublishedWeightsPlugin(index_path), name="thirdparty")
    net = gluon_hub.load(MODEL, pretrained=True)
    np.save(outputs_path, net(mx.nd.array(np.load(inputs_path))).asnumpy())


if __name__ == "__main__":
    import sys

    load_and_run(*sys.argv[1:4])
