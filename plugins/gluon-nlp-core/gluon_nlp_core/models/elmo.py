"""ELMo (Peters et al., 2018): a character-CNN token encoder under a two-direction LSTM
language model, with GluonNLP 0.10's parameter-file format.

Input is ``(batch, length, 50)`` character ids (:mod:`gluon_nlp_core.text.elmo_chars`);
the output is one representation per layer, ``(batch, length, 2 * projection)`` each: the
token encoding (repeated for both directions), then each LSTM layer's forward and backward
outputs side by side. Attribute names (``_elmo_char_encoder``, ``forward_layers``,
``base_cell``...) are part of the file format: strict loading needs them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gluon_hub.compat import mx

nn = mx.gluon.nn

__all__ = [
    "LSTMPLayer",
    "ELMoCharacterEncoder",
    "ELMoBiLM",
    "elmo_2x1024_128_2048cnn_1xhighway",
    "elmo_2x2048_256_2048cnn_1xhighway",
    "elmo_2x4096_512_2048cnn_2xhighway",
]

#: (width, channels) of the character convolutions of every published ELMo: 2048 in all.
ELMO_FILTERS = ((1, 32), (2, 32), (3, 64), (4, 128), (5, 256), (6, 512), (7, 1024))
#: Size of ELMo's character vocabulary (UTF-8 bytes and six special ids).
ELMO_CHAR_VOCAB_SIZE = 262


class LSTMPLayer(nn.HybridBlock):
    """One LSTM layer with a projected output (LSTMP) run over a whole ``(length, batch,
    input)`` sequence; the cell state and the projection may be clipped.

    ``states`` is ``[projection (batch, projection_size), cell (batch, hidden_size)]``;
    returns ``(outputs (length, batch, projection_size), new_states)``.
    """

    def __init__(self, hidden_size: int, projection_size: int, input_size: int,
                 cell_clip: float | None = None, projection_clip: float | None = None,
                 prefix: str | None = None, params=None) -> None:
        super().__init__(prefix=prefix, params=params)
        self._hidden_size = hidden_size
        self._projection_size = projection_size
        self._cell_clip = cell_clip
        self._projection_clip = projection_clip
        gates = 4 * hidden_size
        self.i2h_weight = self.params.get("i2h_weight", shape=(gates, input_size))
        self.h2h_weight = self.params.get("h2h_weight", shape=(gates, projection_size))
        self.h2r_weight = self.params.get("h2r_weight", shape=(projection_size, hidden_size))
        self.i2h_bias = self.params.get("i2h_bias", shape=(gates,), init="zeros")
        self.h2h_bias = self.params.get("h2h_bias", shape=(gates,), init="zeros")
        #: Steps to unroll the loop into when tracing (``None``: MXNet's ``foreach``, which
        #: ONNX export cannot write); set by :mod:`gluon_nlp_core.models.export_graphs`.
        self.unroll_length: int | None = None

    def state_info(self, batch_size: int = 0) -> list[dict]:
        """Shapes of the two states, as MXNet's recurrent cells describe them."""
        return [{"shape": (batch_size, self._projection_size), "__layout__": "NC"},
                {"shape": (batch_size, self._hidden_size), "__layout__": "NC"}]

    def begin_state(self, batch_size: int = 0, func=mx.nd.zeros, **kwargs: Any) -> list:
        """Zero states; ``func`` and ``kwargs`` as ``mxnet.gluon.rnn.LSTMPCell.begin_state``."""
        return [func(shape=info["shape"], **kwargs) for info in self.state_info(batch_size)]

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, h2r_weight,
                       i2h_bias, h2h_bias):
        units = 4 * self._hidden_size

        # The input product stays inside the loop: computed once for the whole sequence
        # before it, MXNet 1.9's hybridized foreach gave varying results from the same input.
        def step(x_t, state):
            projected, cell = state
            gates = (F.FullyConnected(x_t, i2h_weight, i2h_bias, num_hidden=units)
                     + F.FullyConnected(projected, h2h_weight, h2h_bias, num_hidden=units))
            in_gate, forget_gate, candidate, out_gate = F.split(gates, num_outputs=4, axis=1)
            cell = (F.Activation(forget_gate, act_type="sigmoid") * cell
                    + F.Activation(in_gate, act_type="sigmoid")
                    * F.Activation(candidate, act_type="tanh"))
            if self._cell_clip is not None:
                cell = F.clip(cell, -self._cell_clip, self._cell_clip)
            hidden = (F.Activation(out_gate, act_type="sigmoid")
                      * F.Activation(cell, act_type="tanh"))
            projected = F.FullyConnected(hidden, h2r_weight, no_bias=True,
                                         num_hidden=self._projection_size)
            if self._projection_clip is not None:
                projected = F.clip(projected, -self._projection_clip, self._projection_clip)
            return projected, [projected, cell]

        if self.unroll_length is None:
            return F.contrib.foreach(step, inputs, list(states))
        state, outputs = list(states), []
        steps = F.split(inputs, num_outputs=self.unroll_length, axis=0, squeeze_axis=True)
        for x_t in [steps] if self.unroll_length == 1 else steps:
            out, state = step(x_t, state)
            outputs.append(out)
        return F.stack(*outputs, axis=0), state


