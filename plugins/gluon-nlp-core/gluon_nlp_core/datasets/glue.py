"""GLUE SST-2, MRPC and MNLI: sentence (pair) classification from tab-separated files.

Samples are lists, as in GluonNLP 0.10: ``[sentence, label]`` for SST-2 and
``[sentence1, sentence2, label]`` for MRPC and MNLI, labels kept as the strings of the
files (``"1"``, ``"entailment"``); test segments have no label.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

from .._data_specs import dataset_files
from ._base import TextDataset, dataset_file, read_text

def _check_segment(name: str, segment: str, segments: Sequence[str]) -> None:
    if segment not in segments:
        raise ValueError(f"{name} has no segment {segment!r}; segments: {', '.join(segments)}")


def read_tsv(path: Path, columns: Sequence[str]) -> list[list[str]]:
    """The named columns of a headed tab-separated file, one list per row."""
    lines = read_text(path).split("\n")
    header = lines[0].rstrip("\r").split("\t")
    missing = [c for c in columns if c not in header]
    if missing:
        raise ValueError(f"{path}: no column(s) {missing} in the header {header}")
    at = [header.index(c) for c in columns]
    rows = []
    for number, line in enumerate(lines[1:], start=2):
        line = line.rstrip("\r")
        if not line:
            continue
        fields = line.split("\t")
        if len(fields) <= max(at):
            raise ValueError(f"{path}:{number}: {len(fields)} fields, expected {len(header)}")
        rows.append([fields[i] for i in at])
    return rows


class GlueSST2(TextDataset):
    """GLUE SST-2 sentiment: ``[sentence, label]`` (``[sentence]`` in ``test``).

    ``root``: a directory holding GLUE's ``train.tsv``, ``dev.tsv``, ``test.tsv``.
    """

    segments = ("train", "dev", "test")

    def __init__(self, segment: str = "train", root: str | os.PathLike[str] | None = None) -> None:
        _check_segment("glue_sst2", segment, self.segments)
        self.segment = segment
        path = dataset_file(dataset_files("glue_sst2")[segment], root, [f"{segment}.tsv"])
        columns = ("sentence",) if segment == "test" else ("sentence", "label")
        super().__init__(read_tsv(path, columns))


class GlueMNLI(TextDataset):
    """GLUE MultiNLI: ``[sentence1, sentence2, gold_label]`` (no label in the test segments).

    ``root``: a directory holding GLUE's ``{segment}.tsv`` files.
    """

    segments = ("train", "dev_matched", "dev_mismatched", "test_matched", "test_mismatched")

    def __init__(self, segment: str = "train", root: str | os.PathLike[str] | None = None) -> None:
        _check_segment("glue_mnli", segment, self.segments)
        self.segment = segment
        path = dataset_file(dataset_files("glue_mnli")[segment], root, [f"{segment}.tsv"])
        columns = ["sentence1", "sentence2"]
        if not segment.startswith("test"):
            columns.append("gold_label")
        super().__init__(read_tsv(path, columns))


_MRPC_STRINGS = ("#1 String", "#2 String")


class GlueMRPC(TextDataset):
    """GLUE MRPC paraphrase pairs: ``[sentence1, sentence2, label]`` (no label in ``test``).

    The published Microsoft files hold train+dev in one file; dev is the pairs whose ids
    GLUE lists. ``root`` may hold GLUE's ``{segment}.tsv`` or those raw files
    (``msr_paraphrase_train.txt``, ``msr_paraphrase_test.txt``, ``mrpc_dev_ids.tsv``).
    """

    segments = ("train", "dev", "test")

    def __init__(self, segment: str = "train", root: str | os.PathLike[str] | None = None) -> None:
        _check_segment("glue_mrpc", segment, self.segments)
        self.segment = segment
        columns = _MRPC_STRINGS if segment == "test" else (*_MRPC_STRINGS, "Quality")
        if root is not None and (Path(root).expanduser() / f"{segment}.tsv").is_file():
            super().__init__(read_tsv(Path(root).expanduser() / f"{segment}.tsv", columns))
            return
        files = dataset_files("glue_mrpc")
        if segment == "test":
            raw = dataset_file(files["raw_test"], root, ["msr_paraphrase_test.txt"])
            super().__init__(read_tsv(raw, columns))
            return
        raw = dataset_file(files["raw_train"], root, ["msr_paraphrase_train.txt"])
        ids_path = dataset_file(files["dev_ids"], root, ["mrpc_dev_ids.tsv", "dev_ids.tsv"])
        dev_ids = {
            tuple(line.strip().split("\t")) for line in read_text(ids_path).split("\n") if line.strip()
        }
        rows = read_tsv(raw, ("#1 ID", "#2 ID", *columns))
        want_dev = segment == "dev"
        super().__init__([row[2:] for row in rows if ((row[0], row[1]) in dev_ids) == want_dev])
