"""WMT, CoNLL/UD, ATIS/SNIPS and the LM corpora on tiny generated files in the published
formats, read by name through the hub and compared with GluonNLP 0.10's classes reading the
same files (only GluonNLP's download step is skipped: the fixtures cannot carry the hashes)."""

from __future__ import annotations

import gzip
import io
import os
import random
import tarfile
import zipfile
from pathlib import Path

import pytest

import gluon_hub
import gluon_hub.compat  # noqa: F401  (numpy aliases for mxnet, before gluonnlp)
from gluon_nlp_core._data_specs import _groups, dataset_files
from gluon_nlp_core.datasets import wmt
from gluon_nlp_core.datasets.corpora import GBW

import gluonnlp
from gluonnlp.data import conll as nlp_conll, intent_slot as nlp_intent, translation as nlp_translation
from gluonnlp.data.corpora import google_billion_word as nlp_gbw, large_text_compression_benchmark as nlp_ltcb

WORDS = ["the", "Haus", "straße", "ähnlich", "naïve", "x@@", "y", "--", "(", ")", "Zürich", "über"]


def sentence(rng: random.Random, tag: str) -> str:
    return " ".join([tag] + [rng.choice(WORDS) for _ in range(rng.randint(1, 6))])


# ----------------------------------------------------------------------------- WMT

WMT = {"wmt2014": "WMT2014", "wmt2014_bpe": "WMT2014BPE", "wmt2016": "WMT2016",
       "wmt2016_bpe": "WMT2016BPE"}
DATASET_CLASSES = {name: getattr(wmt, cls) for name, cls in WMT.items()}


