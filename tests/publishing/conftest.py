"""Fixtures for the publishing tests: an isolated hub and cache, a trained tiny network,
its published folder, and a real loopback mirror serving that folder."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

import gluon_hub
from gluon_hub.publishing import serve

HELPERS = Path(__file__).parent / "helpers"
if str(HELPERS) not in sys.path:  # the test modules import the helpers at collection
    sys.path.insert(0, str(HELPERS))


@pytest.fixture(autouse=True)
def hub_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """No user config, no installed plugins, a cache in tmp_path, a fresh hub."""
    for var in [v for v in os.environ if v.startswith("GLUON_HUB_")]:
        monkeypatch.delenv(var)
    monkeypatch.setenv("GLUON_HUB_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.setenv("GLUON_HUB_CONFIG", str(tmp_path / "no-config.json"))
    monkeypatch.setenv("GLUON_HUB_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GLUON_HUB_PROGRESS", "0")
    gluon_hub.reset_hub()
    yield
    gluon_hub.reset_hub()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that publishes the trained network needs MXNet to train it: mark it ``mxnet``."""
    for item in items:
        if "trained_net" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.mxnet)


@pytest.fixture
def trained_net():
    """The helper's tiny network after a few SGD steps, so its weights are not an init."""
    from tests_publishing_models import IN_UNITS, tiny_net

    from gluon_hub.compat import mx

    mx.random.seed(7)
    net = tiny_net()
    net.initialize(mx.init.Xavier())
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.5})
    loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    x = mx.nd.random.uniform(shape=(64, IN_UNITS))
    y = (x.sum(axis=1) > IN_UNITS / 2) + (x[:, 0] > 0.5)
    for _ in range(20):
        with mx.autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(x.shape[0])
    return net


@pytest.fixture
def published(tmp_path: Path, trained_net):
    """(out_dir, variant) after publishing the trained network as ``tiny_pub``."""
    from tests_publishing_models import MODEL

    out = tmp_path / "published"
    variant = gluon_hub.publish(trained_net, MODEL, out, metrics=["accuracy=0.9@toy:test"],
                                description="20 SGD steps on random data")
    return out, variant


@pytest.fixture
def mirror(published):
    server = serve(published[0])
    yield server
    server.shutdown()


@pytest.fixture
def inputs(tmp_path: Path) -> Path:
    from tests_publishing_models import IN_UNITS

    path = tmp_path / "inputs.npy"
    np.save(path, np.random.default_rng(0).uniform(-1, 1, (6, IN_UNITS)).astype("float32"))
    return path