class _Residual(nn.HybridBlock):
    """Adds a recurrent layer's input to its output (the states pass through)."""

    def __init__(self, base_cell: LSTMPLayer) -> None:
        super().__init__()
        self.base_cell = base_cell

    def hybrid_forward(self, F, inputs, states):
        outputs, states = self.base_cell(inputs, states)
        return outputs + inputs, states


@mx.init.register
class ELMoHighwayBias(mx.init.Initializer):
    """A highway layer's bias: zeros for the transform half, ``gate_bias`` for the gate half.

    Described by one number, so a hybridized graph can record it in its ``__init__``
    attribute: an array-valued ``mx.init.Constant`` is written there as a list once, and a
    second layer sharing it then fails (``'list' object has no attribute 'asnumpy'``). Not
    named ``HighwayBias``: MXNet's initializer registry is global, and GluonNLP registers
    one of that name with other arguments.
    """

    def __init__(self, gate_bias: float = 1.0) -> None:
        super().__init__(gate_bias=gate_bias)
        self._gate_bias = gate_bias

    def _init_weight(self, _, arr) -> None:
        half = arr.shape[0] // 2
        arr[:half] = 0
        arr[half:] = self._gate_bias


class _Highway(nn.HybridBlock):
    """Highway layers: ``y = (1 - t) * x + t * relu(A x)`` with a learned gate ``t``."""

    def __init__(self, size: int, num_layers: int, gate_bias: float = 1.0) -> None:
        super().__init__()
        bias = ELMoHighwayBias(gate_bias)
        with self.name_scope():
            self.hnet = nn.HybridSequential()
            with self.hnet.name_scope():
                for _ in range(num_layers):
                    self.hnet.add(nn.Dense(2 * size, in_units=size, flatten=False,
                                           bias_initializer=bias))

    def hybrid_forward(self, F, x):
        for layer in self.hnet:
            transform, gate = F.split(layer(x), num_outputs=2, axis=-1)
            gate = F.sigmoid(gate)
            x = (1 - gate) * x + gate * F.relu(transform)
        return x


class _CharCNN(nn.HybridBlock):
    """Max-pooled character convolutions of several widths, highway layers, a projection."""

    def __init__(self, embed_size: int, filters: Sequence[Sequence[int]], num_highway: int,
                 output_size: int, activation: str) -> None:
        super().__init__()
        self._activation = activation
        channels = sum(num for _, num in filters)
        with self.name_scope():
            self._convs = nn.HybridSequential()
            with self._convs.name_scope():
                for width, num in filters:
                    branch = nn.HybridSequential()
                    with branch.name_scope():
                        branch.add(nn.Conv1D(num, width, in_channels=embed_size))
                    self._convs.add(branch)
            self._highways = _Highway(channels, num_highway) if num_highway else None
            self._projection = nn.Dense(output_size, in_units=channels)

    def hybrid_forward(self, F, chars):
        # chars: (words, embed_size, characters), Conv1D's NCW layout.
        pooled = [F.Activation(F.max(branch[0](chars), axis=2), act_type=self._activation)
                  for branch in self._convs]
        out = F.concat(*pooled, dim=1)
        if self._highways is not None:
            out = self._highways(out)
        return self._projection(out)


