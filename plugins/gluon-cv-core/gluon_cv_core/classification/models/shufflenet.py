"""ShuffleNet V1 (arXiv:1707.01083) and V2 (arXiv:1807.11164), with GluonCV 0.10's parameter
layout: V1 with 3 groups, V2 at width 1.0. GluonCV publishes no weights for either.

Both interleave the channels of their groups (or halves) after each unit, so information
crosses groups without dense 1x1 convolutions.
"""

from __future__ import annotations

from typing import Any, Callable

from gluon_hub import head_argument

from ...common.blocks import BatchNorm, HybridBlock, check_gluoncv_structure, make_norm, nn

__all__ = ["ShuffleNetV1", "ShuffleNetV2", "shufflenet_v1", "shufflenet_v2"]

#: V1 output channels of stages 2-4 with 3 groups (GluonCV builds only this one)
_V1_CHANNELS = (240, 480, 960)
_V1_GROUPS = 3
#: V2 output channels of stages 2-4 at width 1.0
_V2_CHANNELS = (116, 232, 464)
#: units per stage after the first, downsampling one
_REPEATS = (3, 7, 3)


def _conv_norm(channels: int, kernel: int, strides: int = 1, groups: int = 1, relu: bool = True,
               use_bias: bool = True, norm_layer: Callable[..., HybridBlock] = BatchNorm,
               norm_kwargs: dict | None = None) -> Any:
    """Conv ('same' padding), norm (momentum 0.9) and an optional relu, unnamed in the tree."""
    out = nn.HybridSequential(prefix="")
    out.add(nn.Conv2D(channels, kernel, strides, kernel // 2, groups=groups, use_bias=use_bias))
    out.add(make_norm(norm_layer, norm_kwargs, epsilon=1e-5, momentum=0.9))
    if relu:
        out.add(nn.Activation("relu"))
    return out


def _shuffle(F, x, groups: int):
    """(N, g*c, H, W) -> (N, c*g, H, W): channel k of group j moves to position k*g + j."""
    x = F.reshape(x, shape=(0, -4, groups, -1, -2))
    return F.reshape(F.swapaxes(x, 1, 2), shape=(0, -3, -2))


class _UnitV1(HybridBlock):
    """Grouped 1x1, shuffle, depthwise 3x3, grouped 1x1; added to the input, or concatenated
    with its 3x3/2 average pool when downsampling."""

    def __init__(self, in_channels: int, out_channels: int, downsample: bool, groups: int,
                 grouped_first: bool, norm: dict) -> None:
        super().__init__()
        self.downsample = downsample
        self.groups = groups
        self.grouped_first = grouped_first
        if downsample:
            out_channels -= in_channels
        mid = out_channels // 4
        with self.name_scope():
            self.conv_beforshuffle = nn.HybridSequential()  # GluonCV's spelling
            self.conv_beforshuffle.add(_conv_norm(mid, 1, groups=groups if grouped_first else 1, **norm))
            self.conv_aftershuffle = nn.HybridSequential()
            self.conv_aftershuffle.add(_conv_norm(mid, 3, 2 if downsample else 1, mid, relu=False, **norm))
            self.conv_aftershuffle.add(_conv_norm(out_channels, 1, groups=groups, relu=False, **norm))

    def hybrid_forward(self, F, x):
        out = self.conv_beforshuffle(x)
        if self.grouped_first:
            out = _shuffle(F, out, self.groups)
        out = self.conv_aftershuffle(out)
        if self.downsample:
            pooled = F.Pooling(x, kernel=(3, 3), pool_type="avg", stride=(2, 2), pad=(1, 1))
            return F.relu(F.concat(pooled, out, dim=1))
        return F.relu(x + out)


class ShuffleNetV1(HybridBlock):
    """3x3/2 conv, 3x3/2 max-pool, three stages of 3-group shuffle units, global pool, classifier."""

    def __init__(self, classes: int = 1000, norm_layer: Callable[..., HybridBlock] = BatchNorm,
                 norm_kwargs: dict | None = None) -> None:
        super().__init__()
        norm = {"norm_layer": norm_layer, "norm_kwargs": norm_kwargs}
        channels, groups = (24, *_V1_CHANNELS), _V1_GROUPS
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            self.features.add(nn.Conv2D(24, 3, 2, 1))
            self.features.add(nn.MaxPool2D(pool_size=3, strides=2, padding=1))
            for stage, repeats in enumerate(_REPEATS):
                body = nn.HybridSequential()
                # the first stage's first 1x1 sees only 24 channels: too few to group
                body.add(_UnitV1(channels[stage], channels[stage + 1], True, groups, stage > 0, norm))
                for _ in range(repeats):
                    body.add(_UnitV1(channels[stage + 1], channels[stage + 1], False, groups, True, norm))
                self.features.add(body)
            self.features.add(nn.GlobalAvgPool2D())
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


class _UnitV2(HybridBlock):
    """Half the channels pass through, half go through 1x1, depthwise 3x3, 1x1; when
    downsampling both halves are the whole input and the first gets a depthwise 3x3/2 and 1x1.
    The halves are concatenated and shuffled."""

    def __init__(self, in_channels: int, out_channels: int, downsample: bool, norm: dict) -> None:
        super().__init__()
        self.in_channels = in_channels
        self.downsample = downsample
        half = out_channels // 2
        strides = 2 if downsample else 1
        options = {"use_bias": False, **norm}
        with self.name_scope():
            if downsample:
                self.branch1_conv = nn.HybridSequential()
                self.branch1_conv.add(_conv_norm(in_channels, 3, strides, in_channels, relu=False, **options))
                self.branch1_conv.add(_conv_norm(half, 1, **options))
            self.branch2_conv = nn.HybridSequential()
            self.branch2_conv.add(_conv_norm(half, 1, **options))
            self.branch2_conv.add(_conv_norm(half, 3, strides, half, relu=False, **options))
            self.branch2_conv.add(_conv_norm(half, 1, **options))

    def hybrid_forward(self, F, x):
        if self.downsample:
            left, right = self.branch1_conv(x), x
        else:
            split = self.in_channels // 2
            left = F.slice_axis(x, axis=1, begin=0, end=split)
            right = F.slice_axis(x, axis=1, begin=split, end=self.in_channels)
        return _shuffle(F, F.concat(left, self.branch2_conv(right), dim=1), 2)


class ShuffleNetV2(HybridBlock):
    """3x3/2 conv, 3x3/2 max-pool, three stages of split-shuffle units, 1x1 conv to 1024,
    global pool, classifier."""

    def __init__(self, classes: int = 1000, norm_layer: Callable[..., HybridBlock] = BatchNorm,
                 norm_kwargs: dict | None = None) -> None:
        super().__init__()
        norm = {"norm_layer": norm_layer, "norm_kwargs": norm_kwargs}
        channels = (24, *_V2_CHANNELS)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            self.features.add(_conv_norm(24, 3, 2, use_bias=False, **norm))
            self.features.add(nn.MaxPool2D(pool_size=3, strides=2, padding=1))
            for stage, repeats in enumerate(_REPEATS):
                body = nn.HybridSequential()
                body.add(_UnitV2(channels[stage], channels[stage + 1], True, norm))
                for _ in range(repeats):
                    body.add(_UnitV2(channels[stage + 1], channels[stage + 1], False, norm))
                self.features.add(body)
            self.features.add(_conv_norm(1024, 1, use_bias=False, **norm))
            self.features.add(nn.GlobalAvgPool2D())
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


@head_argument("classes")
def shufflenet_v1(classes: int = 1000, norm_layer: Callable[..., HybridBlock] = BatchNorm,
                  norm_kwargs: dict | None = None, groups: int | None = None) -> ShuffleNetV1:
    """ShuffleNet V1 with 3 groups (GluonCV's ``groups`` keyword is accepted as 3 only)."""
    check_gluoncv_structure("shufflenet_v1", {"groups": groups}, {"groups": _V1_GROUPS})
    return ShuffleNetV1(classes, norm_layer, norm_kwargs)


@head_argument("classes")
def shufflenet_v2(classes: int = 1000, norm_layer: Callable[..., HybridBlock] = BatchNorm,
                  norm_kwargs: dict | None = None) -> ShuffleNetV2:
    """ShuffleNet V2 at width 1.0."""
    return ShuffleNetV2(classes, norm_layer, norm_kwargs)
