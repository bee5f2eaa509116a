"""Hostile or careless servers: every download is bounded, odd headers and encodings are
handled, TLS is never dropped, and errors say what came back.

Each test ends by checking the cache: nothing unverified under a final name, no temp
file left, and files cached before untouched.
"""

from __future__ import annotations

import gzip
import io
import os
import time
import zipfile

import pytest

import gluon_hub
from gluon_hub import FileRef
from gluon_hub.cache import DownloadError

from cachetestlib import Server, ref_for, self_signed_cert, sha256, temp_leftovers, visible_files

DATA = os.urandom(300_000)
BIG = 32 << 20  # what a hostile server would keep sending


@pytest.fixture
def cached_before(server, monkeypatch):
    """One file already in the cache, whose bytes and stamp must survive every test."""
    monkeypatch.setenv("GLUON_HUB_MIRRORS", server.url)
    data = os.urandom(5000)
    server.add("files/before.bin", data)
    path = gluon_hub.fetch(ref_for(data, "files/before.bin"))
    stamp = (path.parent / ".stamp.json").read_bytes()
    yield path
    assert path.read_bytes() == data and (path.parent / ".stamp.json").read_bytes() == stamp


def assert_clean(home, before) -> None:
    assert visible_files(home) == [before]
    assert temp_leftovers(home) == []


# -- 1. bounded in bytes ----------------------------------------------------------------


@pytest.mark.parametrize("length", ["omit", "announced"])
def test_a_file_without_a_size_stops_at_the_configured_cap(server, cache_env, cached_before,
                                                           monkeypatch, length):
    monkeypatch.setenv("GLUON_HUB_MAX_DOWNLOAD_SIZE", str(1 << 20))
    body = os.urandom(BIG)
    server.add("files/huge.bin", body, length={200: "omit"} if length == "omit" else {},
               throttle=(256 << 10, 0.0))
    ref = FileRef(hash=sha256(body), filename="files/huge.bin")  # no size declared
    with pytest.raises(DownloadError) as caught:
        gluon_hub.fetch(ref)
    assert "GLUON_HUB_MAX_DOWNLOAD_SIZE" in str(caught.value)
    assert "1048576" in str(caught.value)
    time.sleep(0.3)  # let the server notice the closed connection
    (request,) = server.requests("files/huge.bin")
    assert request.body < BIG // 2  # aborted early, not read to the end
    assert_clean(cache_env, cached_before)


def test_a_body_past_the_declared_size_is_cut_at_once(server, cache_env, cached_before):
    body = DATA + os.urandom(BIG)
    server.add("files/blob.bin", body, length={200: "omit"}, throttle=(256 << 10, 0.0))
    with pytest.raises(DownloadError, match="more than the 300000 bytes expected"):
        gluon_hub.fetch(ref_for(DATA))
    time.sleep(0.3)
    assert server.requests("files/blob.bin")[0].body < BIG // 2
    assert_clean(cache_env, cached_before)


def test_a_zip_is_bounded_by_the_cap_although_the_spec_sizes_only_its_member(
        server, cache_env, cached_before, monkeypatch):
    monkeypatch.setenv("GLUON_HUB_MAX_DOWNLOAD_SIZE", str(1 << 20))
    server.add("gluon/models/net-0123abcd.zip", os.urandom(BIG), length={200: "omit"},
               throttle=(256 << 10, 0.0))
    ref = FileRef(hash=sha256(b"member"), size=6, filename="gluon/models/net-0123abcd.zip",
                  extract="net-0123abcd.params")
    with pytest.raises(DownloadError, match="GLUON_HUB_MAX_DOWNLOAD_SIZE"):
        gluon_hub.fetch(ref)
    time.sleep(0.3)
    assert server.requests("gluon/models/net-0123abcd.zip")[0].body < BIG // 2
    assert_clean(cache_env, cached_before)


