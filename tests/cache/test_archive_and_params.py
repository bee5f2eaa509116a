"""Archives are extracted safely; weight files are checked before MXNet reads them."""

from __future__ import annotations

import io
import os
import pickle
import random
import stat
import struct
import zipfile

import pytest

import gluon_hub
from gluon_hub import FileRef
from gluon_hub.cache import DownloadError, ParamsFormatError, check_params_file, fetch_params

from cachetestlib import sha256, temp_leftovers


def ndarray_file(arrays: dict, tmp_path):
    from gluon_hub.compat import mx

    path = tmp_path / "real.params"
    mx.nd.save(str(path), {k: mx.nd.array(v) for k, v in arrays.items()})
    return path.read_bytes()


def make_zip(members: dict[str, bytes], links: tuple[str, ...] = ()) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
        for name in links:
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            zf.writestr(info, "/etc/passwd")
    return buffer.getvalue()


def zip_ref(member: bytes, archive: bytes, name: str = "net-0123abcd.params") -> FileRef:
    return FileRef(hash=sha256(member), size=len(member), filename="gluon/models/net-0123abcd.zip",
                   extract=name, archive_hash=sha256(archive))


def test_zip_member_is_extracted_verified_and_the_zip_dropped(server, cache_env, monkeypatch):
    member = os.urandom(100_000)
    archive = make_zip({"net-0123abcd.params": member})
    server.add("gluon/models/net-0123abcd.zip", archive)
    monkeypatch.setenv("GLUON_HUB_MIRRORS", server.url)
    path = gluon_hub.fetch(zip_ref(member, archive))
    assert path.name == "net-0123abcd.params" and path.read_bytes() == member
    assert [p.name for p in path.parent.iterdir() if not p.name.startswith(".")] == [path.name]
    assert temp_leftovers(cache_env) == []


@pytest.mark.parametrize("bad", ["../evil.params", "/abs/evil.params", "a/../../evil"])
def test_zip_with_escaping_entries_is_refused(server, cache_env, monkeypatch, bad):
    member = os.urandom(1000)
    archive = make_zip({"net-0123abcd.params": member, bad: b"x"})
    server.add("gluon/models/net-0123abcd.zip", archive)
    monkeypatch.setenv("GLUON_HUB_MIRRORS", server.url)
    with pytest.raises(DownloadError, match="escapes the extraction folder"):
        gluon_hub.fetch(zip_ref(member, archive))
    assert not (cache_env.parent / "evil.params").exists()
    assert temp_leftovers(cache_env) == []


def test_zip_with_a_symlink_is_refused(server, monkeypatch):
    member = os.urandom(1000)
    archive = make_zip({"net-0123abcd.params": member}, links=("link",))
    server.add("gluon/models/net-0123abcd.zip", archive)
    monkeypatch.setenv("GLUON_HUB_MIRRORS", server.url)
    with pytest.raises(DownloadError, match="symbolic link"):
        gluon_hub.fetch(zip_ref(member, archive))


def test_zip_bomb_is_refused(server, cache_env, monkeypatch):
    bomb = bytes(32 << 20)
    archive = make_zip({"net-0123abcd.params": bomb})
    assert len(archive) < 100_000
    server.add("gluon/models/net-0123abcd.zip", archive)
    monkeypatch.setenv("GLUON_HUB_MIRRORS", server.url)
    ref = FileRef(hash=sha256(bomb), filename="gluon/models/net-0123abcd.zip",
                  extract="net-0123abcd.params")
    with pytest.raises(DownloadError, match="zip bomb"):
        gluon_hub.fetch(ref)
    monkeypatch.setenv("GLUON_HUB_MAX_EXTRACT_SIZE", str(1 << 20))
    with pytest.raises(DownloadError, match="over the limit"):
        gluon_hub.fetch(ref)
    assert temp_leftovers(cache_env) == []


@pytest.mark.mxnet
def test_a_real_params_file_passes(tmp_path):
    data = ndarray_file({"w": [[1.0, 2.0], [3.0, 4.0]], "b": [0.5]}, tmp_path)
    path = tmp_path / "ok.params"
    path.write_bytes(data)
    assert check_params_file(path) == 2


def test_a_pickle_is_refused(server, monkeypatch):
    data = pickle.dumps({"weight": [1.0, 2.0]})
    server.add("files/net.params", data)
    monkeypatch.setenv("GLUON_HUB_MIRRORS", server.url)
    ref = FileRef(hash=sha256(data), filename="files/net.params")
    with pytest.raises(ParamsFormatError, match="pickle"):
        fetch_params(ref)


@pytest.mark.mxnet
def test_declared_sizes_beyond_the_file_are_refused(tmp_path):
    real = ndarray_file({"w": [[1.0, 2.0], [3.0, 4.0]]}, tmp_path)
    # The shape (2, 2) sits after: list header (24), array magic (4), stype (4), ndim (4).
    forged = bytearray(real)
    struct.pack_into("<qq", forged, 36, 1 << 20, 1 << 14)
    path = tmp_path / "forged.params"
    path.write_bytes(bytes(forged))
    with pytest.raises(ParamsFormatError, match="declares 68719476736 bytes"):
        check_params_file(path)
    path.write_bytes(real[:-3])
    with pytest.raises(ParamsFormatError):
        check_params_file(path)
    path.write_bytes(real + b"junk")
    with pytest.raises(ParamsFormatError, match="trailing"):
        check_params_file(path)


# fixed "random" bytes: parameters must be equal in every pytest-xdist worker
@pytest.mark.parametrize("data", [b"", b"PK\x03\x04rest", b"\x93NUMPY", random.Random(0).randbytes(64),
                                  struct.pack("<QQQ", 0x112, 0, 1 << 60)],
                         ids=["empty", "zip-magic", "npy-magic", "random-bytes", "huge-count"])
def test_other_files_are_refused(tmp_path, data):
    path = tmp_path / "x.params"
    path.write_bytes(data)
    with pytest.raises(ParamsFormatError):
        check_params_file(path)
