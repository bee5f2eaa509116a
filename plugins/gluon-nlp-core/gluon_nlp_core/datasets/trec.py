"""TREC question classification (Li & Roth), six coarse classes."""

from __future__ import annotations

import json
import os
from pathlib import Path

from .._data_specs import dataset_files
from ._base import TextDataset, check_segment, dataset_file

#: Coarse classes in GluonNLP's label order: a sample's label indexes this tuple.
TREC_CLASSES = ("DESC", "ENTY", "ABBR", "HUM", "LOC", "NUM")

# The original distribution's file names, accepted in ``root`` next to GluonNLP's JSON.
_ORIGINAL_NAMES = {"train": "train_5500.label", "test": "TREC_10.label"}


class TREC(TextDataset):
    """TREC questions: ``[question, coarse_label]`` with the label an index into ``TREC_CLASSES``.

    ``root`` may hold GluonNLP's JSON files or the original ``LABEL:fine question`` line
    files (``train_5500.label``, ``TREC_10.label``).
    """

    segments = ("train", "test")

    def __init__(self, segment: str = "train", root: str | os.PathLike[str] | None = None) -> None:
        check_segment("trec", segment, self.segments)
        self.segment = segment
        ref = dataset_files("trec")[segment]
        json_name = ref.extract or ""
        path = dataset_file(ref, root, [json_name, _ORIGINAL_NAMES[segment]])
        if path.name == json_name:
            with open(path, encoding="utf-8") as f:
                samples = [[text, int(label)] for text, label in json.load(f)]
        else:
            samples = parse_trec_lines(_read_latin_or_utf8(path))
        super().__init__(samples)


def _read_latin_or_utf8(path: Path) -> str:
    # The original files are Latin-1 in places; fall back to it where UTF-8 fails.
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def parse_trec_lines(text: str) -> list[list]:
    """``[question, coarse label index]`` of each ``COARSE:fine question`` line."""
    samples: list[list] = []
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line:
            continue
        label, _, question = line.partition(" ")
        coarse = label.split(":", 1)[0]
        if coarse not in TREC_CLASSES or ":" not in label:
            raise ValueError(
                f"line {number}: expected 'COARSE:fine question' with COARSE one of "
                f"{', '.join(TREC_CLASSES)}, got {line[:60]!r}"
            )
        samples.append([question.strip(), TREC_CLASSES.index(coarse)])
    return samples
