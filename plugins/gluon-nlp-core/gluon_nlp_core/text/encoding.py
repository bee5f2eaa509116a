"""Model inputs from text for the BERT family: token ids, segment ids and valid length.

``[CLS] A [SEP] (B [SEP])`` with WordPiece (BERT, ERNIE, DistilBERT) and ``<s> A </s>(</s> B
</s>)`` with byte-level BPE (RoBERTa), the longer sentence cut from its end to fit, as
each model was trained. The fine-tuning script and the ONNX runner
(:mod:`gluon_nlp_core.onnx_runner`) encode with these, so both feed a model the same ids.
Imports no mxnet.
"""

from __future__ import annotations

from typing import Callable

from .tokenizers import BERTTokenizer
from .vocab import Vocab

__all__ = ["encode_pair", "encode_roberta_pair"]


def encode_pair(tokenizer: BERTTokenizer, first: str, second: str | None,
                max_len: int) -> tuple[list[int], list[int], int]:
    """Token ids, segment ids and valid length of ``[CLS] first [SEP] (second [SEP])``.

    Tokens are dropped from the end of the longer sentence until the whole fits in
    ``max_len``, as BERT's own preprocessing does.

    Examples
    --------
    >>> from gluon_nlp_core.text import Vocab, BERT_SPECIAL_TOKENS
    >>> vocab = Vocab.from_tokens(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b"],
    ...                           **BERT_SPECIAL_TOKENS)
    >>> encode_pair(BERTTokenizer(vocab), "a a a", "b", max_len=6)
    ([2, 5, 5, 3, 6, 3], [0, 0, 0, 0, 1, 1], 6)
    """
    vocab = tokenizer.vocab
    room = max_len - (3 if second is not None else 2)
    tokens_a, tokens_b = _truncated(tokenizer, first, second, room)
    tokens = [vocab.cls_token, *tokens_a, vocab.sep_token]
    segments = [0] * len(tokens)
    if second is not None:
        tokens += [*tokens_b, vocab.sep_token]
        segments += [1] * (len(tokens_b) + 1)
    return vocab[tokens], segments, len(tokens)


def _truncated(tokenizer: Callable[[str], list[str]], first: str, second: str | None,
               room: int) -> tuple[list[str], list[str]]:
    """Both sentences' tokens, the longer one cut from its end until both fit in ``room``."""
    if room < 1:
        raise ValueError(f"max_len leaves no room for the sentences ({room} tokens)")
    tokens_a = tokenizer(first)
    tokens_b = tokenizer(second) if second is not None else []
    while len(tokens_a) + len(tokens_b) > room:
        longer = tokens_a if len(tokens_a) > len(tokens_b) else tokens_b
        longer.pop()
    return tokens_a, tokens_b


def encode_roberta_pair(tokenizer: Callable[[str], list[str]], vocab: Vocab, first: str,
                        second: str | None, max_len: int) -> tuple[list[int], list[int], int]:
    """RoBERTa's input ``<s> first </s>`` or ``<s> first </s></s> second </s>``: token ids,
    segment ids (all 0: RoBERTa has no token types) and valid length, truncated as
    :func:`encode_pair` does.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from gluon_nlp_core.text import GPT2BPETokenizer
    >>> merges = pathlib.Path(tempfile.mkdtemp()) / "merges.txt"
    >>> _ = merges.write_text("a b\\n", encoding="utf-8")
    >>> vocab = Vocab.from_tokens(["<s>", "<pad>", "</s>", "<unk>", "ab", "Ġab", "c"],
    ...                           bos_token="<s>", eos_token="</s>", padding_token="<pad>")
    >>> encode_roberta_pair(GPT2BPETokenizer(merges), vocab, "ab ab ab", "c", max_len=6)
    ([0, 4, 2, 2, 6, 2], [0, 0, 0, 0, 0, 0], 6)
    """
    tokens_a, tokens_b = _truncated(tokenizer, first, second,
                                    max_len - (4 if second is not None else 2))
    tokens = [vocab.bos_token, *tokens_a, vocab.eos_token]
    if second is not None:
        tokens += [vocab.eos_token, *tokens_b, vocab.eos_token]
    return vocab[tokens], [0] * len(tokens), len(tokens)
