"""The big LSTMP language model of GluonNLP 0.10 (``big_rnn_lm_2048_512``, Jozefowicz et
al., 2016), trained on the One Billion Word benchmark, with GluonNLP's parameter-file
format.

Time-major token ids ``(length, batch)`` in, next-token scores ``(length, batch,
vocab_size)`` and the final states out, like the other language models of this package.
"""

from __future__ import annotations

from typing import Any

from gluon_hub.compat import mx

from .elmo import LSTMPLayer

nn = mx.gluon.nn

__all__ = ["BigRNN", "big_rnn_lm_2048_512", "GBW_VOCAB_SIZE"]

#: Size of GluonNLP's One Billion Word vocabulary ("gbw"), the published model's.
GBW_VOCAB_SIZE = 793471


class BigRNN(nn.HybridBlock):
    """Embedding, LSTMP layers (no clipping) and a dense output layer.

    Call ``net(inputs, begin_state=None)``; the states are a flat list, ``[projection,
    cell]`` for each layer in turn (:meth:`begin_state`; zeros when left out). Dropout
    (``embed_dropout`` after the embedding, ``encode_dropout`` after every layer) acts only
    in training.
    """

    def __init__(self, vocab_size: int, embed_size: int, hidden_size: int, num_layers: int,
                 projection_size: int, embed_dropout: float = 0.0, encode_dropout: float = 0.0,
                 prefix: str | None = None, params=None) -> None:
        super().__init__(prefix=prefix, params=params)
        if vocab_size < 1:
            raise ValueError(f"vocab_size must be positive, got {vocab_size}")
        self._vocab_size = vocab_size
        with self.name_scope():
            self.embedding = nn.HybridSequential()
            with self.embedding.name_scope():
                self.embedding.add(nn.Embedding(vocab_size, embed_size))
                if embed_dropout:
                    self.embedding.add(nn.Dropout(embed_dropout))
            # GluonNLP's file numbers the dropouts between the layers too: keep them here.
            self.encoder = nn.HybridSequential()
            with self.encoder.name_scope():
                for index in range(num_layers):
                    self.encoder.add(LSTMPLayer(
                        hidden_size, projection_size,
                        embed_size if index == 0 else projection_size))
                    if encode_dropout:
                        self.encoder.add(nn.Dropout(encode_dropout))
            self.decoder = nn.Dense(vocab_size, in_units=projection_size, flatten=False)

    def _layers(self) -> list[LSTMPLayer]:
        return [block for block in self.encoder if isinstance(block, LSTMPLayer)]

    def begin_state(self, batch_size: int = 0, func=mx.nd.zeros, **kwargs: Any) -> list:
        """Zero states, ``[projection, cell]`` of each layer in one flat list."""
        return [state for layer in self._layers()
                for state in layer.begin_state(batch_size, func, **kwargs)]

    def __call__(self, inputs, begin_state=None):
        if begin_state is None:
            if isinstance(inputs, mx.nd.NDArray):
                begin_state = self.begin_state(inputs.shape[1], ctx=inputs.context)
            else:
                begin_state = self.begin_state(0, func=mx.sym.zeros)
        return super().__call__(inputs, begin_state)

    def hybrid_forward(self, F, inputs, begin_state):
        encoded = self.embedding(inputs)
        states = []
        index = 0
        for block in self.encoder:
            if isinstance(block, LSTMPLayer):
                encoded, state = block(encoded, list(begin_state[index:index + 2]))
                states.extend(state)
                index += 2
            else:
                encoded = block(encoded)
        return self.decoder(encoded), states


def big_rnn_lm_2048_512(vocab_size: int = GBW_VOCAB_SIZE, embed_size: int = 512,
                        hidden_size: int = 2048, num_layers: int = 1,
                        projection_size: int = 512, embed_dropout: float = 0.1,
                        encode_dropout: float = 0.1) -> BigRNN:
    """One LSTMP layer of 2048 units projected to 512, embedding 512.

    The published ``gbw`` weights need the default sizes (GluonNLP's ``gbw`` vocabulary,
    793,471 tokens); smaller sizes build a model of the same kind.
    """
    return BigRNN(vocab_size, embed_size, hidden_size, num_layers, projection_size,
                  embed_dropout, encode_dropout)
