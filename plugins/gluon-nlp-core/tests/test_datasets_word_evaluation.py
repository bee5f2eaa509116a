"""The word similarity and analogy sets on tiny generated files in each published layout, read
by name through the hub and by GluonNLP 0.10's own classes from the same folder (only its
download step is skipped: the fixtures cannot carry the published hashes)."""

from __future__ import annotations

import hashlib
import io
import tarfile
import zipfile
from pathlib import Path

import pytest

import gluon_hub
import gluon_hub.compat  # noqa: F401  (numpy aliases for mxnet, before gluonnlp)
from gluon_hub import FileRef
from gluon_hub.cache import DownloadError
from gluon_hub.publishing import serve
from gluon_nlp_core._data_specs import _groups, dataset_files
from gluon_nlp_core.datasets._archives import extract_checked
from gluon_nlp_core.datasets.word_evaluation import member_text
from gluon_nlp_core.text.embedding_evaluation import cosine_similarity

from gluonnlp import _constants as nlp_constants
from gluonnlp.data import word_embedding_evaluation as nlp_eval
from gluonnlp.data.registry import _REGSITRY_NAME_KWARGS as NLP_REGISTERED
from mxnet.gluon.utils import _get_repo_file_url

NAMES = {"WordSim353": "wordsim353", "MEN": "men", "RadinskyMTurk": "radinsky_mturk",
         "RareWords": "rare_words", "SimLex999": "simlex999", "SimVerb3500": "simverb3500",
         "SemEval17Task2": "semeval17_task2", "BakerVerb143": "baker_verb143",
         "YangPowersVerb130": "yang_powers_verb130", "GoogleAnalogyTestSet": "google_analogy",
         "BiggerAnalogyTestSet": "bigger_analogy"}


def _write(root: Path, path: str, text: str) -> Path:
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(text.encode("utf-8"))
    return target


def _gluonnlp(cls_name: str, root: Path, *args, **kwargs) -> list:
    """GluonNLP's class reading what ``root`` holds, its download step skipped."""
    base = getattr(nlp_eval, cls_name)
    local = type(cls_name, (base,), {"_download_data": lambda self: None})
    return list(local(*args, root=str(root), **kwargs))


def _member(name: str, key: str) -> str:
    return _groups()[name]["members"][key]["path"]


# Each file in its real layout: tabs or spaces as published, CRLF endings on some, blank
# lines, a duplicate WordSim pair across its two files, mixed case and non-ASCII words.
def _write_similarity_sets(root: Path) -> None:
    _write(root, _member("wordsim353", "similarity"),
           "tiger\tcat\t7.35\nplane\tcar\t5.77\r\n\nmoney\tcash\t9.15\n")
    _write(root, _member("wordsim353", "relatedness"),
           "computer\tkeyboard\t7.62\nmoney\tcash\t9.15\nJerusalem\tIsrael\t8.46\n")
    for segment, count in (("full", 4), ("dev", 2), ("test", 3)):
        rows = [f"sun-n sunlight-{'nvj'[i % 3]} {50 - i}.000000" for i in range(count)]
        _write(root, _member("men", segment), "\n".join(rows + ["automobile-n car-n 50.000000"]) + "\n")
    _write(root, "Mtruk.csv", "episcopal,russia,2.75\r\nwater,shortage,2.714285714\r\n\r\n")
    _write(root, _member("rare_words", "all"),
           "squishing\tsquirt\t5.88\t7\t7\t6\t1\t3\t6\t7\t6\t7\t8\nundated\tunknown\t2.0\t1\t3\n")
    _write(root, _member("simlex999", "all"),
           "word1\tword2\tPOS\tSimLex999\tconc(w1)\tconc(w2)\n"
           "old\tnew\tA\t1.58\t2.72\t2.81\nsmart\tintelligent\tA\t9.2\t1.75\t2.46\n")
    for segment, count in (("full", 4), ("dev", 2), ("test", 3)):
        rows = [f"take\tremove{i}\tV\t{6.81 - i:.2f}\tHYPER/HYPONYMS" for i in range(count)]
        _write(root, _member("simverb3500", segment), "\n".join(rows) + "\n")
    for segment in ("trial", "test"):
        for language in ("en", "es", "de", "it", "fa"):
            _write(root, _member("semeval17_task2", f"{segment}/{language}/data"),
                   f"sunset\tstring\nStraße\t{language}\n")
            _write(root, _member("semeval17_task2", f"{segment}/{language}/keys"), "0.05\n3.5\n")
    _write(root, _member("baker_verb143", "all"),
           "happen\tsay\t" + "\t".join(["0.1"] * 10) + "\t0.19\t0.02\n"
           "keep\thold\t" + "\t".join(["0.8"] * 10) + "\t0.8\t0.1\n")


