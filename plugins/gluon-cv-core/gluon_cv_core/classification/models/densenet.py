"""DenseNet 121/161/169/201 ("Densely Connected Convolutional Networks", arXiv:1608.06993),
with GluonCV 0.10's parameter layout.

The features end with GluonCV's fixed 7x7 average pool, not a global one: the two agree
only where the last feature map is exactly 7x7 (inputs of about 221 to 252 pixels); on a
larger map GluonCV averages the top-left 7x7 window, and so do we, so that the published
weights give the same answers at every input size.
"""

from __future__ import annotations

from typing import Callable

from gluon_hub import head_argument

from ...common.blocks import BatchNorm, HybridBlock, check_choice, make_norm, mx, nn

__all__ = ["DenseNet", "densenet"]

#: layers -> (stem channels, growth rate, dense layers per block)
_SPEC = {
    121: (64, 32, [6, 12, 24, 16]),
    161: (96, 48, [6, 12, 36, 24]),
    169: (64, 32, [6, 12, 32, 32]),
    201: (64, 32, [6, 12, 48, 32]),
}


def _norm_relu_conv(seq, channels: int, kernel_size: int, padding: int, norm_layer, norm_kwargs):
    seq.add(make_norm(norm_layer, norm_kwargs))
    seq.add(nn.Activation("relu"))
    seq.add(nn.Conv2D(channels, kernel_size, padding=padding, use_bias=False))
    return seq


def _dense_layer(growth_rate: int, bn_size: int, dropout: float, norm_layer, norm_kwargs):
    """Concatenate the input with ``growth_rate`` new channels (bottleneck 1x1, then 3x3)."""
    new_features = nn.HybridSequential(prefix="")
    _norm_relu_conv(new_features, bn_size * growth_rate, 1, 0, norm_layer, norm_kwargs)
    _norm_relu_conv(new_features, growth_rate, 3, 1, norm_layer, norm_kwargs)
    if dropout:
        new_features.add(nn.Dropout(dropout))
    out = mx.gluon.contrib.nn.HybridConcurrent(axis=1, prefix="")
    out.add(mx.gluon.contrib.nn.Identity())
    out.add(new_features)
    return out


class DenseNet(HybridBlock):
    """Stem, dense blocks joined by halving transitions, norm-relu, global pool, classifier."""

    def __init__(self, num_init_features: int, growth_rate: int, block_config: list[int],
                 bn_size: int = 4, dropout: float = 0.0, classes: int = 1000,
                 norm_layer: Callable[..., HybridBlock] = BatchNorm, norm_kwargs: dict | None = None) -> None:
        super().__init__()
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            self.features.add(nn.Conv2D(num_init_features, 7, 2, 3, use_bias=False))
            self.features.add(make_norm(norm_layer, norm_kwargs))
            self.features.add(nn.Activation("relu"))
            self.features.add(nn.MaxPool2D(pool_size=3, strides=2, padding=1))
            num_features = num_init_features
            for i, num_layers in enumerate(block_config):
                block = nn.HybridSequential(prefix=f"stage{i + 1}_")
                with block.name_scope():
                    for _ in range(num_layers):
                        block.add(_dense_layer(growth_rate, bn_size, dropout, norm_layer, norm_kwargs))
                self.features.add(block)
                num_features += num_layers * growth_rate
                if i != len(block_config) - 1:
                    num_features //= 2
                    transition = nn.HybridSequential(prefix="")
                    _norm_relu_conv(transition, num_features, 1, 0, norm_layer, norm_kwargs)
                    transition.add(nn.AvgPool2D(pool_size=2, strides=2))
                    self.features.add(transition)
            self.features.add(make_norm(norm_layer, norm_kwargs))
            self.features.add(nn.Activation("relu"))
            self.features.add(nn.AvgPool2D(pool_size=7))
            self.features.add(nn.Flatten())
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


@head_argument("classes")
def densenet(num_layers: int, classes: int = 1000, dropout: float = 0.0,
             norm_layer: Callable[..., HybridBlock] = BatchNorm, norm_kwargs: dict | None = None,
             bn_size: int = 4) -> DenseNet:
    """DenseNet with 121, 161, 169 or 201 layers; ``dropout`` applies after each dense layer.

    ``bn_size`` is GluonCV's: each dense layer's 1x1 bottleneck has ``bn_size * growth_rate``
    channels (the published weights need 4).
    """
    check_choice("num_layers", num_layers, _SPEC)
    num_init_features, growth_rate, block_config = _SPEC[num_layers]
    return DenseNet(num_init_features, growth_rate, block_config, bn_size=bn_size, dropout=dropout, classes=classes,
                    norm_layer=norm_layer, norm_kwargs=norm_kwargs)
