"""Dataset parsers on small files in the published formats, loaded by name through the hub."""

from __future__ import annotations

import contextlib
import pickle
import shutil
from pathlib import Path

import pytest

import gluon_hub
import gluon_hub.compat  # noqa: F401  (numpy aliases for mxnet, before gluonnlp)
from gluon_nlp_core._data_specs import dataset_files
from gluon_nlp_core.datasets import TREC_CLASSES, SQuAD2Record, SQuADRecord, TextDataset

import gluonnlp

FIXTURES = Path(__file__).parent / "fixtures"


def load(name: str, segment: str, folder: str, **kwargs):
    return gluon_hub.load_dataset(name, segment=segment, root=str(FIXTURES / folder), **kwargs)


def test_squad_v1_records():
    squad = load("squad", "train", "squad", version="1.1")
    assert len(squad) == 3
    first = squad[0]
    assert isinstance(first, SQuADRecord) and len(first) == 6
    assert first.question_id == "q-sb-1" and first.record_index == 0
    assert first.answers == ["Denver Broncos", "The Denver Broncos"]
    for record in squad:
        for text, start in zip(record.answers, record.answer_starts):
            assert record.context[start : start + len(text)] == text
    assert squad[2].context == "A café serves coffee — and tea." and squad[2].record_index == 2


def test_squad_v2_marks_unanswerable_questions():
    squad = load("squad", "dev", "squad", version="2.0")
    assert [type(r) for r in squad] == [SQuAD2Record, SQuAD2Record]
    assert [(r.is_impossible, r.answers[:1]) for r in squad] == [
        (True, []),
        (False, ["10th and 11th centuries"]),
    ]


def test_squad_checks_version_and_segment():
    with pytest.raises(ValueError, match="version"):
        load("squad", "dev", "squad", version="3.0")
    with pytest.raises(ValueError, match="no segment"):
        load("squad", "test", "squad")
    with pytest.raises(FileNotFoundError, match="train-v2.0.json"):
        load("squad", "train", "squad", version="2.0")


def test_glue_sst2():
    train = load("glue_sst2", "train", "glue_sst2")
    assert len(train) == 3 and train[0] == ["hide new secretions from the parental units ", "0"]
    assert [label for _, label in train] == ["0", "1", "1"]
    test = load("glue_sst2", "test", "glue_sst2")
    assert test[0] == ["uneasy mishmash of styles and genres ."] and len(test) == 2


def test_glue_mnli_picks_columns_by_header():
    dev = load("glue_mnli", "dev_matched", "glue_mnli")
    assert dev[0] == ["The new rights are nice enough", "Everyone really likes the newest benefits ", "neutral"]
    assert dev[1][2] == "contradiction"
    test = load("glue_mnli", "test_matched", "glue_mnli")
    assert test[0][1] == "Hierbas is a name worth looking out for." and len(test[0]) == 2


def test_glue_mrpc_splits_raw_files_with_dev_ids():
    train = load("glue_mrpc", "train", "glue_mrpc")
    dev = load("glue_mrpc", "dev", "glue_mrpc")
    test = load("glue_mrpc", "test", "glue_mrpc")
    assert [row[2] for row in train] == ["1", "1"] and len(dev) == 1
    assert dev[0][0].startswith("Yucaipa owned Dominick") and dev[0][2] == "0"
    assert test[0][0].startswith("PCCW 's chief") and len(test[0]) == 2


def test_glue_mrpc_reads_glue_layout(tmp_path):
    (tmp_path / "dev.tsv").write_text(
        "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n1\t1\t2\tA b .\tA c .\n", encoding="utf-8"
    )
    dev = gluon_hub.load_dataset("glue_mrpc", segment="dev", root=str(tmp_path))
    assert list(dev) == [["A b .", "A c .", "1"]]


def test_tsv_with_missing_column_is_refused(tmp_path):
    (tmp_path / "train.tsv").write_text("text\tlabel\nx\t1\n", encoding="utf-8")
    with pytest.raises(ValueError, match="sentence"):
        gluon_hub.load_dataset("glue_sst2", segment="train", root=str(tmp_path))


GLUE_REST = {"glue_cola": "GlueCoLA", "glue_stsb": "GlueSTSB", "glue_qqp": "GlueQQP",
             "glue_qnli": "GlueQNLI", "glue_rte": "GlueRTE", "glue_wnli": "GlueWNLI"}


def _gluonnlp_glue(cls_name: str, segment: str, root: Path) -> list:
    """GluonNLP's own GLUE class on ``root``'s files: only its download step is skipped
    (the fixtures cannot carry the published hashes); the columns are GluonNLP's."""
    base = getattr(gluonnlp.data, cls_name)
    local = type(cls_name, (base,), {"_get_data": lambda self, *args: None})
    return list(local(segment, root=str(root)))