SIMILARITY_CASES = [("WordSim353", s) for s in ("all", "similarity", "relatedness")] + [
    ("MEN", s) for s in ("full", "dev", "test")] + [
    ("SimVerb3500", s) for s in ("full", "dev", "test")] + [
    ("RadinskyMTurk", None), ("RareWords", None), ("SimLex999", None), ("BakerVerb143", None),
    ("YangPowersVerb130", None)]


@pytest.mark.parametrize("cls_name, segment", SIMILARITY_CASES)
def test_similarity_sets_read_as_gluonnlp_does(tmp_path, cls_name, segment):
    _write_similarity_sets(tmp_path)
    name = NAMES[cls_name]
    ours = gluon_hub.load_dataset(name, segment=segment, root=str(tmp_path))
    theirs = _gluonnlp(cls_name, tmp_path, *([segment] if segment else []))
    assert list(ours) == theirs and len(ours) >= 2
    assert all(isinstance(s[2], float) and len(s) == 3 for s in ours)
    assert (ours.min, ours.max) == (getattr(nlp_eval, cls_name).min, getattr(nlp_eval, cls_name).max)


@pytest.mark.parametrize("segment", ["trial", "test"])
@pytest.mark.parametrize("language", ["en", "es", "de", "it", "fa"])
def test_semeval17_task2_reads_as_gluonnlp_does(tmp_path, segment, language):
    _write_similarity_sets(tmp_path)
    ours = gluon_hub.load_dataset("semeval17_task2", segment=segment, language=language, root=str(tmp_path))
    assert list(ours) == _gluonnlp("SemEval17Task2", tmp_path, segment, language)
    assert list(ours) == [["sunset", "string", 0.05], ["Straße", language, 3.5]]
    assert (ours.min, ours.max) == (nlp_eval.SemEval17Task2.min, nlp_eval.SemEval17Task2.max)


def test_similarity_samples_by_hand(tmp_path):
    _write_similarity_sets(tmp_path)
    wordsim = gluon_hub.load_dataset("wordsim353", root=str(tmp_path))
    assert len(wordsim) == 5 and wordsim[0] == ["Jerusalem", "Israel", 8.46]  # deduplicated, sorted
    men = gluon_hub.load_dataset("men", segment="dev", root=str(tmp_path))
    assert men[-1] == ["automobile", "car", 50.0]
    assert gluon_hub.load_dataset("simlex999", root=str(tmp_path))[0] == ["old", "new", 1.58]
    assert gluon_hub.load_dataset("baker_verb143", root=str(tmp_path))[1] == ["keep", "hold", 0.8]
    yang = gluon_hub.load_dataset("yang_powers_verb130")
    assert len(yang) == 130 and yang[0] == ["brag", "boast", 4.0] and yang[-1][2] == 0.0