class ELMoCharacterEncoder(nn.HybridBlock):
    """Context-free token vectors from character ids: ``(batch, length, characters)`` ->
    ``(batch, length, output_size)``."""

    def __init__(self, output_size: int, filters: Sequence[Sequence[int]] = ELMO_FILTERS,
                 char_embed_size: int = 16, num_highway: int = 1,
                 conv_layer_activation: str = "relu", max_chars_per_token: int = 50,
                 char_vocab_size: int = ELMO_CHAR_VOCAB_SIZE, prefix: str | None = None,
                 params=None) -> None:
        super().__init__(prefix=prefix, params=params)
        self._max_chars = max_chars_per_token
        with self.name_scope():
            self._char_embedding = nn.Embedding(char_vocab_size, char_embed_size)
            self._convolutions = _CharCNN(char_embed_size, filters, num_highway, output_size,
                                          conv_layer_activation)

    def hybrid_forward(self, F, inputs):
        chars = self._char_embedding(F.reshape(inputs, shape=(-1, self._max_chars)))
        tokens = self._convolutions(F.transpose(chars, axes=(0, 2, 1)))
        # (batch * length, units) -> (batch, length, units)
        return F.reshape_like(tokens, inputs, lhs_begin=0, lhs_end=1, rhs_begin=0, rhs_end=2)


class _BiLMEncoder(nn.HybridBlock):
    """Forward and backward stacks of LSTMP layers, residual above the first layer."""

    def __init__(self, num_layers: int, input_size: int, hidden_size: int, proj_size: int,
                 cell_clip: float | None, proj_clip: float | None) -> None:
        super().__init__()
        self._num_layers = num_layers
        with self.name_scope():
            self.forward_layers = self._stack(num_layers, input_size, hidden_size, proj_size,
                                              cell_clip, proj_clip)
            self.backward_layers = self._stack(num_layers, input_size, hidden_size, proj_size,
                                               cell_clip, proj_clip)

    @staticmethod
    def _stack(num_layers, input_size, hidden_size, proj_size, cell_clip, proj_clip):
        stack = nn.HybridSequential()
        with stack.name_scope():
            for index in range(num_layers):
                # GluonNLP wraps each layer in a one-cell sequence: names ``{index}.0``.
                wrapper = nn.HybridSequential()
                with wrapper.name_scope():
                    layer = LSTMPLayer(hidden_size, proj_size,
                                       input_size if index == 0 else proj_size,
                                       cell_clip=cell_clip, projection_clip=proj_clip)
                    wrapper.add(layer if index == 0 else _Residual(layer))
                stack.add(wrapper)
        return stack

    def hybrid_forward(self, F, inputs, forward_states, backward_states, sequence_length=None):
        def reverse(x):
            if sequence_length is None:
                return F.SequenceReverse(x, axis=0)
            return F.SequenceReverse(x, sequence_length, use_sequence_length=True, axis=0)

        forward_out, backward_out, new_forward, new_backward = [], [], [], []
        fwd, bwd = inputs, reverse(inputs)
        for index in range(self._num_layers):
            fwd, state = self.forward_layers[index][0](fwd, forward_states[index])
            forward_out.append(fwd)
            new_forward.append(state)
            # The backward stack stays in reversed order; its outputs are put back.
            bwd, state = self.backward_layers[index][0](bwd, backward_states[index])
            backward_out.append(reverse(bwd))
            new_backward.append(state)
        out = F.concat(F.stack(*forward_out, axis=0), F.stack(*backward_out, axis=0), dim=-1)
        return out, [new_forward, new_backward]


