"""The BERT basic and WordPiece algorithms exactly as GluonNLP 0.10 runs them, in Python.

This is the definition the fast tiers (:mod:`._bert_fast`) are checked against, and what
they run on text outside the Basic Multilingual Plane. GluonNLP 0.10 (unlike Google's
original BERT code) NFD-normalizes and drops non-spacing marks (``Mn``) in cased mode too,
and lower-cases the whole text at once (so Python's final-sigma rule applies); both are
kept here. Checked against GluonNLP's Cython tokenizer on every code point, in contexts.

The per-character passes run as ``str.translate`` with tables built once from
``unicodedata``, so the loop over characters happens in C.
"""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata
from typing import Container, Iterator

# CJK ideograph blocks that BERT surrounds with spaces (CJK Unified Ideographs, their
# extensions A-E and the compatibility blocks); Hangul and kana are not in them.
CJK_RANGES = (
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B820, 0x2CEAF),
    (0xF900, 0xFAFF),
    (0x2F800, 0x2FA1F),
)

# Planes 4-13 hold no characters in any Unicode version so far, and 15-16 are private
# use (category Co, which no pass touches): scanning the rest is exact and 3x faster.
_SCANNED = (range(0, 0x40000), range(0xE0000, 0xF0000))


def _scanned_chars() -> Iterator[str]:
    return map(chr, itertools.chain(*_SCANNED))


_CJK_RE = re.compile("([" + "".join(f"{chr(a)}-{chr(b)}" for a, b in CJK_RANGES) + "])")
_KEPT_CONTROLS = frozenset("\t\n\r")


def is_punctuation(char: str) -> bool:
    """Non-alphanumeric ASCII symbols and every Unicode ``P*`` character."""
    cp = ord(char)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(char).startswith("P")


@functools.lru_cache(maxsize=1)
def tables() -> tuple[dict[int, str | None], dict[int, str | None]]:
    """Translation tables of the two character passes, from one scan of all code points."""
    clean: dict[int, str | None] = {0: None, 0xFFFD: None}
    split: dict[int, str | None] = {
        cp: f" {chr(cp)} " for cp in range(128) if is_punctuation(chr(cp))
    }
    for char, category in zip(_scanned_chars(), map(unicodedata.category, _scanned_chars())):
        first = category[0]
        if first not in "CZMP":  # letters, numbers, symbols: no pass touches them
            continue
        if category in ("Cc", "Cf") and char not in _KEPT_CONTROLS:
            clean[ord(char)] = None
        elif category == "Zs" or char in _KEPT_CONTROLS:
            clean[ord(char)] = " "
        elif category == "Mn":
            split[ord(char)] = None
        elif first == "P":
            split[ord(char)] = f" {char} "
    return clean, split


def basic_tokenize(text: str, lower: bool) -> list[str]:
    """Clean, space CJK ideographs, (lower), NFD, drop ``Mn``, split on punctuation and space."""
    clean, split = tables()
    text = _CJK_RE.sub(r" \1 ", text.translate(clean)).strip()
    if lower:
        text = text.lower()
    return unicodedata.normalize("NFD", text).translate(split).split()


def wordpiece(word: str, vocab: Container[str], unknown_token: str, max_chars: int) -> list[str]:
    """Greedy longest-match-first split of one word; the whole word is unknown if any part is."""
    if len(word) > max_chars:
        return [unknown_token]
    pieces = []
    start, n = 0, len(word)
    while start < n:
        end = n
        while start < end:
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in vocab:
                break
            end -= 1
        else:
            return [unknown_token]
        pieces.append(piece)
        start = end
    return pieces
