"""Word embeddings by name: GluonNLP's registry, loading through a loopback mirror, and the
same vectors, unknown handling and fallbacks as GluonNLP 0.10's TokenEmbedding."""

from __future__ import annotations

import hashlib
import warnings
from pathlib import Path

import numpy as np
import pytest

import gluon_hub.compat  # noqa: F401  (numpy aliases for mxnet, before gluonnlp)
from gluon_hub.cache import DownloadError
from gluon_hub.publishing import serve
from gluon_nlp_core.text import (
    EmbeddingSource,
    Vocab,
    WordEmbedding,
    embedding_source,
    list_embedding_sources,
    load_embedding,
    load_embedding_file,
)

import gluonnlp

_REFERENCE = {
    "glove": gluonnlp.embedding.GloVe,
    "fasttext": gluonnlp.embedding.FastText,
    "word2vec": gluonnlp.embedding.Word2Vec,
}


@pytest.fixture
def isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for var in ("GLUON_HUB_OFFLINE", "GLUON_HUB_MIRRORS", "GLUON_HUB_SHARED_CACHE"):
        monkeypatch.delenv(var, raising=False)
    home = tmp_path / "hub"
    monkeypatch.setenv("GLUON_HUB_HOME", str(home))
    return home


def _glove_text(rng: np.random.RandomState, words: list[str], dim: int) -> str:
    rows = rng.standard_normal((len(words), dim))
    return "".join(f"{w} " + " ".join(f"{v:.{rng.randint(1, 9)}f}" for v in r) + "\n" for w, r in zip(words, rows))


def _reference(path: Path, **kwargs) -> gluonnlp.embedding.TokenEmbedding:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return gluonnlp.embedding.TokenEmbedding.from_file(str(path), **kwargs)


def _assert_same(ours: WordEmbedding, theirs, tokens: list[str]) -> None:
    assert ours.idx_to_token == theirs.idx_to_token
    np.testing.assert_array_equal(np.asarray(ours.idx_to_vec), theirs.idx_to_vec.asnumpy())
    np.testing.assert_array_equal(ours[tokens], theirs[tokens].asnumpy())


# -- the registry ------------------------------------------------------------------------


def test_every_gluonnlp_source_is_registered_with_its_file_and_sha1() -> None:
    listed = gluonnlp.embedding.list_sources()
    assert sum(len(v) for v in listed.values()) == len(list_embedding_sources()) == 499
    for family, cls in _REFERENCE.items():
        assert sorted(listed[family]) == list_embedding_sources(family)
        for name, (filename, sha1) in cls.source_file_hash.items():
            ref = embedding_source(name).file_ref()
            assert ref.hash == f"sha1:{sha1}"
            assert ref.filename == f"gluon/embeddings/{family}/{filename}"
            assert ref.urls == ("https://apache-mxnet.s3-accelerate.dualstack.amazonaws.com/" + ref.filename,)


def test_unknown_source_names_get_close_matches() -> None:
    with pytest.raises(KeyError, match=r"'glove\.6B\.50d'"):
        embedding_source("glove.6b.50d")
    with pytest.raises(KeyError, match="'wiki.en'"):
        load_embedding("wiki.enn")
    with pytest.raises(KeyError, match="families: fasttext, glove, word2vec"):
        list_embedding_sources("elmo")


# -- loading by name through a mirror ---------------------------------------------------------


def _published_npz(tmp_path: Path, text: str, name: str) -> tuple[Path, EmbeddingSource]:
    """A GluonNLP-serialized table (as GluonNLP publishes them) on a mirror folder."""
    source = tmp_path / "source.txt"
    source.write_text(text, encoding="utf-8")
    mirror = tmp_path / "mirror"
    target = mirror / "gluon" / "embeddings" / "glove" / f"{name}.npz"
    target.parent.mkdir(parents=True)
    _reference(source).serialize(str(target))
    sha1 = hashlib.sha1(target.read_bytes()).hexdigest()
    return mirror, EmbeddingSource(name, "glove", target.name, sha1)


