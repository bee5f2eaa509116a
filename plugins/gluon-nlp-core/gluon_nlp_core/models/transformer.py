"""The Transformer for translation (Vaswani et al., 2017), in GluonNLP 0.10's file format.

``transformer_en_de_512`` is the base model GluonNLP trained on WMT2014 English-German
with a BPE vocabulary shared by source and target: one embedding serves both sides and
the output projection. Inputs are batch-major ``(batch, length)`` token ids.
"""

from __future__ import annotations

import math

from gluon_hub.compat import mx

from ._layers import PositionwiseFFN, sinusoid_table

nn = mx.gluon.nn
HybridBlock = mx.gluon.HybridBlock

__all__ = [
    "MultiHeadAttention",
    "TransformerEncoder",
    "TransformerDecoder",
    "TransformerNMT",
    "transformer_en_de_512",
]

#: Masked attention scores are set to this before the softmax.
_MASKED_SCORE = -1e18


class MultiHeadAttention(HybridBlock):
    """Scaled dot-product attention over ``num_heads`` projections of query, key, value.

    ``mask`` ``(batch, query_length, memory_length)`` holds 1 where a query may attend.
    """

    def __init__(self, units: int, num_heads: int, scaled: bool = True, dropout: float = 0.0,
                 use_bias: bool = False, prefix: str | None = None, params=None) -> None:
        super().__init__(prefix=prefix, params=params)
        if units % num_heads:
            raise ValueError(f"units ({units}) must be a multiple of num_heads ({num_heads})")
        self._num_heads = num_heads
        self._scaled = scaled
        with self.name_scope():
            self.proj_query = nn.Dense(units, use_bias=use_bias, flatten=False, prefix="query_")
            self.proj_key = nn.Dense(units, use_bias=use_bias, flatten=False, prefix="key_")
            self.proj_value = nn.Dense(units, use_bias=use_bias, flatten=False, prefix="value_")
            self.dropout_layer = nn.Dropout(dropout)

    def _split_heads(self, F, x):
        """(batch, length, units) -> (batch * heads, length, units / heads)."""
        x = F.transpose(F.reshape(x, shape=(0, 0, self._num_heads, -1)), axes=(0, 2, 1, 3))
        return F.reshape(x, shape=(-1, 0, 0), reverse=True)

    def hybrid_forward(self, F, query, key, value, mask=None):
        q = self._split_heads(F, self.proj_query(query))
        k = self._split_heads(F, self.proj_key(key))
        v = self._split_heads(F, self.proj_value(value))
        if self._scaled:
            q = F.contrib.div_sqrt_dim(q)
        scores = F.batch_dot(q, k, transpose_b=True)
        if mask is not None:
            mask = F.reshape(F.broadcast_axis(F.expand_dims(mask, axis=1), axis=1,
                                              size=self._num_heads),
                             shape=(-1, 0, 0), reverse=True)
            scores = F.where(mask, scores, _MASKED_SCORE * F.ones_like(scores))
        weights = F.softmax(scores, axis=-1)
        if mask is not None:
            # Rows with nothing to attend to get zero weights, not a uniform average.
            weights = weights * mask
        context = F.batch_dot(self.dropout_layer(weights), v)
        context = F.reshape(context, shape=(-1, self._num_heads, 0, 0), reverse=True)
        return F.reshape(F.transpose(context, axes=(0, 2, 1, 3)), shape=(0, 0, -1))


class _EncoderLayer(HybridBlock):
    def __init__(self, units: int, hidden_size: int, num_heads: int, scaled: bool,
                 dropout: float, prefix: str | None = None) -> None:
        super().__init__(prefix=prefix)
        self._dropout = dropout
        with self.name_scope():
            if dropout:
                self.dropout_layer = nn.Dropout(rate=dropout)
            self.attention_cell = MultiHeadAttention(units, num_heads, scaled, dropout)
            self.proj = nn.Dense(units, use_bias=False, flatten=False, prefix="proj_")
            self.ffn = PositionwiseFFN(units, hidden_size, dropout=dropout)
            self.layer_norm = nn.LayerNorm(in_channels=units, epsilon=1e-5)

    def hybrid_forward(self, F, x, mask=None):
        out = self.proj(self.attention_cell(x, x, x, mask))
        if self._dropout:
            out = self.dropout_layer(out)
        return self.ffn(self.layer_norm(out + x))


