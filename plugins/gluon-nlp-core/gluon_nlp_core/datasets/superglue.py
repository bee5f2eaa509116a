"""The SuperGLUE tasks from their JSON-lines files: one ``dict`` per line, as GluonNLP 0.10 gives.

Samples keep the files' fields and values (``"label"`` is ``"entailment"`` in RTE, ``True`` in
WSC, ``1`` in COPA); test segments have no label. MultiRC is the exception GluonNLP makes: its
paragraph HTML is split into a sentence list, ``{"text": [...], "questions": [...]}``.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Callable, Sequence

from .._data_specs import dataset_files
from ._base import TextDataset, check_segment, dataset_file, read_text


def read_jsonl(path: Path, fields: Sequence[str] = (),
               check: Callable[[dict[str, Any]], None] | None = None) -> list[dict[str, Any]]:
    """The JSON object of each non-blank line of ``path``, checked to hold ``fields``.

    A line that is not a JSON object, lacks one of ``fields`` or fails ``check`` (which
    raises ``ValueError``) raises ``ValueError`` naming the file and line, so that a
    truncated or hand-edited copy is found at once.
    """
    samples = []
    for number, line in enumerate(read_text(path).split("\n"), start=1):
        if not line.strip():
            continue
        try:
            sample = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}:{number}: not valid JSON ({exc.msg} at column {exc.colno}); "
                             "each line must be one JSON object") from None
        if not isinstance(sample, dict):
            raise ValueError(f"{path}:{number}: expected a JSON object, got {type(sample).__name__}")
        missing = [f for f in fields if f not in sample]
        if missing:
            raise ValueError(f"{path}:{number}: no field(s) {', '.join(map(repr, missing))}; "
                             f"the line has {', '.join(map(repr, sample))}")
        if check is not None:
            try:
                check(sample)
            except ValueError as exc:
                raise ValueError(f"{path}:{number}: {exc}") from None
        samples.append(sample)
    return samples


class _SuperGlueTask(TextDataset):
    """One SuperGLUE task: ``{segment}.jsonl`` per segment, one ``dict`` sample per line.

    ``fields`` must be on every line; ``"label"`` too, except in the test segment.
    ``root``: a directory holding the task's ``train.jsonl``, ``val.jsonl``, ``test.jsonl``.
    """

    name = ""
    segments: tuple[str, ...] = ("train", "val", "test")
    fields: tuple[str, ...] = ()
    labelled = True

    def __init__(self, segment: str = "train", root: str | os.PathLike[str] | None = None) -> None:
        check_segment(self.name, segment, self.segments)
        self.segment = segment
        ref = dataset_files(self.name)[segment]
        path = dataset_file(ref, root, [Path(ref.extract or "").name])
        fields = self.fields + (("label",) if self.labelled and segment != "test" else ())
        super().__init__([self._sample(s) for s in read_jsonl(path, fields, self._check)])

    def _check(self, line: dict[str, Any]) -> None:
        """Refuse a bad line (raise ``ValueError``); any line with the fields passes by default."""

    def _sample(self, line: dict[str, Any]) -> Any:
        """The sample of one line: the line itself, unless a task reshapes it."""
        return line


class SuperGlueRTE(_SuperGlueTask):
    """SuperGLUE RTE: ``{"premise", "hypothesis", "idx", "label"}``, label
    ``"entailment"`` or ``"not_entailment"``."""

    name = "superglue_rte"
    fields = ("premise", "hypothesis", "idx")


class SuperGlueCB(_SuperGlueTask):
    """SuperGLUE CommitmentBank: ``{"premise", "hypothesis", "idx", "label"}``, label
    ``"entailment"``, ``"contradiction"`` or ``"neutral"``."""

    name = "superglue_cb"
    fields = ("premise", "hypothesis", "idx")


class SuperGlueWSC(_SuperGlueTask):
    """SuperGLUE WSC: ``{"text", "target", "idx", "label"}``; ``target`` holds the two
    spans (``span1_text``, ``span1_index``, ``span2_text``, ``span2_index``), ``label`` a bool."""

    name = "superglue_wsc"
    fields = ("text", "target", "idx")


class SuperGlueWiC(_SuperGlueTask):
    """SuperGLUE WiC: ``{"word", "sentence1", "sentence2", "start1", "end1", "start2",
    "end2", "idx", "label"}`` (and the file's ``"version"``), ``label`` a bool."""

    name = "superglue_wic"
    fields = ("word", "sentence1", "sentence2", "start1", "end1", "start2", "end2", "idx")


class SuperGlueCOPA(_SuperGlueTask):
    """SuperGLUE COPA: ``{"premise", "choice1", "choice2", "question", "idx", "label"}``;
    ``question`` is ``"cause"`` or ``"effect"``, ``label`` 0 or 1 (the right choice)."""

    name = "superglue_copa"
    fields = ("premise", "choice1", "choice2", "question", "idx")


# MultiRC paragraphs are HTML: "<b>Sent 1: </b>First sentence.<br><b>Sent 2: </b>...".
_SENTENCE_MARK = re.compile(r"<b>Sent .{1,2}: </b>")


def split_multirc_paragraph(text: str) -> list[str]:
    """The sentences of a MultiRC paragraph: ``Sent N`` marks dropped, split at ``<br>``."""
    return [s for s in _SENTENCE_MARK.sub("", text).split("<br>") if s]


class SuperGlueMultiRC(_SuperGlueTask):
    """SuperGLUE MultiRC: ``{"text": [sentence, ...], "questions": [...]}`` per paragraph;
    each question holds ``question``, ``answers`` (with labels outside test), ``idx``,
    ``sentences_used`` and ``multisent``, as in the file."""

    name = "superglue_multirc"
    fields = ("paragraph",)
    labelled = False  # the labels are on the answers, inside the paragraph

    def _check(self, line: dict[str, Any]) -> None:
        paragraph = line["paragraph"]
        if (not isinstance(paragraph, dict) or not isinstance(paragraph.get("text"), str)
                or "questions" not in paragraph):
            raise ValueError("'paragraph' must be an object with a 'text' string and 'questions'")

    def _sample(self, line: dict[str, Any]) -> dict[str, Any]:
        paragraph = line["paragraph"]
        return {"text": split_multirc_paragraph(paragraph["text"]), "questions": paragraph["questions"]}


class SuperGlueBoolQ(_SuperGlueTask):
    """SuperGLUE BoolQ: ``{"question", "passage", "idx", "label"}``, ``label`` a bool."""

    name = "superglue_boolq"
    fields = ("question", "passage", "idx")


class SuperGlueReCoRD(_SuperGlueTask):
    """SuperGLUE ReCoRD: ``{"source", "passage", "qas", "idx"}``; ``passage`` holds the text
    and its entity spans, ``qas`` the cloze queries (with answers outside test)."""

    name = "superglue_record"
    fields = ("source", "passage", "qas", "idx")
    labelled = False  # the answers are inside ``qas``


class SuperGlueAXb(_SuperGlueTask):
    """SuperGLUE broad-coverage diagnostics: ``{"sentence1", "sentence2", "idx", "label"}``
    (and ``"logic"`` where the file has it). One segment, ``"all"``: ``AX-b.jsonl``."""

    name = "superglue_axb"
    segments = ("all",)
    fields = ("sentence1", "sentence2", "idx")

    def __init__(self, segment: str = "all", root: str | os.PathLike[str] | None = None) -> None:
        super().__init__(segment, root)


class SuperGlueAXg(_SuperGlueTask):
    """SuperGLUE Winogender diagnostics: ``{"premise", "hypothesis", "pair_id", "idx",
    "label"}``. One segment, ``"all"``: ``AX-g.jsonl``."""

    name = "superglue_axg"
    segments = ("all",)
    fields = ("premise", "hypothesis", "pair_id", "idx")

    def __init__(self, segment: str = "all", root: str | os.PathLike[str] | None = None) -> None:
        super().__init__(segment, root)