class ELMoBiLM(nn.HybridBlock):
    """ELMo's bidirectional language model: character encoder and LSTMP stacks.

    Call ``net(char_ids, states=None, mask=None)`` with ``char_ids`` ``(batch, length,
    50)``; ``states`` is ``[forward, backward]``, a ``[projection, cell]`` pair per layer
    in each (:meth:`begin_state`; zeros when left out), and ``mask`` ``(batch, length)``
    marks the real tokens of padded rows so that the backward direction starts at each
    row's last one. Returns ``(outputs, states)``: ``num_layers + 1`` arrays of
    ``(batch, length, 2 * output_size)``. Hybridized, pass ``states`` and ``mask`` always
    or never.
    """

    def __init__(self, output_size: int, hidden_size: int, proj_size: int,
                 num_layers: int = 2, num_highway: int = 1,
                 filters: Sequence[Sequence[int]] = ELMO_FILTERS, char_embed_size: int = 16,
                 char_vocab_size: int = ELMO_CHAR_VOCAB_SIZE,
                 conv_layer_activation: str = "relu", max_chars_per_token: int = 50,
                 input_size: int | None = None, cell_clip: float | None = 3,
                 proj_clip: float | None = 3, prefix: str | None = None, params=None) -> None:
        super().__init__(prefix=prefix, params=params)
        input_size = output_size if input_size is None else input_size
        if input_size != output_size:
            raise ValueError(f"the LSTM input size ({input_size}) must equal the character "
                             f"encoder's output_size ({output_size})")
        if proj_size != input_size and num_layers > 1:
            raise ValueError(f"proj_size ({proj_size}) must equal input_size ({input_size}): "
                             "the layers above the first add their input to their output")
        self._num_layers = num_layers
        self._proj_size = proj_size
        self._hidden_size = hidden_size
        with self.name_scope():
            self._elmo_char_encoder = ELMoCharacterEncoder(
                output_size, filters, char_embed_size, num_highway, conv_layer_activation,
                max_chars_per_token, char_vocab_size)
            self._elmo_lstm = _BiLMEncoder(num_layers, input_size, hidden_size, proj_size,
                                           cell_clip, proj_clip)

    def begin_state(self, batch_size: int = 0, func=mx.nd.zeros, **kwargs: Any) -> list:
        """Zero ``[forward, backward]`` states, a ``[projection, cell]`` pair per layer."""
        def direction():
            return [[func(shape=(batch_size, self._proj_size), **kwargs),
                     func(shape=(batch_size, self._hidden_size), **kwargs)]
                    for _ in range(self._num_layers)]
        return [direction(), direction()]

    def __call__(self, inputs, states=None, mask=None):
        if states is None:
            if isinstance(inputs, mx.nd.NDArray):
                states = self.begin_state(inputs.shape[0], ctx=inputs.context)
            else:
                states = self.begin_state(0, func=mx.sym.zeros)
        if mask is None:
            return super().__call__(inputs, states)
        return super().__call__(inputs, states, mask)

    def hybrid_forward(self, F, inputs, states, mask=None):
        tokens = self._elmo_char_encoder(inputs)
        if mask is not None:
            mask = F.cast(mask, "float32")
        length = None if mask is None else F.sum(mask, axis=1)
        lstm_out, states = self._elmo_lstm(F.transpose(tokens, axes=(1, 0, 2)),
                                           states[0], states[1], length)
        first = F.concat(tokens, tokens, dim=-1)
        if mask is not None:
            first = F.broadcast_mul(first, F.expand_dims(mask, axis=-1))
        # (layers, length, batch, units) -> one (batch, length, units) per layer
        layers = F.split(F.transpose(lstm_out, axes=(0, 2, 1, 3)),
                         num_outputs=self._num_layers, axis=0, squeeze_axis=True)
        if self._num_layers == 1:
            layers = [layers]
        return [first, *layers], states


def _elmo(output_size: int, hidden_size: int, num_highway: int, **kwargs: Any) -> ELMoBiLM:
    return ELMoBiLM(output_size=output_size, hidden_size=hidden_size, proj_size=output_size,
                    num_highway=num_highway, **kwargs)


def elmo_2x1024_128_2048cnn_1xhighway(**kwargs: Any) -> ELMoBiLM:
    """ELMo small: 2 layers of 1024 LSTM units projected to 128, one highway layer.

    Published weights: ``gbw`` (One Billion Word benchmark).
    """
    return _elmo(128, 1024, 1, **kwargs)


def elmo_2x2048_256_2048cnn_1xhighway(**kwargs: Any) -> ELMoBiLM:
    """ELMo medium: 2 layers of 2048 LSTM units projected to 256, one highway layer.

    Published weights: ``gbw``.
    """
    return _elmo(256, 2048, 1, **kwargs)


def elmo_2x4096_512_2048cnn_2xhighway(**kwargs: Any) -> ELMoBiLM:
    """ELMo original: 2 layers of 4096 LSTM units projected to 512, two highway layers.

    Published weights: ``gbw`` and ``5bw`` (5.5 billion tokens).
    """
    return _elmo(512, 4096, 2, **kwargs)
