"""Cache layout, stamps and verify, offline mode, shared and read-only caches, full disks."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import gluon_hub
from gluon_hub import FileRef, cache
from gluon_hub.cache import CacheNotWritableError, DiskFullError, OfflineMissError

from cachetestlib import ref_for, run_python, sha256, temp_leftovers

DATA = os.urandom(200_000)


def test_changed_bytes_are_trusted_by_stamp_caught_by_verify_and_refetched(server, monkeypatch):
    monkeypatch.setenv("GLUON_HUB_MIRRORS", server.url)
    server.add("files/blob.bin", DATA)
    ref = ref_for(DATA)
    path = gluon_hub.fetch(ref)
    before = path.stat()
    corrupt = bytearray(DATA)
    corrupt[100] ^= 1
    path.write_bytes(corrupt)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # same size, same mtime
    # The trust model: a stamp matching size and mtime is not re-hashed on load.
    assert gluon_hub.fetch(ref) == path and server.body_requests() == 1
    results = cache.verify()
    assert [(r.entry.name, r.status) for r in results] == [("blob.bin", "changed")]
    assert results[0].actual == sha256(bytes(corrupt))
    assert not path.exists()
    assert gluon_hub.fetch(ref).read_bytes() == DATA
    assert server.body_requests() == 2
    assert [r.status for r in cache.verify()] == ["ok"]


def test_a_changed_mtime_makes_a_load_rehash(server, monkeypatch):
    monkeypatch.setenv("GLUON_HUB_MIRRORS", server.url)
    server.add("files/blob.bin", DATA)
    ref = ref_for(DATA)
    path = gluon_hub.fetch(ref)
    os.utime(path, (1, 1))  # touched but same bytes: re-hashed, still a hit
    assert gluon_hub.fetch(ref) == path and server.body_requests() == 1
    path.write_bytes(DATA[:-1] + b"\0")  # changed bytes and mtime: fetched again
    assert gluon_hub.fetch(ref).read_bytes() == DATA
    assert server.body_requests() == 2
    stamp = json.loads((path.parent / ".stamp.json").read_text())
    assert stamp["hash"] == ref.hash and stamp["size"] == len(DATA)


def test_offline_with_the_file_cached(server, monkeypatch):
    monkeypatch.setenv("GLUON_HUB_MIRRORS", server.url)
    server.add("files/blob.bin", DATA)
    path = gluon_hub.fetch(ref_for(DATA))
    monkeypatch.setenv("GLUON_HUB_OFFLINE", "1")
    assert gluon_hub.fetch(ref_for(DATA)) == path
    assert len(server.requests()) == 1


def test_offline_without_the_file_names_it_and_the_prefetch_command(server, monkeypatch):
    monkeypatch.setenv("GLUON_HUB_MIRRORS", server.url)
    monkeypatch.setenv("GLUON_HUB_OFFLINE", "1")
    server.add("files/blob.bin", DATA)
    with pytest.raises(OfflineMissError) as caught:
        gluon_hub.fetch(ref_for(DATA))
    assert isinstance(caught.value, FileNotFoundError)
    message = str(caught.value)
    assert "blob.bin" in message and ref_for(DATA).hash in message
    # no model or dataset names the file: the command fetches the file itself
    assert "run: python -c 'import gluon_hub; gluon_hub.fetch(gluon_hub.FileRef(" in message
    assert server.requests() == []


def test_offline_still_reads_local_mirrors(tmp_path, monkeypatch):
    (tmp_path / "m" / "files").mkdir(parents=True)
    (tmp_path / "m" / "files" / "blob.bin").write_bytes(DATA)
    monkeypatch.setenv("GLUON_HUB_MIRRORS", f"http://127.0.0.1:9/ {tmp_path / 'm'}")
    monkeypatch.setenv("GLUON_HUB_OFFLINE", "1")
    assert gluon_hub.fetch(ref_for(DATA)).read_bytes() == DATA


def test_config_file_gives_mirrors_and_env_overrides_it(server, tmp_path, monkeypatch):
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"mirrors": [server.url + "cfg/"], "retries": 0}))
    monkeypatch.setenv("GLUON_HUB_CONFIG", str(config))
    server.add("cfg/files/blob.bin", DATA)
    assert cache.mirrors() == (server.url + "cfg/",)
    assert gluon_hub.fetch(ref_for(DATA)).read_bytes() == DATA
    monkeypatch.setenv("GLUON_HUB_MIRRORS", "https://example.invalid/")
    assert cache.mirrors() == ("https://example.invalid/",)
    config.write_text(json.dumps({"mirror": "typo"}))
    with pytest.raises(ValueError, match="unknown keys"):
        cache.mirrors()


def test_default_mirror_is_the_original_repository(monkeypatch):
    assert cache.mirrors() == ("https://apache-mxnet.s3-accelerate.dualstack.amazonaws.com/",)
    monkeypatch.setenv("GLUON_HUB_MIRRORS", "ftp://example.org/")
    with pytest.raises(ValueError, match="http"):
        cache.mirrors()


def test_shared_cache_is_read_and_never_written(server, tmp_path, monkeypatch):
    monkeypatch.setenv("GLUON_HUB_MIRRORS", server.url)
    server.add("files/blob.bin", DATA)
    shared = tmp_path / "shared"
    gluon_hub.fetch(ref_for(DATA), root=shared)
    monkeypatch.setenv("GLUON_HUB_SHARED_CACHE", str(shared))
    path = gluon_hub.fetch(ref_for(DATA))
    assert path.is_relative_to(shared) and server.body_requests() == 1
    assert [e.shared for e in cache.entries()] == [True]
    assert cache.purge() == []  # purge never touches the shared cache
    assert path.exists()


def _without_root_powers() -> list[str]:
    """A command prefix that makes permission bits count even when the tests run as root."""
    if os.geteuid() != 0:
        return []
    return ["setpriv", "--bounding-set", "-dac_override,-dac_read_search,-fowner"]


def test_read_only_cache_directory(server, tmp_path, monkeypatch):
    monkeypatch.setenv("GLUON_HUB_MIRRORS", server.url)
    server.add("files/blob.bin", DATA)
    other = os.urandom(1000)
    server.add("files/other.bin", other)
    ref = ref_for(DATA)
    home = tmp_path / "readonly"
    cached = gluon_hub.fetch(ref, root=home)
    for path in [home, *home.rglob("*")]:
        os.chmod(path, 0o555 if path.is_dir() else 0o444)
    code = (
        "import sys\nfrom gluon_hub import FileRef, fetch\n"
        "print(fetch(FileRef(hash=sys.argv[1], filename='files/blob.bin')))\n"
        "try:\n    fetch(FileRef(hash=sys.argv[2], filename='files/other.bin'))\n"
        "except Exception as exc:\n    print(type(exc).__name__, exc)\n"
    )
    try:
        result = subprocess.run(
            [*_without_root_powers(), sys.executable, "-c", code, ref.hash, sha256(other)],
            env={**os.environ, "GLUON_HUB_HOME": str(home)},
            capture_output=True, text=True, timeout=60,
        )
    finally:
        for path in [home, *home.rglob("*")]:
            os.chmod(path, 0o755 if path.is_dir() else 0o644)
    assert result.returncode == 0, result.stderr
    hit, error = result.stdout.strip().splitlines()
    assert hit == str(cached)  # a hit needs no write
    assert error.startswith("CacheNotWritableError") and "not writable" in error
    assert "GLUON_HUB_HOME" in error and "GLUON_HUB_SHARED_CACHE" in error
    assert issubclass(CacheNotWritableError, PermissionError)
    assert server.body_requests() == 1


def test_full_disk_mid_download_leaves_nothing_and_says_so(server, cache_env):
    data = os.urandom(3 << 20)
    server.add("files/blob.bin", data)
    # A file size limit makes writes fail with EFBIG past 1.5 MiB, as a full disk would.
    code = (
        "import resource, signal, sys\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (3 << 19, 3 << 19))\n"
        "from gluon_hub import FileRef, fetch\n"
        "try:\n    fetch(FileRef(hash=sys.argv[1], filename='files/blob.bin'))\n"
        "except Exception as exc:\n    print(type(exc).__name__, exc)\n"
    )
    env = {**os.environ, "GLUON_HUB_MIRRORS": server.url}
    result = run_python(code, env, args=[sha256(data)])
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("DiskFullError") and "no space left" in result.stdout
    assert "blob.bin" in result.stdout
    assert temp_leftovers(cache_env) == []
    entry = cache_env / "files" / "sha256" / sha256(data).split(":")[1]
    assert [p.name for p in entry.iterdir() if not p.name.startswith(".")] == []
    assert issubclass(DiskFullError, OSError)


def test_add_file_copies_a_verified_local_file(tmp_path):
    source = tmp_path / "blob.bin"
    source.write_bytes(DATA)
    path = cache.add_file(ref_for(DATA), source)
    assert path.read_bytes() == DATA and source.exists()
    assert [e.hash for e in cache.entries()] == [sha256(DATA)]
    source.write_bytes(DATA[:-1])
    with pytest.raises(ValueError, match="expected"):
        cache.add_file(ref_for(DATA + b"x"), source)


def test_ls_entries_purge_by_name_and_hash(server, monkeypatch):
    monkeypatch.setenv("GLUON_HUB_MIRRORS", server.url)
    other = os.urandom(5000)
    server.add("files/blob.bin", DATA)
    server.add("files/other.bin", other)
    gluon_hub.fetch(ref_for(DATA))
    gluon_hub.fetch(ref_for(other, filename="files/other.bin"))
    assert sorted((e.name, e.size, e.stamped) for e in cache.entries()) == [
        ("blob.bin", len(DATA), True), ("other.bin", len(other), True),
    ]
    with pytest.raises(KeyError):
        cache.purge([sha256(other)[:20]])  # a hash prefix never selects anything
    assert [e.name for e in cache.purge([sha256(other)])] == ["other.bin"]
    assert [e.name for e in cache.purge(["blob.bin"])] == ["blob.bin"]
    assert cache.entries() == []


def test_file_ref_checks():
    with pytest.raises(ValueError):
        FileRef(hash="md5:" + "0" * 32, filename="x")
    with pytest.raises(ValueError):
        FileRef(hash=sha256(DATA), filename="../x")
    with pytest.raises(TypeError):
        gluon_hub.fetch("files/blob.bin")
