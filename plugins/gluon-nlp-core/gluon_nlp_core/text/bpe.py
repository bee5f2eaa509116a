"""GPT-2 and RoBERTa byte-level BPE, token-for-token GluonNLP 0.10's ``GPT2BPETokenizer``.

Text is split into pre-tokens by GPT-2's pattern, each pre-token's UTF-8 bytes are written
as printable symbols (:func:`byte_to_unicode`), and the merges are applied lowest rank
first. The tokens are those symbols, so any text round-trips through
:class:`GPT2BPEDetokenizer`; ids come from the published vocabularies (``load_vocab``:
``"openai_webtext"`` for GPT-2, ``"openwebtext_ccnews_stories_books_cased"`` for
RoBERTa), which both use the merges of :func:`bpe_ranks_file`.

The tests check the tokens and the round trip against GluonNLP itself, on merges learned
from generated text; ``bench/bench_bpe.py`` compares the speed. Pre-tokenization needs the
``regex`` package (its ``\\p{L}`` / ``\\p{N}`` classes), imported on first use.
"""

from __future__ import annotations

import functools
import os
from typing import Any, Iterable

from gluon_hub import FileRef

from .._vocabulary_specs import bpe_ranks_name, bpe_ranks_ref
from ._hub_fetch import fetch_entry_file

__all__ = [
    "GPT2BPEDetokenizer",
    "GPT2BPETokenizer",
    "bpe_ranks_file",
    "byte_to_unicode",
    "read_bpe_merges",
]

# GPT-2's pre-tokenizer (the published pattern; tokens depend on it exactly): English
# contractions, then letter, digit and other-symbol runs that each keep one leading space,
# then whitespace, where a run before a word leaves its last space to that word.
_PRE_TOKEN = (
    r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
)


@functools.lru_cache(maxsize=1)
def byte_to_unicode() -> tuple[str, ...]:
    """The symbol standing for each byte value 0..255 in byte-level BPE tokens.

    Printable Latin-1 bytes stand for themselves; the other 68 (controls, space, DEL and
    the C1 range, NBSP, soft hyphen) get ``chr(256)``, ``chr(257)``... in byte order, so
    tokens hold no whitespace or control characters and a merges file stays one pair a line.

    Examples
    --------
    >>> table = byte_to_unicode()
    >>> table[ord("A")], table[ord(" ")], table[ord("\\n")]
    ('A', 'Ġ', 'Ċ')
    """
    printable = set(range(0x21, 0x7F)) | set(range(0xA1, 0xAD)) | set(range(0xAE, 0x100))
    symbols = []
    spare = 256
    for byte in range(256):
        if byte in printable:
            symbols.append(chr(byte))
        else:
            symbols.append(chr(spare))
            spare += 1
    return tuple(symbols)


@functools.lru_cache(maxsize=1)
def _tables() -> tuple[dict[int, str], dict[int, str]]:
    """``str.translate`` tables: Latin-1-decoded bytes to symbols, and symbols back.

    Characters below 256 that are no symbol decode to U+FFFF, which the Latin-1 encode
    after the translation refuses, so a stray character is reported, not passed through.
    """
    symbols = byte_to_unicode()
    encode = {byte: sym for byte, sym in enumerate(symbols) if chr(byte) != sym}
    decode: dict[int, str] = {ord(sym): chr(byte) for byte, sym in enumerate(symbols)}
    for code in range(256):
        decode.setdefault(code, "\uffff")
    return encode, decode


def bpe_ranks_file() -> FileRef:
    """The merges GluonNLP 0.10 published for GPT-2 (RoBERTa uses the same file), the hub's
    vocabulary entry ``openai_webtext_bpe_ranks``.

    Examples
    --------
    >>> bpe_ranks_file().extract
    'openai_webtext_bpe_ranks-396d4d8e.json'
    """
    return bpe_ranks_ref()


def read_bpe_merges(path: str | os.PathLike[str]) -> dict[tuple[str, str], int]:
    """The rank of each merge in a merges file (GPT-2's ``vocab.bpe`` layout).

    One merge a line, the two symbols separated by a space, earliest line merged first;
    a first line starting with ``#`` (``#version: 0.2``) is a header, and blank lines are
    ignored. A pair listed twice keeps its later rank, as GluonNLP's reader does.
    """
    ranks: dict[tuple[str, str], int] = {}
    rank = 0  # counts every merge line: a repeated pair must not take another pair's rank
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            if number == 1 and line.startswith("#"):
                continue
            fields = line.split()
            if not fields:
                continue
            if len(fields) != 2:
                raise ValueError(f"{os.fspath(path)}, line {number}: a merge is two symbols "
                                 f"separated by a space, got {line.rstrip()!r}")
            ranks[(fields[0], fields[1])] = rank
            rank += 1
    return ranks


