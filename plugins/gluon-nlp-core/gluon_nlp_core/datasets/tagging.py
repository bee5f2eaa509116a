"""CoNLL 2000/2001/2002/2004 and Universal Dependencies 2.1: sentences of tagged tokens.

A sample is a list of columns, each a list with one entry per token (``[words, POS tags,
chunk labels]`` for CoNLL-2000), as GluonNLP 0.10's ``gluonnlp.data.CoNLL*`` give them.
"""

from __future__ import annotations

import gzip
import os
from pathlib import PurePosixPath
from typing import Any

from .._data_specs import _groups, dataset_files
from ._archives import published_member
from ._base import TextDataset, check_segment, dataset_file

_GZIP_MAGIC = b"\x1f\x8b"


def decode_maybe_gzip(data: bytes, encoding: str) -> str:
    """A text file's bytes decoded, gunzipped first where they are gzip (by the magic bytes)."""
    if data[:2] == _GZIP_MAGIC:
        data = gzip.decompress(data)
    return data.decode(encoding)


def parse_columns(text: str, source: str, skip_comments: bool = False) -> list[list[list[str]]]:
    """Blank-line separated sentences of whitespace-separated columns, transposed.

    ``skip_comments`` drops ``#`` lines before a sentence's first token (CoNLL-U). A row
    with a different number of columns from the row above it raises ``ValueError`` naming
    ``source`` and the line: the transposed columns would otherwise be silently cut short.
    """
    sentences: list[list[list[str]]] = []
    rows: list[list[str]] = []
    first_line = 0

    def close() -> None:
        sentences.append([list(column) for column in zip(*rows)])
        rows.clear()

    for number, line in enumerate(text.splitlines(), start=1):
        if not rows and skip_comments and line.startswith("#"):
            continue
        fields = line.split()
        if not fields:
            if rows:
                close()
            continue
        if rows and len(fields) != len(rows[0]):
            raise ValueError(
                f"{source}:{number}: {len(fields)} columns, but the sentence starting at line "
                f"{first_line} has {len(rows[0])}; every token of a sentence needs the same columns"
            )
        if not rows:
            first_line = number
        rows.append(fields)
    if rows:
        close()
    return sentences


class _Tagging(TextDataset):
    _name = ""
    segments: tuple[str, ...] = ()
    _encoding = "utf-8"

    def _check_segment(self, segment: str) -> None:
        check_segment(self._name, segment, self.segments)
        self.segment = segment

    def _parse(self, data: bytes, source: str, skip_comments: bool = False) -> list[list[list[str]]]:
        return parse_columns(decode_maybe_gzip(data, self._encoding), source, skip_comments)

    def _read(self, key: str, root: str | os.PathLike[str] | None) -> list[list[list[str]]]:
        ref = dataset_files(self._name)[key]
        path = dataset_file(ref, root, [PurePosixPath(ref.urls[0]).name])
        return self._parse(path.read_bytes(), str(path))


class CoNLL2000(_Tagging):
    """CoNLL-2000 chunking: ``[words, POS tags, chunk labels]`` per sentence.

    ``segment`` is ``"train"`` or ``"test"``; ``root`` may hold ``train.txt.gz`` /
    ``test.txt.gz`` (or the same files gunzipped, under the same names).
    """

    _name = "conll2000"
    segments = ("train", "test")

    def __init__(self, segment: str = "train", root: str | os.PathLike[str] | None = None) -> None:
        self._check_segment(segment)
        super().__init__(self._read(segment, root))


class CoNLL2001(_Tagging):
    """CoNLL-2001 clause identification: ``[words, POS tags, chunk labels, clause tags]``.

    ``part`` is 1, 2 or 3 (the shared task's three parts); ``segment`` ``"train"``,
    ``"testa"`` or ``"testb"``; ``root`` may hold ``train1``, ``testa2`` ...
    """

    _name = "conll2001"
    segments = ("train", "testa", "testb")

    def __init__(
        self, part: int = 1, segment: str = "train", root: str | os.PathLike[str] | None = None
    ) -> None:
        if part not in (1, 2, 3):
            raise ValueError(f"conll2001 has parts 1, 2 and 3; got part={part!r}")
        self._check_segment(segment)
        self.part = part
        super().__init__(self._read(f"{part}/{segment}", root))


