"""Fast BERT tokenization giving exactly the reference's tokens.

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

When the C extension ``_wordpiece`` is built (``pip install`` builds it where a compiler
is found), :func:`wordpiece_engine` returns its ``WordPiece``, which runs these same tiers
and the WordPiece split in C, from a table built here (:func:`native_table`); otherwise a
:class:`CachedWordPiece` over these Python tiers, with the same methods and tokens.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from itertools import chain
from typing import Any, Callable, Iterable

from ._bert_reference import CJK_RANGES, basic_tokenize, tables, wordpiece

try:
    from . import _wordpiece
except ImportError:  # installed without a compiler: the Python tiers give the same tokens
    _wordpiece = None

NATIVE = _wordpiece is not None
"""Whether the C extension is built (and used by default)."""

_ASCII_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]+")
_ASCII_TOKEN = re.compile(r"[A-Za-z0-9]+|[^A-Za-z0-9\s]", re.ASCII)
_MAX_CACHED_WORDS = 1 << 18


@functools.lru_cache(maxsize=1)
def _leaving_bmp() -> list[int]:
    """The few BMP code points that NFD maps out of the BMP (U+FA6C ...)."""
    return [
        cp for cp in range(0x10000)
        if not 0xD800 <= cp <= 0xDFFF
        and max(unicodedata.normalize("NFD", chr(cp))) > "\uffff"
    ]


@functools.lru_cache(maxsize=1)
def _beyond_bmp() -> re.Pattern[str]:
    """Astral characters, and those that NFD maps there."""
    return re.compile(f"[\U00010000-\U0010FFFF{_char_class(_leaving_bmp())}]")


def _char_class(points: Iterable[int]) -> str:
    ranges: list[list[int]] = []
    for cp in sorted(points):
        if ranges and ranges[-1][1] == cp - 1:
            ranges[-1][1] = cp
        else:
            ranges.append([cp, cp])
    return "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in ranges)


@functools.lru_cache(maxsize=1)
def _bmp_sets() -> tuple[list[int], list[int], list[int]]:
    """BMP code points removed before lower-casing, non-spacing marks, single tokens."""
    clean, split = tables()
    removed = [cp for cp, to in clean.items() if to is None and cp <= 0xFFFF]
    marks = [cp for cp, to in split.items() if to is None and cp <= 0xFFFF]
    singles = [cp for cp, to in split.items() if to is not None and cp <= 0xFFFF]
    singles += [cp for a, b in CJK_RANGES if b <= 0xFFFF for cp in range(a, b + 1)]
    return removed, marks, singles


@functools.lru_cache(maxsize=1)
def _bmp_regexes() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """Removed characters, non-spacing marks, and tokens, for text within the BMP."""
    removed, marks, singles = map(_char_class, _bmp_sets())
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


# The C extension's table: per BMP code point, its class in the last step of the BMP tier
# (precedence as there: marks are dropped first, then single tokens, then spaces, which
# is the regex's \s), plus flags for the steps before it. Keep in step with _wordpiece.c.
_WORD, _MARK, _SINGLE, _SPACE, _REMOVED, _LEAVES = 0, 1, 2, 3, 4, 8


@functools.lru_cache(maxsize=1)
def native_table() -> bytes:
    """The BMP tier's character classes as the C extension reads them, one byte each."""
    removed, marks, singles = _bmp_sets()
    table = bytearray(_SPACE if chr(cp).isspace() else _WORD for cp in range(0x10000))
    for cls, points in ((_SINGLE, singles), (_MARK, marks)):
        for cp in points:
            table[cp] = cls
    for flag, points in ((_REMOVED, removed), (_LEAVES, _leaving_bmp())):
        for cp in points:
            table[cp] |= flag
    return bytes(table)


class CachedWordPiece:
    """Word -> word pieces, remembered: running text repeats most of its words.

    The cache is bounded (cleared when full) so that an endless stream cannot grow it
    without limit; results are new lists built from the cached tuples.
    """

    def __init__(self, split: Callable[[str], list[str]], max_entries: int = _MAX_CACHED_WORDS) -> None:
        self._split = split
        self._max_entries = max_entries
        self._cache: dict[str, tuple[str, ...]] = {}

    def __len__(self) -> int:
        return len(self._cache)

    def split(self, word: str) -> list[str]:
        """The word pieces of one word, bypassing the cache."""
        return list(self._split(word))

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

    def tokenize(self, text: str, lower: bool) -> list[str]:
        """The word pieces of a text: basic tokenization, then WordPiece."""
        return self.pieces(basic_tokenize_fast(text, lower))


def wordpiece_engine(
    vocab: dict[str, int],
    unknown_token: str,
    max_chars: int,
    native: bool = NATIVE,
    max_entries: int = _MAX_CACHED_WORDS,
) -> Any:
    """End-to-end BERT tokenization over ``vocab`` with a word cache: C or Python.

    Both have ``tokenize(text, lower)``, ``pieces(words)``, ``split(word)`` and ``len()``
    (cached words), and give the same tokens; ``native=True`` needs the built extension.
    """
    if native:
        if _wordpiece is None:
            raise ImportError(
                "gluon_nlp_core.text._wordpiece is not built (no C compiler at install?); "
                "reinstall gluon-nlp-core with gcc available, or use native=False"
            )
        return _wordpiece.WordPiece(
            vocab, unknown_token, max_chars, max_entries, native_table, basic_tokenize
        )
    split = functools.partial(
        wordpiece, vocab=vocab, unknown_token=unknown_token, max_chars=max_chars
    )
    return CachedWordPiece(split, max_entries)
