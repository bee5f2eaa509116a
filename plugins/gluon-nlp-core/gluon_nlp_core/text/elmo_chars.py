"""ELMo's character ids: every token becomes 50 ids, the published models' input.

The pretrained ELMo models read a token as its UTF-8 bytes (ids 0-255, at most 48 of them)
between a begin-of-word (258) and an end-of-word (259) id, padded with 260; the
sentence-boundary tokens are single special ids (256, 257). These are the ids GluonNLP
0.10's ``ELMoCharVocab`` gives, so its pretrained files read them unchanged. No mxnet here.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["ELMoCharVocab", "elmo_char_ids"]


class ELMoCharVocab:
    """Maps tokens to ELMo's 50 character ids (``vocab("cat")``, ``vocab(["a", "b"])``).

    ``len(vocab)`` (262) is the character embedding's size in the ELMo models.
    """

    max_word_length = 50
    max_word_chars = 48  # room left for the begin- and end-of-word ids
    bos_id = 256
    eos_id = 257
    bow_id = 258
    eow_id = 259
    pad_id = 260

    def __init__(self, bos_token: str = "<bos>", eos_token: str = "<eos>") -> None:
        self.bos_token = bos_token
        self.eos_token = eos_token
        self._special = {bos_token: (self.bos_id,), eos_token: (self.eos_id,)}

    def token_ids(self, token: str) -> list[int]:
        """The 50 character ids of one token."""
        body = self._special.get(token)
        if body is None:
            # Bytes of characters that cannot be encoded (lone surrogates) are dropped.
            body = token.encode("utf-8", "ignore")[: self.max_word_chars]
        ids = [self.bow_id, *body, self.eow_id]
        return ids + [self.pad_id] * (self.max_word_length - len(ids))

    def __getitem__(self, tokens: str | Sequence[str]) -> list[int] | list[list[int]]:
        if isinstance(tokens, str):
            return self.token_ids(tokens)
        return [self.token_ids(token) for token in tokens]

    def __call__(self, tokens: str | Sequence[str]) -> list[int] | list[list[int]]:
        return self[tokens]

    def __len__(self) -> int:
        return 262


def elmo_char_ids(sentences: Sequence[Sequence[str]], add_bos_eos: bool = True,
                  vocab: ELMoCharVocab | None = None) -> tuple[np.ndarray, np.ndarray]:
    """A batch for the ELMo models: ``(ids, mask)`` of shapes ``(batch, length, 50)`` and
    ``(batch, length)``.

    Each sentence (a list of tokens) is wrapped in ``<bos>``/``<eos>`` when
    ``add_bos_eos``, as the models were trained; shorter sentences are padded with
    zero ids and a zero mask, which the models' ``mask`` argument takes.

    >>> ids, mask = elmo_char_ids([["hi"], []])
    >>> ids.shape, mask.tolist(), ids[0, 1, :4].tolist()
    ((2, 3, 50), [[1, 1, 1], [1, 1, 0]], [258, 104, 105, 259])
    """
    vocab = vocab or ELMoCharVocab()
    if add_bos_eos:
        sentences = [[vocab.bos_token, *tokens, vocab.eos_token] for tokens in sentences]
    length = max((len(tokens) for tokens in sentences), default=0)
    ids = np.zeros((len(sentences), length, vocab.max_word_length), dtype=np.int32)
    mask = np.zeros((len(sentences), length), dtype=np.int32)
    for row, tokens in enumerate(sentences):
        if tokens:
            ids[row, : len(tokens)] = vocab(list(tokens))
            mask[row, : len(tokens)] = 1
    return ids, mask
