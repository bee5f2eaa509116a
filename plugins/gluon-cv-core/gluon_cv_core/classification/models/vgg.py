"""VGG 11/13/16/19 with and without batch norm ("Very Deep Convolutional Networks",
arXiv:1409.1556), with GluonCV 0.10's parameter layout."""

from __future__ import annotations

from gluon_hub import head_argument

from ...common.blocks import HybridBlock, check_choice, mx, nn

__all__ = ["VGG", "vgg"]

#: layers -> convolutions per block (the five blocks have 64, 128, 256, 512, 512 filters)
_SPEC = {11: [1, 1, 2, 2, 2], 13: [2, 2, 2, 2, 2], 16: [2, 2, 3, 3, 3], 19: [2, 2, 4, 4, 4]}
_FILTERS = [64, 128, 256, 512, 512]


class VGG(HybridBlock):
    """Blocks of 3x3 convolutions and 2x2 max-pools, two 4096-wide dense layers, classifier."""

    def __init__(self, layers: list[int], filters: list[int], classes: int = 1000,
                 batch_norm: bool = False) -> None:
        super().__init__()
        conv_init = mx.init.Xavier(rnd_type="gaussian", factor_type="out", magnitude=2)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            for num, channels in zip(layers, filters):
                for _ in range(num):
                    self.features.add(nn.Conv2D(channels, 3, padding=1, weight_initializer=conv_init,
                                                bias_initializer="zeros"))
                    if batch_norm:
                        self.features.add(nn.BatchNorm())
                    self.features.add(nn.Activation("relu"))
                self.features.add(nn.MaxPool2D(strides=2))
            for _ in range(2):
                self.features.add(nn.Dense(4096, activation="relu", weight_initializer="normal",
                                           bias_initializer="zeros"))
                self.features.add(nn.Dropout(rate=0.5))
            self.output = nn.Dense(classes, weight_initializer="normal", bias_initializer="zeros")

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


@head_argument("classes")
def vgg(num_layers: int, batch_norm: bool = False, classes: int = 1000) -> VGG:
    """VGG with 11, 13, 16 or 19 weight layers, optionally with batch norm after each conv."""
    check_choice("num_layers", num_layers, _SPEC)
    return VGG(_SPEC[num_layers], _FILTERS, classes, batch_norm)
