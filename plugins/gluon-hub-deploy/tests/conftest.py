"""Fixtures of gluon-hub-deploy's tests: a fresh hub per test, with no hub variables set."""

from __future__ import annotations

from pathlib import Path

import pytest

import gluon_hub


@pytest.fixture(autouse=True)
def fresh_hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """Every test discovers the installed plugins anew; a fetched index is cached in its temp dir."""
    for var in ("GLUON_HUB_DISABLE_PLUGIN_AUTOLOAD", "GLUON_HUB_DISABLE_PLUGINS",
                "GLUON_HUB_STRICT_PLUGINS", "GLUON_HUB_INDEX", "GLUON_HUB_PREFER_PLUGINS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("GLUON_HUB_HOME", str(tmp_path / "hub-home"))
    yield gluon_hub.reset_hub()
    gluon_hub.reset_hub()