def test_a_local_mirror_is_bounded_too(tmp_path, cache_env, monkeypatch):
    mirror = tmp_path / "mirror" / "files"
    mirror.mkdir(parents=True)
    (mirror / "blob.bin").write_bytes(DATA)
    monkeypatch.setenv("GLUON_HUB_MIRRORS", str(tmp_path / "mirror"))
    monkeypatch.setenv("GLUON_HUB_MAX_DOWNLOAD_SIZE", "1000")
    with pytest.raises(DownloadError, match="GLUON_HUB_MAX_DOWNLOAD_SIZE"):
        gluon_hub.fetch(FileRef(hash=sha256(DATA), filename="files/blob.bin"))
    assert visible_files(cache_env) == [] and temp_leftovers(cache_env) == []


# -- 1. bounded in time -----------------------------------------------------------------


def test_a_server_dripping_the_body_is_dropped_at_the_deadline(server, cache_env, cached_before,
                                                               monkeypatch):
    # 40 kB at 2 kB/s would take 20 s; every read returns well within the read timeout.
    monkeypatch.setenv("GLUON_HUB_DOWNLOAD_DEADLINE", "1")
    data = os.urandom(40_000)
    server.add("files/drip.bin", data, throttle=(100, 0.05))
    started = time.monotonic()
    with pytest.raises(DownloadError, match="deadline of 1 s"):
        gluon_hub.fetch(ref_for(data, "files/drip.bin"))
    elapsed = time.monotonic() - started
    assert elapsed < 15
    (request,) = server.requests("files/drip.bin")  # the deadline is not retried
    time.sleep(0.5)
    sent = request.body
    time.sleep(0.5)
    assert request.body == sent < len(data)  # the server was cut off, not read to the end
    assert_clean(cache_env, cached_before)


def test_a_server_dripping_its_headers_is_dropped_at_the_deadline(server, cache_env,
                                                                  cached_before, monkeypatch):
    monkeypatch.setenv("GLUON_HUB_DOWNLOAD_DEADLINE", "1")
    server.add("files/blob.bin", DATA, plan=["driphead"])
    started = time.monotonic()
    with pytest.raises(DownloadError, match="deadline"):
        gluon_hub.fetch(ref_for(DATA))
    assert time.monotonic() - started < 15
    assert len(server.requests("files/blob.bin")) == 1
    assert_clean(cache_env, cached_before)


def test_the_deadline_must_be_positive(monkeypatch):
    monkeypatch.setenv("GLUON_HUB_DOWNLOAD_DEADLINE", "0")
    with pytest.raises(ValueError, match="download_deadline"):
        gluon_hub.cache.mirrors()


# -- 2. resumes with odd headers --------------------------------------------------------


@pytest.mark.parametrize("length", ["chunked", "omit", "abc"])
def test_a_resume_answered_without_a_usable_content_length_completes(server, cache_env,
                                                                      cached_before, length):
    data = os.urandom(3 << 20)
    server.add("files/blob.bin", data, plan=["drop"], length={206: length})
    assert gluon_hub.fetch(ref_for(data)).read_bytes() == data
    first, second = server.requests("files/blob.bin")
    assert second.status == 206 and second.body == len(data) - first.body
    assert sorted(visible_files(cache_env)) == sorted([cached_before, cache_env / "files" / "sha256"
                                                       / sha256(data)[7:] / "blob.bin"])
    assert temp_leftovers(cache_env) == []


def test_a_bad_content_length_does_not_skip_the_other_mirrors(server, cache_env, monkeypatch):
    monkeypatch.setenv("GLUON_HUB_MIRRORS", f"{server.url}a/ {server.url}b/")
    monkeypatch.setenv("GLUON_HUB_RETRIES", "1")
    data = os.urandom(3 << 20)
    # The first mirror drops the connection twice, the second time in a 206 whose
    # Content-Length is not a number: a failed source like any other.
    server.add("a/files/blob.bin", data, plan=["drop", "drop"], length={206: "abc"})
    server.add("b/files/blob.bin", data)
    assert gluon_hub.fetch(ref_for(data)).read_bytes() == data
    assert [(r.path, r.status) for r in server.requests()] == [
        ("/a/files/blob.bin", 200), ("/a/files/blob.bin", 206), ("/b/files/blob.bin", 200),
    ]
    assert temp_leftovers(cache_env) == []