@pytest.mark.parametrize("name", sorted(GLUE_REST))
@pytest.mark.parametrize("segment", ["train", "dev", "test"])
def test_glue_tasks_read_as_gluonnlp_does(name, segment):
    # QQP's dev fixture has a broken row, as the published file does: both readers drop it.
    dropped = name == "glue_qqp" and segment == "dev"
    with pytest.warns(UserWarning, match="incomplete") if dropped else contextlib.nullcontext():
        ours = load(name, segment, name)
        theirs = _gluonnlp_glue(GLUE_REST[name], segment, FIXTURES / name)
    assert list(ours) == theirs and len(theirs) >= 1


def test_glue_mnli_segments_read_as_gluonnlp_does():
    for segment in ("train", "dev_matched", "dev_mismatched", "test_matched"):
        assert list(load("glue_mnli", segment, "glue_mnli")) == _gluonnlp_glue(
            "GlueMNLI", segment, FIXTURES / "glue_mnli")


def test_glue_samples_by_hand():
    cola = load("glue_cola", "train", "glue_cola")
    assert cola[0] == ["The sailors rode the breeze clear of the rocks.", "1"]
    assert [label for _, label in cola] == ["1"] * 4 + ["0"] * 4
    assert load("glue_cola", "test", "glue_cola")[0] == ["Bill whistled past the house."]
    stsb = load("glue_stsb", "dev", "glue_stsb")
    assert stsb[0] == ["A man with a hard hat is dancing.", "A man wearing a hard hat is dancing.",
                       "5.000"]
    qnli = load("glue_qnli", "dev", "glue_qnli")
    assert [row[2] for row in qnli] == ["entailment", "not_entailment"]
    assert load("glue_wnli", "test", "glue_wnli")[0][1].startswith("Horses ran away")


def test_glue_qqp_skips_incomplete_rows_naming_the_lines():
    with pytest.warns(UserWarning, match=r"dev\.tsv: skipped 1 incomplete row\(s\), line\(s\) 3"):
        dev = load("glue_qqp", "dev", "glue_qqp")
    assert [row[2] for row in dev] == ["0", "1"]


@pytest.mark.parametrize("name, text, line, match", [
    ("glue_cola", "gj04\t1\t\tGood.\ngj04\t0\n", 2, "2 fields, expected 4"),
    ("glue_rte", "index\tsentence1\tsentence2\tlabel\n0\ta\tb\tentailment\n1\ta b\n", 3,
     "2 fields, expected 4"),
    ("glue_stsb", "\t".join(["index", "genre", "filename", "year", "old_index", "source1",
                             "source2", "sentence1", "sentence2", "score"]) + "\n"
     + "\t".join(["0", "g", "f", "y", "0", "s", "s", "A b.", "A c.", "high"]) + "\n", 2,
     "score 'high' is not a number"),
])
def test_malformed_glue_files_name_the_file_and_line(tmp_path, name, text, line, match):
    (tmp_path / "dev.tsv").write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=match) as exc:
        gluon_hub.load_dataset(name, segment="dev", root=str(tmp_path))
    assert f"{tmp_path / 'dev.tsv'}:{line}:" in str(exc.value)


def test_glue_registry_hashes_are_gluonnlps():
    """Every file hash equals the one in GluonNLP's GLUE classes, read from its source."""
    import inspect
    import re

    for name, cls_name in {**GLUE_REST, "glue_sst2": "GlueSST2", "glue_mnli": "GlueMNLI"}.items():
        source = inspect.getsource(getattr(gluonnlp.data, cls_name).__init__)
        published = {seg: (zip_sha1, sha1) for seg, _, zip_sha1, sha1 in re.findall(
            r"'(\w+)': \('(\w+)',\s*'([0-9a-f]{40})',\s*'([0-9a-f]{40})'\)", source)}
        ours = dataset_files(name)
        assert set(ours) == set(published) == set(gluon_hub.dataset_info(name).segments)
        for segment, ref in ours.items():
            assert (ref.archive_hash, ref.hash) == tuple(f"sha1:{h}" for h in published[segment])
            assert ref.filename.endswith(f"/{segment}-{published[segment][1][:8]}.zip")
            assert ref.extract == f"{segment}.tsv"


def test_trec_label_lines_and_json():
    train = load("trec", "train", "trec")
    assert train[0] == ["How did serfdom develop in and then leave Russia ?", TREC_CLASSES.index("DESC")]
    assert [TREC_CLASSES[label] for _, label in train] == ["DESC", "ENTY", "HUM", "NUM", "LOC", "ABBR"]
    assert train[4][0] == "What is the capital of Bahíamas ?"  # Latin-1 in the original files
    test = load("trec", "test", "trec")
    assert test[0] == ["How far is it from Denver to Aspen ?", 5]


def test_trec_bad_line_is_refused(tmp_path):
    (tmp_path / "TREC_10.label").write_text("What is this ?\n", encoding="utf-8")
    with pytest.raises(ValueError, match="COARSE:fine"):
        gluon_hub.load_dataset("trec", segment="test", root=str(tmp_path))


