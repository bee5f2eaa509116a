"""ResNeXt ("Aggregated Residual Transformations", arXiv:1611.05431) and SE-ResNeXt
("Squeeze-and-Excitation Networks", arXiv:1709.01507), with GluonCV 0.10's parameter layout.
"""

from __future__ import annotations

import math
from typing import Any, Callable

from gluon_hub import head_argument

from ...common.blocks import BatchNorm, HybridBlock, add_conv_norm, add_imagenet_stem, check_choice, nn, projection

__all__ = ["ResNeXtBlock", "ResNeXt", "add_resnext_stages", "resnext"]

_LAYERS = {50: [3, 4, 6, 3], 101: [3, 4, 23, 3]}


class ResNeXtBlock(HybridBlock):
    """Bottleneck whose 3x3 convolution is split in ``cardinality`` groups."""

    def __init__(self, channels: int, cardinality: int, bottleneck_width: int, strides: int,
                 downsample: bool = False, last_gamma: bool = False, use_se: bool = False,
                 avg_down: bool = False, norm_layer: Callable[..., HybridBlock] = BatchNorm,
                 norm_kwargs: dict | None = None, prefix: str | None = None) -> None:
        super().__init__(prefix=prefix)
        group_width = cardinality * int(math.floor(channels * (bottleneck_width / 64)))
        options = {"norm_layer": norm_layer, "norm_kwargs": norm_kwargs}
        self.body = nn.HybridSequential(prefix="")
        add_conv_norm(self.body, group_width, 1, **options)
        add_conv_norm(self.body, group_width, 3, strides, 1, groups=cardinality, **options)
        add_conv_norm(self.body, channels * 4, 1, act=None, **options,
                      norm_options={"gamma_initializer": "zeros"} if last_gamma else None)
        if use_se:
            self.se = nn.HybridSequential(prefix="")
            self.se.add(nn.Conv2D(channels // 4, 1))
            self.se.add(nn.Activation("relu"))
            self.se.add(nn.Conv2D(channels * 4, 1))
            self.se.add(nn.Activation("sigmoid"))
        else:
            self.se = None
        self.downsample = (projection(channels * 4, strides, avg_down, norm_layer, norm_kwargs)
                           if downsample else None)

    def hybrid_forward(self, F, x):
        residual = self.downsample(x) if self.downsample is not None else x
        x = self.body(x)
        if self.se is not None:
            x = F.broadcast_mul(x, self.se(F.contrib.AdaptiveAvgPooling2D(x, output_size=1)))
        return F.Activation(x + residual, act_type="relu")


def add_resnext_stages(features: Any, layers: list[int], cardinality: int, bottleneck_width: int,
                       avg_down: bool = False, **options: Any) -> None:
    """Append the stages of grouped bottlenecks (64, 128, ... wide before expansion) and a
    global pool to ``features``; ``options`` go to every block."""
    channels = 64
    for i, num_blocks in enumerate(layers):
        stage = nn.HybridSequential(prefix=f"stage{i + 1}_")
        with stage.name_scope():
            stage.add(ResNeXtBlock(channels, cardinality, bottleneck_width, 1 if i == 0 else 2,
                                   True, avg_down=avg_down and i > 0, prefix="", **options))
            for _ in range(num_blocks - 1):
                stage.add(ResNeXtBlock(channels, cardinality, bottleneck_width, 1, prefix="", **options))
        features.add(stage)
        channels *= 2
    features.add(nn.GlobalAvgPool2D())


class ResNeXt(HybridBlock):
    """ResNeXt network: ImageNet stem, four stages of grouped bottlenecks, pool, classifier."""

    def __init__(self, layers: list[int], cardinality: int, bottleneck_width: int, classes: int = 1000,
                 last_gamma: bool = False, use_se: bool = False, deep_stem: bool = False,
                 avg_down: bool = False, stem_width: int = 64,
                 norm_layer: Callable[..., HybridBlock] = BatchNorm, norm_kwargs: dict | None = None) -> None:
        super().__init__()
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            add_imagenet_stem(self.features, norm_layer, norm_kwargs, deep_stem, stem_width)
            add_resnext_stages(self.features, layers, cardinality, bottleneck_width, avg_down,
                               last_gamma=last_gamma, use_se=use_se, norm_layer=norm_layer,
                               norm_kwargs=norm_kwargs)
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


@head_argument("classes")
def resnext(num_layers: int, cardinality: int = 32, bottleneck_width: int = 4, classes: int = 1000,
            use_se: bool = False, deep_stem: bool = False, avg_down: bool = False,
            last_gamma: bool = False, norm_layer: Callable[..., HybridBlock] = BatchNorm,
            norm_kwargs: dict | None = None, stem_width: int = 64) -> ResNeXt:
    """ResNeXt-50/101 ``{cardinality}x{bottleneck_width}d``, optionally with squeeze-and-excitation.

    Parameters
    ----------
    num_layers : 50 or 101.
    cardinality : number of groups of the 3x3 convolutions.
    bottleneck_width : channels per group in the first stage.
    classes : size of the classifier output.
    use_se : add squeeze-and-excitation (SE-ResNeXt).
    deep_stem, avg_down : the ResNet-D tweaks (GluonCV's ``resnext101e_64x4d``).
    stem_width : width of the deep stem's first convolutions (with ``deep_stem``; GluonCV's keyword).
    last_gamma : start each block's last norm scale at zero.
    norm_layer, norm_kwargs : normalization class and its extra arguments.
    """
    check_choice("num_layers", num_layers, _LAYERS)
    return ResNeXt(_LAYERS[num_layers], cardinality, bottleneck_width, classes, last_gamma, use_se,
                   deep_stem, avg_down, stem_width, norm_layer=norm_layer, norm_kwargs=norm_kwargs)