def _write_wmt(folder: Path, name: str) -> None:
    """Every text file of the dataset: the same number of lines per segment, each line
    naming its file, with an empty line on one side, CRLF endings and padding spaces."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(name)
    for file_name, ref in dataset_files(name).items():
        if file_name == "vocab":
            vocab = gluonnlp.Vocab(gluonnlp.data.count_tokens(WORDS))
            (folder / ref.extract).write_text(vocab.to_json(), encoding="utf-8")
            continue
        lines = [sentence(rng, file_name) for _ in range(4)]
        lines[1 if file_name.endswith(".en") else 2] = "   "
        lines[3] = "  " + lines[3] + " \t"
        (folder / file_name).write_bytes("\r\n".join(lines).encode("utf-8") + b"\r\n")


def _gluonnlp_wmt(cls_name: str, root: Path, **kwargs) -> list:
    base = getattr(nlp_translation, cls_name)

    def fetch(self, file_name_hashs):  # the local files, not the mirror
        return [os.path.join(self._root, file_name) for file_name, _ in file_name_hashs]

    local = type(cls_name, (base,), {"_fetch_data_path": fetch})
    return local(root=str(root), **kwargs)


@pytest.mark.parametrize("name", sorted(WMT))
def test_wmt_reads_as_gluonnlp_does(tmp_path, name):
    _write_wmt(tmp_path / "de_en", name)  # GluonNLP reads root/de_en
    segments = gluon_hub.dataset_info(name).segments
    options = [{}, {"src_lang": "de", "tgt_lang": "en"}]
    if name.startswith("wmt2014"):
        options += [{"full": True}, {"full": True, "src_lang": "de", "tgt_lang": "en"}]
    for kwargs in options:
        for segment in segments:
            ours = gluon_hub.load_dataset(name, segment=segment, root=str(tmp_path / "de_en"), **kwargs)
            theirs = _gluonnlp_wmt(WMT[name], tmp_path, segment=segment, **kwargs)
            assert list(ours) == list(theirs) and len(ours) == 2, (segment, kwargs)
    both = DATASET_CLASSES[name](segment=["train", segments[-1]], root=str(tmp_path / "de_en"))
    assert list(both) == list(_gluonnlp_wmt(WMT[name], tmp_path, segment=["train", segments[-1]]))
    first = gluon_hub.load_dataset(name, segment="train", root=str(tmp_path / "de_en"))[0]
    suffix = ".tok.clean.bpe.32000" if name.endswith("bpe") else ""
    assert first[0].startswith(f"train{suffix}.en ") and first[1].startswith(f"train{suffix}.de ")


def test_wmt_filtered_newstest2014_follows_the_direction(tmp_path):
    _write_wmt(tmp_path, "wmt2014")
    en_de = gluon_hub.load_dataset("wmt2014", segment="newstest2014", root=str(tmp_path))
    de_en = gluon_hub.load_dataset("wmt2014", segment="newstest2014", root=str(tmp_path),
                                   src_lang="de", tgt_lang="en")
    full = gluon_hub.load_dataset("wmt2014", segment="newstest2014", root=str(tmp_path), full=True)
    assert [s.split()[0] for s in en_de[0]] == ["newstest2014.src.en", "newstest2014.ref.de"]
    assert [s.split()[0] for s in de_en[0]] == ["newstest2014.src.de", "newstest2014.ref.en"]
    assert [s.split()[0] for s in full[0]] == ["newstest2014.full.en", "newstest2014.full.de"]


def test_wmt_bpe_vocabulary_and_option_checks(tmp_path):
    _write_wmt(tmp_path, "wmt2016_bpe")
    data = gluon_hub.load_dataset("wmt2016_bpe", segment="newstest2015", root=str(tmp_path))
    reference = gluonnlp.Vocab(gluonnlp.data.count_tokens(WORDS))
    assert data.src_vocab.idx_to_token == reference.idx_to_token == data.tgt_vocab.idx_to_token
    with pytest.raises(ValueError, match="'en' and 'de'"):
        gluon_hub.load_dataset("wmt2016_bpe", segment="train", root=str(tmp_path), tgt_lang="fr")
    with pytest.raises(ValueError, match="no segment 'newstest2009'"):
        wmt.WMT2016BPE(segment=["train", "newstest2009"], root=str(tmp_path))
    _write_wmt(tmp_path, "wmt2016")
    with pytest.raises(AttributeError, match="no vocabulary"):
        _ = gluon_hub.load_dataset("wmt2016", segment="newstest2016", root=str(tmp_path)).src_vocab


def test_wmt_misaligned_files_name_the_file_and_line(tmp_path):
    _write_wmt(tmp_path, "wmt2016")
    with open(tmp_path / "newstest2013.de", "a", encoding="utf-8") as f:
        f.write("ein Satz zu viel\n")
    with pytest.raises(ValueError, match="no matching line") as exc:
        gluon_hub.load_dataset("wmt2016", segment="newstest2013", root=str(tmp_path))
    assert f"{tmp_path / 'newstest2013.de'}:5:" in str(exc.value)


def _published_tables(monkeypatch, module, base, cls, **kwargs) -> dict:
    """GluonNLP's file table of ``cls``, its reading step switched off."""
    monkeypatch.setattr(getattr(module, base), "__init__", lambda self, *a, **k: None)
    obj = cls.__new__(cls)
    cls.__init__(obj, **kwargs)
    return obj.__dict__


@pytest.mark.parametrize("name", sorted(WMT))
def test_wmt_hashes_are_gluonnlps(monkeypatch, name):
    cls = getattr(nlp_translation, WMT[name])
    ours = dataset_files(name)
    variants = [{}, {"src_lang": "de", "tgt_lang": "en"}] + ([{"full": True}] if "2014" in name else [])
    seen = set()
    for kwargs in variants:
        table = _published_tables(monkeypatch, nlp_translation, "_TranslationDataset", cls, **kwargs)
        archive, archive_sha1 = table["_archive_file"]["de_en"]
        for key, (file_name, sha1) in table["_data_file"]["de_en"].items():
            ref = ours["vocab" if key.startswith("vocab") else file_name]
            seen.add(ref)
            assert (ref.hash, ref.extract, ref.archive_hash) == (f"sha1:{sha1}", file_name, f"sha1:{archive_sha1}")
            assert ref.filename == f"gluon/dataset/{name.split('_')[0]}/{archive}"
    assert seen == set(ours.values())


# ----------------------------------------------------------------------------- CoNLL / UD


def _rows(rng: random.Random, columns: int, sentences: int, tags: list[str]) -> str:
    blocks = []
    for _ in range(sentences):
        rows = [" ".join([rng.choice(WORDS)] + [rng.choice(tags) for _ in range(columns - 1)])
                for _ in range(rng.randint(1, 4))]
        blocks.append("\n".join(rows))
    return "\n\n".join(blocks) + "\n\n\n"