def test_files_beside_each_other_or_the_archive_itself_are_read(tmp_path):
    """``root`` may hold the unpacked layout, the bare files, or the published archive."""
    rows = "squishing\tsquirt\t5.88\nundated\tunknown\t2.0\n"
    expected = [["squishing", "squirt", 5.88], ["undated", "unknown", 2.0]]
    (tmp_path / "flat").mkdir()
    _write(tmp_path / "flat", "rw.txt", rows)
    assert list(gluon_hub.load_dataset("rare_words", root=str(tmp_path / "flat"))) == expected
    (tmp_path / "zip").mkdir()
    with zipfile.ZipFile(tmp_path / "zip" / "rw.zip", "w") as zf:
        zf.writestr("rw/rw.txt", rows)
    assert list(gluon_hub.load_dataset("rare_words", root=str(tmp_path / "zip"))) == expected
    (tmp_path / "tar").mkdir()
    _tar(tmp_path / "tar" / "MEN.tar.gz", {"MEN/MEN_dataset_lemma_form.test": b"sun-n sky-n 38.0\n"})
    assert list(gluon_hub.load_dataset("men", segment="test", root=str(tmp_path / "tar"))) == [["sun", "sky", 38.0]]


def _tar(path: Path, members: dict[str, bytes]) -> None:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


# ----------------------------------------------------------------------------- analogy

GOOGLE = """: capital-common-countries
Athens Greece Baghdad Iraq
Athens Greece Bangkok Thailand
: family
boy girl brother sister
: gram1-adjective-to-adverb
amazing amazingly apparent apparently
: gram8-plural
banana bananas bird birds
"""


@pytest.mark.parametrize("kwargs", [
    {}, {"group": "syntactic"}, {"group": "semantic"}, {"category": "gram8-plural"},
    {"group": "semantic", "category": "family"}, {"group": "syntactic", "category": "family"},
    {"lowercase": False}, {"category": "capital-common-countries", "lowercase": False},
])
def test_google_analogy_reads_as_gluonnlp_does(tmp_path, kwargs):
    _write(tmp_path, "questions-words.txt", GOOGLE)
    ours = gluon_hub.load_dataset("google_analogy", root=str(tmp_path), **kwargs)
    assert list(ours) == _gluonnlp("GoogleAnalogyTestSet", tmp_path, **kwargs)
    assert all(len(sample) == 4 for sample in ours)


def test_google_analogy_samples_by_hand(tmp_path):
    _write(tmp_path, "questions-words.txt", GOOGLE)
    everything = gluon_hub.load_dataset("google_analogy", root=str(tmp_path))
    assert len(everything) == 5 and everything[0] == ["athens", "greece", "baghdad", "iraq"]
    syntactic = gluon_hub.load_dataset("google_analogy", root=str(tmp_path), group="syntactic")
    assert syntactic[0] == ["amazing", "amazingly", "apparent", "apparently"]


def _write_bats(root: Path) -> None:
    """Every category file, a few pairs each; alternatives after '/', one repeated row."""
    for code in _groups()["bigger_analogy"]["members"]:
        rows = [f"{code.lower()}a\t{code.lower()}b/{code.lower()}bb", f"art{code}\tartless",
                "arm\tarmless/armfree"]
        if code == "I01":
            rows.append("arm\tarmless/armfree")
        _write(root, _member("bigger_analogy", code), "\n".join(rows) + "\n")


@pytest.mark.parametrize("category", [None, "I01", "L10"])
@pytest.mark.parametrize("form_analogy_pairs", [True, False])
@pytest.mark.parametrize("drop_alternative_solutions", [True, False])
def test_bats_reads_as_gluonnlp_does(tmp_path, category, form_analogy_pairs, drop_alternative_solutions):
    _write_bats(tmp_path)
    kwargs = {"category": category, "form_analogy_pairs": form_analogy_pairs,
              "drop_alternative_solutions": drop_alternative_solutions}
    ours = gluon_hub.load_dataset("bigger_analogy", root=str(tmp_path), **kwargs)
    assert list(ours) == _gluonnlp("BiggerAnalogyTestSet", tmp_path, **kwargs)


