"""Fast BERT basic tokenization giving exactly the reference's tokens.

The reference (:mod:`._bert_reference`) inserts spaces around punctuation and CJK
ideographs and splits; here one regex *finds* the tokens instead. Three tiers, by what
the text holds:

* ASCII only: drop control characters, lower-case, one ASCII regex;
* Basic Multilingual Plane only: the same with regex classes built from the reference's
  own tables (``re`` compiles BMP classes to bitmaps, so they cost O(1) per character),
  with ``str.lower`` and NFD in between;
* anything else (astral characters, or the few that NFD maps there): the reference.

Why the order of steps may differ from the reference: spaces it inserts around CJK and
punctuation, and whitespace it normalizes to ``" "``, are neither cased nor
case-ignorable, so they never change Python's final-sigma lower-casing; and control
characters (some case-ignorable) are still removed before lower-casing. The tests check
every BMP character in several contexts against the reference.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from itertools import chain
from typing import Callable, Iterable

from ._bert_reference import CJK_RANGES, basic_tokenize, tables

_ASCII_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]+")
_ASCII_TOKEN = re.compile(r"[A-Za-z0-9]+|[^A-Za-z0-9\s]", re.ASCII)


@functools.lru_cache(maxsize=1)
def _beyond_bmp() -> re.Pattern[str]:
    """Astral characters, and the few BMP ones that NFD maps out of the BMP (U+FA6C ...)."""
    leaving = [
        cp for cp in range(0x10000)
        if not 0xD800 <= cp <= 0xDFFF
        and max(unicodedata.normalize("NFD", chr(cp))) > "\uffff"
    ]
    return re.compile(f"[\U00010000-\U0010FFFF{_char_class(leaving)}]")


def _char_class(points: Iterable[int]) -> str:
    ranges: list[list[int]] = []
    for cp in sorted(points):
        if ranges and ranges[-1][1] == cp - 1:
            ranges[-1][1] = cp
        else:
            ranges.append([cp, cp])
    return "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in ranges)


@functools.lru_cache(maxsize=1)
def _bmp_regexes() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """Removed characters, non-spacing marks, and tokens, for text within the BMP."""
    clean, split = tables()
    removed = _char_class(cp for cp, to in clean.items() if to is None and cp <= 0xFFFF)
    marks = _char_class(cp for cp, to in split.items() if to is None and cp <= 0xFFFF)
    singles = _char_class(
        [cp for cp, to in split.items() if to is not None and cp <= 0xFFFF]
        + [cp for a, b in CJK_RANGES if b <= 0xFFFF for cp in range(a, b + 1)]
    )
    return (
        re.compile(f"[{removed}]+"),
        re.compile(f"[{marks}]+"),
        re.compile(f"[{singles}]|[^\\s{singles}]+"),
    )


def basic_tokenize_fast(text: str, lower: bool) -> list[str]:
    """The reference's :func:`basic_tokenize`, faster on ASCII and BMP text."""
    if text.isascii():
        if _ASCII_CONTROLS.search(text):
            text = _ASCII_CONTROLS.sub("", text)
        return _ASCII_TOKEN.findall(text.lower() if lower else text)
    if _beyond_bmp().search(text):
        return basic_tokenize(text, lower)
    removed, marks, token = _bmp_regexes()
    text = removed.sub("", text)
    if lower:
        text = text.lower()
    return token.findall(marks.sub("", unicodedata.normalize("NFD", text)))


class CachedWordPiece:
    """Word -> word pieces, remembered: running text repeats most of its words.

    The cache is bounded (cleared when full) so that an endless stream cannot grow it
    without limit; results are new lists built from the cached tuples.
    """

    def __init__(self, split: Callable[[str], list[str]], max_entries: int = 1 << 18) -> None:
        self._split = split
        self._max_entries = max_entries
        self._cache: dict[str, tuple[str, ...]] = {}

    def pieces(self, words: list[str]) -> list[str]:
        """The word pieces of ``words``, in order."""
        cache = self._cache
        try:  # the common case, every word known, runs in C
            return list(chain.from_iterable(map(cache.__getitem__, words)))
        except KeyError:
            pass
        missing = {w for w in words if w not in cache}
        if len(cache) + len(missing) > self._max_entries:
            cache.clear()
            missing = set(words)
        for word in missing:
            cache[word] = tuple(self._split(word))
        return list(chain.from_iterable(map(cache.__getitem__, words)))
