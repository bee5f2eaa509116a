"""The nine GLUE tasks: sentence (pair) classification and regression from tab-separated files.

Samples are lists, as in GluonNLP 0.10: ``[sentence, label]`` for CoLA and SST-2 and
``[sentence1, sentence2, label]`` for the pair tasks, labels kept as the strings of the
files (``"1"``, ``"entailment"``, STS-B's ``"5.000"``); test segments have no label.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Callable, Sequence

from .._data_specs import dataset_files
from ._base import TextDataset, check_segment, dataset_file, read_text


def read_tsv(path: Path, columns: Sequence[str], skip_incomplete: bool = False,
             check: Callable[[list[str]], None] | None = None) -> list[list[str]]:
    """The named columns of a headed tab-separated file, one list per row.

    A row too short for the columns is an error naming the file and line; with
    ``skip_incomplete`` it is dropped with a warning instead (GLUE's QQP has such rows,
    and GluonNLP drops them too). ``check`` raises ``ValueError`` for a bad selected row;
    the error is re-raised with the file and line.
    """
    lines = read_text(path).split("\n")
    header = lines[0].rstrip("\r").split("\t")
    missing = [c for c in columns if c not in header]
    if missing:
        raise ValueError(f"{path}: no column(s) {missing} in the header {header}")
    return _select(path, lines[1:], [header.index(c) for c in columns], len(header), 2,
                   skip_incomplete, check)


def read_headerless_tsv(path: Path, positions: Sequence[int], width: int) -> list[list[str]]:
    """The fields at ``positions`` of a tab-separated file without a header (CoLA's
    train and dev files), one list per row; ``width`` is the number of fields expected."""
    return _select(path, read_text(path).split("\n"), positions, width, 1, False, None)


def _select(path: Path, lines: Sequence[str], at: Sequence[int], width: int, first: int,
            skip_incomplete: bool,
            check: Callable[[list[str]], None] | None) -> list[list[str]]:
    rows = []
    skipped = []
    for number, line in enumerate(lines, start=first):
        line = line.rstrip("\r")
        if not line:
            continue
        fields = line.split("\t")
        if len(fields) <= max(at):
            if not skip_incomplete:
                raise ValueError(f"{path}:{number}: {len(fields)} fields, expected {width}; "
                                 "is the file a complete copy of the published one?")
            skipped.append(number)
            continue
        row = [fields[i] for i in at]
        if check is not None:
            try:
                check(row)
            except ValueError as exc:
                raise ValueError(f"{path}:{number}: {exc}") from None
        rows.append(row)
    if skipped:
        shown = ", ".join(map(str, skipped[:10])) + (" ..." if len(skipped) > 10 else "")
        warnings.warn(f"{path}: skipped {len(skipped)} incomplete row(s), line(s) {shown}",
                      stacklevel=3)
    return rows


class GlueSST2(TextDataset):
    """GLUE SST-2 sentiment: ``[sentence, label]`` (``[sentence]`` in ``test``).

    ``root``: a directory holding GLUE's ``train.tsv``, ``dev.tsv``, ``test.tsv``.
    """

    segments = ("train", "dev", "test")

    def __init__(self, segment: str = "train", root: str | os.PathLike[str] | None = None) -> None:
        check_segment("glue_sst2", segment, self.segments)
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
        check_segment("glue_mnli", segment, self.segments)
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
        check_segment("glue_mrpc", segment, self.segments)
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


class _GlueTask(TextDataset):
    """A GLUE task with segments train, dev and test, each GLUE's ``{segment}.tsv``.

    ``labelled`` names the columns read from train and dev, ``unlabelled`` those of test.
    """

    name = ""
    segments = ("train", "dev", "test")
    labelled: tuple[str, ...] = ()
    unlabelled: tuple[str, ...] = ()
    skip_incomplete = False

    def __init__(self, segment: str = "train", root: str | os.PathLike[str] | None = None) -> None:
        check_segment(self.name, segment, self.segments)
        self.segment = segment
        path = dataset_file(dataset_files(self.name)[segment], root, [f"{segment}.tsv"])
        super().__init__(self._read(path, segment))

    def _read(self, path: Path, segment: str) -> list[list[str]]:
        if segment == "test":
            return read_tsv(path, self.unlabelled, self.skip_incomplete)
        return read_tsv(path, self.labelled, self.skip_incomplete, self._check)

    def _check(self, row: list[str]) -> None:
        """Refuse a bad labelled row (raise ``ValueError``); any row passes by default."""


class GlueCoLA(_GlueTask):
    """GLUE CoLA grammatical acceptability: ``[sentence, label]`` (``[sentence]`` in test).

    The train and dev files have no header: source, label, original mark, sentence.
    ``root``: a directory holding GLUE's ``train.tsv``, ``dev.tsv``, ``test.tsv``.
    """

    name = "glue_cola"
    unlabelled = ("sentence",)

    def _read(self, path: Path, segment: str) -> list[list[str]]:
        if segment == "test":
            return super()._read(path, segment)
        return read_headerless_tsv(path, (3, 1), width=4)


def _score(row: list[str]) -> None:
    try:
        float(row[-1])
    except ValueError:
        raise ValueError(f"similarity score {row[-1]!r} is not a number") from None


class GlueSTSB(_GlueTask):
    """GLUE STS-B sentence similarity: ``[sentence1, sentence2, score]`` (no score in test).

    The score (0 to 5) stays the file's string, as in GluonNLP (``"5.000"``); a score
    that is not a number is refused with its file and line.
    """

    name = "glue_stsb"
    labelled = ("sentence1", "sentence2", "score")
    unlabelled = ("sentence1", "sentence2")

    def _check(self, row: list[str]) -> None:
        _score(row)


class GlueQQP(_GlueTask):
    """GLUE Quora Question Pairs: ``[question1, question2, is_duplicate]`` (no label in test).

    Rows with missing fields, which the published files contain, are skipped with a
    warning naming their lines, as GluonNLP skips them.
    """

    name = "glue_qqp"
    labelled = ("question1", "question2", "is_duplicate")
    unlabelled = ("question1", "question2")
    skip_incomplete = True


class GlueQNLI(_GlueTask):
    """GLUE QNLI: ``[question, sentence, label]``, label ``entailment`` or ``not_entailment``."""

    name = "glue_qnli"
    labelled = ("question", "sentence", "label")
    unlabelled = ("question", "sentence")


class GlueRTE(_GlueTask):
    """GLUE RTE: ``[sentence1, sentence2, label]``, label ``entailment`` or ``not_entailment``."""

    name = "glue_rte"
    labelled = ("sentence1", "sentence2", "label")
    unlabelled = ("sentence1", "sentence2")


class GlueWNLI(_GlueTask):
    """GLUE WNLI (Winograd NLI): ``[sentence1, sentence2, label]``, label ``"0"`` or ``"1"``."""

    name = "glue_wnli"
    labelled = ("sentence1", "sentence2", "label")
    unlabelled = ("sentence1", "sentence2")