def _gluonnlp_conll(cls_name: str, root: Path, *args) -> list:
    base = getattr(nlp_conll, cls_name)

    def get_data(self):
        return [os.path.join(self._root, file_name) for file_name, _ in self._get_data_file_hash()]

    return list(type(cls_name, (base,), {"_get_data": get_data})(*args, root=str(root)))


def test_conll2000_2001_2002_read_as_gluonnlp_does(tmp_path):
    rng = random.Random(0)
    (tmp_path / "test.txt.gz").write_bytes(gzip.compress(_rows(rng, 3, 3, ["NN", "B-NP", "O"]).encode()))
    (tmp_path / "testa2").write_text(_rows(rng, 4, 3, ["NN", "(S*", "*", "X"]), encoding="utf-8")
    ned = _rows(rng, 3, 2, ["Adj", "B-PER"]) + "España N B-LOC\nSeñor N I-LOC\n"
    (tmp_path / "ned.testb.gz").write_bytes(gzip.compress(ned.encode("latin-1")))
    cases = [("conll2000", "CoNLL2000", {}, ()), ("conll2001", "CoNLL2001", {"part": 2}, (2,)),
             ("conll2002", "CoNLL2002", {"lang": "ned"}, ("ned",))]
    for (name, cls_name, kwargs, args), segment in zip(cases, ["test", "testa", "testb"]):
        ours = gluon_hub.load_dataset(name, segment=segment, root=str(tmp_path), **kwargs)
        theirs = _gluonnlp_conll(cls_name, tmp_path, *args, segment)
        assert list(ours) == theirs and len(theirs) >= 2, name
    assert len(ours[0]) == 3 and ours[-1][0] == ["España", "Señor"]  # Latin-1 text
    assert len(gluon_hub.load_dataset("conll2001", segment="testa", root=str(tmp_path), part=2)[0]) == 4


def _conll2004_files(rng: random.Random, folder: Path) -> dict[str, bytes]:
    """The four column files of the dev segment, sentence and token counts aligned."""
    lengths = [rng.randint(1, 4) for _ in range(3)]
    columns = {"words.dev.gz": 1, "synt.dev.pred.gz": 3, "ne.dev.pred.gz": 1, "props.dev.gz": 2}
    files = {}
    for file_name, width in columns.items():
        blocks = ["\n".join(" ".join(rng.choice(WORDS) for _ in range(width)) for _ in range(n))
                  for n in lengths]
        files[file_name] = gzip.compress(("\n\n".join(blocks) + "\n\n").encode())
    folder.mkdir(parents=True, exist_ok=True)
    for file_name, data in files.items():
        (folder / file_name).write_bytes(data)
    return files


def _tar(path: Path, members: dict[str, bytes]) -> None:
    with tarfile.open(path, "w:gz") as tar:
        for member, data in members.items():
            info = tarfile.TarInfo(member)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def test_conll2004_from_files_or_the_release_tarball(tmp_path):
    files = _conll2004_files(random.Random(4), tmp_path / "plain")
    _tar(tmp_path / "conll04st-release.tar.gz", {f"conll04st-release/{n}": d for n, d in files.items()})
    theirs = _gluonnlp_conll("CoNLL2004", tmp_path / "plain", "dev")
    plain = gluon_hub.load_dataset("conll2004", segment="dev", root=str(tmp_path / "plain"))
    packed = gluon_hub.load_dataset("conll2004", segment="dev", root=str(tmp_path))
    assert list(plain) == list(packed) == theirs and len(theirs) == 3 and len(theirs[0]) == 7


def test_conll2004_misaligned_files_are_refused(tmp_path):
    files = _conll2004_files(random.Random(5), tmp_path)
    (tmp_path / "ne.dev.pred.gz").write_bytes(gzip.compress(gzip.decompress(files["ne.dev.pred.gz"]) + b"extra\n"))
    with pytest.raises(ValueError, match="3 sentences but .* has 4") as exc:
        gluon_hub.load_dataset("conll2004", segment="dev", root=str(tmp_path))
    assert "ne.dev.pred.gz" in str(exc.value)


