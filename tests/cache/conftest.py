"""Fixtures of the cache tests: a loopback server, and an isolated cache per test."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import gluon_hub  # noqa: E402
from gluon_hub._cache import _remote_index  # noqa: E402

from cachetestlib import Server  # noqa: E402


@pytest.fixture
def server():
    srv = Server()
    yield srv
    srv.close()


@pytest.fixture(autouse=True)
def cache_env(tmp_path, monkeypatch):
    """Every test gets its own cache, no config file, short timeouts and no mirrors."""
    for name in ("GLUON_HUB_SHARED_CACHE", "GLUON_HUB_OFFLINE", "GLUON_HUB_MIRRORS",
                 "GLUON_HUB_PROGRESS", "GLUON_HUB_MAX_EXTRACT_SIZE", "HTTP_PROXY",
                 "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("GLUON_HUB_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GLUON_HUB_CONFIG", str(tmp_path / "no-config.json"))
    monkeypatch.setenv("GLUON_HUB_CONNECT_TIMEOUT", "2")
    monkeypatch.setenv("GLUON_HUB_READ_TIMEOUT", "2")
    monkeypatch.setenv("GLUON_HUB_RETRIES", "2")
    monkeypatch.setenv("GLUON_HUB_LOCK_TIMEOUT", "20")
    gluon_hub.reset_hub(autoload=False)
    _remote_index.forget()  # each test is a new process to the index it serves
    yield tmp_path / "home"
    gluon_hub.reset_hub()