class CoNLL2002(_Tagging):
    """CoNLL-2002 named entities: ``lang="esp"`` gives ``[words, NER labels]``, ``"ned"``
    ``[words, POS tags, NER labels]``. The files are Latin-1. ``root`` may hold
    ``esp.train.gz`` ...
    """

    _name = "conll2002"
    segments = ("train", "testa", "testb")
    _encoding = "latin-1"

    def __init__(
        self, lang: str = "esp", segment: str = "train", root: str | os.PathLike[str] | None = None
    ) -> None:
        if lang not in ("esp", "ned"):
            raise ValueError(f"conll2002 has lang 'esp' (Spanish) and 'ned' (Dutch); got {lang!r}")
        self._check_segment(segment)
        self.lang = lang
        super().__init__(self._read(f"{lang}/{segment}", root))


class CoNLL2004(_Tagging):
    """CoNLL-2004 semantic role labelling: per sentence the columns of the ``words``,
    ``synt``, ``ne`` and ``props`` files side by side (6 or more columns).

    ``segment`` is ``"train"``, ``"dev"`` or ``"test"``; ``root`` may hold the four
    ``.gz`` files (``words.train.gz``, ``synt.train.pred.gz`` ...) or the release's
    ``conll04st-release.tar.gz``.
    """

    _name = "conll2004"
    segments = ("train", "dev", "test")
    _parts = ("word", "synt", "ne", "props")

    def __init__(self, segment: str = "train", root: str | os.PathLike[str] | None = None) -> None:
        self._check_segment(segment)
        files = [published_member(self._name, f"{part}/{segment}", root) for part in self._parts]
        tables = [self._parse(data, source) for data, source in files]
        sources = [source for _, source in files]
        for source, table in zip(sources[1:], tables[1:]):
            _check_aligned(sources[0], tables[0], source, table)
        super().__init__([[column for table in row for column in table] for row in zip(*tables)])


def _check_aligned(first: str, a: list[Any], other: str, b: list[Any]) -> None:
    """Refuse column files whose sentences or tokens do not line up."""
    if len(a) != len(b):
        raise ValueError(f"{first} has {len(a)} sentences but {other} has {len(b)}; "
                         "the files of one segment must describe the same sentences")
    for index, (x, y) in enumerate(zip(a, b), start=1):
        if len(x[0]) != len(y[0]):
            raise ValueError(f"sentence {index}: {len(x[0])} tokens in {first} but "
                             f"{len(y[0])} in {other}")


class UniversalDependencies21(_Tagging):
    """Universal Dependencies 2.1: the 10 CoNLL-U columns per sentence (ids, forms, lemmas,
    UPOS, XPOS, features, heads, relations, enhanced dependencies, misc), ``#`` comment
    lines before a sentence skipped.

    ``lang`` names a treebank as GluonNLP does (``"en"``, ``"en_lines"``, ``"de"`` ...);
    ``segment`` ``"train"``, ``"dev"`` or ``"test"`` (some treebanks lack some). ``root``
    may hold the ``.conllu`` files (``en-ud-train.conllu``) or ``ud-treebanks-v2.1.tgz``.
    """

    _name = "ud21"
    segments = ("train", "dev", "test")

    def __init__(
        self, lang: str = "en", segment: str = "train", root: str | os.PathLike[str] | None = None
    ) -> None:
        self._check_segment(segment)
        members = _groups()[self._name]["members"]
        langs = sorted({key.split("/")[0] for key in members})
        if lang not in langs:
            import difflib

            close = difflib.get_close_matches(lang, langs, n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else f"; known: {', '.join(langs)}"
            raise ValueError(f"ud21 has no treebank {lang!r}{hint}")
        if f"{lang}/{segment}" not in members:
            have = [key.split("/")[1] for key in members if key.startswith(lang + "/")]
            raise ValueError(f"ud21 treebank {lang!r} has no {segment!r} segment; it has {', '.join(have)}")
        self.lang = lang
        data, source = published_member(self._name, f"{lang}/{segment}", root)
        super().__init__(self._parse(data, source, skip_comments=True))
