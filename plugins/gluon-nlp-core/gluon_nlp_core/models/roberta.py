"""RoBERTa (Liu et al., 2019): BERT's encoder without token types, pooler or
next-sentence head, trained longer on more text with byte-level BPE.

Built from :class:`~gluon_nlp_core.models.bert.BERTModel`, so GluonNLP 0.10's RoBERTa
files (``word_embed``, ``encoder`` and the optional masked-LM ``decoder``) load strictly.
"""

from __future__ import annotations

from gluon_hub.compat import mx

from .bert import BERTModel, FineTuningHead

nn = mx.gluon.nn

__all__ = ["RoBERTaModel", "RoBERTaClassifier", "roberta_12_768_12", "roberta_24_1024_16"]


class RoBERTaModel(BERTModel):
    """RoBERTa: inputs ``(batch, length)`` token ids, an optional ``valid_length``
    ``(batch,)`` and, with the decoder, ``masked_positions`` ``(batch, num_masked)``.

    Returns the sequence encoding ``(batch, length, units)``, and with the decoder also
    the masked-LM scores ``(batch, num_masked, vocab_size)``.
    """

    def __init__(self, vocab_size: int, num_layers: int = 12, units: int = 768,
                 hidden_size: int = 3072, num_heads: int = 12, max_length: int = 512,
                 dropout: float = 0.1, layer_norm_eps: float = 1e-5,
                 use_decoder: bool = True, prefix: str | None = None, params=None) -> None:
        super().__init__(vocab_size, num_layers=num_layers, units=units,
                         hidden_size=hidden_size, num_heads=num_heads, max_length=max_length,
                         dropout=dropout, layer_norm_eps=layer_norm_eps, use_pooler=False,
                         use_decoder=use_decoder, use_classifier=False,
                         use_token_type_embed=False, prefix=prefix, params=params)

    def hybrid_forward(self, F, inputs, valid_length=None, masked_positions=None):
        return self._outputs(F, inputs, None, valid_length, masked_positions)


class RoBERTaClassifier(FineTuningHead):
    """Sentence (pair) classification over the first token: dense + tanh, then a dense
    layer of ``num_classes`` (with dropout before each when ``dropout`` is set).

    ``roberta`` must be built with ``use_decoder=False``.
    """

    def __init__(self, roberta: RoBERTaModel, num_classes: int = 2, dropout: float = 0.0,
                 prefix: str | None = None, params=None) -> None:
        super().__init__(prefix=prefix, params=params)
        if roberta._use_decoder:
            raise ValueError("RoBERTaClassifier needs a RoBERTaModel built with use_decoder=False")
        self.roberta = roberta
        self._units = roberta._units
        with self.name_scope():
            self.classifier = nn.HybridSequential()
            if dropout:
                self.classifier.add(nn.Dropout(rate=dropout))
            self.classifier.add(nn.Dense(self._units, activation="tanh"))
            if dropout:
                self.classifier.add(nn.Dropout(rate=dropout))
            self.classifier.add(nn.Dense(num_classes))

    def hybrid_forward(self, F, inputs, valid_length=None):
        sequence = self.roberta(inputs, valid_length)
        first = F.slice(sequence, begin=(0, 0, 0), end=(None, 1, None))
        return self.classifier(F.reshape(first, shape=(-1, self._units)))


def roberta_12_768_12(vocab_size: int = 50265, num_layers: int = 12, units: int = 768,
                      hidden_size: int = 3072, num_heads: int = 12, max_length: int = 512,
                      dropout: float = 0.1, use_decoder: bool = True) -> RoBERTaModel:
    """RoBERTa-base: 12 layers, 768 units, 12 heads; GPT-2 byte-level BPE vocabulary
    ``openwebtext_ccnews_stories_books_cased`` (50265 tokens).

    The architecture arguments exist for small test models; published weights need the
    defaults. Build with ``use_decoder=False`` to fine-tune (load the published file with
    ``ignore_extra=True``).

    Examples
    --------
    >>> from gluon_nlp_core.models.roberta import roberta_12_768_12
    >>> net = roberta_12_768_12(vocab_size=100, num_layers=1, units=8, hidden_size=16,
    ...                         num_heads=2, use_decoder=False)
    >>> hasattr(net, "token_type_embed")
    False
    """
    return RoBERTaModel(vocab_size, num_layers=num_layers, units=units,
                        hidden_size=hidden_size, num_heads=num_heads, max_length=max_length,
                        dropout=dropout, use_decoder=use_decoder)


def roberta_24_1024_16(vocab_size: int = 50265, num_layers: int = 24, units: int = 1024,
                       hidden_size: int = 4096, num_heads: int = 16, max_length: int = 512,
                       dropout: float = 0.1, use_decoder: bool = True) -> RoBERTaModel:
    """RoBERTa-large: 24 layers, 1024 units, 16 heads. Arguments as for
    :func:`roberta_12_768_12`."""
    return RoBERTaModel(vocab_size, num_layers=num_layers, units=units,
                        hidden_size=hidden_size, num_heads=num_heads, max_length=max_length,
                        dropout=dropout, use_decoder=use_decoder)
