"""Which sources a file is asked of, and in what order; how often an unreachable source is
retried; the bound on a zip whose spec gives only its member's size; the remote index's cap
and its one fetch per process; URL schemes refused with what is supported."""

from __future__ import annotations

import io
import json
import os
import socket
import textwrap
import time
import zipfile

import pytest

import gluon_hub
from gluon_hub import FileRef, IndexFormatError, _index
from gluon_hub._cache import _remote_index
from gluon_hub.cache import DownloadError

from cachetestlib import Server, run_python, sha256, temp_leftovers

DATA = os.urandom(5000)
PUBLIC = "https://apache-mxnet.s3-accelerate.dualstack.amazonaws.com/"


@pytest.fixture
def public_host(monkeypatch):
    """A counting stand-in for the public repository: every http(s) request that does not go
    to 127.0.0.1 goes through this proxy, so any request for the public host is counted
    (and fails, like an offline machine's)."""
    proxy = Server()
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.setenv(name, proxy.url)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    yield proxy
    proxy.close()


def closed_port() -> int:
    """A loopback port nothing listens on: bound, read, closed."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# -- 15. a plugin's file never goes to the public repository --------------------------------


def test_a_plugin_file_with_its_own_url_never_reaches_the_public_host(server, public_host,
                                                                      cache_env):
    url = server.add("plugin/weights/net-3f0c1e9a2b77.params", DATA)
    ref = FileRef(hash=sha256(DATA), size=len(DATA), filename="net-3f0c1e9a2b77.params", urls=(url,))
    assert gluon_hub.fetch(ref).read_bytes() == DATA
    assert public_host.connections == 0
    assert [r.path for r in server.requests()] == ["/plugin/weights/net-3f0c1e9a2b77.params"]


def test_configured_mirrors_come_first_then_the_file_s_urls(server, public_host, cache_env,
                                                           monkeypatch):
    monkeypatch.setenv("GLUON_HUB_MIRRORS", f"{server.url}m1/ {server.url}m2/")
    url = server.add("direct/net.params", DATA)
    ref = FileRef(hash=sha256(DATA), size=len(DATA), filename="net.params", urls=(url,))
    assert gluon_hub.fetch(ref).read_bytes() == DATA
    assert [(r.path, r.status) for r in server.requests()] == [
        ("/m1/net.params", 404), ("/m2/net.params", 404), ("/direct/net.params", 200)]
    assert public_host.connections == 0


def test_a_plugin_file_named_by_filename_only_asks_for_a_mirror(public_host, cache_env):
    ref = FileRef(hash=sha256(DATA), size=len(DATA), filename="my_plugin/net-3f0c1e9a2b77.params")
    with pytest.raises(DownloadError) as caught:
        gluon_hub.fetch(ref)
    message = str(caught.value)
    assert "no source to try" in message and "GLUON_HUB_MIRRORS" in message
    assert "my_plugin/net-3f0c1e9a2b77.params is not one of GluonCV's or GluonNLP's files" in message
    assert public_host.connections == 0


def test_gluoncv_files_are_still_asked_of_the_public_host(public_host, cache_env, monkeypatch):
    monkeypatch.setenv("GLUON_HUB_RETRIES", "0")
    ref = FileRef(hash=sha256(DATA), size=len(DATA), filename="gluon/models/net-0123abcd.params")
    with pytest.raises(DownloadError) as caught:
        gluon_hub.fetch(ref)
    assert f"{PUBLIC}gluon/models/net-0123abcd.params" in str(caught.value)
    assert public_host.connections == 1


def test_a_refused_connection_is_retried_once_then_the_next_source(server, cache_env, monkeypatch):
    monkeypatch.setenv("GLUON_HUB_RETRIES", "5")  # a timeout would get all five
    refused = f"http://127.0.0.1:{closed_port()}/net.params"
    good = server.add("net.params", DATA)
    ref = FileRef(hash=sha256(DATA), size=len(DATA), urls=(refused, good))
    started = time.monotonic()
    assert gluon_hub.fetch(ref).read_bytes() == DATA
    # One retry after the first backoff (at most 0.25 s); five would sleep about 4 s.
    assert time.monotonic() - started < 2.0
    assert len(server.requests()) == 1

    only_refused = FileRef(hash=sha256(b"x"), urls=(refused,))
    with pytest.raises(DownloadError) as caught:
        gluon_hub.fetch(only_refused)
    assert ("gave up after 2 attempts: cannot connect: connection refused, "
            "cannot connect: connection refused") in str(caught.value)
    assert temp_leftovers(cache_env) == []


def test_a_refused_index_server_is_retried_once(cache_env, monkeypatch):
    monkeypatch.setenv("GLUON_HUB_RETRIES", "5")
    with pytest.raises(IndexFormatError, match="gave up after 2 attempts: cannot connect"):
        _index.read(f"http://127.0.0.1:{closed_port()}/registry.json")


# -- 16. a zip is bounded by its member's size -----------------------------------------------


def stored_zip(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buffer.getvalue()


@pytest.mark.parametrize("length", ["omit", "announced"])
def test_a_zip_far_larger_than_its_member_is_cut_off(server, cache_env, monkeypatch, length):
    member = os.urandom(1000)
    # far larger than loopback's socket buffers, which the server fills before the client's
    # cut-off reaches it (16 MiB once showed 9.7 MiB sent)
    archive = stored_zip({"net.params": member, "padding.bin": os.urandom(64 << 20)})
    url = server.add("gluon/models/net-0123abcd.zip", archive, throttle=(256 << 10, 0.0),
                     length={200: "omit"} if length == "omit" else {})
    monkeypatch.setenv("GLUON_HUB_MIRRORS", server.url)
    ref = FileRef(hash=sha256(member), size=len(member), filename="gluon/models/net-0123abcd.zip",
                  extract="net.params")
    with pytest.raises(DownloadError) as caught:
        gluon_hub.fetch(ref)
    message = str(caught.value)
    bound = 2 * 1000 + (1 << 20)
    assert url in message and f"the {bound} " in message
    assert "2 x the 1000 bytes the spec declares for member 'net.params' + 1 MiB" in message
    assert "a zip holds its member compressed or stored" in message
    (request,) = server.requests()
    assert request.body < len(archive) // 2  # cut off while streaming, not read to its end
    assert temp_leftovers(cache_env) == []


def test_a_zip_within_the_bound_is_extracted(server, cache_env, monkeypatch):
    member = os.urandom(300_000)  # random bytes: stored as they are, the worst case
    archive = stored_zip({"net.params": member, "README": b"weights of net\n" * 100})
    server.add("gluon/models/net-0123abcd.zip", archive)
    monkeypatch.setenv("GLUON_HUB_MIRRORS", server.url)
    ref = FileRef(hash=sha256(member), size=len(member), filename="gluon/models/net-0123abcd.zip",
                  extract="net.params")
    assert gluon_hub.fetch(ref).read_bytes() == member


# -- 17. the remote index: capped to fit, fetched once per process ----------------------------

INDEX = _index.PACKAGED_INDEX.read_bytes()


def test_the_default_index_cap_fits_the_index_but_not_a_padded_one(server, cache_env,
                                                                    monkeypatch):
    monkeypatch.delenv("GLUON_HUB_MAX_INDEX_SIZE", raising=False)
    assert _index.read(server.add("ok/registry.json", INDEX)).lookup("models", "alexnet")
    padded = INDEX.rstrip() + b" " * (8 << 20)
    with pytest.raises(IndexFormatError, match=r"more than the 8388608 (bytes )?allowed \(GLUON_HUB_MAX_INDEX_SIZE\)"):
        _index.read(server.add("big/registry.json", padded))
    monkeypatch.setenv("GLUON_HUB_MAX_INDEX_SIZE", str(16 << 20))  # still configurable
    assert _index.read(server.add("big2/registry.json", padded)).lookup("models", "alexnet")


ONE_PROCESS = textwrap.dedent('''
    import sys
    import gluon_hub
    from gluon_hub.cli import main

    url = sys.argv[1]
    assert gluon_hub.search("alexnet")  # not installed (no autoload): found in the index
    gluon_hub.reset_hub()
    gluon_hub.search("resnet")
    gluon_hub.set_index(url)
    gluon_hub.set_index(None)
    assert main(["search", "resnet"]) == 0
    print("done")
''')


def test_a_process_fetches_the_remote_index_once(server, cache_env):
    url = server.add("registry.json", INDEX)
    env = {**os.environ, "GLUON_HUB_INDEX": url, "GLUON_HUB_DISABLE_PLUGIN_AUTOLOAD": "1"}
    done = run_python(ONE_PROCESS, env, [url], timeout=300)
    assert done.returncode == 0 and done.stdout.strip().endswith("done"), done.stderr[-3000:]
    assert [(r.path, r.status) for r in server.requests()] == [("/registry.json", 200)]
    # The next process asks again, only whether it changed.
    done = run_python(ONE_PROCESS, env, [url], timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert [r.status for r in server.requests()] == [200, 304]


def test_forget_makes_the_next_read_ask_again(server, cache_env):
    url = server.add("registry.json", INDEX)
    _index.read(url)
    _index.read(url)
    assert len(server.requests()) == 1
    _remote_index.forget()
    _index.read(url)
    assert [r.status for r in server.requests()] == [200, 304]


# -- 18. unsupported schemes are named, with the supported ones --------------------------------

SUPPORTED = "the supported schemes are http, https, file"


def test_a_file_url_with_another_scheme_is_refused_naming_it():
    with pytest.raises(ValueError) as caught:
        FileRef(hash=sha256(DATA), urls=("ftp://example.org/net.params",))
    message = str(caught.value)
    assert "'ftp://example.org/net.params'" in message and "scheme 'ftp'" in message
    assert SUPPORTED in message


def test_a_mirror_with_another_scheme_is_refused_from_env_and_config(tmp_path, cache_env,
                                                                     monkeypatch):
    from gluon_hub import cache

    monkeypatch.setenv("GLUON_HUB_MIRRORS", "https://ok.example/ ftp://example.org/mirror/")
    with pytest.raises(ValueError) as caught:
        cache.mirrors()
    message = str(caught.value)
    assert "'ftp://example.org/mirror/'" in message and "scheme 'ftp'" in message
    assert SUPPORTED in message and "GLUON_HUB_MIRRORS" in message
    monkeypatch.delenv("GLUON_HUB_MIRRORS")
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"mirrors": ["s3://bucket/mirror/"]}))
    monkeypatch.setenv("GLUON_HUB_CONFIG", str(config))
    with pytest.raises(ValueError, match=f"'s3://bucket/mirror/': scheme 's3' .*{SUPPORTED}"):
        gluon_hub.fetch(FileRef(hash=sha256(DATA), filename="gluon/x.bin"))
    assert not (cache_env / "files").exists()


def test_an_index_with_another_scheme_is_refused_by_set_index_and_the_variable(cache_env,
                                                                              monkeypatch):
    with pytest.raises(IndexFormatError) as caught:
        gluon_hub.set_index("ftp://example.org/registry.json")
    message = str(caught.value)
    assert "'ftp://example.org/registry.json'" in message and "scheme 'ftp'" in message
    assert SUPPORTED in message
    monkeypatch.setenv("GLUON_HUB_INDEX", "sftp://example.org/registry.json")
    gluon_hub.reset_hub(autoload=False)
    with pytest.raises(IndexFormatError, match="scheme 'sftp' is not supported"):
        gluon_hub.search("resnet")


def test_a_redirect_to_another_scheme_is_refused_at_fetch(server, cache_env, monkeypatch):
    monkeypatch.setenv("GLUON_HUB_MIRRORS", server.url)
    server.add("gluon/x.bin", DATA, plan=["redirect:ftp://example.org/x.bin"])
    with pytest.raises(DownloadError) as caught:
        gluon_hub.fetch(FileRef(hash=sha256(DATA), filename="gluon/x.bin"))
    assert f"{server.url}gluon/x.bin" in str(caught.value)
    assert "redirected to 'ftp://example.org/x.bin'" in str(caught.value)
