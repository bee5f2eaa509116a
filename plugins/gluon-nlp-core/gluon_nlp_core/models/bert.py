"""BERT (Devlin et al., 2018): encoder, pooler, masked-LM and next-sentence heads, and
the two fine-tuning heads (sentence classification, SQuAD span prediction); Baidu's ERNIE
is this architecture with ReLU and other sizes. RoBERTa and DistilBERT reuse these blocks
(``roberta.py``, ``distilbert.py``).

Parameter files written by GluonNLP 0.10 (``model.save_parameters``) load here with
``load_parameters`` unchanged and strict: block attributes, their order inside
``HybridSequential`` containers, and the weight sharing of the masked-LM decoder with the
word embedding follow that format. Everything is a ``HybridBlock``; ``hybridize()`` the
model for speed.

The self-attention uses MXNet's interleaved multi-head kernels on the time-major layout
(one matrix product projects query, key and value together), which is what makes BERT
fast on CPU.
"""

from __future__ import annotations

from typing import Any

from gluon_hub.compat import mx

from ._layers import GELU, PositionwiseFFN

nn = mx.gluon.nn
HybridBlock = mx.gluon.HybridBlock

__all__ = [
    "BERTSelfAttention",
    "BERTEncoderLayer",
    "BERTEncoder",
    "BERTModel",
    "FineTuningHead",
    "BERTClassifier",
    "BERTForQA",
    "BERTForQALoss",
    "bert_12_768_12",
    "bert_24_1024_16",
    "ernie_12_768_12",
]

_PROJECTIONS = ("query", "key", "value")


class BERTSelfAttention(HybridBlock):
    """Multi-head self-attention on time-major input ``(length, batch, units)``.

    The query, key and value projections are kept as separate parameters (that is how
    they are stored, as ``proj_query.weight`` ...) and are interleaved per head at run
    time so that one ``FullyConnected`` computes all three.
    """

    def __init__(self, units: int, num_heads: int, dropout: float = 0.0,
                 weight_initializer=None, prefix: str | None = None, params=None) -> None:
        super().__init__(prefix=prefix, params=params)
        self._units = units
        self._num_heads = num_heads
        with self.name_scope():
            for name in _PROJECTIONS:
                setattr(self, f"{name}_bias",
                        self.params.get(f"{name}_bias", shape=(units,), init="zeros"))
            for name in _PROJECTIONS:
                setattr(self, f"{name}_weight",
                        self.params.get(f"{name}_weight", shape=(units, units),
                                        init=weight_initializer, allow_deferred_init=True))
            self.dropout_layer = nn.Dropout(dropout)

    def _collect_params_with_prefix(self, prefix: str = "") -> dict[str, Any]:
        # Saved names are "proj_query.weight" (a Dense per projection in the original
        # layout); the parameters live on this block so that the fused kernel sees them.
        if prefix:
            prefix += "."
        collected = {}
        for attr, param in self._reg_params.items():
            role, kind = attr.split("_")
            collected[f"{prefix}proj_{role}.{kind}"] = param
        for name, child in self._children.items():
            collected.update(child._collect_params_with_prefix(prefix + name))
        return collected

    def hybrid_forward(self, F, qkv, valid_len, query_bias, key_bias, value_bias,
                       query_weight, key_weight, value_weight):
        heads = self._num_heads
        # (units, in) per projection -> (heads, 3 * head_dim, in): the kernels expect the
        # q, k and v rows of each head next to each other.
        weights = [w.reshape(shape=(heads, -1, 0), reverse=True)
                   for w in (query_weight, key_weight, value_weight)]
        in_weight = F.concat(*weights, dim=-2).reshape(shape=(-1, 0), reverse=True)
        biases = [b.reshape(shape=(heads, -1), reverse=True)
                  for b in (query_bias, key_bias, value_bias)]
        in_bias = F.stack(*biases, axis=1).reshape(-1)
        projected = F.FullyConnected(qkv, weight=in_weight, bias=in_bias,
                                     num_hidden=3 * self._units, flatten=False)
        scores = F.contrib.interleaved_matmul_selfatt_qk(projected, heads=heads)
        if valid_len is None:
            weights_ = F.softmax(scores, axis=-1)
        else:
            weights_ = F.softmax(scores, length=valid_len, use_length=True, axis=-1)
        weights_ = self.dropout_layer(weights_)
        return F.contrib.interleaved_matmul_selfatt_valatt(projected, weights_, heads=heads)


