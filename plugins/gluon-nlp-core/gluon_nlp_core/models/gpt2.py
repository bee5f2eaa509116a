"""GPT-2 (Radford et al., 2019): a decoder-only Transformer language model with pre-norm
layers, learned positions and the output projection tied to the word embedding.

GluonNLP 0.10 shipped it with its scripts (``scripts/text_generation/model/gpt.py``,
``gpt2_117m`` and ``gpt2_345m`` on ``openai_webtext``); the block attributes here
(``_embed``, ``_pos_embed``, ``_self_attention_layers``, ``_ffn_layers``, ``_attn_ln``,
``_ffn_ln``, ``_final_ln``, ``_logits_proj``) are the names its parameter files store, so
they load strictly.

The model is incremental: it returns each layer's keys and values, and given them back as
``states`` it attends over the past without recomputing it (generation one token at a time).
"""

from __future__ import annotations

import math

from gluon_hub.compat import mx

nn = mx.gluon.nn
HybridBlock = mx.gluon.HybridBlock

__all__ = ["GPT2SelfAttention", "GPT2FFN", "GPT2Model", "gpt2_117m", "gpt2_345m"]

#: Score given to future positions: softmax sends it to exactly zero.
_MASKED = -1e18


class GELUTanh(HybridBlock):
    """GELU by its tanh approximation, the one GPT-2 was trained with."""

    def hybrid_forward(self, F, x):
        inner = math.sqrt(2 / math.pi) * (x + 0.044715 * (x ** 3))
        return 0.5 * x * (1 + F.tanh(inner))