def _require_regex() -> Any:
    try:
        import regex
    except ImportError as err:
        raise ImportError(
            "byte-level BPE pre-tokenization needs the 'regex' package: pip install regex "
            "(one of the plugin's [tokenizers] extra)"
        ) from err
    return regex


class GPT2BPETokenizer:
    """GPT-2's (and RoBERTa's) byte-level BPE: text to tokens, GluonNLP 0.10's exactly.

    Parameters
    ----------
    merges : a merges file (:func:`read_bpe_merges`); by default the published GPT-2 one,
        fetched hash-verified through the hub's cache.
    root : cache directory for the published file instead of the default.
    cache_size : pre-tokens whose pieces are remembered (the cache is emptied when full);
        text repeats words, so most pre-tokens are looked up rather than merged again.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> merges = pathlib.Path(tempfile.mkdtemp()) / "merges.txt"
    >>> _ = merges.write_text("#version: 0.2\\nl o\\nlo w\\nĠ low\\n", encoding="utf-8")
    >>> GPT2BPETokenizer(merges)("low lower")
    ['low', 'Ġlow', 'e', 'r']
    """

    def __init__(self, merges: str | os.PathLike[str] | None = None, *,
                 root: str | os.PathLike[str] | None = None, cache_size: int = 100_000) -> None:
        regex = _require_regex()
        if cache_size < 0:
            raise ValueError(f"cache_size must be >= 0, got {cache_size}")
        if merges is None:
            merges = fetch_entry_file("vocabularies", bpe_ranks_name(), bpe_ranks_file(), root)
        self.merges_path = os.fspath(merges)
        self._ranks = read_bpe_merges(merges)
        self._unranked = max(self._ranks.values(), default=-1) + 1  # above every rank
        self._findall = regex.compile(_PRE_TOKEN).findall
        self._cache: dict[str, list[str]] = {}
        self._cache_size = cache_size

    def __call__(self, text: str) -> list[str]:
        cache = self._cache
        tokens: list[str] = []
        for word in self._findall(text):
            pieces = cache.get(word)
            if pieces is None:
                pieces = self._merge_word(word)
            tokens += pieces
        return tokens

    def tokenize_batch(self, texts: Iterable[str]) -> list[list[str]]:
        """The tokens of each text (one call each, sharing the cache)."""
        return [self(text) for text in texts]

    def _merge_word(self, word: str) -> list[str]:
        """Pieces of one pre-token: its bytes as symbols, then merges by rank."""
        symbols = word.encode("utf-8").decode("latin-1").translate(_tables()[0])
        parts = list(symbols)
        ranks = self._ranks
        missing = self._unranked
        while len(parts) > 1:
            best = missing
            for pair in zip(parts, parts[1:]):
                rank = ranks.get(pair, missing)
                if rank < best:
                    best, first, second = rank, pair[0], pair[1]
            if best == missing:
                break
            joined = first + second
            merged: list[str] = []
            i, last = 0, len(parts) - 1
            while i <= last:
                if i < last and parts[i] == first and parts[i + 1] == second:
                    merged.append(joined)
                    i += 2
                else:
                    merged.append(parts[i])
                    i += 1
            parts = merged
        if len(self._cache) >= self._cache_size:
            self._cache.clear()
        if self._cache_size:
            self._cache[word] = parts
        return parts

    def __repr__(self) -> str:
        return f"GPT2BPETokenizer({self.merges_path!r}, {len(self._ranks)} merges)"


class GPT2BPEDetokenizer:
    """Byte-level BPE tokens back to text: GluonNLP 0.10's ``GPT2BPEDetokenizer``.

    The tokens' symbols are turned back into bytes and decoded as UTF-8 (invalid
    sequences become U+FFFD, as there); a character that is no byte symbol is an error.

    Examples
    --------
    >>> GPT2BPEDetokenizer()(["Hello", ",", "Ġw", "orld", "Ċ"])
    'Hello, world\\n'
    """

    def __call__(self, tokens: Iterable[str]) -> str:
        text = "".join(tokens)
        try:
            raw = text.translate(_tables()[1]).encode("latin-1")
        except UnicodeEncodeError as err:
            bad = text[err.start]
            raise ValueError(
                f"{bad!r} (U+{ord(bad):04X}) at position {err.start} is not a byte-level BPE "
                "symbol: these tokens did not come from a byte-level BPE tokenizer"
            ) from None
        return raw.decode("utf-8", errors="replace")

    def __repr__(self) -> str:
        return "GPT2BPEDetokenizer()"
