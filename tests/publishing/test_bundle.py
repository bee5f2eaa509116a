"""``bundle`` and ``import``: weights carried between machines, verified before the cache."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from pathlib import Path

import numpy as np
import pytest
from tests_publishing_lib import load_in_fresh_process, outputs_of
from tests_publishing_models import PublishedWeightsPlugin

import gluon_hub
from gluon_hub.cli import main
from gluon_hub.publishing import BundleError, bundle, import_bundle, publish
from gluon_hub.publishing._bundle import _manifest_hash


def snapshot(home: Path) -> dict[str, bytes]:
    """Every file under a cache, with its bytes."""
    if not home.exists():
        return {}
    return {str(p.relative_to(home)): p.read_bytes() for p in sorted(home.rglob("*")) if p.is_file()}


def test_bundle_then_import_into_an_empty_cache_loads_offline(
    published, mirror, inputs, trained_net, tmp_path, monkeypatch, capsys
):
    out, variant = published
    monkeypatch.setenv("GLUON_HUB_MIRRORS", mirror.url)
    gluon_hub.register_plugin(PublishedWeightsPlugin(str(out / "weights.json")), name="thirdparty")
    archive = tmp_path / "carry" / "tiny.tar"
    assert main(["bundle", "tiny_pub", "-o", str(archive)]) == 0  # fetched through the cache
    assert "thirdparty/tiny_pub:default" in capsys.readouterr().out
    mirror.shutdown()  # from here on, the network is gone

    second = tmp_path / "second-home"
    monkeypatch.setenv("GLUON_HUB_HOME", str(second))
    assert main(["import", str(archive)]) == 0
    report = capsys.readouterr().out
    assert variant.file.filename in report and "imported 1 file," in report

    got = load_in_fresh_process(out / "weights.json", inputs, tmp_path, GLUON_HUB_OFFLINE="1",
                                GLUON_HUB_MIRRORS=None, GLUON_HUB_HOME=str(second))
    np.testing.assert_allclose(got, outputs_of(trained_net, inputs), rtol=1e-6, atol=1e-7)


def test_manifest_lists_hashes_sizes_and_users(published, tmp_path):
    out, variant = published
    other = publish(out / variant.file.filename, "tiny_pub", out, tag="copy")  # same file
    archive = tmp_path / "b.tar.gz"
    files = bundle(["tiny_pub", "tiny_pub:copy"], archive, from_dir=out)
    assert len(files) == 1 and other.file == variant.file
    with tarfile.open(archive) as tar:
        assert tar.getnames() == ["manifest.json", files[0].path]
        manifest = json.load(tar.extractfile("manifest.json"))
        data = tar.extractfile(files[0].path).read()
    (entry,) = manifest["files"]
    assert entry["hash"] == "sha256:" + hashlib.sha256(data).hexdigest() == variant.file.hash
    assert entry["size"] == len(data) == variant.file.size
    assert entry["models"] == ["tiny_pub:default", "tiny_pub:copy"]
    assert manifest["manifest_hash"] == _manifest_hash(manifest)


def test_unknown_models_and_tags_are_refused(published, tmp_path):
    out, _ = published
    with pytest.raises(KeyError, match="no weights tagged 'nope'"):
        bundle(["tiny_pub:nope"], tmp_path / "b.tar", from_dir=out)
    with pytest.raises(KeyError, match="nothing_like_this"):
        bundle(["nothing_like_this"], tmp_path / "b.tar", from_dir=out)
    assert not (tmp_path / "b.tar").exists()


def _flip_byte_of(archive: Path, member: str) -> None:
    with tarfile.open(archive) as tar:
        offset = tar.getmember(member).offset_data
    with open(archive, "r+b") as f:
        f.seek(offset + 3)
        byte = f.read(1)
        f.seek(offset + 3)
        f.write(bytes([byte[0] ^ 0xFF]))


def test_a_tampered_bundle_is_rejected_and_the_cache_is_unchanged(published, trained_net, tmp_path):
    out, variant = published
    second = publish(trained_net, "tiny_pub", out, tag="second")
    home = tmp_path / "target-home"
    bundle(["tiny_pub:second"], tmp_path / "ok.tar.gz", from_dir=out)
    ((imported, cached),) = import_bundle(tmp_path / "ok.tar.gz", root=home)
    assert imported.ref == second.file and cached.read_bytes() == (out / second.file.filename).read_bytes()
    before = snapshot(home)
    assert any(name.endswith(second.file.filename) for name in before)

    archive = tmp_path / "tampered.tar"
    (entry,) = bundle(["tiny_pub"], archive, from_dir=out)
    _flip_byte_of(archive, entry.path)
    with pytest.raises(BundleError, match=rf"{entry.path} is corrupted.*nothing was imported"):
        import_bundle(archive, root=home)
    assert snapshot(home) == before

    _flip_byte_of(archive, entry.path)  # repaired; now damage the manifest instead
    _flip_byte_of(archive, "manifest.json")
    with pytest.raises(BundleError, match="manifest"):
        import_bundle(archive, root=home)
    assert snapshot(home) == before


def _craft(path: Path, manifest: dict | None, members: list[tuple[tarfile.TarInfo, bytes]]) -> Path:
    """A bundle with exactly these members (and a manifest whose own hash is right)."""
    with tarfile.open(path, "w") as tar:
        if manifest is not None:
            manifest = {**manifest, "manifest_hash": _manifest_hash(manifest)}
            data = json.dumps(manifest).encode()
            info = tarfile.TarInfo("manifest.json")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if info.isreg() else None)
    return path


def _member(name: str, data: bytes = b"", kind: bytes = tarfile.REGTYPE, link: str = "") -> tuple:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, link
    info.size = len(data) if kind == tarfile.REGTYPE else 0
    return info, data


@pytest.mark.parametrize("case, message", [
    ("absolute", "absolute path"),
    ("dotdot", r"leads outside the bundle \('\.\.'\)"),
    ("symlink", "is a link"),
    ("hardlink", "is a link"),
    ("directory", "not a regular file"),
    ("undeclared", "members not in the manifest"),
    ("size", "the manifest says"),
    ("missing", "in the manifest but not in the archive"),
    ("no_manifest", "has no manifest.json"),
])
def test_unsafe_or_inconsistent_archives_are_refused(published, tmp_path, case, message):
    out, variant = published
    archive = tmp_path / "good.tar"
    (entry,) = bundle(["tiny_pub"], archive, from_dir=out)
    with tarfile.open(archive) as tar:
        manifest = json.load(tar.extractfile("manifest.json"))
        data = tar.extractfile(entry.path).read()
    del manifest["manifest_hash"]
    good = _member(entry.path, data)
    members = {
        "absolute": [good, _member("/etc/evil", b"x")],
        "dotdot": [good, _member("weights/../../evil", b"x")],
        "symlink": [good, _member("weights/link", kind=tarfile.SYMTYPE, link="/etc/passwd")],
        "hardlink": [good, _member("weights/link", kind=tarfile.LNKTYPE, link=entry.path)],
        "directory": [good, _member("weights", kind=tarfile.DIRTYPE)],
        "undeclared": [good, _member("weights/extra.params", b"x")],
        "size": [_member(entry.path, data + b"\0")],
        "missing": [],
        "no_manifest": [good],
    }[case]
    if case == "size":
        manifest["files"][0]["file"]["size"] = None  # only the manifest's own size is left
    home = tmp_path / "home-untouched"
    crafted = _craft(tmp_path / f"{case}.tar", None if case == "no_manifest" else manifest, members)
    with pytest.raises(BundleError, match=message):
        import_bundle(crafted, root=home)
    assert snapshot(home) == {}


def test_cli_import_of_a_damaged_bundle_fails_with_one_line(published, tmp_path, capsys):
    out, _ = published
    archive = tmp_path / "b.tar"
    (entry,) = bundle(["tiny_pub"], archive, from_dir=out)
    _flip_byte_of(archive, entry.path)
    assert main(["import", str(archive)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("gluon-hub: error: bundle") and entry.path in err
    assert snapshot(tmp_path / "home") == {}


def test_a_file_that_is_not_a_tar_is_refused(tmp_path):
    junk = tmp_path / "junk.tar"
    junk.write_bytes(b"not a tar at all" * 100)
    with pytest.raises(BundleError, match="not a readable tar bundle"):
        import_bundle(junk, root=tmp_path / "home")
