"""GluonNLP's word embeddings are hub entries (issue 33, item 3): every source is listed,
searched and described by name, and ``gluon_hub.load_embedding`` gives this plugin's
``WordEmbedding`` through its loader. No published file can be served here (their sha1 is
fixed), so the loader is run on a tiny GluonNLP ``.npz`` generated here, registered under an
entry of its own and served from a loopback mirror. No MXNet.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import numpy as np
import pytest

import gluon_hub
from gluon_hub import EmbeddingSpec, FileRef, hookimpl
from gluon_hub.publishing import bundle, import_bundle, serve
from gluon_nlp_core.text import WordEmbedding, embedding_source, list_embedding_sources

TOKENS = ["<unk>", "the", "cat", "sat"]
VECTORS = np.arange(12, dtype=np.float32).reshape(4, 3) / 8 - 0.5


def test_every_source_is_an_entry_with_its_file():
    gluon_hub.reset_hub()
    names = gluon_hub.list_embeddings()
    assert sorted(names) == list_embedding_sources() and len(names) == 499
    assert gluon_hub.list_embeddings("glove.6B.*") == [f"glove.6B.{d}d" for d in (100, 200, 300, 50)]
    spec = gluon_hub.embedding_info("glove.6B.50d")
    ref = embedding_source("glove.6B.50d").file_ref()
    assert (spec.family, spec.dim, spec.plugin, spec.files) == ("glove", 50, "nlp", (ref,))
    assert gluon_hub.embedding_info("cc.de.300").dim == 300
    assert gluon_hub.embedding_info("GoogleNews-vectors-negative300").family == "word2vec"
    rows = gluon_hub.search("glove", kind="embeddings")
    assert [r["name"] for r in rows] == gluon_hub.list_embeddings("glove*") and len(rows) == 10
    with pytest.raises(gluon_hub.UnknownNameError, match="did you mean: glove.6b.50d"):
        gluon_hub.embedding_info("glove.6B.5d")


@pytest.mark.parametrize("query, found, kind, code", [
    ("glove", "nlp/glove.6B.50d", "embeddings", "gluon_hub.list_embeddings(); gluon_hub.embedding_info('wiki.en')"),
    ("roberta_12_768_12", "nlp/openai_webtext_bpe_ranks", "vocabularies",  # the vocabularies (same hub plumbing)
     "gluon_hub.list_vocabularies(); gluon_hub.vocabulary_info('gbw')"),
])
def test_cli_search_finds_entries_and_listing_imports_no_numpy(query, found, kind, code):
    env = {k: v for k, v in os.environ.items() if not k.startswith("GLUON_HUB_")}
    searched = subprocess.run([sys.executable, "-m", "gluon_hub", "search", query], env=env,
                              capture_output=True, text=True, timeout=300)
    assert searched.returncode == 0, searched.stderr
    assert found in searched.stdout and kind in searched.stdout
    code = (f"import sys, gluon_hub; {code}; gluon_hub.search({query!r}, kind={kind!r}); "
            "assert 'numpy' not in sys.modules, 'numpy imported'")
    light = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert light.returncode == 0, light.stderr


def _tiny_npz(path: Path) -> FileRef:
    """A GluonNLP ``TokenEmbedding.serialize`` file: tokens, vectors and the unknown token."""
    path.parent.mkdir(parents=True)
    with open(path, "wb") as f:
        np.savez(f, idx_to_token=np.array(TOKENS), idx_to_vec=VECTORS, unknown_token=np.array("<unk>"))
    data = path.read_bytes()
    return FileRef(hash="sha1:" + hashlib.sha1(data).hexdigest(), size=len(data),
                   filename="gluon/embeddings/glove/tiny.npz")


class _TinyPlugin:
    GLUON_HUB_API = ">=1.1,<2"

    def __init__(self, ref: FileRef) -> None:
        self.ref = ref

    @hookimpl
    def gluon_hub_embeddings(self):
        return [EmbeddingSpec(name="tiny.glove.3d", factory="gluon_nlp_core.text.word_embeddings:load_from_spec",
                              family="glove", dim=3, files=(self.ref,))]


def test_prefetch_from_a_mirror_then_load_offline_and_bundle(hub_env: Path, monkeypatch: pytest.MonkeyPatch):
    mirror = hub_env / "mirror"
    ref = _tiny_npz(mirror / "gluon/embeddings/glove/tiny.npz")
    gluon_hub.register_plugin(_TinyPlugin(ref), "tinyemb")
    with serve(mirror) as server:
        monkeypatch.setenv("GLUON_HUB_MIRRORS", server.url)
        [path] = gluon_hub.cache.prefetch(["tiny.glove.3d"], kind=None)
    assert path.read_bytes() == (mirror / ref.filename).read_bytes()
    monkeypatch.delenv("GLUON_HUB_MIRRORS")
    monkeypatch.setenv("GLUON_HUB_OFFLINE", "1")
    emb = gluon_hub.load_embedding("tiny.glove.3d", lower_fallback=True)
    assert isinstance(emb, WordEmbedding) and emb.idx_to_token == TOKENS
    np.testing.assert_array_equal(emb[["the", "cat", "sat"]], VECTORS[1:])
    np.testing.assert_array_equal(emb["Cat"], VECTORS[2])  # lower_fallback reached the loader
    np.testing.assert_array_equal(emb["dog"], VECTORS[0])  # the file's own unknown vector
    with pytest.raises(TypeError, match="accepted: spec, unknown_token"):
        gluon_hub.load_embedding("tiny.glove.3d", lowercase=True)

    out = hub_env / "tiny.tar"
    [entry] = bundle(["tiny.glove.3d"], out)
    assert entry.models == ("embedding tinyemb/tiny.glove.3d",) and entry.ref == ref
    with tarfile.open(out) as tar:
        assert "weights/tiny.npz" in tar.getnames()
    elsewhere = hub_env / "elsewhere"
    import_bundle(out, root=elsewhere)
    again = gluon_hub.load_embedding("tiny.glove.3d", root=str(elsewhere))
    np.testing.assert_array_equal(again.idx_to_vec, VECTORS)