# -- 3. content encodings ---------------------------------------------------------------


@pytest.mark.parametrize("data", [DATA, b"weights " * 40_000], ids=["grows", "shrinks"])
def test_a_body_gzipped_against_the_request_is_refused_by_name(server, cache_env, cached_before,
                                                               data):
    server.add("files/blob.bin", data, gzip=True)
    with pytest.raises(DownloadError) as caught:
        gluon_hub.fetch(ref_for(data))
    assert "Content-Encoding: gzip" in str(caught.value)
    (request,) = server.requests("files/blob.bin")
    assert request.range is None  # never a Range request into the compressed stream
    assert_clean(cache_env, cached_before)


def test_a_published_gzip_file_served_with_content_encoding_is_kept_as_published(
        server, cache_env, cached_before):
    text = b"token\t1\n" * 50_000
    published = gzip.compress(text, mtime=0)  # the file as uploaded, e.g. to S3 with
    server.add("files/vocab.txt.gz", text, gzip=True)  # Content-Encoding metadata
    path = gluon_hub.fetch(FileRef(hash=sha256(published), size=len(published),
                                   filename="files/vocab.txt.gz"))
    assert path.read_bytes() == published
    assert len(server.requests("files/vocab.txt.gz")) == 1
    assert temp_leftovers(cache_env) == []


# -- 4. redirects never downgrade; only http, https and file ----------------------------


def test_an_https_source_redirecting_to_http_is_refused(tmp_path, cache_env, server, monkeypatch):
    cert, key = self_signed_cert(tmp_path)
    secure = Server(tls=(cert, key))
    try:
        monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(cert))
        monkeypatch.setenv("GLUON_HUB_MIRRORS", secure.url)
        other = os.urandom(1000)
        secure.add("files/ok.bin", other)  # TLS itself works
        assert gluon_hub.fetch(ref_for(other, "files/ok.bin")).read_bytes() == other
        plain = server.add("files/blob.bin", DATA)
        secure.add("files/blob.bin", DATA, plan=[f"redirect:{plain}"] * 5)
        with pytest.raises(DownloadError) as caught:
            gluon_hub.fetch(ref_for(DATA))
        message = str(caught.value)
        assert f"{secure.url}files/blob.bin redirected to {plain}" in message
        assert "https to plain http" in message
        assert server.connections == 0
        assert temp_leftovers(cache_env) == []
        assert [p.name for p in visible_files(cache_env)] == ["ok.bin"]
    finally:
        secure.close()


@pytest.mark.parametrize("url", ["ftp://example.org/x.params", "gopher://h/x", "s3://bucket/x",
                                 "relative/path.params"])
def test_file_refs_refuse_other_schemes_at_construction(url):
    with pytest.raises(ValueError, match="not an http://, https:// or file:// URL"):
        FileRef(hash=sha256(DATA), urls=(url,))


@pytest.mark.parametrize("mirror", ["ftp://example.org/mirror/", "sftp:host/mirror"])
def test_mirrors_refuse_other_schemes(mirror, cache_env, monkeypatch):
    monkeypatch.setenv("GLUON_HUB_MIRRORS", mirror)
    with pytest.raises(ValueError, match="is not supported"):
        gluon_hub.fetch(ref_for(DATA))
    assert not (cache_env / "files").exists()


# -- 5. errors say what came back -------------------------------------------------------

ACCESS_DENIED = (b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code>'
                 b"<Message>Access Denied</Message><RequestId>8B1C</RequestId></Error>")
LOGIN = b"<!DOCTYPE html>\n<html><head><title>Sign in</title></head><body>Please sign in" + b"." * 2000


def test_an_xml_error_page_is_named_with_its_content_type_and_excerpt(server, cache_env,
                                                                       cached_before):
    server.add("files/blob.bin", ACCESS_DENIED, content_type="application/xml")
    with pytest.raises(DownloadError) as caught:
        gluon_hub.fetch(ref_for(DATA))
    message = str(caught.value)
    assert f"{server.url}files/blob.bin" in message
    assert "application/xml" in message and "<Code>AccessDenied</Code>" in message
    assert ".part" not in message and ".tmp" not in message
    assert_clean(cache_env, cached_before)