class _DecoderLayer(HybridBlock):
    def __init__(self, units: int, hidden_size: int, num_heads: int, scaled: bool,
                 dropout: float, prefix: str | None = None) -> None:
        super().__init__(prefix=prefix)
        self._dropout = dropout
        with self.name_scope():
            if dropout:
                self.dropout_layer = nn.Dropout(rate=dropout)
            self.attention_cell_in = MultiHeadAttention(units, num_heads, scaled, dropout)
            self.attention_cell_inter = MultiHeadAttention(units, num_heads, scaled, dropout)
            self.proj_in = nn.Dense(units, use_bias=False, flatten=False, prefix="proj_in_")
            self.proj_inter = nn.Dense(units, use_bias=False, flatten=False,
                                       prefix="proj_inter_")
            self.ffn = PositionwiseFFN(units, hidden_size, dropout=dropout)
            self.layer_norm_in = nn.LayerNorm()
            self.layer_norm_inter = nn.LayerNorm()

    def _residual(self, F, out, x, norm):
        if self._dropout:
            out = self.dropout_layer(out)
        return norm(out + x)

    def hybrid_forward(self, F, x, memory, mask=None, mem_mask=None):
        x = self._residual(F, self.proj_in(self.attention_cell_in(x, x, x, mask)), x,
                           self.layer_norm_in)
        attended = self.attention_cell_inter(x, memory, memory, mem_mask)
        x = self._residual(F, self.proj_inter(attended), x, self.layer_norm_inter)
        return self.ffn(x)


class _Stack(HybridBlock):
    """Embedding scale, fixed position encoding, dropout and input layer norm, then layers."""

    def __init__(self, layer_cls, num_layers: int, units: int, hidden_size: int,
                 num_heads: int, max_length: int, scaled: bool, dropout: float,
                 norm_channels: int, prefix: str | None = None) -> None:
        super().__init__(prefix=prefix)
        self._units = units
        self._max_length = max_length
        self._dropout = dropout
        with self.name_scope():
            if dropout:
                self.dropout_layer = nn.Dropout(rate=dropout)
            self.layer_norm = nn.LayerNorm(in_channels=norm_channels, epsilon=1e-5)
            self.position_weight = self.params.get_constant(
                "const", sinusoid_table(max_length, units))
            self.transformer_cells = nn.HybridSequential()
            for i in range(num_layers):
                self.transformer_cells.add(layer_cls(units, hidden_size, num_heads, scaled,
                                                     dropout, prefix=f"transformer{i}_"))

    def _embed(self, F, inputs, position_weight):
        steps = F.contrib.arange_like(inputs, axis=1)
        positions = F.Embedding(steps, position_weight, self._max_length, self._units)
        x = F.broadcast_add(inputs * math.sqrt(self._units), F.expand_dims(positions, axis=0))
        if self._dropout:
            x = self.dropout_layer(x)
        return self.layer_norm(x), steps


class TransformerEncoder(_Stack):
    """Encoder: ``(batch, length, units)`` embeddings -> encodings of the same shape."""

    def __init__(self, num_layers: int = 6, units: int = 512, hidden_size: int = 2048,
                 num_heads: int = 8, max_length: int = 530, scaled: bool = True,
                 dropout: float = 0.0, prefix: str | None = None) -> None:
        super().__init__(_EncoderLayer, num_layers, units, hidden_size, num_heads, max_length,
                         scaled, dropout, norm_channels=units, prefix=prefix)

    def hybrid_forward(self, F, inputs, valid_length=None, position_weight=None):
        x, steps = self._embed(F, inputs, position_weight)
        mask = None
        if valid_length is not None:
            keys = F.broadcast_lesser(F.reshape(steps, shape=(1, -1)),
                                      F.reshape(valid_length, shape=(-1, 1)))
            # (batch, 1, length) -> one copy per query position.
            mask = F.broadcast_like(F.expand_dims(keys, axis=1), x, lhs_axes=(1,),
                                    rhs_axes=(1,))
        for cell in self.transformer_cells:
            x = cell(x, mask)
        if valid_length is not None:
            x = F.SequenceMask(x, sequence_length=valid_length, use_sequence_length=True, axis=1)
        return x


