"""Word-level LSTM language models: the standard (Zaremba et al.) and the AWD-LSTM
(Merity et al., 2017) models, with GluonNLP 0.10's parameter-file format.

Both take time-major token ids ``(length, batch)`` and return the next-token scores
``(length, batch, vocab_size)`` and the final recurrent states. The output layer shares
its weight with the input embedding when ``tie_weights`` is on, which is how the
published models were trained.
"""

from __future__ import annotations

from typing import Any

from gluon_hub.compat import mx

nn = mx.gluon.nn
rnn = mx.gluon.rnn

__all__ = [
    "StandardRNN",
    "AWDRNN",
    "standard_lstm_lm_200",
    "standard_lstm_lm_650",
    "standard_lstm_lm_1500",
    "awd_lstm_lm_600",
    "awd_lstm_lm_1150",
]

#: Size of the vocabulary the published wikitext-2 models were trained with.
WIKITEXT2_VOCAB_SIZE = 33278


class _WeightDrop:
    """Mixin for MXNet's fused RNN layers: dropout on the hidden-to-hidden weights.

    The dropout op is the identity outside ``autograd.train_mode``, so inference
    and the parameters are those of the plain layer.
    """

    def __init__(self, *args: Any, weight_drop: float = 0.0, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._weight_drop = weight_drop

    def hybrid_forward(self, F, inputs, states, sequence_length=None, **kwargs):
        if self._weight_drop:
            kwargs = {name: F.Dropout(value, p=self._weight_drop)
                      if name.endswith("h2h_weight") else value
                      for name, value in kwargs.items()}
        return super().hybrid_forward(F, inputs, states, sequence_length, **kwargs)


class _DropLSTM(_WeightDrop, rnn.LSTM):
    pass


class _DropGRU(_WeightDrop, rnn.GRU):
    pass


class _DropRNN(_WeightDrop, rnn.RNN):
    pass


def _rnn_layer(mode: str, num_layers: int, input_size: int, hidden_size: int,
               dropout: float, weight_drop: float) -> rnn.LSTM:
    common = dict(num_layers=num_layers, dropout=dropout, input_size=input_size,
                  weight_drop=weight_drop)
    if mode == "lstm":
        return _DropLSTM(hidden_size, **common)
    if mode == "gru":
        return _DropGRU(hidden_size, **common)
    if mode in ("rnn_tanh", "rnn_relu"):
        return _DropRNN(hidden_size, activation=mode[4:], **common)
    raise ValueError(f"unknown RNN mode {mode!r}: use 'lstm', 'gru', 'rnn_tanh' or 'rnn_relu'")


class _RowDropEmbedding(nn.HybridBlock):
    """An embedding whose rows (whole words) are dropped together during training."""

    def __init__(self, input_dim: int, output_dim: int, drop: float = 0.0,
                 prefix: str | None = None, params=None) -> None:
        super().__init__(prefix=prefix, params=params)
        self._input_dim = input_dim
        self._output_dim = output_dim
        self._drop = drop
        self.weight = self.params.get("weight", shape=(input_dim, output_dim),
                                      init=mx.init.Uniform(0.1))

    def hybrid_forward(self, F, x, weight):
        if self._drop:
            weight = F.Dropout(weight, p=self._drop, axes=(1,))
        return F.Embedding(x, weight, input_dim=self._input_dim, output_dim=self._output_dim)


def _decoder(vocab_size: int, embedding: nn.HybridBlock, tie_weights: bool) -> nn.HybridSequential:
    decoder = nn.HybridSequential()
    with decoder.name_scope():
        params = embedding.params if tie_weights else None
        decoder.add(nn.Dense(vocab_size, flatten=False, params=params))
    return decoder


class _LanguageModel(nn.HybridBlock):
    def __init__(self, mode: str, vocab_size: int, embed_size: int, hidden_size: int,
                 num_layers: int, tie_weights: bool, prefix: str | None, params) -> None:
        super().__init__(prefix=prefix, params=params)
        if vocab_size < 1:
            raise ValueError(f"vocab_size must be positive, got {vocab_size}")
        self._mode = mode
        self._vocab_size = vocab_size
        self._embed_size = embed_size
        self._hidden_size = hidden_size
        self._num_layers = num_layers
        self._tie_weights = tie_weights

    def __call__(self, inputs, begin_state=None):
        if begin_state is None:
            begin_state = self._zero_state(inputs)
        return super().__call__(inputs, begin_state)

    def _zero_state(self, inputs):
        if isinstance(inputs, mx.nd.NDArray):
            return self.begin_state(batch_size=inputs.shape[1], ctx=inputs.context)
        return self.begin_state(batch_size=0, func=mx.sym.zeros)


class StandardRNN(_LanguageModel):
    """Embedding, a multi-layer RNN with dropout between layers, and a dense output layer.

    Call with ``inputs`` ``(length, batch)`` and optional ``begin_state`` (from
    :meth:`begin_state`); returns ``(scores, states)``.
    """

    def __init__(self, vocab_size: int, embed_size: int, hidden_size: int, num_layers: int,
                 dropout: float = 0.5, tie_weights: bool = False, mode: str = "lstm",
                 prefix: str | None = None, params=None) -> None:
        if tie_weights and embed_size != hidden_size:
            raise ValueError(f"tie_weights needs embed_size == hidden_size, "
                             f"got {embed_size} and {hidden_size}")
        super().__init__(mode, vocab_size, embed_size, hidden_size, num_layers, tie_weights,
                         prefix, params)
        self._dropout = dropout
        with self.name_scope():
            self.embedding = nn.HybridSequential()
            with self.embedding.name_scope():
                self.embedding.add(_RowDropEmbedding(vocab_size, embed_size))
                if dropout:
                    self.embedding.add(nn.Dropout(dropout))
            self.encoder = _rnn_layer(mode, num_layers, embed_size, hidden_size, dropout, 0.0)
            self.decoder = _decoder(vocab_size, self.embedding[0], tie_weights)

    def begin_state(self, *args: Any, **kwargs: Any) -> list:
        """Zero states for ``batch_size``; arguments as ``mxnet.gluon.rnn.LSTM.begin_state``."""
        return self.encoder.begin_state(*args, **kwargs)

    def hybrid_forward(self, F, inputs, begin_state=None):
        encoded = self.embedding(inputs)
        if begin_state is None:
            encoded, state = self.encoder(encoded)
        else:
            encoded, state = self.encoder(encoded, begin_state)
        if self._dropout:
            encoded = F.Dropout(encoded, p=self._dropout, axes=(0,))
        return self.decoder(encoded), state


class AWDRNN(_LanguageModel):
    """AWD-LSTM: one RNN layer per block so that each gets its own variational dropout.

    Regularisation (all inactive at inference): ``drop_e`` drops whole embedding rows,
    ``drop_i`` the embedded input, ``weight_drop`` the hidden-to-hidden weights, ``drop_h``
    the output of every layer but the last and ``dropout`` the last one; the input and
    hidden dropouts share their mask over time. Call as :class:`StandardRNN`; the states
    are a list with one entry per layer.
    """

    def __init__(self, vocab_size: int, embed_size: int = 400, hidden_size: int = 1150,
                 num_layers: int = 3, tie_weights: bool = True, dropout: float = 0.4,
                 weight_drop: float = 0.5, drop_h: float = 0.2, drop_i: float = 0.65,
                 drop_e: float = 0.1, mode: str = "lstm", prefix: str | None = None,
                 params=None) -> None:
        super().__init__(mode, vocab_size, embed_size, hidden_size, num_layers, tie_weights,
                         prefix, params)
        self._dropout = dropout
        self._drop_h = drop_h
        with self.name_scope():
            self.embedding = nn.HybridSequential()
            with self.embedding.name_scope():
                self.embedding.add(_RowDropEmbedding(vocab_size, embed_size, drop=drop_e))
                if drop_i:
                    self.embedding.add(nn.Dropout(drop_i, axes=(0,)))
            self.encoder = nn.HybridSequential()
            with self.encoder.name_scope():
                for layer in range(num_layers):
                    last = layer == num_layers - 1
                    self.encoder.add(_rnn_layer(
                        mode, 1,
                        embed_size if layer == 0 else hidden_size,
                        embed_size if last and tie_weights else hidden_size,
                        0.0, weight_drop))
            self.decoder = _decoder(vocab_size, self.embedding[0], tie_weights)

    def begin_state(self, *args: Any, **kwargs: Any) -> list:
        """Zero states of every layer; arguments as ``mxnet.gluon.rnn.LSTM.begin_state``."""
        return [layer.begin_state(*args, **kwargs) for layer in self.encoder]

    def hybrid_forward(self, F, inputs, begin_state=None):
        encoded = self.embedding(inputs)
        states = []
        last = len(self.encoder) - 1
        for i, (layer, state) in enumerate(zip(self.encoder, begin_state)):
            encoded, state = layer(encoded, state)
            states.append(state)
            if self._drop_h and i != last:
                encoded = F.Dropout(encoded, p=self._drop_h, axes=(0,))
        if self._dropout:
            encoded = F.Dropout(encoded, p=self._dropout, axes=(0,))
        return self.decoder(encoded), states


def standard_lstm_lm_200(vocab_size: int = WIKITEXT2_VOCAB_SIZE, embed_size: int = 200,
                         hidden_size: int = 200, num_layers: int = 2, dropout: float = 0.2,
                         tie_weights: bool = True) -> StandardRNN:
    """2-layer LSTM language model, 200 units, tied embedding and output weights.

    The published wikitext-2 weights need the default sizes.
    """
    return StandardRNN(vocab_size, embed_size, hidden_size, num_layers, dropout=dropout,
                       tie_weights=tie_weights)


def standard_lstm_lm_650(vocab_size: int = WIKITEXT2_VOCAB_SIZE, embed_size: int = 650,
                         hidden_size: int = 650, num_layers: int = 2, dropout: float = 0.5,
                         tie_weights: bool = True) -> StandardRNN:
    """2-layer LSTM language model, 650 units, tied weights."""
    return StandardRNN(vocab_size, embed_size, hidden_size, num_layers, dropout=dropout,
                       tie_weights=tie_weights)


def standard_lstm_lm_1500(vocab_size: int = WIKITEXT2_VOCAB_SIZE, embed_size: int = 1500,
                          hidden_size: int = 1500, num_layers: int = 2, dropout: float = 0.65,
                          tie_weights: bool = True) -> StandardRNN:
    """2-layer LSTM language model, 1500 units, tied weights."""
    return StandardRNN(vocab_size, embed_size, hidden_size, num_layers, dropout=dropout,
                       tie_weights=tie_weights)


def awd_lstm_lm_600(vocab_size: int = WIKITEXT2_VOCAB_SIZE, embed_size: int = 200,
                    hidden_size: int = 600, num_layers: int = 3, tie_weights: bool = True,
                    dropout: float = 0.2, weight_drop: float = 0.2, drop_h: float = 0.1,
                    drop_i: float = 0.3, drop_e: float = 0.05) -> AWDRNN:
    """3-layer AWD-LSTM, embedding 200, hidden 600, tied weights."""
    return AWDRNN(vocab_size, embed_size, hidden_size, num_layers, tie_weights, dropout,
                  weight_drop, drop_h, drop_i, drop_e)


def awd_lstm_lm_1150(vocab_size: int = WIKITEXT2_VOCAB_SIZE, embed_size: int = 400,
                     hidden_size: int = 1150, num_layers: int = 3, tie_weights: bool = True,
                     dropout: float = 0.4, weight_drop: float = 0.5, drop_h: float = 0.2,
                     drop_i: float = 0.65, drop_e: float = 0.1) -> AWDRNN:
    """3-layer AWD-LSTM, embedding 400, hidden 1150, tied weights."""
    return AWDRNN(vocab_size, embed_size, hidden_size, num_layers, tie_weights, dropout,
                  weight_drop, drop_h, drop_i, drop_e)
