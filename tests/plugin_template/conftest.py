"""Fixtures for the plugin toolkit's tests: a fresh hub, and fake plugins in-process."""

from __future__ import annotations

import types
from pathlib import Path
from typing import Callable

import pytest

import gluon_hub


@pytest.fixture(autouse=True)
def fresh_hub(monkeypatch: pytest.MonkeyPatch):
    for var in ("GLUON_HUB_DISABLE_PLUGIN_AUTOLOAD", "GLUON_HUB_DISABLE_PLUGINS",
                "GLUON_HUB_STRICT_PLUGINS", "GLUON_HUB_INDEX"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.syspath_prepend(str(Path(__file__).parent / "helpers"))
    yield gluon_hub.reset_hub()
    gluon_hub.reset_hub()


@pytest.fixture
def fake_plugin() -> Callable[..., str]:
    """Register, in this process, a plugin whose hooks return the given specs."""

    def register(name: str, models=(), losses=()) -> str:
        plugin = types.ModuleType(name)
        plugin.GLUON_HUB_API = ">=1,<2"
        plugin.gluon_hub_models = gluon_hub.hookimpl(lambda: list(models))
        plugin.gluon_hub_losses = gluon_hub.hookimpl(lambda: list(losses))
        info = gluon_hub.register_plugin(plugin, name)
        assert info.status == "loaded", info
        return name

    return register