class TransformerDecoder(_Stack):
    """Decoder: target embeddings attend causally to themselves and to the encoder memory."""

    def __init__(self, num_layers: int = 6, units: int = 512, hidden_size: int = 2048,
                 num_heads: int = 8, max_length: int = 549, scaled: bool = True,
                 dropout: float = 0.0, prefix: str | None = None) -> None:
        # The original leaves this norm's size to shape inference (0 = unknown).
        super().__init__(_DecoderLayer, num_layers, units, hidden_size, num_heads, max_length,
                         scaled, dropout, norm_channels=0, prefix=prefix)

    def hybrid_forward(self, F, inputs, memory, mem_valid_length=None, valid_length=None,
                       position_weight=None):
        steps = F.contrib.arange_like(inputs, axis=1)
        causal = F.broadcast_lesser_equal(F.reshape(steps, shape=(1, -1)),
                                          F.reshape(steps, shape=(-1, 1)))
        if valid_length is None:
            mask = F.broadcast_like(F.expand_dims(causal, axis=0), inputs, lhs_axes=(0,),
                                    rhs_axes=(0,))
        else:
            rows = F.broadcast_lesser(F.reshape(steps, shape=(1, -1)),
                                      F.reshape(valid_length, shape=(-1, 1)))
            mask = F.broadcast_mul(F.expand_dims(rows, axis=-1), F.expand_dims(causal, axis=0))
        mem_mask = None
        if mem_valid_length is not None:
            mem_steps = F.contrib.arange_like(memory, axis=1)
            keys = F.broadcast_lesser(F.reshape(mem_steps, shape=(1, -1)),
                                      F.reshape(mem_valid_length, shape=(-1, 1)))
            mem_mask = F.broadcast_like(F.expand_dims(keys, axis=1), inputs, lhs_axes=(1,),
                                        rhs_axes=(1,))
        x, _ = self._embed(F, inputs, position_weight)
        for cell in self.transformer_cells:
            x = cell(x, memory, mask, mem_mask)
        if valid_length is not None:
            x = F.SequenceMask(x, sequence_length=valid_length, use_sequence_length=True, axis=1)
        return x


