"""SuperGLUE and the JSON sentiment sets on tiny generated files in the published formats,
read by name through the hub and by GluonNLP 0.10's own classes from the same files."""

from __future__ import annotations

import inspect
import json
import pickle
import re
from pathlib import Path

import pytest

import gluon_hub
import gluon_hub.compat  # noqa: F401  (numpy aliases for mxnet, before gluonnlp)
from gluon_nlp_core._data_specs import dataset_files

import gluonnlp
from mxnet.gluon.utils import _get_repo_file_url

# One labelled line per task in each real file's layout (GluonNLP's docstrings show these
# records); the test segment drops "label". Non-ASCII text checks the UTF-8 reading.
SUPERGLUE_LINES = {
    "SuperGlueRTE": [
        {"premise": "Dana Reeve, the widow of the actor, has died.", "hypothesis": "Reeve had an accident.",
         "label": "not_entailment", "idx": 0},
        {"premise": "Zürich is in Switzerland.", "hypothesis": "Zürich is Swiss.", "label": "entailment",
         "idx": 1},
    ],
    "SuperGlueCB": [
        {"premise": "Valence the void-brain. Did he think he was helping?",
         "hypothesis": "Valence was helping",
         "label": "contradiction", "idx": 0},
        {"premise": "I doubt it rains.", "hypothesis": "it rains", "label": "neutral", "idx": 1},
    ],
    "SuperGlueWSC": [
        {"text": "The large ball crashed right through the table because it was made of styrofoam.",
         "target": {"span2_index": 9, "span1_index": 6, "span1_text": "The table", "span2_text": "it"},
         "idx": 0, "label": True},
        {"text": "Mark told Pete many lies about himself.",
         "target": {"span1_text": "Pete", "span1_index": 2, "span2_text": "himself", "span2_index": 6},
         "idx": 1, "label": False},
    ],
    "SuperGlueWiC": [
        {"word": "brush", "sentence1": "She gave her hair a quick brush.",
         "sentence2": "The dentist recommended two brushes a day.", "idx": 0, "label": True,
         "start1": 26, "start2": 28, "end1": 31, "end2": 35, "version": 1.1},
    ],
    "SuperGlueCOPA": [
        {"premise": "The man turned on the faucet.", "choice1": "The toilet filled with water.",
         "choice2": "Water flowed from the spout.", "question": "effect", "label": 1, "idx": 0},
        {"premise": "The item was packaged in bubble wrap.", "choice1": "It was fragile.",
         "choice2": "It was small.", "question": "cause", "label": 0, "idx": 1},
    ],
    "SuperGlueMultiRC": [
        {"idx": 0, "version": 1.1, "paragraph": {
            "text": "<b>Sent 1: </b>Sam ate an apple.<br><b>Sent 2: </b>Then he slept.<br>"
                    "<b>Sent 10: </b>He woke at 9.<br>",
            "questions": [{"question": "What did Sam eat?", "sentences_used": [0], "idx": 0,
                           "multisent": False,
                           "answers": [{"text": "An apple", "idx": 0, "label": 1},
                                       {"text": "A pear", "idx": 1, "label": 0}]}]}},
    ],
    "SuperGlueBoolQ": [
        {"question": "is france the same timezone as the uk", "passage": "At the Liberation, France ...",
         "idx": 0, "label": False},
    ],
    "SuperGlueReCoRD": [
        {"source": "Daily mail", "idx": 0,
         "passage": {"text": "Tracy Morgan is back.\n@highlight\nMorgan thanks fans",
                     "entities": [{"start": 0, "end": 11}]},
         "qas": [{"query": "@placeholder thanks fans", "idx": 0,
                  "answers": [{"start": 0, "end": 11, "text": "Tracy Morgan"}]}]},
    ],
    "SuperGlueAXb": [
        {"sentence1": "The cat sat on the mat.", "sentence2": "The cat did not sit on the mat.",
         "label": "not_entailment", "idx": "0", "logic": "Negation"},
        {"sentence1": "A b.", "sentence2": "A b.", "label": "entailment", "idx": "1"},
    ],
    "SuperGlueAXg": [
        {"premise": "The taxpayer met with the accountant to get help filing his taxes.",
         "hypothesis": "The accountant sought help filing taxes.", "label": "not_entailment",
         "idx": 0, "pair_id": 551646},
    ],
}

SUPERGLUE_NAMES = {"SuperGlueRTE": "superglue_rte", "SuperGlueCB": "superglue_cb",
                   "SuperGlueWSC": "superglue_wsc", "SuperGlueWiC": "superglue_wic",
                   "SuperGlueCOPA": "superglue_copa", "SuperGlueMultiRC": "superglue_multirc",
                   "SuperGlueBoolQ": "superglue_boolq", "SuperGlueReCoRD": "superglue_record",
                   "SuperGlueAXb": "superglue_axb", "SuperGlueAXg": "superglue_axg"}
