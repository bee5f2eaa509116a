"""HTTP faults: every one either recovers or ends in one clear error, never a bad cache."""

from __future__ import annotations

import os
import time

import pytest

import gluon_hub
from gluon_hub import FileRef
from gluon_hub.cache import DownloadError

from cachetestlib import ref_for, sha256, temp_leftovers

DATA = os.urandom(300_000)


def test_plain_download_is_verified_and_placed(server, cache_env, monkeypatch):
    monkeypatch.setenv("GLUON_HUB_MIRRORS", server.url)
    server.add("files/blob.bin", DATA)
    path = gluon_hub.fetch(ref_for(DATA))
    assert path.read_bytes() == DATA
    assert path.name == "blob.bin"
    assert path.parent == cache_env / "files" / "sha256" / sha256(DATA).split(":")[1]
    assert temp_leftovers(cache_env) == []
    assert gluon_hub.fetch(ref_for(DATA)) == path  # a hit: no second request
    assert server.body_requests() == 1


def test_connection_dropped_mid_body_resumes_with_range(server, cache_env, monkeypatch):
    monkeypatch.setenv("GLUON_HUB_MIRRORS", server.url)
    data = os.urandom(3 << 20)  # several 1 MiB chunks, so some land on disk before the drop
    server.add("files/blob.bin", data, plan=["drop"])
    assert gluon_hub.fetch(ref_for(data)).read_bytes() == data
    first, second = server.requests()
    assert first.range is None and first.body > 0
    assert second.status == 206 and second.range.startswith("bytes=")
    assert second.if_range is not None
    assert int(second.range[6:-1]) > 0


def test_body_shorter_than_content_length_is_retried(server, monkeypatch):
    monkeypatch.setenv("GLUON_HUB_MIRRORS", server.url)
    server.add("files/blob.bin", DATA, plan=["short"])
    assert gluon_hub.fetch(ref_for(DATA)).read_bytes() == DATA
    assert len(server.requests()) == 2


def test_500_then_200(server, monkeypatch):
    monkeypatch.setenv("GLUON_HUB_MIRRORS", server.url)
    server.add("files/blob.bin", DATA, plan=["status:500"])
    assert gluon_hub.fetch(ref_for(DATA)).read_bytes() == DATA
    assert [r.status for r in server.requests()] == [500, 200]


def test_408_and_429_are_retried_and_retry_after_is_honoured(server, monkeypatch):
    monkeypatch.setenv("GLUON_HUB_MIRRORS", server.url)
    server.add("files/blob.bin", DATA, plan=["status:408", "status:429:1"])
    started = time.monotonic()
    assert gluon_hub.fetch(ref_for(DATA)).read_bytes() == DATA
    assert [r.status for r in server.requests()] == [408, 429, 200]
    assert time.monotonic() - started >= 1.0  # waited as long as the server asked


def test_progress_bar_is_drawn_when_asked_and_silent_off_a_terminal(server, cache_env,
                                                                    monkeypatch, capfd):
    monkeypatch.setenv("GLUON_HUB_MIRRORS", server.url)
    server.add("files/one.bin", DATA)
    server.add("files/two.bin", DATA[::-1])
    gluon_hub.fetch(ref_for(DATA, "files/one.bin"), progress=True)
    drawn = capfd.readouterr().err
    assert "one.bin" in drawn and "293k" in drawn.lower()  # 300,000 bytes in KiB units
    gluon_hub.fetch(ref_for(DATA[::-1], "files/two.bin"))  # stderr is captured: not a tty
    assert capfd.readouterr().err == ""


def test_persistent_503_gives_up_after_the_retries(server, cache_env, monkeypatch):
    monkeypatch.setenv("GLUON_HUB_MIRRORS", server.url)
    monkeypatch.setenv("GLUON_HUB_RETRIES", "1")
    server.add("files/blob.bin", DATA, plan=["status:503"] * 5)
    with pytest.raises(DownloadError, match="HTTP 503, HTTP 503"):
        gluon_hub.fetch(ref_for(DATA))
    assert len(server.requests()) == 2
    assert temp_leftovers(cache_env) == []


def test_404_on_first_mirror_then_200_on_second(server, monkeypatch):
    monkeypatch.setenv("GLUON_HUB_MIRRORS", f"{server.url}a/, {server.url}b/")
    server.add("b/files/blob.bin", DATA)
    assert gluon_hub.fetch(ref_for(DATA)).read_bytes() == DATA
    assert [(r.path, r.status) for r in server.requests()] == [
        ("/a/files/blob.bin", 404), ("/b/files/blob.bin", 200),
    ]


