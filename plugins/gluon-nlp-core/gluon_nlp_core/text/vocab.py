"""A token <-> index vocabulary that reads and writes GluonNLP 0.10's vocab JSON.

Indexing follows GluonNLP 0.10 exactly, so a vocabulary built here from a counter gives
the same indices as ``gluonnlp.Vocab`` would: the unknown token first, then the named
special tokens (extra ``*_token`` keywords in the order given, then padding, bos, eos),
then ``reserved_tokens``, then counter keys by falling frequency, ties in token order.
"""

from __future__ import annotations

import json
import operator
from collections import Counter
from typing import Any, Iterable, Iterator, Mapping, Sequence, overload

__all__ = ["Vocab", "count_tokens", "BERT_SPECIAL_TOKENS"]

#: The special tokens of GluonNLP's ``BERTVocab``; ``Vocab(counter, **BERT_SPECIAL_TOKENS)``.
BERT_SPECIAL_TOKENS: dict[str, str | None] = {
    "unknown_token": "[UNK]",
    "padding_token": "[PAD]",
    "bos_token": None,
    "eos_token": None,
    "mask_token": "[MASK]",
    "sep_token": "[SEP]",
    "cls_token": "[CLS]",
}

# Keys that GluonNLP before 0.7 wrote at the top level of the JSON instead of under
# ``identifiers_to_tokens``; published BERT vocab files still use them.
_LEGACY_KEYS = ("padding_token", "bos_token", "eos_token", "mask_token", "sep_token", "cls_token")


def count_tokens(
    tokens: Iterable[str], to_lower: bool = False, counter: Counter | None = None
) -> Counter:
    """Count tokens, optionally lower-cased, into a new or a given ``Counter``.

    Examples
    --------
    >>> sorted(count_tokens("a b A".split(), to_lower=True).items())
    [('a', 2), ('b', 1)]
    """
    if to_lower:
        tokens = (t.lower() for t in tokens)
    if counter is None:
        return Counter(tokens)
    counter.update(tokens)
    return counter