class BERTEncoderLayer(HybridBlock):
    """Self-attention, projection, residual and layer norm, then the feed-forward block."""

    def __init__(self, units: int, hidden_size: int, num_heads: int, dropout: float = 0.0,
                 activation: str = "gelu", layer_norm_eps: float = 1e-12,
                 weight_initializer=None, prefix: str | None = None, params=None) -> None:
        super().__init__(prefix=prefix, params=params)
        self._dropout = dropout
        with self.name_scope():
            if dropout:
                self.dropout_layer = nn.Dropout(rate=dropout)
            self.attention_cell = BERTSelfAttention(units, num_heads, dropout=dropout,
                                                    weight_initializer=weight_initializer)
            self.proj = nn.Dense(units, flatten=False, weight_initializer=weight_initializer,
                                 prefix="proj_")
            self.ffn = PositionwiseFFN(units, hidden_size, dropout=dropout,
                                       activation=activation, layer_norm_eps=layer_norm_eps,
                                       weight_initializer=weight_initializer)
            self.layer_norm = nn.LayerNorm(in_channels=units, epsilon=layer_norm_eps)

    def hybrid_forward(self, F, inputs, valid_len=None):
        out = self.proj(self.attention_cell(inputs, valid_len))
        if self._dropout:
            out = self.dropout_layer(out)
        return self.ffn(self.layer_norm(out + inputs))


class BERTEncoder(HybridBlock):
    """Learned position embedding, layer norm and a stack of :class:`BERTEncoderLayer`.

    Input and output are time-major, ``(length, batch, units)``; positions past
    ``valid_length`` are ignored by attention and zeroed in the output.
    """

    def __init__(self, num_layers: int, units: int, hidden_size: int, num_heads: int,
                 max_length: int, dropout: float = 0.0, activation: str = "gelu",
                 layer_norm_eps: float = 1e-12, weight_initializer=None,
                 prefix: str | None = None, params=None) -> None:
        super().__init__(prefix=prefix, params=params)
        if units % num_heads:
            raise ValueError(f"units ({units}) must be a multiple of num_heads ({num_heads})")
        self._units = units
        self._max_length = max_length
        self._num_heads = num_heads
        self._dropout = dropout
        self.layer_norm_eps = layer_norm_eps
        with self.name_scope():
            if dropout:
                self.dropout_layer = nn.Dropout(rate=dropout)
            self.layer_norm = nn.LayerNorm(in_channels=units, epsilon=layer_norm_eps)
            self.position_weight = self.params.get("position_weight", shape=(max_length, units),
                                                   init=weight_initializer)
            self.transformer_cells = nn.HybridSequential()
            for i in range(num_layers):
                self.transformer_cells.add(BERTEncoderLayer(
                    units, hidden_size, num_heads, dropout=dropout, activation=activation,
                    layer_norm_eps=layer_norm_eps, weight_initializer=weight_initializer,
                    prefix=f"transformer{i}_"))

    def hybrid_forward(self, F, inputs, valid_length=None, position_weight=None):
        steps = F.contrib.arange_like(inputs, axis=0)
        positions = F.Embedding(steps, position_weight, self._max_length, self._units)
        x = F.broadcast_add(inputs, F.expand_dims(positions, axis=1))
        if self._dropout:
            x = self.dropout_layer(x)
        x = self.layer_norm(x)
        attn_len = None
        if valid_length is not None:
            # softmax(length=...) wants one int32 length per (batch * head, query) row;
            # valid lengths come as floats (GluonNLP's habit) or as integers.
            lengths = F.cast(valid_length, dtype="int32")
            zeros = F.cast(F.zeros_like(steps), dtype="int32")
            per_query = F.broadcast_add(F.reshape(lengths, shape=(-1, 1, 1)),
                                        F.reshape(zeros, shape=(1, 1, -1)))
            per_head = F.broadcast_axis(per_query, axis=1, size=self._num_heads)
            attn_len = F.reshape(per_head, shape=(-1, 0), reverse=True)
        for cell in self.transformer_cells:
            x = cell(x, attn_len)
        if valid_length is not None:
            x = F.SequenceMask(x, sequence_length=valid_length, use_sequence_length=True, axis=0)
        return x


