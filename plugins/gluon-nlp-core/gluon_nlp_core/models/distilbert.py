"""DistilBERT (Sanh et al., 2019): a 6-layer BERT distilled from BERT-base, without token
types, pooler or pre-training heads.

Built from :class:`~gluon_nlp_core.models.bert.BERTModel`, so GluonNLP 0.10's DistilBERT
file (``word_embed`` and ``encoder``) loads strictly. GluonNLP builds it with layer norm
epsilon 1e-5, which is kept here so outputs match its model.
"""

from __future__ import annotations

from .bert import BERTModel

__all__ = ["DistilBERTModel", "distilbert_6_768_12"]


class DistilBERTModel(BERTModel):
    """DistilBERT: token ids ``(batch, length)`` and an optional ``valid_length``
    ``(batch,)`` in, the sequence encoding ``(batch, length, units)`` out."""

    def __init__(self, vocab_size: int, num_layers: int = 6, units: int = 768,
                 hidden_size: int = 3072, num_heads: int = 12, max_length: int = 512,
                 dropout: float = 0.1, layer_norm_eps: float = 1e-5,
                 prefix: str | None = None, params=None) -> None:
        super().__init__(vocab_size, num_layers=num_layers, units=units,
                         hidden_size=hidden_size, num_heads=num_heads, max_length=max_length,
                         dropout=dropout, layer_norm_eps=layer_norm_eps, use_pooler=False,
                         use_decoder=False, use_classifier=False, use_token_type_embed=False,
                         prefix=prefix, params=params)

    def hybrid_forward(self, F, inputs, valid_length=None):
        return self._outputs(F, inputs, None, valid_length, None)


def distilbert_6_768_12(vocab_size: int = 30522, num_layers: int = 6, units: int = 768,
                        hidden_size: int = 3072, num_heads: int = 12, max_length: int = 512,
                        dropout: float = 0.1) -> DistilBERTModel:
    """DistilBERT-base, uncased English: 6 layers, 768 units, 12 heads; WordPiece
    vocabulary ``distilbert_book_corpus_wiki_en_uncased`` (30522 tokens).

    The architecture arguments exist for small test models; published weights need the
    defaults.

    Examples
    --------
    >>> from gluon_nlp_core.models.distilbert import distilbert_6_768_12
    >>> net = distilbert_6_768_12(vocab_size=100, num_layers=1, units=8, hidden_size=16,
    ...                           num_heads=2)
    >>> len(net.encoder.transformer_cells)
    1
    """
    return DistilBERTModel(vocab_size, num_layers=num_layers, units=units,
                           hidden_size=hidden_size, num_heads=num_heads,
                           max_length=max_length, dropout=dropout)
