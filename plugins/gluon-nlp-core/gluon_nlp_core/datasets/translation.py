"""IWSLT'15 English-Vietnamese parallel text (Stanford NMT's preprocessed release)."""

from __future__ import annotations

import os
from pathlib import Path

from .._data_specs import dataset_files
from ..text.vocab import Vocab
from ._base import TextDataset, check_segment, dataset_file, read_text

_LANGUAGES = ("en", "vi")
_FILE_STEM = {"train": "train", "val": "tst2012", "test": "tst2013"}


class IWSLT2015(TextDataset):
    """IWSLT'15 sentence pairs ``(source, target)``, lines stripped, empty pairs dropped.

    Parameters
    ----------
    segment : ``"train"``, ``"val"`` (tst2012) or ``"test"`` (tst2013).
    src_lang, tgt_lang : ``"en"`` and ``"vi"``, in either order.
    root : a directory holding ``train.en``, ``train.vi``, ``tst2012.en`` ... (and
        ``vocab.en.json``, ``vocab.vi.json`` for the vocabularies).
    """

    segments = ("train", "val", "test")

    def __init__(
        self,
        segment: str = "train",
        src_lang: str = "en",
        tgt_lang: str = "vi",
        root: str | os.PathLike[str] | None = None,
    ) -> None:
        check_segment("iwslt2015", segment, self.segments)
        if {src_lang, tgt_lang} != set(_LANGUAGES):
            raise ValueError(
                f"iwslt2015 translates between 'en' and 'vi'; got src_lang={src_lang!r}, "
                f"tgt_lang={tgt_lang!r}"
            )
        self.segment, self.src_lang, self.tgt_lang = segment, src_lang, tgt_lang
        self._root = root
        src = self._lines(f"{segment}_{src_lang}", f"{_FILE_STEM[segment]}.{src_lang}")
        tgt = self._lines(f"{segment}_{tgt_lang}", f"{_FILE_STEM[segment]}.{tgt_lang}")
        if len(src) != len(tgt):
            raise ValueError(
                f"iwslt2015 {segment}: {len(src)} {src_lang} lines but {len(tgt)} {tgt_lang} lines"
            )
        super().__init__([(s, t) for s, t in zip(src, tgt) if s and t])

    def _path(self, key: str, name: str) -> Path:
        return dataset_file(dataset_files("iwslt2015")[key], self._root, [name])

    def _lines(self, key: str, name: str) -> list[str]:
        # Lines end at "\n" only (as file iteration splits them), not at the other line
        # boundaries str.splitlines() knows, which occur inside some sentences.
        lines = read_text(self._path(key, name)).split("\n")
        if lines[-1] == "":
            lines.pop()
        return [line.strip() for line in lines]

    def _vocab(self, lang: str) -> Vocab:
        return Vocab.from_json(read_text(self._path(f"vocab_{lang}", f"vocab.{lang}.json")))

    @property
    def src_vocab(self) -> Vocab:
        """The published source-language vocabulary."""
        return self._vocab(self.src_lang)

    @property
    def tgt_vocab(self) -> Vocab:
        """The published target-language vocabulary."""
        return self._vocab(self.tgt_lang)