class TransformerNMT(mx.gluon.Block):
    """Encoder-decoder translation model with one embedding shared by source, target and
    the output projection.

    ``net(src, tgt, src_valid_length, tgt_valid_length)`` returns the next-token scores
    ``(batch, tgt_length, vocab_size)`` for teacher-forced ``tgt``; :meth:`translate`
    decodes greedily. Once hybridized, the encoder and decoder keep the argument structure
    of their first call: pass valid lengths always, or never.
    """

    def __init__(self, vocab_size: int, num_layers: int = 6, units: int = 512,
                 hidden_size: int = 2048, num_heads: int = 8, dropout: float = 0.1,
                 scaled: bool = True, max_src_length: int = 530, max_tgt_length: int = 549,
                 prefix: str | None = "transformer_", params=None) -> None:
        super().__init__(prefix=prefix, params=params)
        if vocab_size < 1:
            raise ValueError(f"vocab_size must be positive, got {vocab_size}")
        shape = dict(num_layers=num_layers, units=units, hidden_size=hidden_size,
                     num_heads=num_heads, scaled=scaled, dropout=dropout)
        with self.name_scope():
            self.encoder = TransformerEncoder(max_length=max_src_length, prefix="enc_", **shape)
            self.decoder = TransformerDecoder(max_length=max_tgt_length, prefix="dec_", **shape)
            # GluonNLP keeps a second decoder object for step-wise decoding that shares
            # every parameter; its entries are in the files, so it is kept as an alias.
            self.one_step_ahead_decoder = self.decoder
            self.src_embed = nn.HybridSequential(prefix="src_embed_")
            with self.src_embed.name_scope():
                self.src_embed.add(nn.Embedding(vocab_size, units))
                self.src_embed.add(nn.Dropout(rate=0.0))
            self.tgt_embed = self.src_embed
            self.tgt_proj = nn.Dense(vocab_size, flatten=False,
                                     params=self.tgt_embed[0].params, prefix="tgt_proj_")

    def encode(self, src, valid_length=None):
        """Encoder memory ``(batch, src_length, units)``."""
        return self.encoder(self.src_embed(src), valid_length)

    def decode(self, tgt, memory, mem_valid_length=None, valid_length=None):
        """Next-token scores for every target position."""
        hidden = self.decoder(self.tgt_embed(tgt), memory, mem_valid_length, valid_length)
        return self.tgt_proj(hidden)

    def forward(self, src, tgt, src_valid_length=None, tgt_valid_length=None):
        memory = self.encode(src, src_valid_length)
        return self.decode(tgt, memory, src_valid_length, tgt_valid_length)

    def translate(self, src, bos_id: int, eos_id: int, src_valid_length=None,
                  max_length: int = 100, beam_size: int = 1, alpha: float = 1.0,
                  K: float = 5.0):
        """Translations as ``(batch, <= max_length)`` token ids, each row ended by
        ``eos_id`` (and padded with it) once the model emits it.

        ``beam_size=1`` decodes greedily. A larger beam runs
        :class:`~gluon_nlp_core.decoding.BeamSearchSampler` with GNMT's length penalty
        (``alpha``, ``K``; GluonNLP's WMT recipe used beam 4, alpha 0.6, K 5) and returns
        each row's best hypothesis, the one GluonNLP's translator ranks first.
        """
        if max_length < 1:
            raise ValueError(f"max_length must be at least 1, got {max_length}")
        if beam_size < 1:
            raise ValueError(f"beam_size must be at least 1, got {beam_size}")
        if beam_size > 1:
            return self._beam_search(src, bos_id, eos_id, src_valid_length, max_length,
                                     beam_size, alpha, K)
        memory = self.encode(src, src_valid_length)
        tokens = mx.nd.full((src.shape[0], 1), bos_id, ctx=src.context)
        done = mx.nd.zeros((src.shape[0],), ctx=src.context)
        for _ in range(max_length):
            # A full-length valid_length (rather than None) keeps one argument structure
            # for a hybridized decoder whether or not it was trained with lengths.
            lengths = mx.nd.full((tokens.shape[0],), tokens.shape[1], ctx=tokens.context)
            scores = self.decode(tokens, memory, src_valid_length, lengths)
            step = mx.nd.argmax(scores[:, -1, :], axis=-1)
            step = mx.nd.where(done, mx.nd.full(step.shape, eos_id, ctx=step.context), step)
            tokens = mx.nd.concat(tokens, step.expand_dims(1), dim=1)
            done = mx.nd.maximum(done, step == eos_id)
            if done.min().asscalar():
                break
        return tokens[:, 1:]

    def _beam_search(self, src, bos_id, eos_id, src_valid_length, max_length, beam_size,
                     alpha, K):
        """The best beam of :meth:`translate`, in the greedy path's layout and dtype."""
        from ..decoding import BeamSearchSampler, BeamSearchScorer

        def step(step_input, states):
            # The decoder is not incremental: it reruns on the whole prefix, which the
            # state keeps behind a placeholder first column (arrays cannot be 0 wide).
            seen, memory, mem_length = states
            seen = mx.nd.concat(seen, step_input.astype(seen.dtype).expand_dims(1), dim=1)
            tokens = seen[:, 1:]
            lengths = mx.nd.full((tokens.shape[0],), tokens.shape[1], ctx=tokens.context)
            scores = self.decode(tokens, memory, mem_length, lengths)
            return mx.nd.log_softmax(scores[:, -1, :]), [seen, memory, mem_length]

        batch = src.shape[0]
        bos = mx.nd.full((batch,), bos_id, ctx=src.context)
        states = [bos.expand_dims(1), self.encode(src, src_valid_length), src_valid_length]
        sampler = BeamSearchSampler(beam_size, step, eos_id, BeamSearchScorer(alpha, K),
                                    max_length=max_length)
        samples, _, valid_length = sampler(bos, states)
        # Tokens after BOS, at most max_length: the EOS the sampler appends to beams still
        # open at the limit is dropped, as the greedy path never emits one there.
        width = min(int(valid_length[:, 0].max().asscalar()) - 1, max_length)
        best = samples[:, 0, 1:1 + width].astype("float32")
        return mx.nd.where(best < 0, mx.nd.full(best.shape, eos_id, ctx=best.context), best)


def transformer_en_de_512(vocab_size: int = 36794, num_layers: int = 6, units: int = 512,
                          hidden_size: int = 2048, num_heads: int = 8, dropout: float = 0.1,
                          scaled: bool = True) -> TransformerNMT:
    """Transformer-base for English-German (WMT2014 BPE vocabulary of 36794 tokens).

    The architecture arguments exist for small test models; the published weights need
    the defaults.
    """
    return TransformerNMT(vocab_size, num_layers=num_layers, units=units,
                          hidden_size=hidden_size, num_heads=num_heads, dropout=dropout,
                          scaled=scaled)