SINGLE_FILE = {"SuperGlueAXb": "AX-b", "SuperGlueAXg": "AX-g"}


def _write_jsonl(path: Path, records: list[dict]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")


def _unlabelled(record: dict) -> dict:
    return {k: v for k, v in record.items() if k != "label"}


def _without_download(cls: type) -> type:
    """GluonNLP's class with only its download step skipped: it reads what ``root`` holds."""
    return type(cls.__name__, (cls,), {"_get_data": lambda self, *args: None})


SUPERGLUE_CASES = [(cls, seg) for cls in SUPERGLUE_LINES
                   for seg in (("all",) if cls in SINGLE_FILE else ("train", "val", "test"))]


@pytest.mark.parametrize("cls_name, segment", SUPERGLUE_CASES)
def test_superglue_tasks_read_as_gluonnlp_does(tmp_path, cls_name, segment):
    records = SUPERGLUE_LINES[cls_name]
    if segment == "test" and cls_name not in ("SuperGlueMultiRC", "SuperGlueReCoRD"):
        records = [_unlabelled(r) for r in records]
    _write_jsonl(tmp_path / f"{SINGLE_FILE.get(cls_name, segment)}.jsonl", records)
    name = SUPERGLUE_NAMES[cls_name]
    ours = gluon_hub.load_dataset(name, segment=segment, root=str(tmp_path))
    reference = _without_download(getattr(gluonnlp.data, cls_name))
    if cls_name in SINGLE_FILE:
        theirs = reference(root=str(tmp_path))
    else:
        theirs = reference(segment, root=str(tmp_path))
    assert list(ours) == list(theirs) and len(ours) == len(records)
    segments = (segment,) if segment == "all" else ("train", "val", "test")
    assert gluon_hub.dataset_info(name).segments == segments


def test_superglue_samples_by_hand(tmp_path):
    _write_jsonl(tmp_path / "val.jsonl", SUPERGLUE_LINES["SuperGlueMultiRC"])
    multirc = gluon_hub.load_dataset("superglue_multirc", segment="val", root=str(tmp_path))
    assert multirc[0]["text"] == ["Sam ate an apple.", "Then he slept.", "He woke at 9."]
    assert multirc[0]["questions"][0]["answers"][1] == {"text": "A pear", "idx": 1, "label": 0}
    _write_jsonl(tmp_path / "AX-b.jsonl", SUPERGLUE_LINES["SuperGlueAXb"])
    axb = gluon_hub.load_dataset("superglue_axb", root=str(tmp_path))
    assert axb[0]["logic"] == "Negation" and axb.segment == "all" and "logic" not in axb[1]
    _write_jsonl(tmp_path / "train.jsonl", SUPERGLUE_LINES["SuperGlueRTE"])
    rte = pickle.loads(pickle.dumps(gluon_hub.load_dataset("superglue_rte", root=str(tmp_path))))
    assert rte[1]["premise"] == "Zürich is in Switzerland." and rte[1]["label"] == "entailment"


@pytest.mark.parametrize("name, segment, lines, line, match", [
    ("superglue_rte", "val", ['{"premise": "a", "hypothesis": "b", "label": "entailment", "idx": 0}', "",
                              '{"premise": "a", "hypothesis": "b", "label": "entail'], 3,
     "not valid JSON"),
    ("superglue_cb", "train", ['{"premise": "a", "hypothesis": "b", "idx": 0}'], 1, "no field.*'label'"),
    ("superglue_copa", "test", ['{"premise": "a", "choice1": "b", "choice2": "c", "question": "cause", '
                                '"idx": 0}', '["a", "b"]'], 2, "expected a JSON object, got list"),
    ("superglue_multirc", "train", ['{"idx": 0, "paragraph": {"questions": []}}'], 1,
     "'paragraph' must be an object with a 'text' string"),
])
def test_malformed_superglue_files_name_the_file_and_line(tmp_path, name, segment, lines, line, match):
    path = tmp_path / f"{segment}.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=match) as exc:
        gluon_hub.load_dataset(name, segment=segment, root=str(tmp_path))
    assert f"{path}:{line}:" in str(exc.value)


def test_superglue_files_are_gluonnlps():
    """Every hash and URL equals GluonNLP's: hashes read from its source, URLs built as it does."""
    pattern = r"\('([\w-]+)', '([0-9a-f]{40})',\s*'([0-9a-f]{40})'\)"
    for cls_name, name in SUPERGLUE_NAMES.items():
        cls = getattr(gluonnlp.data, cls_name)
        published = re.findall(pattern, inspect.getsource(cls.__init__))
        ours = dataset_files(name)
        assert len(ours) == len(published) == len(gluon_hub.dataset_info(name).segments)
        for (key, ref), (stem, zip_sha1, sha1) in zip(ours.items(), published):
            assert key == ("all" if cls_name in SINGLE_FILE else stem)
            assert (ref.archive_hash, ref.hash) == (f"sha1:{zip_sha1}", f"sha1:{sha1}")
            assert ref.urls == (_get_repo_file_url(cls._repo_dir(None), f"{stem}-{sha1[:8]}.zip"),)
            assert ref.extract == f"{stem}.jsonl"


SENTIMENT = {"IMDB": "imdb", "MR": "mr", "SUBJ": "subj", "SST_1": "sst_1", "SST_2": "sst_2",
             "CR": "cr", "MPQA": "mpqa"}
SENTIMENT_SEGMENTS = {"IMDB": ("train", "test", "unsup"), "SST_1": ("train", "dev", "test"),
                      "SST_2": ("train", "dev", "test")}
PAIRS = [["no movement , no yuks , not much of anything .", 1],
         ["i know the saying is \" you get what you pay for \" but a café", 0],
         ["a <br /> tab\tand unicode — fine", 4]]


def _gluonnlp_file(cls_name: str, segment: str) -> str:
    if cls_name == "IMDB":
        return f"{segment}.json"
    return getattr(gluonnlp.data, cls_name)._data_file(None)[segment][1][0]


SENTIMENT_CASES = [(cls, seg) for cls in SENTIMENT for seg in SENTIMENT_SEGMENTS.get(cls, ("all",))]


@pytest.mark.parametrize("cls_name, segment", SENTIMENT_CASES)
def test_sentiment_sets_read_as_gluonnlp_does(tmp_path, cls_name, segment):
    # Pretty-printed on some files, one line on others: both are the same JSON list.
    indent = 1 if len(segment) % 2 else None
    (tmp_path / _gluonnlp_file(cls_name, segment)).write_text(
        json.dumps(PAIRS, ensure_ascii=False, indent=indent), encoding="utf-8")
    name = SENTIMENT[cls_name]
    ours = gluon_hub.load_dataset(name, segment=segment, root=str(tmp_path))
    reference = _without_download(getattr(gluonnlp.data, cls_name))
    theirs = reference(segment, root=str(tmp_path)) if cls_name in SENTIMENT_SEGMENTS else reference(
        root=str(tmp_path))
    assert list(ours) == list(theirs) == PAIRS
    if segment == "all":  # no segment to give, as in GluonNLP
        assert list(gluon_hub.load_dataset(name, root=str(tmp_path))) == PAIRS


@pytest.mark.parametrize("text, line, match", [
    ('[["good film", 1],\n ["bad film", 0],\n ["oops", 1\n]', 4, "not valid JSON"),
    ('[\n ["good film", 1],\n ["bad film", 0],\n\n  ["no label"],\n ["x", 1]\n]', 5,
     r'sample 2 is \["no label"\], expected \[text, integer label\]'),
    ('[["a", 1], ["b", "1"]]', 1, "sample 1 is"),
    ('{"text": "a", "label": 1}', 1, "expected a JSON list"),
])
def test_malformed_sentiment_files_name_the_file_and_line(tmp_path, text, line, match):
    path = tmp_path / _gluonnlp_file("MR", "all")
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=match) as exc:
        gluon_hub.load_dataset("mr", root=str(tmp_path))
    assert f"{path}:{line}:" in str(exc.value)