def test_bats_samples_by_hand(tmp_path):
    _write_bats(tmp_path)
    pairs = gluon_hub.load_dataset("bigger_analogy", root=str(tmp_path), category="E01",
                                   form_analogy_pairs=False, drop_alternative_solutions=False)
    assert pairs[0] == ["e01a", ["e01b", "e01bb"]]
    analogies = gluon_hub.load_dataset("bigger_analogy", root=str(tmp_path), category="E01")
    assert len(analogies) == 6 and analogies[0] == ["e01a", "e01b", "artE01", "artless"]
    assert len(gluon_hub.load_dataset("bigger_analogy", root=str(tmp_path))) == 39 * 6 + 10


def test_an_embedding_is_evaluated_on_a_loaded_set(tmp_path):
    import numpy as np

    _write_similarity_sets(tmp_path)
    pairs = gluon_hub.load_dataset("simlex999", root=str(tmp_path))
    vectors = {"old": [1.0, 0.0], "new": [0.0, 1.0], "smart": [1.0, 1.0], "intelligent": [1.0, 1.0]}
    first = np.array([vectors[a] for a, _, _ in pairs])
    second = np.array([vectors[b] for _, b, _ in pairs])
    np.testing.assert_allclose(np.asarray(cosine_similarity(first, second)).ravel(), [0.0, 1.0], atol=1e-6)


# ----------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("name, path, text, line, match", [
    ("wordsim353", "wordsim353_sim_rel/wordsim_relatedness_goldstandard.txt",
     "tiger\tcat\t7.35\n\nplane\tcar\n", 3, r"2 field\(s\).*expected word1 word2 score"),
    ("rare_words", "rw/rw.txt", "a\tb\t1.0\na\tb\tlots\n", 2, "score 'lots' .* is not a number"),
    ("simlex999", "SimLex-999/SimLex-999.txt", "word1\tword2\tPOS\tSimLex999\nold\tnew\tA\n", 2,
     "expected word1 word2 POS SimLex999"),
    ("radinsky_mturk", "Mtruk.csv", "a,b,1\r\na;b;2\r\n", 2, r"1 field\(s\)"),
    ("google_analogy", "questions-words.txt", ": family\nboy girl brother sister\nking queen\n", 3,
     "2 word.*expected four"),
    ("google_analogy", "questions-words.txt", "boy girl brother sister\n", 1, "before the first"),
])
def test_malformed_lines_name_the_file_and_line(tmp_path, name, path, text, line, match):
    target = _write(tmp_path, path, text)
    with pytest.raises(ValueError, match=match) as exc:
        gluon_hub.load_dataset(name, root=str(tmp_path))
    assert f"{target}:{line}:" in str(exc.value)


def test_bats_and_semeval_bad_lines_name_the_file_and_line(tmp_path):
    target = _write(tmp_path, _member("bigger_analogy", "I03"), "big\tbigger\nlonely\n")
    with pytest.raises(ValueError, match="expected a word and its answer") as exc:
        gluon_hub.load_dataset("bigger_analogy", category="I03", root=str(tmp_path))
    assert f"{target}:2:" in str(exc.value)
    _write(tmp_path, _member("semeval17_task2", "trial/de/data"), "a\tb\nc\td\n")
    keys = _write(tmp_path, _member("semeval17_task2", "trial/de/keys"), "1.0\n")
    with pytest.raises(ValueError, match="1 score line.*for the 2 pair line") as exc:
        gluon_hub.load_dataset("semeval17_task2", language="de", root=str(tmp_path))
    assert f"{keys}:2:" in str(exc.value)
    keys.write_text("1.0\nhigh\n")
    with pytest.raises(ValueError, match="score 'high' is not a number") as exc:
        gluon_hub.load_dataset("semeval17_task2", language="de", root=str(tmp_path))
    assert f"{keys}:2:" in str(exc.value)