class Vocab:
    """Indices for text tokens, with an unknown token and named special tokens.

    Parameters
    ----------
    counter : token frequencies; keys passing ``min_freq`` (and ``max_size``) are indexed.
    max_size : most counter keys to index (special and reserved tokens not counted).
    min_freq : least frequency a counter key needs to be indexed.
    unknown_token : what unknown tokens map to; ``None`` makes lookups of unknown tokens
        raise ``KeyError``.
    reserved_tokens : extra tokens always indexed, right after the special tokens.
    token_to_idx : indices to force for some tokens (they swap places with the tokens
        there), as GluonNLP's ``token_to_idx`` argument does.
    padding_token, bos_token, eos_token, **special_tokens : named special tokens, each
        exposed as an attribute (``vocab.mask_token``); names must end in ``_token``.

    Examples
    --------
    >>> vocab = Vocab(count_tokens("b a b c".split()), bos_token=None, eos_token=None)
    >>> vocab.idx_to_token
    ['<unk>', '<pad>', 'b', 'a', 'c']
    >>> vocab["b"], vocab[["a", "zzz"]], vocab.padding_token
    (2, [3, 0], '<pad>')
    >>> Vocab.from_json(vocab.to_json()) == vocab
    True
    """

    def __init__(
        self,
        counter: Mapping[str, int] | None = None,
        max_size: int | None = None,
        min_freq: int = 1,
        unknown_token: str | None = "<unk>",
        reserved_tokens: Sequence[str] | None = None,
        token_to_idx: Mapping[str, int] | None = None,
        *,
        padding_token: str | None = "<pad>",
        bos_token: str | None = "<bos>",
        eos_token: str | None = "<eos>",
        **special_tokens: str | None,
    ) -> None:
        if not isinstance(min_freq, int) or min_freq < 1:
            raise ValueError(f"min_freq must be a positive int, got {min_freq!r}")
        if max_size is not None and (not isinstance(max_size, int) or max_size < 0):
            raise ValueError(f"max_size must be None or a non-negative int, got {max_size!r}")
        # GluonNLP puts extra special tokens before padding/bos/eos; keep its order so
        # that indices agree.
        special = dict(special_tokens)
        special.update(padding_token=padding_token, bos_token=bos_token, eos_token=eos_token)
        _check_special_names(special)

        idx_to_token = [unknown_token] if unknown_token is not None else []
        specials: list[str] = []
        for token in special.values():
            if token is not None and token not in specials:
                specials.append(token)
        reserved = list(reserved_tokens or ())
        if unknown_token is not None and unknown_token in specials + reserved:
            raise ValueError(
                f"the unknown token {unknown_token!r} is also given as a special or reserved "
                "token; give it once, as unknown_token"
            )
        if len(set(specials + reserved)) != len(specials) + len(reserved):
            raise ValueError(
                "reserved_tokens repeat a token or a special token: "
                f"{sorted(t for t in set(reserved) if (specials + reserved).count(t) > 1)}"
            )
        idx_to_token += specials + reserved
        index = {token: i for i, token in enumerate(idx_to_token)}
        if counter:
            kept = len(idx_to_token) + (len(counter) if not max_size else max_size)
            ranked = sorted(counter.items(), key=operator.itemgetter(0))
            ranked.sort(key=operator.itemgetter(1), reverse=True)
            for token, freq in ranked:
                if freq < min_freq or len(idx_to_token) >= kept:
                    break
                if token not in index:
                    index[token] = len(idx_to_token)
                    idx_to_token.append(token)
        if token_to_idx:
            _move_tokens(idx_to_token, index, token_to_idx)
        self._init(idx_to_token, index, unknown_token, special, specials + reserved)

    def _init(
        self,
        idx_to_token: list[str],
        token_to_idx: dict[str, int],
        unknown_token: str | None,
        special: dict[str, str | None],
        reserved: list[str],
    ) -> None:
        self._idx_to_token = idx_to_token
        self._token_to_idx = token_to_idx
        self._unknown_token = unknown_token
        self._unknown_idx = token_to_idx[unknown_token] if unknown_token is not None else None
        self._special = special
        self._reserved = reserved

    # -- attributes ------------------------------------------------------------------
    @property
    def idx_to_token(self) -> list[str]:
        """Tokens in index order (do not modify)."""
        return self._idx_to_token

    @property
    def token_to_idx(self) -> dict[str, int]:
        """Token to index mapping (do not modify)."""
        return self._token_to_idx

    @property
    def unknown_token(self) -> str | None:
        return self._unknown_token

    @property
    def reserved_tokens(self) -> list[str]:
        """Special tokens then reserved tokens, as GluonNLP lists them."""
        return list(self._reserved)

    @property
    def special_tokens(self) -> dict[str, str | None]:
        """Named special tokens, e.g. ``{"padding_token": "<pad>", ...}``."""
        return dict(self._special)

    def __getattr__(self, name: str) -> Any:
        # Named special tokens read as attributes (vocab.cls_token); the guard keeps
        # unpickling, which looks attributes up before _special exists, from recursing.
        if name.endswith("_token") and not name.startswith("_"):
            special = self.__dict__.get("_special")
            if special is not None:
                if name in special:
                    return special[name]
                raise AttributeError(
                    f"this vocabulary has no {name!r}; its special tokens: "
                    f"{', '.join(special) or 'none'}"
                )
        raise AttributeError(name)

    # -- lookups ---------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._idx_to_token)

    def __contains__(self, token: object) -> bool:
        return token in self._token_to_idx

    def __iter__(self) -> Iterator[str]:
        return iter(self._idx_to_token)

    @overload
    def __getitem__(self, tokens: str) -> int: ...

    @overload
    def __getitem__(self, tokens: list[str] | tuple[str, ...]) -> list[int]: ...

    def __getitem__(self, tokens: Any) -> Any:
        """Index of a token, or indices of a list/tuple of tokens."""
        if isinstance(tokens, (list, tuple)):
            if self._unknown_idx is None:
                return [self._lookup_known(t) for t in tokens]
            get, unk = self._token_to_idx.get, self._unknown_idx
            return [get(t, unk) for t in tokens]
        if self._unknown_idx is None:
            return self._lookup_known(tokens)
        return self._token_to_idx.get(tokens, self._unknown_idx)

    def _lookup_known(self, token: str) -> int:
        try:
            return self._token_to_idx[token]
        except KeyError:
            raise KeyError(
                f"token {token!r} is not in the vocabulary and it has no unknown_token"
            ) from None

    def __call__(self, tokens: Any) -> Any:
        return self[tokens]

    def to_indices(self, tokens: Any) -> Any:
        """Same as ``vocab[tokens]``."""
        return self[tokens]

    def to_tokens(self, indices: Any) -> Any:
        """Token of an index, or tokens of a list/tuple of indices."""
        if isinstance(indices, (list, tuple)):
            return [self._token_at(i) for i in indices]
        return self._token_at(indices)

    def _token_at(self, idx: Any) -> str:
        try:
            i = operator.index(idx)
        except TypeError:
            raise TypeError(f"token indices must be integers, got {idx!r}") from None
        if not 0 <= i < len(self._idx_to_token):
            raise ValueError(
                f"token index {i} is out of range for a vocabulary of {len(self)} tokens"
            )
        return self._idx_to_token[i]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Vocab):
            return NotImplemented
        return (
            self._idx_to_token == other._idx_to_token
            and self._token_to_idx == other._token_to_idx
            and self._unknown_token == other._unknown_token
            and self._special == other._special
            and self._reserved == other._reserved
        )

    __hash__ = None  # type: ignore[assignment]  # mutable-looking, compared by value

    def __repr__(self) -> str:
        return f"Vocab(size={len(self)}, unk={self._unknown_token!r}, reserved={self._reserved!r})"

    # -- construction from an ordered list, JSON -------------------------------------
    @classmethod
    def from_tokens(
        cls,
        tokens: Sequence[str],
        unknown_token: str | None = "<unk>",
        **special_tokens: str | None,
    ) -> "Vocab":
        """A vocabulary holding ``tokens`` at exactly their positions (e.g. a BERT vocab.txt).

        Special tokens (including ``unknown_token``) must be among ``tokens``; unlike the
        constructor, no default padding/bos/eos tokens are added.

        Examples
        --------
        >>> v = Vocab.from_tokens(["[PAD]", "[UNK]", "hi"], unknown_token="[UNK]",
        ...                       padding_token="[PAD]")
        >>> v["hi"], v["bye"]
        (2, 1)
        """
        tokens = list(tokens)
        index = {t: i for i, t in enumerate(tokens)}
        if len(index) != len(tokens):
            repeated = sorted({t for t in tokens if tokens.count(t) > 1})
            raise ValueError(f"tokens repeat: {repeated[:10]}")
        special = dict(special_tokens)
        _check_special_names(special)
        _check_present(index, unknown_token, special)
        reserved = _reserved_order(unknown_token, special, None)
        vocab = cls.__new__(cls)
        vocab._init(tokens, index, unknown_token, special, reserved)
        return vocab

    def to_json(self) -> str:
        """Serialize to GluonNLP 0.10's vocab JSON (``gluonnlp.Vocab.from_json`` reads it)."""
        return json.dumps(
            {
                "idx_to_token": self._idx_to_token,
                "token_to_idx": self._token_to_idx,
                "reserved_tokens": self._reserved or None,
                "unknown_token": self._unknown_token,
                "identifiers_to_tokens": self._special,
            }
        )

    @classmethod
    def from_json(cls, json_str: str | bytes) -> "Vocab":
        """Read a vocabulary written by :meth:`to_json` or by any GluonNLP version.

        Also accepts the older layout (special tokens at the top level) of the published
        BERT vocabulary files, and their duplicate-index quirk (one token at two indices).
        """
        try:
            data = json.loads(json_str)
        except json.JSONDecodeError as exc:
            raise ValueError(f"not a vocabulary JSON document: {exc}") from None
        if not isinstance(data, dict):
            raise ValueError("a vocabulary JSON document must be an object")
        idx_to_token = data.get("idx_to_token")
        token_to_idx = data.get("token_to_idx")
        if not isinstance(idx_to_token, list) or not isinstance(token_to_idx, dict):
            raise ValueError("a vocabulary JSON document needs 'idx_to_token' and 'token_to_idx'")
        unknown_token = data.get("unknown_token")
        special: dict[str, str | None] = dict(data.get("identifiers_to_tokens") or {})
        for key in _LEGACY_KEYS:
            if key not in data:
                continue
            if key in special and data[key] is not None and special[key] != data[key]:
                raise ValueError(f"{key} is given twice with different values")
            special.setdefault(key, data[key])
        _check_special_names(special)
        for token, idx in token_to_idx.items():
            if not isinstance(idx, int) or not 0 <= idx < len(idx_to_token):
                raise ValueError(f"token {token!r} has index {idx!r}, outside idx_to_token")
            if idx_to_token[idx] != token:
                raise ValueError(
                    f"token_to_idx and idx_to_token disagree at index {idx}: "
                    f"{token!r} vs {idx_to_token[idx]!r}"
                )
        missing = set(idx_to_token) - token_to_idx.keys()
        if missing:
            raise ValueError(f"tokens in idx_to_token have no index: {sorted(missing)[:10]}")
        _check_present(token_to_idx, unknown_token, special)
        reserved = _reserved_order(unknown_token, special, data.get("reserved_tokens"))
        vocab = cls.__new__(cls)
        vocab._init(list(idx_to_token), dict(token_to_idx), unknown_token, special, reserved)
        return vocab


