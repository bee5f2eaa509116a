"""A registry index at an http URL: bounded and timed like a download, kept in the cache,
and never fetched offline; offline, no API call opens a single connection."""

from __future__ import annotations

import logging
import os
import textwrap

import pytest

from gluon_hub import IndexFormatError, _index
from gluon_hub._cache import _remote_index

from cachetestlib import run_python

INDEX = _index.PACKAGED_INDEX.read_bytes()
BIG = 32 << 20


@pytest.fixture
def index_url(server, monkeypatch):
    url = server.add("registry.json", INDEX)
    monkeypatch.setenv("GLUON_HUB_INDEX", url)
    return url


def copies(home):
    folder = home / "index"
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def test_the_index_is_kept_and_asked_again_only_whether_it_changed(server, cache_env, index_url):
    first = _index.read(index_url)
    assert len(copies(cache_env)) == 2  # the text and its validators
    _remote_index.forget()  # as a new process would
    second = _index.read(index_url)
    assert second.data == first.data
    assert [(r.status, r.body) for r in server.requests()] == [(200, len(INDEX)), (304, 0)]
    assert all(not name.endswith(".tmp") for name in copies(cache_env))


def test_offline_reads_the_kept_copy_without_connecting(server, cache_env, index_url, monkeypatch):
    _index.read(index_url)
    _remote_index.forget()
    before = server.connections
    monkeypatch.setenv("GLUON_HUB_OFFLINE", "1")
    assert _index.read(index_url).lookup("models", "alexnet") is not None
    assert server.connections == before == 1


def test_offline_without_a_copy_is_a_clear_error_and_connects_nowhere(server, cache_env, index_url,
                                                                      monkeypatch):
    monkeypatch.setenv("GLUON_HUB_OFFLINE", "1")
    with pytest.raises(IndexFormatError, match="GLUON_HUB_OFFLINE=1 forbids fetching it"):
        _index.read(index_url)
    assert server.connections == 0


def test_a_server_that_is_down_leaves_the_kept_copy_in_use(server, cache_env, index_url,
                                                           monkeypatch, caplog):
    _index.read(index_url)
    _remote_index.forget()
    monkeypatch.setenv("GLUON_HUB_RETRIES", "0")
    server.files["/registry.json"].plan = ["status:503"]
    with caplog.at_level(logging.WARNING, logger="gluon_hub.cache"):
        assert _index.read(index_url).lookup("models", "alexnet") is not None
    assert "HTTP 503" in caplog.text and "using the copy fetched" in caplog.text


def test_an_index_that_does_not_parse_never_replaces_the_kept_copy(server, cache_env, index_url,
                                                                   monkeypatch):
    _index.read(index_url)
    _remote_index.forget()
    server.files["/registry.json"].data = b'{"schema": "other/9"}'
    with pytest.raises(IndexFormatError, match="schema"):
        _index.read(index_url)
    monkeypatch.setenv("GLUON_HUB_OFFLINE", "1")
    assert _index.read(index_url).lookup("models", "alexnet") is not None


@pytest.mark.parametrize("length", ["omit", "announced"])
def test_an_index_past_the_cap_is_cut_off(server, cache_env, monkeypatch, length):
    monkeypatch.setenv("GLUON_HUB_MAX_INDEX_SIZE", str(len(INDEX) - 1))
    url = server.add("registry.json", INDEX + b" " * BIG, throttle=(256 << 10, 0.0),
                     length={200: "omit"} if length == "omit" else {})
    with pytest.raises(IndexFormatError, match="GLUON_HUB_MAX_INDEX_SIZE"):
        _index.read(url)
    (request,) = server.requests()
    assert request.body < BIG // 2
    assert copies(cache_env) == []


def test_the_index_is_fetched_with_the_cache_timeouts(server, cache_env, index_url, monkeypatch):
    monkeypatch.setenv("GLUON_HUB_READ_TIMEOUT", "0.3")
    monkeypatch.setenv("GLUON_HUB_RETRIES", "1")
    server.files["/registry.json"].plan = ["slow:2", "slow:2"]
    with pytest.raises(IndexFormatError, match="Timeout|ConnectionError"):
        _index.read(index_url)
    assert len(server.requests()) == 2  # retried like a download, then given up
    assert copies(cache_env) == []


def test_the_index_has_the_download_deadline(server, cache_env, index_url, monkeypatch):
    monkeypatch.setenv("GLUON_HUB_DOWNLOAD_DEADLINE", "1")
    server.files["/registry.json"].throttle = (200, 0.05)  # 160 kB at 4 kB/s: 40 s
    with pytest.raises(IndexFormatError, match="deadline of 1 s"):
        _index.read(index_url)
    assert server.requests()[0].body < len(INDEX)


OFFLINE_CALLS = textwrap.dedent('''
    import sys
    import gluon_hub
    from gluon_hub import FileRef, cache
    from gluon_hub.cli import main
    from gluon_hub.data import dataset_file

    def expect(error, call, *args, **kwargs):
        try:
            call(*args, **kwargs)
        except error as exc:
            return str(exc)
        raise AssertionError(f"{call.__name__}{args} did not raise {error.__name__}")

    assert "alexnet" in gluon_hub.list_models()
    gluon_hub.search("resnet")
    gluon_hub.info("alexnet")
    gluon_hub.plugins()
    expect(KeyError, gluon_hub.info, "no_such_model_anywhere")
    expect(FileNotFoundError, gluon_hub.load, "alexnet", pretrained=True)
    expect(FileNotFoundError, cache.prefetch, ["alexnet"])
    expect(FileNotFoundError, cache.prefetch, ["cifar10"], kind="datasets")
    ref = FileRef(hash="sha256:" + "ab" * 32, urls=(sys.argv[1] + "direct.bin",))
    expect(FileNotFoundError, gluon_hub.fetch, ref)
    expect(FileNotFoundError, dataset_file, ref)
    assert main(["search", "resnet"]) == 0
    assert main(["cache", "prefetch", "alexnet", "--quiet"]) != 0
    print("done")
''')


@pytest.mark.mxnet
def test_offline_no_api_call_opens_a_connection(server, cache_env, index_url):
    """The loopback server is also the proxy for every http(s) URL, so any attempt to reach
    the index, a mirror (the default public one included) or a dataset's own URL counts."""
    _index.read(index_url)  # online once: the index is kept
    before = server.connections
    env = {**os.environ, "GLUON_HUB_OFFLINE": "1", "HTTP_PROXY": server.url,
           "HTTPS_PROXY": server.url, "NO_PROXY": ""}
    env.pop("GLUON_HUB_MIRRORS", None)
    done = run_python(OFFLINE_CALLS, env, [server.url], timeout=300)
    assert done.returncode == 0 and done.stdout.strip().endswith("done"), done.stderr[-3000:]
    assert server.connections == before == 1