def test_server_slower_than_read_timeout(server, cache_env, monkeypatch):
    monkeypatch.setenv("GLUON_HUB_MIRRORS", server.url)
    monkeypatch.setenv("GLUON_HUB_READ_TIMEOUT", "0.3")
    monkeypatch.setenv("GLUON_HUB_RETRIES", "1")
    server.add("files/blob.bin", DATA, plan=["slow:1.5", "slow:1.5"])
    with pytest.raises(DownloadError) as caught:
        gluon_hub.fetch(ref_for(DATA))
    assert "Timeout" in str(caught.value) or "ConnectionError" in str(caught.value)
    assert len(server.requests()) == 2
    assert not (cache_env / "files").exists() or not any(
        p.is_file() and not p.name.startswith(".") for p in (cache_env / "files").rglob("*")
    )


def test_wrong_bytes_are_never_placed_and_every_attempt_is_listed(server, cache_env, monkeypatch):
    monkeypatch.setenv("GLUON_HUB_MIRRORS", f"{server.url}a/ {server.url}b/")
    server.add("a/files/blob.bin", DATA, plan=["wrong"])
    server.add("b/files/blob.bin", DATA, plan=["wrong"])
    ref = ref_for(DATA)
    with pytest.raises(DownloadError) as caught:
        gluon_hub.fetch(ref)
    message = str(caught.value)
    wrong = sha256(bytes(b ^ 0xFF for b in DATA))
    assert message.count(f"expected {ref.hash}, got {wrong}") == 2
    assert f"{server.url}a/files/blob.bin" in message and f"{server.url}b/files/blob.bin" in message
    assert len(caught.value.attempts) == 2
    entry = cache_env / "files" / "sha256" / ref.digest
    assert [p.name for p in entry.iterdir() if not p.name.startswith(".")] == []
    assert temp_leftovers(cache_env) == []


def test_hash_prefix_never_matches():
    with pytest.raises(ValueError, match="prefixes are never accepted"):
        FileRef(hash=sha256(DATA)[:20], filename="x")


def test_redirect_to_file_url_is_refused(server, tmp_path, monkeypatch):
    secret = tmp_path / "secret.bin"
    secret.write_bytes(DATA)
    monkeypatch.setenv("GLUON_HUB_MIRRORS", server.url)
    server.add("files/blob.bin", DATA, plan=[f"redirect:{secret.as_uri()}"])
    with pytest.raises(DownloadError, match="only http"):
        gluon_hub.fetch(ref_for(DATA))


def test_redirect_to_http_is_followed(server, monkeypatch):
    monkeypatch.setenv("GLUON_HUB_MIRRORS", server.url)
    server.add("files/blob.bin", DATA, plan=[f"redirect:{server.url}elsewhere.bin"])
    server.add("elsewhere.bin", DATA)
    assert gluon_hub.fetch(ref_for(DATA)).read_bytes() == DATA
    assert [r.status for r in server.requests()] == [302, 200]


def test_server_without_range_support_restarts_cleanly(server, monkeypatch):
    monkeypatch.setenv("GLUON_HUB_MIRRORS", server.url)
    data = os.urandom(3 << 20)
    server.add("files/blob.bin", data, plan=["drop"], ranges=False)
    assert gluon_hub.fetch(ref_for(data)).read_bytes() == data
    first, second = server.requests()
    assert second.range is not None and second.status == 200  # asked, got the whole file


def test_changed_resource_restarts_through_if_range(server, monkeypatch):
    monkeypatch.setenv("GLUON_HUB_MIRRORS", server.url)
    monkeypatch.setenv("GLUON_HUB_RETRIES", "0")
    data = os.urandom(3 << 20)
    server.add("files/blob.bin", bytes(len(data)), plan=["drop"])  # zeros, then a drop
    with pytest.raises(DownloadError):
        gluon_hub.fetch(ref_for(data))
    server.files["/files/blob.bin"].data = data  # the resource changes on the server
    assert gluon_hub.fetch(ref_for(data)).read_bytes() == data
    last = server.requests()[-1]
    assert last.range is not None and last.if_range is not None and last.status == 200


def test_absolute_urls_and_file_mirrors(tmp_path, monkeypatch):
    mirror = tmp_path / "mirror"
    (mirror / "files").mkdir(parents=True)
    (mirror / "files" / "blob.bin").write_bytes(DATA)
    monkeypatch.setenv("GLUON_HUB_MIRRORS", str(tmp_path / "empty") + "," + mirror.as_uri())
    assert gluon_hub.fetch(ref_for(DATA)).read_bytes() == DATA
    other = os.urandom(1000)
    (tmp_path / "direct.bin").write_bytes(other)
    ref = FileRef(hash=sha256(other), urls=((tmp_path / "direct.bin").as_uri(),))
    assert gluon_hub.fetch(ref).read_bytes() == other


def test_size_mismatch_is_refused(server, monkeypatch):
    monkeypatch.setenv("GLUON_HUB_MIRRORS", server.url)
    server.add("files/blob.bin", DATA)
    ref = FileRef(hash=sha256(DATA), size=len(DATA) - 1, filename="files/blob.bin")
    with pytest.raises(DownloadError, match="expected"):
        gluon_hub.fetch(ref)