def test_iwslt2015_pairs_drop_empty_lines_both_directions():
    en_vi = load("iwslt2015", "train", "iwslt2015")
    assert len(en_vi) == 2  # one pair has an empty side on each language
    assert en_vi[0] == ("Rachel Pike : The science behind a climate headline",
                        "Khoa học đằng sau một tiêu đề về khí hậu")
    vi_en = load("iwslt2015", "train", "iwslt2015", src_lang="vi", tgt_lang="en")
    assert vi_en[1] == tuple(reversed(en_vi[1]))
    assert en_vi.src_vocab["Rachel"] != en_vi.src_vocab.token_to_idx[en_vi.src_vocab.unknown_token]
    with pytest.raises(ValueError, match="'en' and 'vi'"):
        load("iwslt2015", "train", "iwslt2015", src_lang="en", tgt_lang="de")


def test_wikitext_flat_and_per_line(tmp_path):
    shutil.copy(FIXTURES / "wikitext" / "wiki.valid.tokens", tmp_path)
    flat = gluon_hub.load_dataset("wikitext2", segment="val", root=str(tmp_path))
    assert flat[:5] == ["=", "Homarus", "gammarus", "=", "<eos>"]
    assert len(flat) == 5 + 14 + 6
    path = str(tmp_path / "wiki.valid.tokens")
    assert list(flat) == list(gluonnlp.data.CorpusDataset(path, flatten=True, eos="<eos>"))
    assert list(gluon_hub.load_dataset("wikitext2", segment="val", root=str(tmp_path), flatten=False,
                                       bos="<bos>")) == list(
        gluonnlp.data.CorpusDataset(path, bos="<bos>", eos="<eos>")
    )
    lines = gluon_hub.load_dataset("wikitext103", segment="val", root=str(tmp_path), flatten=False,
                                   bos="<bos>", eos=None)
    assert lines[0] == ["<bos>", "=", "Homarus", "gammarus", "="] and len(lines) == 3
    with_empty = gluon_hub.load_dataset("wikitext2", segment="val", root=str(tmp_path),
                                        flatten=False, skip_empty=False)
    assert with_empty[0] == ["<eos>"] and len(with_empty) == 6


def test_datasets_pickle_transform_and_work_with_the_mxnet_dataloader():
    mx = gluon_hub.compat.mx
    sst = load("glue_sst2", "train", "glue_sst2")
    lengths = sst.transform(lambda row: (len(row[0].split()), int(row[1])), lazy=False)
    assert isinstance(lengths, TextDataset) and lengths[0] == (7, 0)
    squad = load("squad", "train", "squad", version="1.1")
    first_upper = squad.transform_first(str, lazy=True)
    assert first_upper[1][0] == "1" and first_upper[1][1] == "q-sb-2"
    assert pickle.loads(pickle.dumps(sst))[2] == sst[2]
    loader = mx.gluon.data.DataLoader(lengths, batch_size=2)
    batches = [[b.asnumpy().tolist() for b in batch] for batch in loader]
    assert batches == [[[7, 12], [0, 1]], [[9], [1]]]


def test_specs_list_real_published_files():
    specs = {s.name: s for s in gluon_hub.dataset_info.__globals__["get_hub"]().catalog("datasets")
             if s.plugin == "nlp"}
    from gluon_nlp_core._data_specs import _groups

    written_out = {"squad", "glue_cola", "glue_sst2", "glue_mrpc", "glue_stsb", "glue_qqp", "glue_mnli",
                   "glue_qnli", "glue_rte", "glue_wnli", "trec", "iwslt2015", "wikitext2", "wikitext103"}
    assert set(specs) == written_out | set(_groups())  # and the datasets/*_datasets.json groups
    ref = dataset_files("squad")["2.0/dev"]
    assert ref.hash == "sha1:846082d15ed71cb5220645b9d473441e00070778"
    assert ref.filename == "gluon/dataset/squad/dev-v2.0.zip" and ref.extract == "dev-v2.0.json"
    assert ref.urls[0].endswith(ref.filename)
    assert all(f.hash.startswith("sha1:") for s in specs.values() for f in s.files)
    assert len(specs["iwslt2015"].files) == 8 and len(specs["squad"].files) == 4
    assert gluon_hub.dataset_info("glue_mnli").segments[1] == "dev_matched"


@pytest.mark.parametrize("module, name, segments", [
    ("intent_slot", "ATIS", "train, dev, test"), ("intent_slot", "SNIPS", "train, dev, test"),
    ("language_model", "WikiText2", "train, val, test"), ("trec", "TREC", "train, test"),
    ("translation", "IWSLT2015", "train, val, test"),
    ("wmt", "WMT2016BPE", "train, newstest2012, newstest2013, newstest2014, newstest2015, newstest2016"),
])
def test_an_unknown_segment_is_refused_naming_the_known_ones(module: str, name: str, segments: str) -> None:
    import importlib

    cls = getattr(importlib.import_module(f"gluon_nlp_core.datasets.{module}"), name)
    with pytest.raises(ValueError, match=f"no segment 'training'; segments: {segments}$"):
        cls("training")
