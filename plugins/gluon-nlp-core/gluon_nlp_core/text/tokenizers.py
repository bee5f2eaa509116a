"""Whitespace and BERT (basic + WordPiece) tokenizers, token-for-token GluonNLP 0.10's.

The BERT tokenizers run exact fast tiers (:mod:`._bert_fast`, in C where the extension
is built) and remember each word's pieces; the output is always that of the reference
algorithm (:mod:`._bert_reference`), which the tests check against GluonNLP itself.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from ._bert_fast import basic_tokenize_fast, wordpiece_engine
from .vocab import Vocab

__all__ = ["WhitespaceTokenizer", "BERTBasicTokenizer", "BERTTokenizer"]


class WhitespaceTokenizer:
    """Split on runs of whitespace, as ``str.split()`` does.

    Examples
    --------
    >>> WhitespaceTokenizer()("  hello \\t world\\n")
    ['hello', 'world']
    """

    def __call__(self, text: str) -> list[str]:
        return text.split()

    def __repr__(self) -> str:
        return "WhitespaceTokenizer()"


class BERTBasicTokenizer:
    """BERT's basic tokenization: clean, split punctuation and CJK ideographs, strip accents.

    Control characters are dropped, every CJK ideograph and punctuation character becomes
    its own token, and accents (non-spacing marks after NFD) are removed; ``lower=True``
    also lower-cases. As in GluonNLP 0.10, accents are stripped in cased mode too.

    Examples
    --------
    >>> BERTBasicTokenizer(lower=True)(" \\tHeLLo!how  \\n Are yoU?  ")
    ['hello', '!', 'how', 'are', 'you', '?']
    >>> BERTBasicTokenizer(lower=False)("Café 中文")
    ['Cafe', '中', '文']
    """

    def __init__(self, lower: bool = True) -> None:
        self.lower = bool(lower)

    def __call__(self, text: str) -> list[str]:
        return basic_tokenize_fast(text, self.lower)

    def __repr__(self) -> str:
        return f"BERTBasicTokenizer(lower={self.lower})"


class BERTTokenizer:
    """End-to-end BERT tokenization: basic tokenization, then WordPiece over ``vocab``.

    Parameters
    ----------
    vocab : the model's vocabulary; its ``unknown_token`` replaces words WordPiece cannot
        split and must be in it.
    lower : lower-case the text; ``True`` for uncased models, ``False`` for cased ones.
    max_input_chars_per_word : longer words become the unknown token.

    Examples
    --------
    >>> vocab = Vocab.from_tokens(["[UNK]", "un", "##aff", "##able", "!"], unknown_token="[UNK]")
    >>> tokenizer = BERTTokenizer(vocab)
    >>> tokenizer("Unaffable!  unaffablé? x")
    ['un', '##aff', '##able', '!', 'un', '##aff', '##able', '[UNK]', '[UNK]']
    >>> tokenizer.convert_tokens_to_ids(["un", "##aff"])
    [1, 2]
    """

    def __init__(
        self, vocab: Vocab, lower: bool = True, max_input_chars_per_word: int = 200
    ) -> None:
        if not isinstance(vocab, Vocab):
            raise TypeError(
                f"vocab must be a gluon_nlp_core Vocab, got {type(vocab).__name__}; "
                "convert a GluonNLP one with Vocab.from_json(gluonnlp_vocab.to_json())"
            )
        if vocab.unknown_token is None:
            raise ValueError(
                "BERTTokenizer needs a vocabulary with an unknown_token (BERT's is '[UNK]') "
                "for words WordPiece cannot split"
            )
        if not isinstance(max_input_chars_per_word, int) or max_input_chars_per_word < 0:
            raise ValueError(
                "max_input_chars_per_word must be a non-negative int, "
                f"got {max_input_chars_per_word!r}"
            )
        self.vocab = vocab
        self.lower = bool(lower)
        self.max_input_chars_per_word = max_input_chars_per_word
        self._engine = self._new_engine()

    def _new_engine(self) -> Any:
        return wordpiece_engine(
            self.vocab.token_to_idx, self.vocab.unknown_token, self.max_input_chars_per_word
        )

    def __call__(self, text: str) -> list[str]:
        """Word pieces of one text."""
        return self._engine.tokenize(text, self.lower)

    def tokenize_batch(self, texts: Iterable[str]) -> list[list[str]]:
        """Word pieces of each text."""
        tokenize, lower = self._engine.tokenize, self.lower
        return [tokenize(text, lower) for text in texts]

    def convert_tokens_to_ids(self, tokens: Sequence[str]) -> list[int]:
        """Indices of tokens in the vocabulary."""
        return self.vocab[list(tokens)]

    @staticmethod
    def is_first_subword(token: str) -> bool:
        """Whether a word piece starts a word (does not begin with ``##``)."""
        return not token.startswith("##")

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "_engine"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._engine = self._new_engine()

    def __repr__(self) -> str:
        return (
            f"BERTTokenizer(vocab={self.vocab!r}, lower={self.lower}, "
            f"max_input_chars_per_word={self.max_input_chars_per_word})"
        )
