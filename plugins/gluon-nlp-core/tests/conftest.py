"""The GluonNLP 0.10 parity reference, as a fixture rather than a module-level import; and
``hub_env``, a clean hub environment for the hub-entry tests.

GluonNLP imports MXNet, which has no wheel for Python 3.13: the tokenizer and vocabulary tests
that compare with it take this fixture and carry the ``mxnet`` marker, so the MXNet-free CI leg
runs the rest of those files with ``-m "not mxnet"``.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

import gluon_hub


@pytest.fixture(scope="session")
def gluonnlp() -> ModuleType:
    import gluon_hub.compat  # noqa: F401  (numpy aliases for mxnet, before gluonnlp)

    import gluonnlp

    return gluonnlp


@pytest.fixture
def hub_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty cache and no config, mirror, offline switch, lock or proxy from the caller's
    environment; the hub rebuilt before and after (for tests that register plugins)."""
    for name in ("GLUON_HUB_SHARED_CACHE", "GLUON_HUB_OFFLINE", "GLUON_HUB_MIRRORS", "GLUON_HUB_LOCK",
                 "HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    monkeypatch.setenv("GLUON_HUB_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GLUON_HUB_CONFIG", str(tmp_path / "no-config.json"))
    monkeypatch.setenv("GLUON_HUB_PROGRESS", "0")
    gluon_hub.reset_hub()
    yield tmp_path
    gluon_hub.reset_hub()
