"""SQuAD 1.1 and 2.0 reading comprehension, one record per question."""

from __future__ import annotations

import json
import os
from typing import Any, NamedTuple

from .._data_specs import dataset_files
from ._base import TextDataset, dataset_file, read_text

_VERSIONS = ("1.1", "2.0")
_SEGMENTS = ("train", "dev")


class SQuADRecord(NamedTuple):
    """One SQuAD 1.1 question, as GluonNLP 0.10's 6-field SQuAD tuple."""

    record_index: int
    question_id: str
    question: str
    context: str
    answers: list[str]
    answer_starts: list[int]


class SQuAD2Record(NamedTuple):
    """One SQuAD 2.0 question: the 1.1 fields, then whether it has no answer."""

    record_index: int
    question_id: str
    question: str
    context: str
    answers: list[str]
    answer_starts: list[int]
    is_impossible: bool


class SQuAD(TextDataset):
    """SQuAD, flattened to one :class:`SQuADRecord` (or :class:`SQuAD2Record`) per question.

    Parameters
    ----------
    segment : ``"train"`` or ``"dev"``.
    version : ``"1.1"`` or ``"2.0"``; 2.0 records end with ``is_impossible``.
    root : a directory holding ``{train,dev}-v{version}.json``; default: the cache.

    Examples
    --------
    >>> import gluon_hub
    >>> squad = gluon_hub.load_dataset("squad", segment="dev", version="2.0")  # doctest: +SKIP
    """

    def __init__(
        self, segment: str = "train", version: str = "1.1", root: str | os.PathLike[str] | None = None
    ) -> None:
        if version not in _VERSIONS:
            raise ValueError(f"SQuAD version must be one of {_VERSIONS}, got {version!r}")
        if segment not in _SEGMENTS:
            raise ValueError(f"SQuAD segment must be one of {_SEGMENTS}, got {segment!r}")
        self.segment, self.version = segment, version
        ref = dataset_files("squad")[f"{version}/{segment}"]
        path = dataset_file(ref, root, [f"{segment}-v{version}.json"])
        super().__init__(parse_squad(json.loads(read_text(path)), with_impossible=version == "2.0"))


def parse_squad(document: dict[str, Any], with_impossible: bool) -> list[tuple]:
    """Records of a SQuAD JSON document (``{"data": [{"paragraphs": [...]}, ...]}``)."""
    try:
        articles = document["data"]
    except (KeyError, TypeError):
        raise ValueError("not a SQuAD document: the top-level object has no 'data' list") from None
    records: list[tuple] = []
    for article in articles:
        for paragraph in article["paragraphs"]:
            context = paragraph["context"]
            for qa in paragraph["qas"]:
                answers = [a["text"] for a in qa["answers"]]
                starts = [a["answer_start"] for a in qa["answers"]]
                fields = (len(records), qa["id"], qa["question"], context, answers, starts)
                if with_impossible:
                    records.append(SQuAD2Record(*fields, bool(qa.get("is_impossible", False))))
                else:
                    records.append(SQuADRecord(*fields))
    return records