class BERTModel(HybridBlock):
    """BERT: embeddings, encoder and the optional pre-training heads.

    Inputs are ``inputs`` and ``token_types`` of shape ``(batch, length)``, an optional
    ``valid_length`` of shape ``(batch,)`` and, with the decoder, ``masked_positions`` of
    shape ``(batch, num_masked)``; integers or floats alike. The output is the sequence encoding
    ``(batch, length, units)`` alone, or a tuple that adds, in this order, the pooled
    first token ``(batch, units)`` (``use_pooler``), the next-sentence scores
    ``(batch, 2)`` (``use_classifier``) and the masked-LM scores
    ``(batch, num_masked, vocab_size)`` (``use_decoder``). Without the token type
    embedding (``use_token_type_embed=False``) ``token_types`` is not read.
    """

    def __init__(self, vocab_size: int, num_layers: int = 12, units: int = 768,
                 hidden_size: int = 3072, num_heads: int = 12, max_length: int = 512,
                 dropout: float = 0.1, token_type_vocab_size: int = 2,
                 layer_norm_eps: float = 1e-12, activation: str = "gelu",
                 use_pooler: bool = True, use_decoder: bool = True, use_classifier: bool = True,
                 use_token_type_embed: bool = True, weight_initializer=None,
                 prefix: str | None = None, params=None) -> None:
        super().__init__(prefix=prefix, params=params)
        if use_classifier and not use_pooler:
            raise ValueError("the next-sentence classifier reads the pooler: "
                             "use_classifier=True needs use_pooler=True")
        if vocab_size < 1:
            raise ValueError(f"vocab_size must be positive, got {vocab_size}")
        self._units = units
        self._use_pooler = use_pooler
        self._use_classifier = use_classifier
        self._use_decoder = use_decoder
        self._use_token_type_embed = use_token_type_embed
        self.encoder = BERTEncoder(num_layers, units, hidden_size, num_heads, max_length,
                                   dropout=dropout, activation=activation,
                                   layer_norm_eps=layer_norm_eps,
                                   weight_initializer=weight_initializer)
        with self.name_scope():
            self.word_embed = self._embedding(vocab_size, units, "word_embed_")
            if use_token_type_embed:
                self.token_type_embed = self._embedding(token_type_vocab_size, units,
                                                        "token_type_embed_")
            if use_pooler:
                self.pooler = nn.Dense(units, flatten=False, activation="tanh", prefix="pooler_")
                if use_classifier:
                    self.classifier = nn.Dense(2, prefix="cls_")
            if use_decoder:
                self.decoder = nn.HybridSequential(prefix="decoder_")
                self.decoder.add(nn.Dense(units, flatten=False))
                self.decoder.add(GELU())
                self.decoder.add(nn.LayerNorm(in_channels=units, epsilon=layer_norm_eps))
                # Output projection tied to the word embedding, as in pre-training.
                self.decoder.add(nn.Dense(vocab_size, flatten=False,
                                          params=self.word_embed[0].params))

    @staticmethod
    def _embedding(size: int, units: int, prefix: str) -> nn.HybridSequential:
        block = nn.HybridSequential(prefix=prefix)
        with block.name_scope():
            block.add(nn.Embedding(size, units))
        return block

    def hybrid_forward(self, F, inputs, token_types, valid_length=None, masked_positions=None):
        return self._outputs(F, inputs, token_types, valid_length, masked_positions)

    def _outputs(self, F, inputs, token_types, valid_length, masked_positions):
        """The forward pass; ``token_types`` is ignored without a token type embedding
        (RoBERTa, DistilBERT), whose subclasses take no such input."""
        embedded = self.word_embed(inputs)
        if self._use_token_type_embed:
            embedded = embedded + self.token_type_embed(token_types)
        encoded = self.encoder(F.transpose(embedded, axes=(1, 0, 2)), valid_length)
        sequence = F.transpose(encoded, axes=(1, 0, 2))
        outputs = [sequence]
        if self._use_pooler:
            first = F.slice(sequence, begin=(0, 0, 0), end=(None, 1, None))
            pooled = self.pooler(F.reshape(first, shape=(-1, self._units)))
            outputs.append(pooled)
            if self._use_classifier:
                outputs.append(self.classifier(pooled))
        if self._use_decoder:
            if masked_positions is None:
                raise ValueError("this BERTModel has a masked-LM decoder: pass masked_positions, "
                                 "or build it with use_decoder=False")
            outputs.append(self.decoder(self._gather(F, sequence, masked_positions)))
        return tuple(outputs) if len(outputs) > 1 else outputs[0]

    @staticmethod
    def _gather(F, sequence, masked_positions):
        """The encodings at ``masked_positions``: ``(batch, num_masked, units)``."""
        positions = F.cast(masked_positions, dtype="int32")
        rows = F.broadcast_like(
            F.reshape(F.contrib.arange_like(positions, axis=0), shape=(-1, 1)), positions)
        index = F.stack(F.cast(rows, dtype="int32"), positions, axis=0)
        return F.gather_nd(sequence, index)


