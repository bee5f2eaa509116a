"""Layers shared by BERT and the Transformer: the position-wise feed-forward block.

Attribute names (``ffn_1``, ``ffn_2``, ``layer_norm``) are part of the parameter-file
format: GluonNLP 0.10 files store ``...ffn.ffn_1.weight`` and so on, and strict loading
needs the same structural names here.
"""

from __future__ import annotations

import numpy as np

from gluon_hub.compat import mx

nn = mx.gluon.nn


class GELU(mx.gluon.HybridBlock):
    """Gaussian error linear unit, computed exactly (with erf) by MXNet's fused kernel."""

    def hybrid_forward(self, F, x):
        return F.LeakyReLU(x, act_type="gelu")


def activation_block(name: str) -> mx.gluon.HybridBlock:
    """The activation block for ``name``: ``"gelu"`` or any ``nn.Activation`` type."""
    if name == "gelu":
        return GELU()
    return nn.Activation(name)


class PositionwiseFFN(mx.gluon.HybridBlock):
    """Two dense layers with an activation between, then dropout, a residual and a layer norm."""

    def __init__(
        self,
        units: int,
        hidden_size: int,
        dropout: float = 0.0,
        activation: str = "relu",
        layer_norm_eps: float = 1e-5,
        use_residual: bool = True,
        weight_initializer=None,
        prefix: str | None = None,
        params=None,
    ) -> None:
        super().__init__(prefix=prefix, params=params)
        self._dropout = dropout
        self._use_residual = use_residual
        with self.name_scope():
            self.ffn_1 = nn.Dense(
                hidden_size, flatten=False, weight_initializer=weight_initializer, prefix="ffn_1_"
            )
            self.activation = activation_block(activation)
            self.ffn_2 = nn.Dense(
                units, flatten=False, weight_initializer=weight_initializer, prefix="ffn_2_"
            )
            if dropout:
                self.dropout_layer = nn.Dropout(rate=dropout)
            self.layer_norm = nn.LayerNorm(in_channels=units, epsilon=layer_norm_eps)

    def hybrid_forward(self, F, inputs):
        out = self.ffn_2(self.activation(self.ffn_1(inputs)))
        if self._dropout:
            out = self.dropout_layer(out)
        if self._use_residual:
            out = out + inputs
        return self.layer_norm(out)


def sinusoid_table(length: int, units: int) -> np.ndarray:
    """Fixed position encodings of "Attention is all you need": sin on even, cos on odd columns."""
    positions = np.arange(length, dtype=np.float64)[:, None]
    rates = np.power(10000.0, (2.0 / units) * np.arange(units, dtype=np.float64))[None, :]
    table = positions / rates
    table[:, 0::2] = np.sin(table[:, 0::2])
    table[:, 1::2] = np.cos(table[:, 1::2])
    return table.astype(np.float32)
