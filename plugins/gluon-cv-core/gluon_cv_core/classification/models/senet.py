"""SENet-154 ("Squeeze-and-Excitation Networks", arXiv:1709.01507), with GluonCV 0.10's
parameter layout.

A 64x4d ResNeXt-152 with squeeze-and-excitation in every block, a three-convolution stem and
ceil-mode max-pool, halved first 1x1 convolutions, 3x3 projection shortcuts after the first
stage and dropout before the classifier. ``senet_154e`` replaces those strided 3x3 shortcuts
with average pooling and a 1x1 convolution (ResNet-D).
"""

from __future__ import annotations

import math
from typing import Callable

from gluon_hub import head_argument

from ...common.blocks import BatchNorm, HybridBlock, add_conv_norm, check_choice, make_norm, nn

__all__ = ["SEBlock", "SENet", "senet"]

_LAYERS = {50: [3, 4, 6, 3], 101: [3, 4, 23, 3], 152: [3, 8, 36, 3]}


class SEBlock(HybridBlock):
    """Grouped bottleneck rescaled channel-wise by a squeeze-and-excitation gate."""

    def __init__(self, channels: int, cardinality: int, bottleneck_width: int, strides: int,
                 downsample: bool = False, shortcut_kernel: int = 3, avg_down: bool = False,
                 norm_layer: Callable[..., HybridBlock] = BatchNorm, norm_kwargs: dict | None = None,
                 prefix: str | None = None) -> None:
        super().__init__(prefix=prefix)
        group_width = cardinality * int(math.floor(channels * (bottleneck_width / 64)))
        options = {"norm_layer": norm_layer, "norm_kwargs": norm_kwargs}
        self.body = nn.HybridSequential(prefix="")
        add_conv_norm(self.body, group_width // 2, 1, **options)
        add_conv_norm(self.body, group_width, 3, strides, 1, groups=cardinality, **options)
        # the residual branch starts at zero: SENet's training recipe
        add_conv_norm(self.body, channels * 4, 1, act=None, **options,
                      norm_options={"gamma_initializer": "zeros"})
        self.se = nn.HybridSequential(prefix="")
        self.se.add(nn.Conv2D(channels // 4, 1))
        self.se.add(nn.Activation("relu"))
        self.se.add(nn.Conv2D(channels * 4, 1))
        self.se.add(nn.Activation("sigmoid"))
        if downsample:
            self.downsample = nn.HybridSequential(prefix="")
            if avg_down:
                self.downsample.add(nn.AvgPool2D(pool_size=strides, strides=strides, ceil_mode=True,
                                                 count_include_pad=False))
                self.downsample.add(nn.Conv2D(channels * 4, 1, use_bias=False))
            else:
                self.downsample.add(nn.Conv2D(channels * 4, shortcut_kernel, strides,
                                              shortcut_kernel // 2, use_bias=False))
            self.downsample.add(make_norm(norm_layer, norm_kwargs))
        else:
            self.downsample = None

    def hybrid_forward(self, F, x):
        residual = self.downsample(x) if self.downsample is not None else x
        x = self.body(x)
        x = F.broadcast_mul(x, self.se(F.contrib.AdaptiveAvgPooling2D(x, output_size=1)))
        return F.Activation(x + residual, act_type="relu")


class SENet(HybridBlock):
    """SENet: deep stem, ceil-mode max-pool, four stages of SE blocks, pool, dropout, classifier."""

    def __init__(self, layers: list[int], cardinality: int, bottleneck_width: int, avg_down: bool = False,
                 classes: int = 1000, norm_layer: Callable[..., HybridBlock] = BatchNorm,
                 norm_kwargs: dict | None = None) -> None:
        super().__init__()
        options = {"norm_layer": norm_layer, "norm_kwargs": norm_kwargs}
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            add_conv_norm(self.features, 64, 3, 2, 1, **options)
            add_conv_norm(self.features, 64, 3, 1, 1, **options)
            add_conv_norm(self.features, 128, 3, 1, 1, **options)
            self.features.add(nn.MaxPool2D(3, 2, ceil_mode=True))
            channels = 64
            for i, num_blocks in enumerate(layers):
                strides = 1 if i == 0 else 2
                stage = nn.HybridSequential(prefix=f"stage{i + 1}_")
                with stage.name_scope():
                    stage.add(SEBlock(channels, cardinality, bottleneck_width, strides, True,
                                      shortcut_kernel=1 if i == 0 else 3, avg_down=avg_down and i > 0,
                                      prefix="", **options))
                    for _ in range(num_blocks - 1):
                        stage.add(SEBlock(channels, cardinality, bottleneck_width, 1, prefix="", **options))
                self.features.add(stage)
                channels *= 2
            self.features.add(nn.GlobalAvgPool2D())
            self.features.add(nn.Dropout(0.2))
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


@head_argument("classes")
def senet(num_layers: int = 152, cardinality: int = 64, bottleneck_width: int = 4, avg_down: bool = False,
          classes: int = 1000, norm_layer: Callable[..., HybridBlock] = BatchNorm,
          norm_kwargs: dict | None = None) -> SENet:
    """SENet on a ResNeXt-50/101/152 body; GluonCV publishes the 152-layer one as ``senet_154``.

    Parameters
    ----------
    num_layers : 50, 101 or 152 (blocks of the ResNeXt body).
    cardinality : number of groups of the 3x3 convolutions.
    bottleneck_width : channels per group in the first stage.
    avg_down : average-pool then 1x1 in the strided shortcuts (``senet_154e``).
    classes : size of the classifier output.
    norm_layer, norm_kwargs : normalization class and its extra arguments.
    """
    check_choice("num_layers", num_layers, _LAYERS)
    return SENet(_LAYERS[num_layers], cardinality, bottleneck_width, avg_down, classes, norm_layer,
                 norm_kwargs)
