"""A plugin's model loads its published weights through a loopback mirror; the CLI works."""

from __future__ import annotations

import hashlib
import io
import zipfile

import numpy as np
import pytest

import gluon_hub
from gluon_hub import FileRef, ModelSpec, WeightVariant, hookimpl
from gluon_hub.cli import main


class TinyPlugin:
    """A plugin object registered in-process, as a notebook would."""

    GLUON_HUB_API = ">=1,<2"

    def __init__(self, weights: tuple[WeightVariant, ...]) -> None:
        self.weights = weights

    @hookimpl
    def gluon_hub_models(self):
        return [ModelSpec(name="cache_tiny", factory="cachetestlib:tiny_net", task="demo",
                          weights=self.weights)]


@pytest.fixture
def published(server, tmp_path, monkeypatch):
    """tiny_net's weights, published GluonCV-style (a zip) and plain, on a loopback mirror."""
    from gluon_hub.compat import mx

    from cachetestlib import tiny_net

    net = tiny_net()
    net.initialize(mx.init.Normal(1.0))
    params = tmp_path / "cache_tiny-0000.params"
    net.save_parameters(str(params))
    data = params.read_bytes()
    digest = hashlib.sha1(data).hexdigest()
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr(f"cache_tiny-{digest[:8]}.params", data)
    server.add(f"gluon/models/cache_tiny-{digest[:8]}.zip", archive.getvalue())
    server.add("plain/cache_tiny.params", data)
    weights = (
        WeightVariant(tag="zip", file=FileRef(
            hash=f"sha1:{digest}", size=len(data), extract=f"cache_tiny-{digest[:8]}.params",
            filename=f"gluon/models/cache_tiny-{digest[:8]}.zip")),
        WeightVariant(tag="plain", file=FileRef(
            hash="sha256:" + hashlib.sha256(data).hexdigest(), filename="plain/cache_tiny.params")),
    )
    monkeypatch.setenv("GLUON_HUB_MIRRORS", server.url)
    gluon_hub.register_plugin(TinyPlugin(weights), name="tinyplug")
    x = mx.nd.array(np.random.RandomState(0).rand(2, 5))
    return net, x


@pytest.mark.mxnet
def test_load_pretrained_reproduces_the_outputs(published, server):
    net, x = published
    expected = net(x).asnumpy()
    for tag in (True, "plain"):
        loaded = gluon_hub.load("cache_tiny", pretrained=tag)
        np.testing.assert_allclose(loaded(x).asnumpy(), expected, rtol=1e-6)
    again = gluon_hub.load("cache_tiny", pretrained=True)  # a cache hit
    np.testing.assert_allclose(again(x).asnumpy(), expected, rtol=1e-6)
    assert server.body_requests() == 2


@pytest.mark.mxnet
def test_cli_prefetch_ls_verify_purge(published, server, capsys):
    assert main(["cache", "prefetch", "cache_tiny", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "2 files" in out and server.body_requests() == 2
    assert main(["cache", "ls"]) == 0
    out = capsys.readouterr().out
    assert "cache_tiny-" in out and "cache_tiny.params" in out and "2 files" in out
    assert main(["cache", "verify", "cache_tiny"]) == 0
    assert "0 changed" in capsys.readouterr().out
    gluon_hub.unregister_plugin("tinyplug")
    monkey = gluon_hub.cache.entries()[0].path
    monkey.write_bytes(b"not the weights")
    assert main(["cache", "verify"]) == 1
    assert "CHANGED" in capsys.readouterr().out
    assert main(["cache", "purge"]) == 0
    assert "removed" in capsys.readouterr().out
    assert gluon_hub.cache.entries() == []
    assert main(["cache", "purge", "no-such-thing"]) == 1
    assert "gluon-hub cache ls" in capsys.readouterr().err


def test_unpacked_dataset_folders_are_listed_and_purged(capsys):
    folder = gluon_hub.cache.extracted_dir("shapes")
    (folder / "JPEGImages").mkdir(parents=True)
    (folder / "JPEGImages" / "0001.jpg").write_bytes(b"x" * 3000)
    gluon_hub.cache.extracted_dir("other").mkdir()
    assert main(["cache", "ls"]) == 0
    out = capsys.readouterr().out
    assert "extracted/shapes/" in out and "2.9 KB" in out and "2 unpacked dataset folders" in out
    assert [f.dataset for f in gluon_hub.cache.purge_extracted(["other"])] == ["other"]
    assert main(["cache", "purge"]) == 0
    assert "removed extracted/shapes/ (2.9 KB)" in capsys.readouterr().out
    assert not folder.exists() and gluon_hub.cache.extracted() == []
    with pytest.raises(ValueError, match="without path separators"):
        gluon_hub.cache.extracted_dir("../outside")


@pytest.mark.mxnet
def test_prefetch_one_tag_then_offline_load(published, server, monkeypatch):
    net, x = published
    assert main(["cache", "prefetch", "cache_tiny", "--tag", "plain", "--quiet"]) == 0
    monkeypatch.setenv("GLUON_HUB_OFFLINE", "1")
    loaded = gluon_hub.load("cache_tiny", pretrained="plain")
    np.testing.assert_allclose(loaded(x).asnumpy(), net(x).asnumpy(), rtol=1e-6)
    with pytest.raises(FileNotFoundError, match="gluon-hub cache prefetch tinyplug/cache_tiny"):
        gluon_hub.load("cache_tiny", pretrained="zip")
    assert server.body_requests() == 1