def _check_special_names(special: Mapping[str, Any]) -> None:
    for name in special:
        if not name.endswith("_token") or name.startswith("_"):
            raise ValueError(
                f"special token keyword {name!r} is invalid: names end in '_token' and do "
                "not start with '_' (e.g. mask_token='[MASK]')"
            )
        if name in ("unknown_token", "reserved_tokens") or hasattr(Vocab, name):
            raise ValueError(f"special token keyword {name!r} clashes with a Vocab attribute")


def _check_present(
    index: Mapping[str, int], unknown_token: str | None, special: Mapping[str, str | None]
) -> None:
    wanted = {"unknown_token": unknown_token, **special}
    absent = {k: v for k, v in wanted.items() if v is not None and v not in index}
    if absent:
        raise ValueError(f"special tokens are not in the vocabulary: {absent}")


def _reserved_order(
    unknown_token: str | None,
    special: Mapping[str, str | None],
    listed: Sequence[str] | None,
) -> list[str]:
    """GluonNLP's ``reserved_tokens``: distinct special tokens, then other reserved ones."""
    order: list[str] = []
    for token in special.values():
        if token is not None and token not in order:
            order.append(token)
    for token in listed or ():
        if token != unknown_token and token not in order:
            order.append(token)
    return order


def _move_tokens(idx_to_token: list[str], index: dict[str, int], wanted: Mapping[str, int]) -> None:
    """Give tokens the indices in ``wanted``; the tokens there take their old places."""
    unknown = set(wanted) - index.keys()
    if unknown:
        raise ValueError(f"token_to_idx names tokens not in the vocabulary: {sorted(unknown)[:10]}")
    values = list(wanted.values())
    if len(set(values)) != len(values):
        raise ValueError("token_to_idx gives the same index to several tokens")
    if min(values) < 0 or max(values) >= len(idx_to_token):
        raise ValueError(
            f"token_to_idx indices must be in [0, {len(idx_to_token)}), the vocabulary's size"
        )
    for token, new in wanted.items():
        old = index[token]
        ousted = idx_to_token[new]
        index[token], index[ousted] = new, old
        idx_to_token[old], idx_to_token[new] = ousted, token