CONLLU = """# sent_id = 1
# text = From the AP comes this story :
1\tFrom\tfrom\tADP\tIN\t_\t3\tcase\t3:case\t_
2\tthe\tthe\tDET\tDT\tDefinite=Def|PronType=Art\t3\tdet\t3:det\t_
3\tAP\tAP\tPROPN\tNNP\tNumber=Sing\t4\tobl\t4:obl\tSpaceAfter=No

# sent_id = 2
1-2\tdon't\t_\t_\t_\t_\t_\t_\t_\t_
1\tdo\tdo\tAUX\tVBP\t_\t0\troot\t0:root\t_
2\t#n't\tnot\tPART\tRB\t_\t1\tadvmod\t1:advmod\t_
"""


def test_ud21_skips_comments_and_reads_the_treebank_tarball(tmp_path):
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "en-ud-dev.conllu").write_text(CONLLU, encoding="utf-8")
    _tar(tmp_path / "ud-treebanks-v2.1.tgz", {"ud-treebanks-v2.1/UD_English/en-ud-dev.conllu": CONLLU.encode(),
                                              "ud-treebanks-v2.1/UD_English/LICENSE.txt": b"CC"})
    theirs = _gluonnlp_conll("UniversalDependencies21", tmp_path / "plain", "en", "dev")
    ours = gluon_hub.load_dataset("ud21", segment="dev", lang="en", root=str(tmp_path / "plain"))
    packed = gluon_hub.load_dataset("ud21", segment="dev", lang="en", root=str(tmp_path))
    assert list(ours) == list(packed) == theirs and len(theirs) == 2
    assert ours[0][1] == ["From", "the", "AP"] and ours[1][1] == ["don't", "do", "#n't"]
    with pytest.raises(ValueError, match="did you mean en"):
        gluon_hub.load_dataset("ud21", segment="dev", lang="enn", root=str(tmp_path))
    with pytest.raises(FileNotFoundError, match="fr-ud-dev.conllu nor ud-treebanks-v2.1.tgz"):
        gluon_hub.load_dataset("ud21", segment="dev", lang="fr", root=str(tmp_path / "plain"))


@pytest.mark.parametrize("name, file_name, kwargs, text, line", [
    ("conll2000", "train.txt.gz", {}, "a NN B-NP\nb NN\n\nc NN O\n", 2),
    ("ud21", "en-ud-train.conllu", {"lang": "en"}, CONLLU.replace("\tobl\t", "\t"), 5),
])
def test_malformed_tagging_files_name_the_file_and_line(tmp_path, name, file_name, kwargs, text, line):
    data = text.encode()
    (tmp_path / file_name).write_bytes(gzip.compress(data) if file_name.endswith(".gz") else data)
    with pytest.raises(ValueError, match="columns") as exc:
        gluon_hub.load_dataset(name, segment="train", root=str(tmp_path), **kwargs)
    assert f"{tmp_path / file_name}:{line}:" in str(exc.value)


def test_tagging_hashes_are_gluonnlps(monkeypatch):
    import gluonnlp._constants as C

    tables = {cls: _published_tables(monkeypatch, nlp_conll, "_CoNLLSequenceTagging", getattr(nlp_conll, cls), **kw)
              for cls, kw in [("CoNLL2000", {}), ("CoNLL2001", {"part": 1}), ("CoNLL2002", {"lang": "esp"}),
                              ("CoNLL2004", {}), ("UniversalDependencies21", {})]}
    expected = {
        "conll2000": {seg: entry for seg, entry in tables["CoNLL2000"]["_data_file"].items()},
        "conll2001": {f"{i + 1}/{seg}": entry for i, t in enumerate(tables["CoNLL2001"]["_data_file"])
                      for seg, entry in t.items()},
        "conll2002": {f"{lang}/{seg}": entry for lang, t in tables["CoNLL2002"]["_data_file"].items()
                      for seg, entry in t.items()},
    }
    for name, cls_name in [("conll2000", "CoNLL2000"), ("conll2001", "CoNLL2001"), ("conll2002", "CoNLL2002")]:
        ours = dataset_files(name)
        assert set(ours) == set(expected[name])
        for key, (file_name, sha1) in expected[name].items():
            assert ours[key].hash == f"sha1:{sha1}"
            assert ours[key].urls == (getattr(nlp_conll, cls_name).base_url + file_name,)
    for name, cls_name, table in [("conll2004", "CoNLL2004", {f"{part}/{seg}": e for part, t in
                                   tables["CoNLL2004"]["_data_file"].items() for seg, e in t.items()}),
                                  ("ud21", "UniversalDependencies21", {f"{lang}/{seg}": e for lang, t in
                                   C.UD21_DATA_FILE_SHA1.items() for seg, e in t.items()})]:
        archive, archive_sha1 = tables[cls_name]["_archive_file"]
        assert dataset_files(name)["archive"].hash == f"sha1:{archive_sha1}"
        assert dataset_files(name)["archive"].urls[0].endswith("/" + archive)
        members = _groups()[name]["members"]
        assert {k: (m["name"], m["sha1"]) for k, m in members.items()} == table
    assert len(_groups()["ud21"]["members"]) == 262


