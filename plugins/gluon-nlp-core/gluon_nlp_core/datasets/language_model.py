"""WikiText-2 and WikiText-103 tokenized Wikipedia text, for language modelling."""

from __future__ import annotations

import os
from typing import Any

from .._data_specs import dataset_files
from ._base import TextDataset, check_segment, dataset_file, read_text


def parse_corpus(
    text: str, flatten: bool, skip_empty: bool, bos: str | None, eos: str | None
) -> list[Any]:
    """Lines split into tokens, wrapped in ``bos``/``eos``; flattened to one token per sample."""
    samples: list[Any] = []
    for line in text.splitlines():
        tokens = line.split()
        if not tokens and skip_empty:
            continue
        sample = ([bos] if bos else []) + tokens + ([eos] if eos else [])
        if flatten:
            samples.extend(sample)
        else:
            samples.append(sample)
    return samples


class _WikiText(TextDataset):
    _name = ""
    segments = ("train", "val", "test")
    _file_names = {"train": "wiki.train.tokens", "val": "wiki.valid.tokens", "test": "wiki.test.tokens"}

    def __init__(
        self,
        segment: str = "train",
        flatten: bool = True,
        skip_empty: bool = True,
        bos: str | None = None,
        eos: str | None = "<eos>",
        root: str | os.PathLike[str] | None = None,
    ) -> None:
        check_segment(self._name, segment, self.segments)
        self.segment = segment
        path = dataset_file(dataset_files(self._name)[segment], root, [self._file_names[segment]])
        super().__init__(parse_corpus(read_text(path), flatten, skip_empty, bos, eos))


class WikiText2(_WikiText):
    """WikiText-2, as GluonNLP 0.10 reads it: by default a flat list of tokens, ``<eos>`` ending lines.

    Parameters
    ----------
    segment : ``"train"``, ``"val"`` or ``"test"``.
    flatten : one token per sample (for BPTT batching); ``False`` gives one list per line.
    skip_empty : drop empty lines (else they become ``[bos, eos]``).
    bos, eos : tokens added at the start and end of each line (``None`` for none).
    root : a directory holding ``wiki.{train,valid,test}.tokens``.
    """

    _name = "wikitext2"


class WikiText103(_WikiText):
    """WikiText-103; the same format and parameters as :class:`WikiText2`."""

    _name = "wikitext103"