class FineTuningHead(HybridBlock):
    """A new head over an encoder that usually holds published weights already.

    The fine-tuning pattern is "load the encoder, wrap it, ``net.initialize()``". MXNet's own
    ``initialize`` leaves every loaded parameter as it is but warns once per parameter (162
    warnings for BERT-base), so the user's own warnings drown; here it initialises the
    parameters that have no value yet, the same ones, silently.
    """

    def initialize(self, init: Any = None, ctx: Any = None, verbose: bool = False,
                   force_reinit: bool = False) -> None:
        """Initialise the parameters without a value (the head; the encoder too if it was not
        loaded) with ``init`` (default ``mx.init.Uniform()``, as MXNet's); ``force_reinit=True``
        re-initialises every parameter, loaded ones included, as MXNet's."""
        init = mx.init.Uniform() if init is None else init
        if verbose:
            init.set_verbosity(verbose=verbose)
        for param in self.collect_params().values():
            if force_reinit or param._data is None:  # _data: the value MXNet's check looks at
                param.initialize(None, ctx, init, force_reinit=force_reinit)


class BERTClassifier(FineTuningHead):
    """Sentence (pair) classification: a dense layer over BERT's pooled first token.

    ``bert`` must be built with ``use_pooler=True, use_classifier=False,
    use_decoder=False`` so that it returns ``(sequence, pooled)``.
    """

    def __init__(self, bert: BERTModel, num_classes: int = 2, dropout: float = 0.0,
                 prefix: str | None = None, params=None) -> None:
        super().__init__(prefix=prefix, params=params)
        if not bert._use_pooler or bert._use_classifier or bert._use_decoder:
            raise ValueError("BERTClassifier needs a BERTModel built with use_pooler=True, "
                             "use_classifier=False and use_decoder=False")
        self.bert = bert
        with self.name_scope():
            self.classifier = nn.HybridSequential()
            if dropout:
                self.classifier.add(nn.Dropout(rate=dropout))
            self.classifier.add(nn.Dense(num_classes))

    def hybrid_forward(self, F, inputs, token_types, valid_length=None):
        _, pooled = self.bert(inputs, token_types, valid_length)
        return self.classifier(pooled)


class BERTForQA(FineTuningHead):
    """SQuAD span prediction: start and end scores per token, ``(batch, length, 2)``.

    ``bert`` must be built with ``use_pooler=False, use_classifier=False,
    use_decoder=False`` so that it returns the sequence encoding only.
    """

    def __init__(self, bert: BERTModel, prefix: str | None = None, params=None) -> None:
        super().__init__(prefix=prefix, params=params)
        if bert._use_pooler or bert._use_decoder:
            raise ValueError("BERTForQA needs a BERTModel built with use_pooler=False, "
                             "use_classifier=False and use_decoder=False")
        self.bert = bert
        with self.name_scope():
            self.span_classifier = nn.Dense(2, flatten=False)

    def hybrid_forward(self, F, inputs, token_types, valid_length=None):
        return self.span_classifier(self.bert(inputs, token_types, valid_length))


