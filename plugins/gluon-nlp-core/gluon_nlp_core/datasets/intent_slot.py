"""ATIS and SNIPS: queries with per-token slot labels and intents (joint intent/slot tagging)."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path, PurePosixPath

import numpy as np

from .._data_specs import dataset_files
from ..text.vocab import Vocab
from ._base import TextDataset, check_segment, dataset_file


def file_lines(text: str) -> list[str]:
    """Lines as Python's text files split them (at ``\n``, ``\r\n`` or ``\r`` only)."""
    parts = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if parts[-1] == "":
        parts.pop()
    return parts


class _IntentSlot(TextDataset):
    _name = ""
    segments = ("train", "dev", "test")

    def __init__(self, segment: str = "train", root: str | os.PathLike[str] | None = None) -> None:
        check_segment(self._name, segment, self.segments)
        self.segment = segment
        self._files = _Files(self._name, root)
        super().__init__(self._samples(segment))

    def _samples(self, segment: str) -> list[tuple[list[str], list[str], np.ndarray]]:
        names = [f"{segment}_sentence.txt", f"{segment}_tags.txt", f"{segment}_intent.txt"]
        (sentences, where_s), (tags, where_t), (intents, where_i) = (
            self._files.text(name) for name in names
        )
        # GluonNLP splits sentences and tags at any Unicode line boundary, intents only
        # where text files end lines; so do these.
        sentence_lines, tag_lines = sentences.splitlines(), tags.splitlines()
        intent_lines = [line.strip() for line in file_lines(intents)]
        counts = {where_s: len(sentence_lines), where_t: len(tag_lines), where_i: len(intent_lines)}
        if len(set(counts.values())) != 1:
            shortest = min(counts.values())
            raise ValueError(
                f"{max(counts, key=counts.__getitem__)}:{shortest + 1}: no matching line in the "
                f"other files ({', '.join(f'{k}: {v} lines' for k, v in counts.items())}); "
                "each query needs one line in each of the three files"
            )
        vocab = self.intent_vocab
        samples = []
        for number, (words, labels, intent) in enumerate(
            zip(sentence_lines, tag_lines, intent_lines), start=1
        ):
            tokens, slots = words.split(" "), labels.split(" ")
            if len(tokens) != len(slots):
                raise ValueError(
                    f"{where_t}:{number}: {len(slots)} slot labels for the {len(tokens)} tokens "
                    f"of line {number} of {where_s}"
                )
            ids = np.array([vocab[name] for name in intent.split(";")], dtype=np.int32)
            samples.append((tokens, slots, ids))
        return samples

    @property
    def intent_vocab(self) -> Vocab:
        """The published intent vocabulary: a sample's intent ids index it."""
        return Vocab.from_json(self._files.text("intent_vocab.json")[0])

    @property
    def slot_vocab(self) -> Vocab:
        """The published slot-label vocabulary."""
        return Vocab.from_json(self._files.text("slot_vocab.json")[0])


class _Files:
    """The files of a published zip: from ``root`` (the files, or the zip) or the cache."""

    def __init__(self, name: str, root: str | os.PathLike[str] | None) -> None:
        ref = dataset_files(name)["archive"]
        self._zip_name = PurePosixPath(ref.urls[0]).name
        self._folder = Path(root).expanduser() if root is not None else None
        if self._folder is not None and not (self._folder / self._zip_name).is_file():
            self._zip: Path | None = None
        else:
            self._zip = dataset_file(ref, root, [self._zip_name])

    def text(self, member: str) -> tuple[str, str]:
        """A file's text and the name errors give it."""
        if self._zip is None:
            assert self._folder is not None
            path = self._folder / member
            if not path.is_file():
                raise FileNotFoundError(
                    f"{self._folder} holds neither {member} nor {self._zip_name}; put them "
                    "there or leave root unset to download them through the cache"
                )
            return path.read_bytes().decode("utf-8"), str(path)
        with zipfile.ZipFile(self._zip) as zf:
            try:
                data = zf.read(member)
            except KeyError:
                raise FileNotFoundError(f"{self._zip} has no member {member}") from None
        return data.decode("utf-8"), f"{self._zip}:{member}"


class ATIS(_IntentSlot):
    """ATIS (Microsoft CNTK's release): ``(tokens, slot labels, intent ids)`` per query, the
    ids an ``int32`` array indexing :attr:`intent_vocab` (``;``-joined intents give several).

    ``segment`` is ``"train"``, ``"dev"`` or ``"test"``; ``root`` may hold the published
    zip or its files (``train_sentence.txt``, ``train_tags.txt``, ``train_intent.txt``,
    ``intent_vocab.json``, ``slot_vocab.json``).
    """

    _name = "atis"


class SNIPS(_IntentSlot):
    """SNIPS (2017 custom intent engines): the same samples and files as :class:`ATIS`."""

    _name = "snips"
