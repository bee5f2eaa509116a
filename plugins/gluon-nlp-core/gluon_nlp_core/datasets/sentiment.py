"""Sentence classification sets GluonNLP 0.10 publishes as JSON: IMDB, MR, SUBJ, SST-1/2, CR, MPQA.

Each file is one JSON list of ``[text, label]`` pairs, and so is each dataset: samples are
``[text, label]`` lists with an ``int`` label, in the file's order, as GluonNLP gives them.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from .._data_specs import dataset_files
from ._base import TextDataset, check_segment, dataset_file, read_text


def read_labelled_json(path: Path) -> list[list[Any]]:
    """The ``[text, label]`` pairs of a JSON list file, each checked.

    Invalid JSON, or an element that is not a ``[str, int]`` pair, raises ``ValueError``
    naming the file and line (and the element's index), so a damaged copy is found at once.
    """
    text = read_text(path)
    try:
        samples = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg} at column {exc.colno})"
                         ) from None
    if not isinstance(samples, list):
        raise ValueError(f"{path}:1: expected a JSON list of [text, label] pairs, "
                         f"got a {type(samples).__name__}")
    for index, sample in enumerate(samples):
        if not (isinstance(sample, list) and len(sample) == 2 and isinstance(sample[0], str)
                and isinstance(sample[1], int) and not isinstance(sample[1], bool)):
            raise ValueError(f"{path}:{_element_line(text, index)}: sample {index} is "
                             f"{json.dumps(sample)[:80]}, expected [text, integer label]")
    return samples


def _element_line(text: str, index: int) -> int:
    """The line on which element ``index`` of the (valid) top-level JSON list starts."""
    decoder = json.JSONDecoder()
    pos = text.index("[") + 1
    for _ in range(index + 1):
        while text[pos] in " \t\r\n,":
            pos += 1
        start = pos
        _, pos = decoder.raw_decode(text, pos)
    return text.count("\n", 0, start) + 1


class _JsonSentences(TextDataset):
    """One GluonNLP sentiment set: a JSON list of ``[text, label]`` per segment.

    ``root``: a directory holding the files under GluonNLP's names (the zip's member,
    ``all-7606efec.json`` for MR, or IMDB's ``train.json``).
    """

    name = ""
    segments: tuple[str, ...] = ("all",)

    def __init__(self, segment: str, root: str | os.PathLike[str] | None) -> None:
        check_segment(self.name, segment, self.segments)
        self.segment = segment
        ref = dataset_files(self.name)[segment]
        filename = ref.extract or ref.filename or ref.urls[0]
        path = dataset_file(ref, root, [filename.rsplit("/", 1)[-1]])
        super().__init__(read_labelled_json(path))


class IMDB(_JsonSentences):
    """IMDB movie reviews: ``[review, rating]``; ratings 1-4 are negative, 7-10 positive,
    and every ``"unsup"`` (unlabelled) review has rating 0."""

    name = "imdb"
    segments = ("train", "test", "unsup")

    def __init__(self, segment: str = "train", root: str | os.PathLike[str] | None = None) -> None:
        super().__init__(segment, root)


class MR(_JsonSentences):
    """Movie Review sentence polarity: ``[sentence, label]``, 1 positive and 0 negative."""

    name = "mr"

    def __init__(self, segment: str = "all", root: str | os.PathLike[str] | None = None) -> None:
        super().__init__(segment, root)


class SUBJ(_JsonSentences):
    """Subjectivity: ``[sentence, label]``, labels 0 and 1 as GluonNLP publishes them."""

    name = "subj"

    def __init__(self, segment: str = "all", root: str | os.PathLike[str] | None = None) -> None:
        super().__init__(segment, root)


class SST_1(_JsonSentences):  # noqa: N801  (GluonNLP's name)
    """Stanford Sentiment Treebank, fine-grained: ``[sentence, label]``, 0 very negative,
    1 negative, 2 neutral, 3 positive, 4 very positive."""

    name = "sst_1"
    segments = ("train", "dev", "test")

    def __init__(self, segment: str = "train", root: str | os.PathLike[str] | None = None) -> None:
        super().__init__(segment, root)


class SST_2(_JsonSentences):  # noqa: N801  (GluonNLP's name)
    """Stanford Sentiment Treebank, binary (neutral sentences removed): ``[sentence, label]``,
    1 positive and 0 negative. Not GLUE's SST-2 (``glue_sst2``), whose files differ."""

    name = "sst_2"
    segments = ("train", "dev", "test")

    def __init__(self, segment: str = "train", root: str | os.PathLike[str] | None = None) -> None:
        super().__init__(segment, root)


class CR(_JsonSentences):
    """Customer product reviews: ``[sentence, label]``, 1 positive and 0 negative."""

    name = "cr"

    def __init__(self, segment: str = "all", root: str | os.PathLike[str] | None = None) -> None:
        super().__init__(segment, root)


class MPQA(_JsonSentences):
    """MPQA opinion polarity: ``[phrase, label]``, 1 positive and 0 negative."""

    name = "mpqa"

    def __init__(self, segment: str = "all", root: str | os.PathLike[str] | None = None) -> None:
        super().__init__(segment, root)