def test_sentiment_missing_file_names_it(tmp_path):
    with pytest.raises(FileNotFoundError, match="all-9e7bd1da.json"):
        gluon_hub.load_dataset("subj", root=str(tmp_path))
    with pytest.raises(ValueError, match="no segment 'val'"):
        gluon_hub.load_dataset("sst_1", segment="val", root=str(tmp_path))


def test_sentiment_files_are_gluonnlps():
    for cls_name, name in SENTIMENT.items():
        cls = getattr(gluonnlp.data, cls_name)
        ours = dataset_files(name)
        segments = SENTIMENT_SEGMENTS.get(cls_name, ("all",))
        assert tuple(ours) == gluon_hub.dataset_info(name).segments == segments
        if cls_name == "IMDB":
            source = inspect.getsource(cls.__init__)
            published = dict(re.findall(r"'(\w+\.json)',\s*'([0-9a-f]{40})'", source))
            for segment, ref in ours.items():
                assert ref.hash == f"sha1:{published[f'{segment}.json']}" and ref.extract is None
                assert ref.urls == (_get_repo_file_url("gluon/dataset/imdb", f"{segment}.json"),)
            continue
        for segment, ((archive, archive_sha1), (member, sha1)) in cls._data_file(None).items():
            ref = ours[segment]
            assert (ref.archive_hash, ref.hash) == (f"sha1:{archive_sha1}", f"sha1:{sha1.strip()}")
            assert ref.urls == (_get_repo_file_url(cls._repo_dir(None), archive),) and ref.extract == member