def test_unknown_choices_list_the_valid_ones(tmp_path):
    with pytest.raises(ValueError, match="no segment 'train'; segments: all, similarity, relatedness"):
        gluon_hub.load_dataset("wordsim353", segment="train", root=str(tmp_path))
    with pytest.raises(ValueError, match="no segment 'train'; segments: full, dev, test"):
        gluon_hub.load_dataset("men", segment="train", root=str(tmp_path))
    with pytest.raises(ValueError, match="no language 'fr'; choose one of: en, es, de, it, fa"):
        gluon_hub.load_dataset("semeval17_task2", language="fr", root=str(tmp_path))
    with pytest.raises(ValueError, match="no category 'gram10'; choose one of: capital-common-countries"):
        gluon_hub.load_dataset("google_analogy", category="gram10", root=str(tmp_path))
    with pytest.raises(ValueError, match="no group 'lexical'; choose one of: syntactic, semantic"):
        gluon_hub.load_dataset("google_analogy", group="lexical", root=str(tmp_path))
    with pytest.raises(ValueError, match="no category 'X01'; choose one of: D01, D02"):
        gluon_hub.load_dataset("bigger_analogy", category="X01", root=str(tmp_path))
    with pytest.raises(FileNotFoundError, match="neither rw/rw.txt .* nor rw.zip"):
        gluon_hub.load_dataset("rare_words", root=str(tmp_path))


# ----------------------------------------------------------------------------- the cache