class BERTForQALoss(mx.gluon.loss.Loss):
    """Mean of the softmax cross-entropies of the start and the end position."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(weight=None, batch_axis=0, **kwargs)
        self._ce = mx.gluon.loss.SoftmaxCELoss()

    def hybrid_forward(self, F, pred, start, end):
        start_scores, end_scores = F.split(pred, axis=2, num_outputs=2, squeeze_axis=True)
        return (self._ce(start_scores, start) + self._ce(end_scores, end)) / 2


def bert_12_768_12(vocab_size: int = 30522, num_layers: int = 12, units: int = 768,
                   hidden_size: int = 3072, num_heads: int = 12, max_length: int = 512,
                   dropout: float = 0.1, use_pooler: bool = True, use_decoder: bool = True,
                   use_classifier: bool = True) -> BERTModel:
    """BERT-base: 12 layers, 768 units, 12 heads (110M parameters with the English vocab).

    ``vocab_size`` must match the vocabulary of the weights loaded: 30522 for
    ``book_corpus_wiki_en_uncased`` (the default); see ``gluon_hub.info`` for the others.
    The architecture arguments exist for small test models; published weights need the
    defaults. Build it with ``use_decoder=False, use_classifier=False`` (and
    ``use_pooler=False`` for span prediction) for fine-tuning, loading published files
    with ``ignore_extra=True``.

    Examples
    --------
    >>> from gluon_nlp_core.models.bert import bert_12_768_12
    >>> net = bert_12_768_12(vocab_size=100, num_layers=1, units=8, hidden_size=16,
    ...                      num_heads=2, use_decoder=False)
    >>> len(net.encoder.transformer_cells)
    1
    """
    return BERTModel(vocab_size, num_layers=num_layers, units=units, hidden_size=hidden_size,
                     num_heads=num_heads, max_length=max_length, dropout=dropout,
                     use_pooler=use_pooler, use_decoder=use_decoder,
                     use_classifier=use_classifier)


def bert_24_1024_16(vocab_size: int = 30522, num_layers: int = 24, units: int = 1024,
                    hidden_size: int = 4096, num_heads: int = 16, max_length: int = 512,
                    dropout: float = 0.1, use_pooler: bool = True, use_decoder: bool = True,
                    use_classifier: bool = True) -> BERTModel:
    """BERT-large: 24 layers, 1024 units, 16 heads (335M parameters with the English vocab).

    Arguments as for :func:`bert_12_768_12`.
    """
    return BERTModel(vocab_size, num_layers=num_layers, units=units, hidden_size=hidden_size,
                     num_heads=num_heads, max_length=max_length, dropout=dropout,
                     use_pooler=use_pooler, use_decoder=use_decoder,
                     use_classifier=use_classifier)


def ernie_12_768_12(vocab_size: int = 18000, num_layers: int = 12, units: int = 768,
                    hidden_size: int = 3072, num_heads: int = 12, max_length: int = 513,
                    dropout: float = 0.1, use_pooler: bool = True, use_decoder: bool = True,
                    use_classifier: bool = True) -> BERTModel:
    """Baidu ERNIE 1.0 (Sun et al., 2019): BERT-base with ReLU feed-forward layers, layer
    norm epsilon 1e-5 and 513 positions; Chinese, vocabulary ``baidu_ernie_uncased``.

    Arguments as for :func:`bert_12_768_12`.

    Examples
    --------
    >>> from gluon_nlp_core.models.bert import ernie_12_768_12
    >>> net = ernie_12_768_12(vocab_size=100, num_layers=1, units=8, hidden_size=16,
    ...                       num_heads=2, use_decoder=False)
    >>> net.encoder.position_weight.shape
    (513, 8)
    """
    return BERTModel(vocab_size, num_layers=num_layers, units=units, hidden_size=hidden_size,
                     num_heads=num_heads, max_length=max_length, dropout=dropout,
                     layer_norm_eps=1e-5, activation="relu", use_pooler=use_pooler,
                     use_decoder=use_decoder, use_classifier=use_classifier)