def test_a_published_table_loads_through_a_loopback_mirror_and_is_then_memory_mapped(
    tmp_path: Path, isolated_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.RandomState(0)
    words = ["the", "cat", "Sat", "on", "mat"]
    mirror, spec = _published_npz(tmp_path, _glove_text(rng, words, 6), "glove.test.6d")
    with serve(mirror) as server:
        monkeypatch.setenv("GLUON_HUB_MIRRORS", server.url)
        emb = load_embedding(spec)
    theirs = gluonnlp.embedding.TokenEmbedding.deserialize(str(mirror / "gluon/embeddings/glove" / spec.filename))
    _assert_same(emb, theirs, ["cat", "dog", "<unk>"])
    # The server is gone: the second load reads the converted copy, memory-mapped.
    again = load_embedding(spec)
    assert isinstance(again.idx_to_vec, np.memmap)
    np.testing.assert_array_equal(again["Sat"], theirs["Sat"].asnumpy())
    assert (isolated_cache / "extracted" / "word_embeddings" / f"glove.test.6d-{spec.sha1[:8]}").is_dir()


def test_a_registered_name_is_fetched_from_the_mirror_and_hash_checked(
    tmp_path: Path, isolated_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A file served under glove.6B.50d's published name that is not the published file
    # is refused by the cache: the name resolved to the right path and sha1.
    mirror, _ = _published_npz(tmp_path, "a 1.0 2.0\n", "glove.6B.50d")
    with serve(mirror) as server:
        monkeypatch.setenv("GLUON_HUB_MIRRORS", server.url)
        monkeypatch.setenv("GLUON_HUB_RETRIES", "0")
        with pytest.raises(DownloadError, match="aa16be8d184399d2199f83fd62586f2c30497bfa"):
            load_embedding("glove.6B.50d")
    assert not (isolated_cache / "extracted" / "word_embeddings").exists() or not any(
        (isolated_cache / "extracted" / "word_embeddings").iterdir()
    )


@pytest.mark.parametrize("unknown_token", ["<unk>", None])
def test_npz_unknown_handling_equals_gluonnlp(tmp_path: Path, isolated_cache: Path, unknown_token) -> None:
    rng = np.random.RandomState(1)
    path = tmp_path / "table.npz"
    source = tmp_path / "t.txt"
    source.write_text(_glove_text(rng, ["a", "b", "c"], 4))
    _reference(source, init_unknown_vec=lambda shape: gluonnlp.embedding.token_embedding.nd.ones(shape)).serialize(str(path))
    ours = load_embedding_file(path, unknown_token=unknown_token)
    theirs = gluonnlp.embedding.TokenEmbedding._load_embedding_serialized(str(path), unknown_token, np.zeros)
    assert ours.idx_to_token == theirs[0]
    np.testing.assert_array_equal(np.asarray(ours.idx_to_vec), theirs[1].asnumpy())


# -- text files, against TokenEmbedding.from_file ----------------------------------------------


def test_text_file_equals_gluonnlp_vectors_bit_for_bit(tmp_path: Path, isolated_cache: Path) -> None:
    rng = np.random.RandomState(2)
    words = [f"w{i}" for i in range(300)] + ["naïve", "Über", "-5", "1.5"]
    text = _glove_text(rng, words, 7)
    # Odd numbers GluonNLP's float() reads too: exponents, signs, no leading digit.
    text += "odd 1e-05 -2.5E+3 .5 -.25 5. +1.5 -0.0\nw3 9 9 9 9 9 9 9\n"
    path = tmp_path / "glove.txt"
    path.write_text(text, encoding="utf-8")
    ours = load_embedding_file(path)
    theirs = _reference(path)
    _assert_same(ours, theirs, ["w0", "odd", "naïve", "missing", "w3"])
    assert np.signbit(ours["odd"][-1])  # -0.0 stays negative, as float() gives it


def test_word2vec_header_fasttext_trailing_spaces_and_crlf(tmp_path: Path, isolated_cache: Path) -> None:
    path = tmp_path / "wiki.vec"
    path.write_bytes(b"3 2\r\nthe 0.25 -1.5 \r\ncat 2.0 3.0 \r\ndog 1 2\r\n")
    _assert_same(load_embedding_file(path), _reference(path), ["the", "dog", "bird"])


@pytest.mark.parametrize("block", [64, 1 << 22])
def test_blocks_split_anywhere_give_the_same_table(tmp_path: Path, isolated_cache: Path, monkeypatch, block) -> None:
    import gluon_nlp_core.text.embedding_files as files

    monkeypatch.setattr(files, "_BLOCK", block)
    rng = np.random.RandomState(3)
    path = tmp_path / f"g{block}.txt"
    path.write_text(_glove_text(rng, [f"x{i}" for i in range(50)] + ["x7"], 5))  # x7 twice: first wins
    _assert_same(load_embedding_file(path), _reference(path), ["x7", "x49"])


def test_large_files_parsed_by_several_processes_give_the_same_table(tmp_path: Path, isolated_cache: Path,
                                                                     monkeypatch) -> None:
    import gluon_nlp_core.text.embedding_files as files

    rng = np.random.RandomState(4)
    path = tmp_path / "big.vec"
    text = _glove_text(rng, [f"y{i}" for i in range(400)], 6)
    # fastText's trailing spaces, a word seen in an earlier block, an odd number: careful paths
    text = text.replace("\n", " \n", 50) + "y3 1 2 3 4 5 6\nodd 1e-05 -2.5E+3 .5 -.25 5. +1.5\n"
    path.write_text(text)
    assert files._workers(path) == 1  # a small file: no processes to start
    monkeypatch.setattr(files, "_BLOCK", 256)  # many blocks, some in flight at once
    monkeypatch.setattr(files, "_workers", lambda path: 2)
    _assert_same(load_embedding_file(path), _reference(path), ["y0", "y3", "y399", "odd", "missing"])


def test_unknown_token_options_equal_gluonnlp(tmp_path: Path, isolated_cache: Path) -> None:
    path = tmp_path / "g.txt"
    path.write_text("a 1.0 2.0\n<unk> 7.0 8.0\nb 3.0 4.0\n")
    for kwargs in ({}, {"unknown_token": None}, {"unknown_token": "<oov>"}):
        _assert_same(load_embedding_file(path, **kwargs), _reference(path, **kwargs), ["a", "b"])
    ones = load_embedding_file(path, unknown_token="<oov>", init_unknown_vec=np.ones)
    np.testing.assert_array_equal(ones["zzz"], [1.0, 1.0])
    with pytest.raises(KeyError, match="no unknown token"):
        load_embedding_file(path, unknown_token=None)["zzz"]
    with pytest.raises(ValueError, match="init_unknown_vec is None"):
        load_embedding_file(path, unknown_token="<oov>", init_unknown_vec=None)


def test_lower_fallback_equals_gluonnlp_unknown_lookup(tmp_path: Path, isolated_cache: Path) -> None:
    path = tmp_path / "g.txt"
    path.write_text("paris 1.0 2.0\nParis 5.0 6.0\nlondon 3.0 4.0\n")
    ours = load_embedding_file(path, lower_fallback=True)
    theirs = _reference(path)

    class Lower:  # GluonNLP's hook for unknown tokens, looking them up lower-cased
        def __contains__(self, token):
            return token.lower() in theirs.token_to_idx

        def __getitem__(self, token):
            return theirs.idx_to_vec[theirs.token_to_idx[token.lower()]]

    theirs.unknown_lookup = Lower()
    tokens = ["Paris", "LONDON", "London", "rome"]
    np.testing.assert_array_equal(ours[tokens], theirs[tokens].asnumpy())
    assert not load_embedding_file(path)["LONDON"].any()


def test_matrix_follows_the_vocab_as_gluonnlp_set_embedding(tmp_path: Path, isolated_cache: Path) -> None:
    path = tmp_path / "g.txt"
    path.write_text("<unk> 9.0 9.0\nthe 1.0 2.0\ncat 3.0 4.0\n")
    counts = {"cat": 3, "the": 2, "dog": 1}
    ours = load_embedding_file(path).matrix(Vocab(counts))
    vocab = gluonnlp.Vocab(gluonnlp.data.count_tokens(["cat"] * 3 + ["the"] * 2 + ["dog"]))
    vocab.set_embedding(_reference(path))
    assert Vocab(counts).idx_to_token == vocab.idx_to_token
    np.testing.assert_array_equal(ours, vocab.embedding.idx_to_vec.asnumpy())


def test_the_converted_copy_follows_the_file(tmp_path: Path, isolated_cache: Path) -> None:
    path = tmp_path / "g.txt"
    path.write_text("a 1.0 2.0\n")
    assert load_embedding_file(path)["a"].tolist() == [1.0, 2.0]
    path.write_text("a 3.0 4.0 5.0\n")  # a new size and mtime: converted again
    assert load_embedding_file(path)["a"].tolist() == [3.0, 4.0, 5.0]


# -- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, line, what",
    [
        ("a 1.0 2.0\nb 1.0\n", 2, "expected a word and 2 numbers"),
        ("a 1.0 2.0\nb 1.0  2.0\n", 2, "single spaces"),
        ("a 1.0 2.0\nb 1.0 2.0\nc 1.0 x.5\n", 3, "is not a number"),
        ("a 1.0 2.0\nb 0x1. 2.0\n", 2, "is not a number"),
    ],
)
def test_malformed_files_name_the_file_and_line(tmp_path: Path, isolated_cache: Path, text, line, what) -> None:
    path = tmp_path / "bad.txt"
    path.write_text(text)
    with pytest.raises(ValueError, match=rf"bad\.txt:{line}: .*{what}"):
        load_embedding_file(path)


def test_empty_and_missing_files(tmp_path: Path, isolated_cache: Path) -> None:
    (tmp_path / "empty.txt").write_text("\n")
    with pytest.raises(ValueError, match="holds no word vectors"):
        load_embedding_file(tmp_path / "empty.txt")
    with pytest.raises(FileNotFoundError, match="nope.txt"):
        load_embedding_file(tmp_path / "nope.txt")


def test_a_size_mismatch_names_both_sizes() -> None:
    with pytest.raises(ValueError, match="3 tokens but 2 vectors"):
        WordEmbedding(["a", "b", "c"], np.zeros((2, 4), np.float32))