def test_an_html_page_instead_of_a_zip_is_named_not_the_temp_file(server, cache_env,
                                                                  cached_before):
    server.add("gluon/models/net-0123abcd.zip", LOGIN, content_type="text/html; charset=utf-8")
    ref = FileRef(hash=sha256(b"member"), size=6, filename="gluon/models/net-0123abcd.zip",
                  extract="net-0123abcd.params")
    with pytest.raises(DownloadError) as caught:
        gluon_hub.fetch(ref)
    message = str(caught.value)
    assert f"{server.url}gluon/models/net-0123abcd.zip is not a valid zip archive" in message
    assert "text/html; charset=utf-8" in message and "Please sign in" in message
    assert len(message) < 2000  # an excerpt, not the page
    assert ".part" not in message and ".tmp" not in message
    assert_clean(cache_env, cached_before)


def test_a_hash_mismatch_says_what_to_do_next(server, cache_env, cached_before):
    server.add("files/blob.bin", DATA, plan=["wrong"])
    ref = ref_for(DATA)
    with pytest.raises(DownloadError) as caught:
        gluon_hub.fetch(ref)
    message = str(caught.value)
    assert "another mirror" in message and "GLUON_HUB_MIRRORS" in message
    assert f"gluon-hub cache purge {ref.hash}" in message
    assert "report the mirror" in message
    assert_clean(cache_env, cached_before)


def test_a_zip_without_the_member_names_its_url_not_the_temp_file(server, cache_env, monkeypatch):
    monkeypatch.setenv("GLUON_HUB_MIRRORS", server.url)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr("other.params", b"x")
    server.add("gluon/models/net-0123abcd.zip", buffer.getvalue(), content_type="application/zip")
    ref = FileRef(hash=sha256(b"member"), size=6, filename="gluon/models/net-0123abcd.zip",
                  extract="net-0123abcd.params")
    with pytest.raises(DownloadError) as caught:
        gluon_hub.fetch(ref)
    message = str(caught.value)
    assert f"{server.url}gluon/models/net-0123abcd.zip has no member 'net-0123abcd.params'" in message
    assert ".part" not in message
    assert visible_files(cache_env) == [] and temp_leftovers(cache_env) == []


def _zip(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buffer.getvalue()


def test_a_member_inside_a_folder_of_the_zip_is_found_by_its_name(server, cache_env, monkeypatch):
    # GluonNLP's dataset zips may hold train.jsonl as RTE/train.jsonl; its readers flatten folders
    monkeypatch.setenv("GLUON_HUB_MIRRORS", server.url)
    server.add("gluon/dataset/rte/train-01ebec38.zip", _zip({"RTE/": b"", "RTE/train.jsonl": b"member"}),
               content_type="application/zip")
    ref = FileRef(hash=sha256(b"member"), size=6, filename="gluon/dataset/rte/train-01ebec38.zip",
                  extract="train.jsonl")
    assert gluon_hub.fetch(ref).read_bytes() == b"member"


def test_a_member_name_in_two_folders_is_refused_as_ambiguous(server, cache_env, monkeypatch):
    monkeypatch.setenv("GLUON_HUB_MIRRORS", server.url)
    server.add("gluon/dataset/rte/train-01ebec38.zip", _zip({"a/train.jsonl": b"member", "b/train.jsonl": b"other"}),
               content_type="application/zip")
    ref = FileRef(hash=sha256(b"member"), size=6, filename="gluon/dataset/rte/train-01ebec38.zip",
                  extract="train.jsonl")
    with pytest.raises(DownloadError, match=r"holds 'train.jsonl' in several folders: a/train.jsonl, b/train.jsonl"):
        gluon_hub.fetch(ref)
    assert visible_files(cache_env) == [] and temp_leftovers(cache_env) == []