@pytest.fixture
def isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for var in ("GLUON_HUB_OFFLINE", "GLUON_HUB_MIRRORS", "GLUON_HUB_SHARED_CACHE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("GLUON_HUB_HOME", str(tmp_path / "hub"))
    monkeypatch.setenv("GLUON_HUB_RETRIES", "0")
    monkeypatch.setenv("GLUON_HUB_CONNECT_TIMEOUT", "5")
    return tmp_path / "hub"


def test_a_registered_archive_is_asked_of_the_mirror_and_its_sha1_checked(tmp_path, isolated_cache, monkeypatch):
    # A tarball served under WordSim353's published mirror path that is not the published
    # file is refused: the name resolved to the right path and sha1, and nothing is kept.
    mirror = tmp_path / "mirror"
    (mirror / "gluon/dataset/ws353").mkdir(parents=True)
    _tar(mirror / "gluon/dataset/ws353/ws353simrel.tar.gz",
         {"wordsim353_sim_rel/wordsim_similarity_goldstandard.txt": b"tiger\tcat\t7.35\n"})
    with serve(mirror) as server:
        monkeypatch.setenv("GLUON_HUB_MIRRORS", server.url)
        with pytest.raises(DownloadError, match="1b9ca7f4d61682dea0004acbd48ce74275d5bfff") as exc:
            gluon_hub.load_dataset("wordsim353", segment="similarity")
    assert f"{server.url.rstrip('/')}/gluon/dataset/ws353/ws353simrel.tar.gz" in str(exc.value)
    assert not (isolated_cache / "extracted" / "wordsim353").exists()


def test_an_archive_comes_through_the_cache_and_each_member_is_checked(tmp_path, isolated_cache, monkeypatch):
    """The cache path of every archived set: the archive is fetched over HTTP with its sha1
    checked, a member is kept only with its published sha1, and then read without the server."""
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    good, bad = b"sun-n sky-n 38.0\n", b"not the published file\n"
    _tar(mirror / "MEN.tar.gz", {"MEN/MEN_dataset_lemma_form.test": good, "MEN/licence.txt": bad})
    ref = FileRef(hash="sha1:" + hashlib.sha1((mirror / "MEN.tar.gz").read_bytes()).hexdigest(),
                  filename="MEN.tar.gz")
    from gluon_nlp_core.datasets._base import dataset_file

    with serve(mirror) as server:
        monkeypatch.setenv("GLUON_HUB_MIRRORS", server.url)
        archive = dataset_file(ref, None, [])
    assert isolated_cache in archive.parents
    out = isolated_cache / "extracted" / "men"
    with pytest.raises(ValueError, match="has sha1 .* the published one is 0{40}"):
        extract_checked(archive, "MEN/licence.txt", "0" * 40, out / "MEN/licence.txt")
    assert not (out / "MEN/licence.txt").exists()
    target = extract_checked(archive, "MEN/MEN_dataset_lemma_form.test", hashlib.sha1(good).hexdigest(),
                             out / "MEN/MEN_dataset_lemma_form.test")
    assert target.read_bytes() == good
    with pytest.raises(FileNotFoundError, match="holds no file 'MEN/missing'"):
        extract_checked(archive, "MEN/missing", "0" * 40, out / "missing")
    # The member extracted under the registered path is what load_dataset reads from the cache.
    (out / _member("men", "test")).parent.mkdir(parents=True, exist_ok=True)
    (out / _member("men", "test")).write_bytes(good)
    assert member_text("men", "test", None)[0] == good.decode()
    assert list(gluon_hub.load_dataset("men", segment="test")) == [["sun", "sky", 38.0]]


# ----------------------------------------------------------------------------- the registry


def test_files_hashes_and_urls_are_gluonnlps():
    for cls_name, name in NAMES.items():
        cls = getattr(nlp_eval, cls_name)
        spec = gluon_hub.dataset_info(name)
        assert spec.factory.endswith(f"word_evaluation:{cls_name}")
        registered = NLP_REGISTERED[cls].get("segment")
        if registered:
            assert list(spec.segments) == list(registered)
        if cls_name == "YangPowersVerb130":
            scores = [4] * 26 + [3] * 26 + [2] * 26 + [1] * 26 + [0] * 26
            assert _groups()[name]["pairs"] == [list(p) for p in zip(cls._words1, cls._words2, scores)]
            assert spec.files == ()
            continue
        files = dataset_files(name)
        if "archive" not in files:  # one plain file
            (ref,) = files.values()
            assert ref.hash == f"sha1:{cls._checksums[cls._archive_file[0]]}" == f"sha1:{cls._archive_file[1]}"
            assert ref.urls == (cls._url,)
            continue
        ref = files["archive"]
        assert ref.hash == f"sha1:{cls._archive_file[1]}" and ref.urls == (cls._url,)
        if cls._namespace:  # GluonNLP fetches these from its mirror
            assert "https://apache-mxnet.s3-accelerate.dualstack.amazonaws.com/" + ref.filename == \
                _get_repo_file_url(cls._namespace, cls._archive_file[0])
        assert spec.files == (ref,)
        for member in _groups()[name]["members"].values():
            assert cls._checksums[member["path"]] == member["sha1"]


def test_members_are_the_files_gluonnlp_reads():
    paths = {name: {m["path"] for m in _groups()[name]["members"].values()}
             for name in NAMES.values() if "members" in _groups()[name]}
    assert paths["wordsim353"] == {f"wordsim353_sim_rel/{f}" for f, _ in nlp_eval.WordSim353._data_file.values()}
    assert paths["men"] == set(nlp_eval.MEN._segment_file.values())
    assert paths["simverb3500"] == set(nlp_eval.SimVerb3500._segment_file.values())
    semeval = nlp_eval.SemEval17Task2
    assert paths["semeval17_task2"] == {
        template.format(segment=s, language=lang) for s in semeval.segments for lang in semeval.languages
        for template in (semeval._datatemplate, semeval._keytemplate)}
    assert paths["bigger_analogy"] == set(nlp_constants.BATS_CHECKSUMS)
    assert sorted(_groups()["bigger_analogy"]["members"]) == sorted(nlp_constants.BATS_CATEGORIES)
    assert _groups()["google_analogy"]["categories"] == nlp_constants.GOOGLEANALOGY_CATEGORIES
    assert paths["rare_words"] == set(nlp_eval.RareWords._checksums)
    assert paths["baker_verb143"] == set(nlp_eval.BakerVerb143._checksums)
    tasks = {gluon_hub.dataset_info(n).task for n in NAMES.values()}
    assert tasks == {"word-similarity", "word-analogy"}