class GPT2SelfAttention(HybridBlock):
    """Causal multi-head self-attention on ``(batch, length, units)``.

    With ``prev_key`` and ``prev_value`` (``(batch, heads, past, units / heads)``) the
    queries sit after the ``past`` positions and attend to them too. Returns the output and
    the keys and values over past and present, the next step's state.
    """

    def __init__(self, units: int, num_heads: int, dropout: float = 0.0,
                 weight_initializer=None, prefix: str | None = None, params=None) -> None:
        super().__init__(prefix=prefix, params=params)
        if units % num_heads:
            raise ValueError(f"units ({units}) must be a multiple of num_heads ({num_heads})")
        self._num_heads = num_heads
        self._scale = 1.0 / math.sqrt(units // num_heads)
        with self.name_scope():
            self._multi_head_qkv_proj = nn.Dense(3 * units, in_units=units, flatten=False,
                                                 weight_initializer=weight_initializer,
                                                 prefix="qkv_proj_")
            self._dropout_layer = nn.Dropout(dropout)
            self._out_proj = nn.Dense(units, in_units=units, flatten=False,
                                      weight_initializer=weight_initializer, prefix="out_proj_")

    def hybrid_forward(self, F, data, prev_key=None, prev_value=None):
        heads = self._num_heads
        # (batch, length, 3 * units) -> q, k, v each (batch, heads, length, head_dim); the
        # projection stores q, k and v one after another, each split into heads.
        qkv = F.transpose(F.reshape(self._multi_head_qkv_proj(data), shape=(0, 0, 3, heads, -1)),
                          axes=(2, 0, 3, 1, 4))
        query, key, value = F.split(qkv, num_outputs=3, axis=0, squeeze_axis=True)
        if prev_key is not None:
            key = F.concat(prev_key, key, dim=2)
            value = F.concat(prev_value, value, dim=2)
        scores = F.batch_dot(F.reshape(query, shape=(-3, -2)) * self._scale,
                             F.reshape(key, shape=(-3, -2)), transpose_b=True)
        # Query i (after `past` earlier steps) sees keys 0 .. past + i.
        key_pos = F.contrib.arange_like(key, axis=2)
        query_pos = F.contrib.arange_like(query, axis=2)
        past = F.slice_axis(key_pos, axis=0, begin=-1, end=None) - F.slice_axis(
            query_pos, axis=0, begin=-1, end=None)
        visible = F.broadcast_lesser_equal(F.reshape(key_pos, shape=(1, -1)),
                                           F.reshape(F.broadcast_add(query_pos, past),
                                                     shape=(-1, 1)))
        scores = F.broadcast_add(scores, F.expand_dims((1 - visible) * _MASKED, axis=0))
        weights = self._dropout_layer(F.softmax(scores, axis=-1))
        context = F.batch_dot(weights, F.reshape(value, shape=(-3, -2)))
        context = F.transpose(F.reshape(context, shape=(-4, -1, heads, -2)), axes=(0, 2, 1, 3))
        return self._out_proj(F.reshape(context, shape=(0, 0, -1))), key, value


class GPT2FFN(HybridBlock):
    """Position-wise feed-forward block: dense, tanh-GELU, dense (no residual, no norm)."""

    def __init__(self, units: int, hidden_size: int, weight_initializer=None,
                 prefix: str | None = None, params=None) -> None:
        super().__init__(prefix=prefix, params=params)
        with self.name_scope():
            self._hidden_map = nn.Dense(hidden_size, in_units=units, flatten=False,
                                        weight_initializer=weight_initializer)
            self._out_map = nn.Dense(units, in_units=hidden_size, flatten=False,
                                     weight_initializer=weight_initializer)
            self._act = GELUTanh()

    def hybrid_forward(self, F, data):
        return self._out_map(self._act(self._hidden_map(data)))


class GPT2Model(HybridBlock):
    """GPT-2: token ids ``(batch, length)`` in; the next-token scores
    ``(batch, length, vocab_size)`` and the new states out.

    ``states`` is ``None`` or the list returned by the previous call: per layer the keys
    and the values, ``(batch, heads, past, units / heads)`` each. Past and present together
    must fit ``max_length``. A hybridized model keeps the kind of ``states`` (``None`` or a
    list) of its first call.
    """

    def __init__(self, vocab_size: int, units: int = 768, max_length: int = 1024,
                 num_layers: int = 12, num_heads: int = 12, dropout: float = 0.0,
                 prefix: str | None = None, params=None) -> None:
        super().__init__(prefix=prefix, params=params)
        if vocab_size < 1:
            raise ValueError(f"vocab_size must be positive, got {vocab_size}")
        self._max_length = max_length
        self._num_layers = num_layers
        init = mx.init.Normal(0.02)
        with self.name_scope():
            self._pos_embed = nn.Embedding(max_length, units, prefix="pos_embed_",
                                           weight_initializer=mx.init.Normal(0.01))
            self._embed = nn.Embedding(vocab_size, units, prefix="embed_",
                                       weight_initializer=init)
            # Scores are the dot products with the word embedding (the same parameter).
            self._logits_proj = nn.Dense(vocab_size, in_units=units, use_bias=False,
                                         flatten=False, params=self._embed.params)
            self._self_attention_layers = nn.HybridSequential()
            self._ffn_layers = nn.HybridSequential()
            self._attn_ln = nn.HybridSequential()
            self._ffn_ln = nn.HybridSequential()
            for i in range(num_layers):
                self._self_attention_layers.add(GPT2SelfAttention(
                    units, num_heads, dropout=dropout, weight_initializer=init,
                    prefix=f"self_attn{i}_"))
                self._ffn_layers.add(GPT2FFN(units, 4 * units, weight_initializer=init,
                                             prefix=f"ffn{i}_"))
                self._attn_ln.add(nn.LayerNorm(in_channels=units, prefix=f"attn_ln{i}_"))
                self._ffn_ln.add(nn.LayerNorm(in_channels=units, prefix=f"ffn_ln{i}_"))
            self._final_ln = nn.LayerNorm(in_channels=units, prefix="final_ln_")

    def hybrid_forward(self, F, data, states=None):
        if states is not None and len(states) != 2 * self._num_layers:
            raise ValueError(f"states must hold a key and a value per layer "
                             f"({2 * self._num_layers} arrays), got {len(states)}")
        if F is mx.nd:
            length = data.shape[1] + (0 if states is None else states[0].shape[2])
            if length > self._max_length:
                raise ValueError(f"{length} positions (past and present) exceed the "
                                 f"model's max_length of {self._max_length}")
        positions = F.contrib.arange_like(data, axis=1)
        if states is not None:
            past = F.slice_axis(F.contrib.arange_like(states[0], axis=2),
                                axis=0, begin=-1, end=None) + 1
            positions = F.broadcast_add(positions, past)
        out = F.broadcast_add(self._embed(data),
                              F.expand_dims(self._pos_embed(positions), axis=0))
        new_states = []
        for i in range(self._num_layers):
            prev = (None, None) if states is None else (states[2 * i], states[2 * i + 1])
            attended, key, value = self._self_attention_layers[i](self._attn_ln[i](out), *prev)
            out = out + attended
            out = out + self._ffn_layers[i](self._ffn_ln[i](out))
            new_states.extend((key, value))
        return self._logits_proj(self._final_ln(out)), new_states


def gpt2_117m(vocab_size: int = 50257, units: int = 768, max_length: int = 1024,
              num_layers: int = 12, num_heads: int = 12, dropout: float = 0.0) -> GPT2Model:
    """GPT-2 small (117M, as OpenAI first counted it): 12 layers, 768 units, 12 heads,
    1024 positions; byte-level BPE vocabulary ``openai_webtext`` (50257 tokens).

    The architecture arguments exist for small test models; published weights need the
    defaults.

    Examples
    --------
    >>> from gluon_hub.compat import mx
    >>> from gluon_nlp_core.models.gpt2 import gpt2_117m
    >>> net = gpt2_117m(vocab_size=50, units=8, max_length=16, num_layers=1, num_heads=2)
    >>> net.initialize()
    >>> logits, states = net(mx.nd.array([[1, 2, 3]]))
    >>> logits.shape, states[0].shape
    ((1, 3, 50), (1, 2, 3, 4))
    """
    return GPT2Model(vocab_size, units=units, max_length=max_length, num_layers=num_layers,
                     num_heads=num_heads, dropout=dropout)


def gpt2_345m(vocab_size: int = 50257, units: int = 1024, max_length: int = 1024,
              num_layers: int = 24, num_heads: int = 16, dropout: float = 0.0) -> GPT2Model:
    """GPT-2 medium (345M): 24 layers, 1024 units, 16 heads. Arguments as for
    :func:`gpt2_117m`."""
    return GPT2Model(vocab_size, units=units, max_length=max_length, num_layers=num_layers,
                     num_heads=num_heads, dropout=dropout)