# ----------------------------------------------------------------------------- ATIS / SNIPS


def _write_intent_slot(folder: Path, segment: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    queries = [("i want to fly from boston to denver", "O O O O O B-fromloc O B-toloc", "atis_flight"),
               ("show fares ", "O B-fare O", "atis_airfare;atis_flight"),
               ("what is über", "O O B-city", "atis_unknown_intent")]
    for suffix, index in (("sentence", 0), ("tags", 1), ("intent", 2)):
        text = "\n".join(q[index] for q in queries) + "\n"
        (folder / f"{segment}_{suffix}.txt").write_text(text, encoding="utf-8")
    intents = gluonnlp.Vocab(gluonnlp.data.count_tokens(["atis_flight", "atis_airfare", "atis_flight"]),
                             padding_token=None, bos_token=None, eos_token=None)
    slots = gluonnlp.Vocab(gluonnlp.data.count_tokens("O B-fromloc B-toloc B-fare B-city".split()))
    (folder / "intent_vocab.json").write_text(intents.to_json(), encoding="utf-8")
    (folder / "slot_vocab.json").write_text(slots.to_json(), encoding="utf-8")


def _plain(samples) -> list:
    return [(list(tokens), list(tags), ids.tolist()) for tokens, tags, ids in samples]


@pytest.mark.parametrize("name, cls_name", [("atis", "ATISDataset"), ("snips", "SNIPSDataset")])
def test_intent_slot_reads_as_gluonnlp_does_from_files_or_zip(tmp_path, name, cls_name):
    _write_intent_slot(tmp_path / "plain", "dev")
    local = type(cls_name, (getattr(nlp_intent, cls_name),), {"_get_data": lambda self: None})
    theirs = _plain(local("dev", root=str(tmp_path / "plain")))
    ours = gluon_hub.load_dataset(name, segment="dev", root=str(tmp_path / "plain"))
    assert _plain(ours) == theirs and len(theirs) == 3
    assert theirs[1] == (["show", "fares", ""], ["O", "B-fare", "O"], [2, 1])
    assert str(ours[0][2].dtype) == "int32" and theirs[2][2] == [0]
    zip_name = dataset_files(name)["archive"].urls[0].rsplit("/", 1)[1]
    with zipfile.ZipFile(tmp_path / zip_name, "w") as zf:
        for path in (tmp_path / "plain").iterdir():
            zf.write(path, path.name)
    packed = gluon_hub.load_dataset(name, segment="dev", root=str(tmp_path))
    assert _plain(packed) == theirs
    assert packed.slot_vocab.idx_to_token == local("dev", root=str(tmp_path / "plain")).slot_vocab.idx_to_token
    assert packed.intent_vocab["atis_airfare"] == 2


def test_intent_slot_mismatched_tags_name_the_file_and_line(tmp_path):
    _write_intent_slot(tmp_path, "test")
    tags = (tmp_path / "test_tags.txt").read_text(encoding="utf-8").splitlines()
    tags[2] = "O O"
    (tmp_path / "test_tags.txt").write_text("\n".join(tags) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="2 slot labels for the 3 tokens") as exc:
        gluon_hub.load_dataset("atis", segment="test", root=str(tmp_path))
    assert f"{tmp_path / 'test_tags.txt'}:3:" in str(exc.value)
    (tmp_path / "test_intent.txt").write_text("atis_flight\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no matching line") as exc:
        gluon_hub.load_dataset("atis", segment="test", root=str(tmp_path))
    assert f"{tmp_path / 'test_sentence.txt'}:2:" in str(exc.value)


def test_intent_slot_hashes_are_gluonnlps():
    for name, cls in (("atis", nlp_intent.ATISDataset), ("snips", nlp_intent.SNIPSDataset)):
        file_format, sha1 = cls._download_info.fget(None)
        ref = dataset_files(name)["archive"]
        assert ref.hash == f"sha1:{sha1}"
        assert ref.urls == ("https://apache-mxnet.s3-accelerate.dualstack.amazonaws.com/gluon/dataset/"
                            + file_format.format(sha1[:8]),)


# ----------------------------------------------------------------------------- text8, enwik8, GBW


def _ltcb(cls_name: str, root: Path, **kwargs) -> list:
    base = getattr(nlp_ltcb, cls_name)
    get_data = staticmethod(lambda archive, data_file, segment, root, ns: os.path.join(root, data_file[segment][0]))
    return list(type(cls_name, (base,), {"_get_data": get_data})(root=str(root), **kwargs))


def test_text8_and_enwik8_read_as_gluonnlp_does(tmp_path):
    rng = random.Random(8)
    (tmp_path / "text8").write_text(" " + " ".join(rng.choice(WORDS).lower() for _ in range(23)), encoding="utf-8")
    for size in (5, None):
        ours = gluon_hub.load_dataset("text8", segment="train", root=str(tmp_path), max_sentence_length=size)
        assert list(ours) == _ltcb("Text8", tmp_path, max_sentence_length=size)
    assert [len(s) for s in ours] == [23]
    lines = [" ".join(str(b) for b in sentence(rng, "x").encode()) for _ in range(3)]
    (tmp_path / "valid.txt").write_text("\n".join(lines[:1] + [""] + lines[1:]) + "\n", encoding="utf-8")
    (tmp_path / "test.txt.raw").write_text("<page>\n  <title>Zürich</title>\n\n", encoding="utf-8")
    for segment in ("val", "testraw"):
        ours = gluon_hub.load_dataset("enwik8", segment=segment, root=str(tmp_path))
        assert list(ours) == _ltcb("Enwik8", tmp_path, segment=segment) and len(ours) in (2, 3)


def _write_gbw(root: Path) -> None:
    rng = random.Random(9)
    base = root / "1-billion-word-language-modeling-benchmark-r13output"
    for subdir, names in (("training-monolingual.tokenized.shuffled", ["news.en-00001-of-00100", "news.en-00002-of-00100"]),
                          ("heldout-monolingual.tokenized.shuffled", ["news.en.heldout-00000-of-00050", "news.en.heldout-00001-of-00050"])):
        (base / subdir).mkdir(parents=True)
        for name in names:
            (base / subdir / name).write_text("\n".join(sentence(rng, name) for _ in range(3)) + "\n\n",
                                              encoding="utf-8")


def test_gbw_shards_read_as_gluonnlp_does(tmp_path):
    _write_gbw(tmp_path)
    local = type("GBWStream", (nlp_gbw.GBWStream,), {"_get_data": lambda self: None})
    for segment, kwargs in (("test", {}), ("train", {"bos": "<s>", "eos": None})):
        theirs = sorted(list(d) for d in local(segment, root=str(tmp_path), **kwargs))
        ours = gluon_hub.load_dataset("gbw", segment=segment, root=str(tmp_path), **kwargs)
        assert isinstance(ours, GBW) and sorted(list(d) for d in ours) == theirs
    assert len(theirs) == 2 and theirs[0][0][0] == "<s>"
    test = list(gluon_hub.load_dataset("gbw", segment="test", root=str(tmp_path)))
    assert len(test) == 1 and test[0][0][-1] == "<eos>"  # one held-out shard, as published
    with pytest.raises(FileNotFoundError, match="news.en-00"):
        gluon_hub.load_dataset("gbw", segment="train", root=str(tmp_path / "empty"))


def test_corpora_hashes_are_gluonnlps():
    for name, cls in (("text8", nlp_ltcb.Text8), ("enwik8", nlp_ltcb.Enwik8)):
        archive, archive_sha1 = cls.archive_file
        ours = dataset_files(name)
        assert set(ours) == set(cls.data_file)
        for segment, (file_name, sha1) in cls.data_file.items():
            ref = ours[segment]
            assert (ref.hash, ref.archive_hash, ref.extract) == (f"sha1:{sha1}", f"sha1:{archive_sha1}", file_name)
            assert ref.filename == f"gluon/dataset/large_text_compression_benchmark/{archive}"
    gbw = dataset_files("gbw")
    assert gbw["archive"].hash == f"sha1:{nlp_gbw.GBWStream._archive_data[1]}"
    assert gbw["vocab"].hash == f"sha1:{nlp_gbw.GBWStream._vocab_file[1]}"
    assert gbw["vocab"].filename == f"gluon/dataset/vocab/{nlp_gbw.GBWStream._archive_vocab[0]}"
    members = _groups()["gbw"]["members"]
    assert {k: (m["dir"], m["pattern"], m["sha1"]) for k, m in members.items()} == nlp_gbw.GBWStream._data_file


def test_new_datasets_are_listed_with_their_segments():
    specs = {s.name: s for s in gluon_hub.dataset_info.__globals__["get_hub"]().catalog("datasets")
             if s.plugin == "nlp"}
    new = {"wmt2014", "wmt2014_bpe", "wmt2016", "wmt2016_bpe", "conll2000", "conll2001", "conll2002",
           "conll2004", "ud21", "atis", "snips", "text8", "enwik8", "gbw"}
    assert new <= set(specs)
    assert specs["wmt2016"].segments[-1] == "newstest2016" and len(specs["wmt2014_bpe"].files) == 19
    assert specs["ud21"].task == "token-classification"


def test_archive_members_are_kept_only_with_the_published_hash(tmp_path):
    """What the cache path does with a fetched .tar.gz: CoNLL-2004/UD members are checked
    one by one, GBW shards all together in name order (GluonNLP's hash of them)."""
    import hashlib

    from gluon_nlp_core.datasets._archives import extract_checked
    from gluon_nlp_core.datasets.corpora import _unpack

    _tar(tmp_path / "ud.tgz", {"ud-treebanks-v2.1/UD_English/en-ud-dev.conllu": CONLLU.encode()})
    good = hashlib.sha1(CONLLU.encode()).hexdigest()
    out = tmp_path / "out"
    with pytest.raises(ValueError, match="has sha1 .* the published one is 0+"):
        extract_checked(tmp_path / "ud.tgz", "en-ud-dev.conllu", "0" * 40, out / "en-ud-dev.conllu")
    assert not (out / "en-ud-dev.conllu").exists()
    assert extract_checked(tmp_path / "ud.tgz", "en-ud-dev.conllu", good, out / "en-ud-dev.conllu").read_text() == CONLLU
    with pytest.raises(FileNotFoundError, match="holds no file 'fr-ud-dev.conllu'"):
        extract_checked(tmp_path / "ud.tgz", "fr-ud-dev.conllu", good, out / "fr-ud-dev.conllu")

    shards = {f"news.en-0000{i}-of-00100": f"shard {i}\n".encode() for i in (2, 1)}
    subdir = "training-monolingual.tokenized.shuffled"
    _tar(tmp_path / "gbw.tar.gz", {f"r13output/{subdir}/{n}": d for n, d in shards.items()}
         | {f"r13output/{subdir}/README": b"x"})
    digest = hashlib.sha1(shards["news.en-00001-of-00100"] + shards["news.en-00002-of-00100"]).hexdigest()
    with pytest.raises(ValueError, match="published sha1"):
        _unpack(tmp_path / "gbw.tar.gz", subdir, "news.en-00*-of-00100", "1" * 40, tmp_path / "gbw")
    found = _unpack(tmp_path / "gbw.tar.gz", subdir, "news.en-00*-of-00100", digest, tmp_path / "gbw")
    assert [p.name for p in found] == ["news.en-00001-of-00100", "news.en-00002-of-00100"]
