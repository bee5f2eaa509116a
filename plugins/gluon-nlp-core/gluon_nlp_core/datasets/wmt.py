"""WMT'14 and WMT'16 English-German parallel text, raw or BPE-encoded, as GluonNLP 0.10 publishes it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

from .._data_specs import dataset_files
from ..text.vocab import Vocab
from ._base import TextDataset, check_segment, dataset_file, read_text

_LANGUAGES = ("de", "en")


def read_lines(path: Path) -> list[str]:
    """The stripped lines of a text file, split where Python's text files split them
    (``\\n``, ``\\r\\n``, ``\\r``) and nowhere else."""
    with open(path, encoding="utf-8") as f:
        return [line.strip() for line in f]


def parallel_pairs(src_path: Path, tgt_path: Path) -> list[tuple[str, str]]:
    """Line-aligned ``(source, target)`` pairs, pairs with an empty side dropped.

    Files of different lengths are refused, naming the first line without a counterpart:
    a misaligned corpus would otherwise train on wrong pairs without a word.
    """
    src, tgt = read_lines(src_path), read_lines(tgt_path)
    if len(src) != len(tgt):
        longer, count = (src_path, len(tgt)) if len(src) > len(tgt) else (tgt_path, len(src))
        raise ValueError(
            f"{longer}:{count + 1}: no matching line in {tgt_path if longer == src_path else src_path} "
            f"({src_path.name} has {len(src)} lines, {tgt_path.name} has {len(tgt)}); "
            "the two sides of a parallel corpus must have one line per sentence each"
        )
    return [(s, t) for s, t in zip(src, tgt) if s and t]


class _WMT(TextDataset):
    _name = ""
    segments: tuple[str, ...] = ()
    _bpe = False
    _has_full = False

    def __init__(
        self,
        segment: str | Sequence[str] = "train",
        src_lang: str = "en",
        tgt_lang: str = "de",
        full: bool = False,
        root: str | os.PathLike[str] | None = None,
    ) -> None:
        chosen = [segment] if isinstance(segment, str) else list(segment)
        for one in chosen:
            check_segment(self._name, one, self.segments)
        if {src_lang, tgt_lang} != set(_LANGUAGES):
            raise ValueError(
                f"{self._name} translates between 'en' and 'de'; got src_lang={src_lang!r}, "
                f"tgt_lang={tgt_lang!r}"
            )
        if full and not self._has_full:
            raise ValueError(f"{self._name} has no full test set; full=True is for WMT2014 only")
        self.segment, self.src_lang, self.tgt_lang, self.full = segment, src_lang, tgt_lang, full
        self._root = root
        pairs: list[tuple[str, str]] = []
        for one in chosen:
            pairs.extend(parallel_pairs(self._path(self._file_name(one, src_lang)),
                                        self._path(self._file_name(one, tgt_lang))))
        super().__init__(pairs)

    def _file_name(self, segment: str, lang: str) -> str:
        bpe = ".tok.clean.bpe.32000" if segment == "train" else ".tok.bpe.32000"
        stem = segment + (bpe if self._bpe else "")
        if segment == "newstest2014" and self._has_full:
            # WMT'14's filtered test set keeps the translation direction apart.
            role = "full" if self.full else ("src" if lang == self.src_lang else "ref")
            return f"{stem}.{role}.{lang}"
        return f"{stem}.{lang}"

    def _path(self, name: str) -> Path:
        return dataset_file(dataset_files(self._name)[name], self._root, [name])

    def _vocab(self) -> Vocab:
        if not self._bpe:
            raise AttributeError(f"{self._name} publishes no vocabulary; use {self._name}_bpe's")
        ref = dataset_files(self._name)["vocab"]
        return Vocab.from_json(read_text(dataset_file(ref, self._root, [ref.extract or ""])))

    @property
    def src_vocab(self) -> Vocab:
        """The published BPE vocabulary (shared by both languages)."""
        return self._vocab()

    @property
    def tgt_vocab(self) -> Vocab:
        """The published BPE vocabulary (shared by both languages)."""
        return self._vocab()


class WMT2014(_WMT):
    """WMT'14 English-German sentence pairs ``(source, target)``, lines stripped, empty pairs dropped.

    Parameters
    ----------
    segment : ``"train"`` or ``"newstest2009"`` ... ``"newstest2014"``, or a list of them
        (concatenated).
    src_lang, tgt_lang : ``"en"`` and ``"de"``, in either order.
    full : newstest2014's full test set instead of the filtered one (whose source and
        reference files depend on the direction).
    root : a directory holding the files under their published names (``train.en``,
        ``newstest2014.src.en`` ...).
    """

    _name = "wmt2014"
    segments = ("train", *(f"newstest{year}" for year in range(2009, 2015)))
    _has_full = True


class WMT2014BPE(WMT2014):
    """WMT'14 English-German, tokenized and BPE-encoded (32k joint merges); ``src_vocab`` and
    ``tgt_vocab`` give the published vocabulary. Parameters as :class:`WMT2014`."""

    _name = "wmt2014_bpe"
    _bpe = True


class WMT2016(_WMT):
    """WMT'16 English-German sentence pairs; ``segment`` is ``"train"`` or ``"newstest2012"``
    ... ``"newstest2016"`` (or a list). Other parameters as :class:`WMT2014`, without ``full``."""

    _name = "wmt2016"
    segments = ("train", *(f"newstest{year}" for year in range(2012, 2017)))

    def __init__(
        self,
        segment: str | Sequence[str] = "train",
        src_lang: str = "en",
        tgt_lang: str = "de",
        root: str | os.PathLike[str] | None = None,
    ) -> None:
        super().__init__(segment, src_lang, tgt_lang, False, root)


class WMT2016BPE(WMT2016):
    """WMT'16 English-German, tokenized and BPE-encoded (32k joint merges), with its vocabulary."""

    _name = "wmt2016_bpe"
    _bpe = True
