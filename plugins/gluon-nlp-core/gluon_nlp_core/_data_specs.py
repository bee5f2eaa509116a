"""The datasets gluon-nlp-core registers, and the published files each one reads.

Imports only the hub's specs and the stdlib (listing must stay cheap). File hashes and
archive names live in ``dataset_files.json``; this module turns them into ``FileRef``. Groups of
datasets added later are described whole, metadata and files, by a ``datasets/*_datasets.json``
each (``{"datasets": {name: {"factory", "task", "segments", "description", "license", "paper",
"base", "files"}}}``).
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any

from gluon_hub import DatasetSpec, FileRef

_DATASETS = "gluon_nlp_core.datasets"


@functools.lru_cache(maxsize=1)
def _groups() -> dict[str, dict[str, Any]]:
    """Every dataset of the ``datasets/*_datasets.json`` files, by name."""
    folder = resources.files("gluon_nlp_core").joinpath("datasets")
    found: dict[str, dict[str, Any]] = {}
    for path in sorted((f for f in folder.iterdir() if f.name.endswith("_datasets.json")), key=lambda f: f.name):
        found.update(json.loads(path.read_text("utf-8"))["datasets"])
    return found


@functools.lru_cache(maxsize=1)
def _file_table() -> dict[str, Any]:
    text = resources.files("gluon_nlp_core").joinpath("dataset_files.json").read_text("utf-8")
    return {**json.loads(text), **_groups()}


def _file_ref(entry: dict[str, Any], base: str, mirror: str) -> FileRef:
    if "urls" in entry:
        # "filename": the file's path on the GluonNLP mirror too, so GLUON_HUB_MIRRORS serve it.
        return FileRef(hash=f"sha1:{entry['sha1']}", urls=tuple(entry["urls"]), filename=entry.get("filename"))
    filename = base + entry["archive"]
    return FileRef(
        hash=f"sha1:{entry['sha1']}",
        filename=filename,
        urls=(mirror + filename,),
        extract=entry["member"],
        archive_hash=f"sha1:{entry['archive_sha1']}",
    )


def dataset_files(name: str) -> dict[str, FileRef]:
    """The published files of one dataset, keyed as in ``dataset_files.json`` (``"train"``)."""
    table = _file_table()
    if name not in table or name.startswith("_"):
        raise KeyError(f"no published files are listed for dataset {name!r}")
    mirror = table["_mirror"]
    base = table[name].get("base", "")
    return {key: _file_ref(entry, base, mirror) for key, entry in table[name]["files"].items()}


def _unique(files: dict[str, FileRef]) -> tuple[FileRef, ...]:
    return tuple(dict.fromkeys(files.values()))


# GLUE tasks whose segments are train, dev and test: name, class, task, description, license.
_GLUE_REST = (
    ("glue_cola", "GlueCoLA", "text-classification",
     "GLUE CoLA: whether an English sentence is grammatically acceptable.",
     "research use; see https://nyu-mll.github.io/CoLA/"),
    ("glue_stsb", "GlueSTSB", "text-regression",
     "GLUE STS-B: similarity of sentence pairs, a score from 0 to 5.",
     "CC BY-SA 3.0 and other sources; see the STS Benchmark page"),
    ("glue_qqp", "GlueQQP", "text-classification",
     "GLUE QQP: whether two Quora questions ask the same thing.",
     "Quora's terms of service (non-commercial research)"),
    ("glue_qnli", "GlueQNLI", "text-classification",
     "GLUE QNLI: whether a Wikipedia sentence answers a question (from SQuAD).",
     "CC BY-SA 4.0"),
    ("glue_rte", "GlueRTE", "text-classification",
     "GLUE RTE: whether a sentence entails another (RTE 1, 2, 3 and 5).",
     "research use; see the RTE challenges"),
    ("glue_wnli", "GlueWNLI", "text-classification",
     "GLUE WNLI: Winograd schemas as sentence-pair entailment.",
     "CC BY 4.0"),
)


def _group_spec(name: str, entry: dict[str, Any]) -> DatasetSpec:
    meta = {key: entry[key] for key in ("task", "description", "license", "paper") if key in entry}
    return DatasetSpec(name=name, factory=f"{_DATASETS}.{entry['factory']}", files=_unique(dataset_files(name)),
                       segments=tuple(entry["segments"]), **meta)


def dataset_specs() -> list[DatasetSpec]:
    """Specs of SQuAD, the nine GLUE tasks, TREC, IWSLT2015 en-vi, WikiText-2/103 and the
    datasets of every ``datasets/*_datasets.json``."""

    def spec(name: str, factory: str, **meta: Any) -> DatasetSpec:
        return DatasetSpec(
            name=name, factory=f"{_DATASETS}.{factory}", files=_unique(dataset_files(name)), **meta
        )

    return [
        spec(
            "squad",
            "squad:SQuAD",
            task="question-answering",
            segments=("train", "dev"),
            description="Stanford Question Answering Dataset; version='1.1' or '2.0' "
            "(2.0 adds unanswerable questions). One record per question.",
            license="CC BY-SA 4.0",
            paper="https://arxiv.org/abs/1606.05250",
        ),
        spec(
            "glue_sst2",
            "glue:GlueSST2",
            task="text-classification",
            segments=("train", "dev", "test"),
            description="GLUE SST-2: binary sentiment of movie-review sentences.",
            license="no explicit license; see https://nlp.stanford.edu/sentiment/",
            paper="https://arxiv.org/abs/1804.07461",
        ),
        spec(
            "glue_mrpc",
            "glue:GlueMRPC",
            task="text-classification",
            segments=("train", "dev", "test"),
            description="GLUE MRPC: whether two news sentences are paraphrases "
            "(split into train/dev with GLUE's dev ids).",
            license="Microsoft Research Paraphrase Corpus terms (research use)",
            paper="https://arxiv.org/abs/1804.07461",
        ),
        spec(
            "glue_mnli",
            "glue:GlueMNLI",
            task="text-classification",
            segments=("train", "dev_matched", "dev_mismatched", "test_matched", "test_mismatched"),
            description="GLUE MultiNLI: entailment, neutral or contradiction of sentence pairs.",
            license="OANC (free) and CC BY-SA 3.0 sources; see the MultiNLI paper",
            paper="https://arxiv.org/abs/1704.05426",
        ),
        *(
            spec(name, f"glue:{cls}", task=task, segments=("train", "dev", "test"),
                 description=description, license=license,
                 paper="https://arxiv.org/abs/1804.07461")
            for name, cls, task, description, license in _GLUE_REST
        ),
        spec(
            "trec",
            "trec:TREC",
            task="text-classification",
            segments=("train", "test"),
            description="TREC question classification into 6 coarse classes.",
            license="research use; see https://cogcomp.seas.upenn.edu/Data/QA/QC/",
            paper="https://aclanthology.org/C02-1150",
        ),
        spec(
            "iwslt2015",
            "translation:IWSLT2015",
            task="translation",
            segments=("train", "val", "test"),
            description="IWSLT'15 English-Vietnamese (Stanford NMT preprocessing), "
            "either direction.",
            license="TED talk transcripts: CC BY-NC-ND 4.0",
            paper="https://nlp.stanford.edu/projects/nmt/",
        ),
        spec(
            "wikitext2",
            "language_model:WikiText2",
            task="language-modeling",
            segments=("train", "val", "test"),
            description="WikiText-2 tokenized Wikipedia articles (2M training tokens).",
            license="CC BY-SA 3.0",
            paper="https://arxiv.org/abs/1609.07843",
        ),
        spec(
            "wikitext103",
            "language_model:WikiText103",
            task="language-modeling",
            segments=("train", "val", "test"),
            description="WikiText-103 tokenized Wikipedia articles (103M training tokens).",
            license="CC BY-SA 3.0",
            paper="https://arxiv.org/abs/1609.07843",
        ),
        *(_group_spec(name, entry) for name, entry in _groups().items()),
    ]
