"""ResNeSt ("ResNeSt: Split-Attention Networks", arXiv:2004.08955), with GluonCV 0.10's
parameter layout.

A ResNet-D (deep stem, average-pooled shortcuts) whose bottleneck 3x3 convolution is a
split-attention convolution: ``radix`` parallel convolutions whose sum is pooled, squeezed
and turned into per-branch softmax weights. Strided blocks move the stride to a 3x3 average
pool after the split-attention convolution (``avd``). DropBlock regularizes the last two
stages during training; like GluonCV's, its mask has the feature-map size of the training
``input_size`` given at construction.

The same network, dilated (``dilated=True`` or ``dilation=2/3/4``), is the backbone of
GluonCV's ResNeSt detectors and segmentation models.
"""

from __future__ import annotations

import math
from typing import Any, Callable

from gluon_hub import head_argument
from gluon_hub.compat import mx

from ...common.backbones.resnetv1b import ResNetV1bLayout
from ...common.blocks import BatchNorm, HybridBlock, add_deep_stem, check_choice, make_norm, nn

__all__ = ["DropBlock", "SplitAttentionConv", "ResNeStBottleneck", "ResNeSt", "resnest"]

#: depth -> (blocks per stage, stem width, final dropout, training-time DropBlock rate)
_CONFIGS = {
    14: ([1, 1, 1, 1], 32, 0.0, 0.0),
    26: ([2, 2, 2, 2], 32, 0.0, 0.1),
    50: ([3, 4, 6, 3], 32, 0.0, 0.1),
    101: ([3, 4, 23, 3], 64, 0.0, 0.1),
    200: ([3, 24, 36, 3], 64, 0.2, 0.1),
    269: ([3, 30, 48, 8], 64, 0.2, 0.1),
}

#: output stride choice -> per stage (stride, dilation, dilation of the stage's first block)
_STAGE_LAYOUTS = {
    1: [(1, 1, 1), (2, 1, 1), (2, 1, 1), (2, 1, 1)],
    2: [(1, 1, 1), (2, 1, 1), (2, 1, 1), (1, 2, 1)],
    3: [(1, 1, 1), (2, 1, 1), (1, 2, 1), (2, 2, 2)],
    4: [(1, 1, 1), (2, 1, 1), (1, 2, 1), (1, 4, 2)],
}


def _downscaled(size: tuple[int, int], stride: int) -> tuple[int, int]:
    """Feature-map size after a padded stride-``stride`` layer (ceil division)."""
    return (math.ceil(size[0] / stride), math.ceil(size[1] / stride))


class DropBlock(HybridBlock):
    """Zero random ``block_size`` squares of a ``(channels, height, width)`` feature map in
    training, rescaling the rest; the identity at inference. Holds no parameters.

    The drop rate per seed is set so that about ``drop_prob`` of the units are dropped; the
    mask is drawn once per batch (shared by its samples), as GluonCV does.
    """

    def __init__(self, drop_prob: float, block_size: int, channels: int, height: int, width: int) -> None:
        super().__init__()
        self.drop_prob = drop_prob
        self.block_size = block_size
        self._shape = (1, channels, height, width)
        before = (block_size - 1) // 2
        self._pad = (before, block_size - 1 - before) * 2
        valid = (height - block_size + 1) * (width - block_size + 1)
        # None: the map is smaller than a block, which only training refuses (see forward)
        self._seed_rate = drop_prob * height * width / block_size ** 2 / valid if valid > 0 else None
        self._dtype = "float32"

    def cast(self, dtype: Any) -> None:
        super().cast(dtype)
        self._dtype = dtype

    def hybrid_forward(self, F, x):
        # checked when the graph is built, as in GluonCV: hybridize after choosing the mode
        if self.drop_prob <= 0 or not mx.autograd.is_training():
            return x
        if self._seed_rate is None:
            raise ValueError(f"DropBlock of {self.block_size}x{self.block_size} blocks on a "
                             f"{self._shape[2]}x{self._shape[3]} map: train at a larger input_size, "
                             "or build with dropblock_prob=0")
        seeds = F.random.uniform(0, 1, shape=self._shape, dtype=self._dtype) < self._seed_rate
        dropped = F.Pooling(seeds, pool_type="max", kernel=(self.block_size,) * 2, pad=self._pad)
        keep = 1 - dropped
        total = float(self._shape[1] * self._shape[2] * self._shape[3])
        kept = keep.sum(axis=0, exclude=True).reshape((1, 1, 1, 1))
        return F.broadcast_mul(F.broadcast_mul(x, keep), total / kept)


class SplitAttentionConv(HybridBlock):
    """``radix`` grouped convolutions weighted by a softmax over branches (sigmoid for radix 1),
    the weights computed from the pooled sum of the branches by two 1x1 convolutions."""

    def __init__(self, channels: int, kernel_size: int, strides: int, padding: int, dilation: int,
                 groups: int, in_channels: int, radix: int = 2, reduction: int = 2,
                 norm_layer: Callable[..., HybridBlock] | None = BatchNorm,
                 norm_kwargs: dict | None = None, drop_ratio: float = 0.0) -> None:
        super().__init__()
        inter_channels = max(in_channels * radix // 2 // reduction, 32)
        self.radix = radix
        self.cardinality = groups
        self.channels = channels
        self.conv = nn.Conv2D(channels * radix, kernel_size, strides, padding, dilation,
                              groups=groups * radix, use_bias=False, in_channels=in_channels)
        self.use_bn = norm_layer is not None
        if self.use_bn:
            self.bn = make_norm(norm_layer, norm_kwargs, in_channels=channels * radix)
        self.relu = nn.Activation("relu")
        self.fc1 = nn.Conv2D(inter_channels, 1, in_channels=channels, groups=groups)
        if self.use_bn:
            self.bn1 = make_norm(norm_layer, norm_kwargs, in_channels=inter_channels)
        self.relu1 = nn.Activation("relu")
        self.drop = nn.Dropout(drop_ratio) if drop_ratio > 0 else None
        self.fc2 = nn.Conv2D(channels * radix, 1, in_channels=inter_channels, groups=groups)

    def hybrid_forward(self, F, x):
        x = self.conv(x)
        if self.use_bn:
            x = self.bn(x)
        x = self.relu(x)
        if self.radix > 1:
            # (N, radix * C, H, W) -> (N, radix, C, H, W): the branches sit in channel blocks
            branches = F.reshape(F.expand_dims(x, 1), (0, self.radix, self.channels, 0, 0))
            pooled = F.sum(branches, axis=1)
        else:
            pooled = x
        pooled = F.contrib.AdaptiveAvgPooling2D(pooled, 1)
        pooled = self.fc1(pooled)
        if self.use_bn:
            pooled = self.bn1(pooled)
        attention = self.relu1(pooled)
        if self.drop is not None:
            attention = self.drop(attention)
        attention = F.swapaxes(F.reshape(self.fc2(attention), (0, self.cardinality, self.radix, -1)), 1, 2)
        if self.radix == 1:
            return F.broadcast_mul(F.reshape(F.sigmoid(attention), (0, -1, 1, 1)), x)
        weights = F.reshape(F.softmax(attention, axis=1), (0, self.radix, -1, 1, 1))
        return F.sum(F.broadcast_mul(weights, branches), axis=1)


class ResNeStBottleneck(HybridBlock):
    """1x1 reduce, split-attention 3x3 (or plain 3x3), 1x1 expand by 4, residual, relu."""

    expansion = 4

    def __init__(self, planes: int, in_channels: int, strides: int = 1, dilation: int = 1,
                 previous_dilation: int = 1, downsample: Any = None, cardinality: int = 1,
                 bottleneck_width: int = 64, radix: int = 2, use_splat: bool = True,
                 avd: bool = True, avd_first: bool = False, dropblock_prob: float = 0.0,
                 input_size: tuple[int, int] = (56, 56), last_gamma: bool = False,
                 split_drop_ratio: float = 0.0, norm_layer: Callable[..., HybridBlock] = BatchNorm,
                 norm_kwargs: dict | None = None) -> None:
        super().__init__()
        group_width = int(planes * (bottleneck_width / 64.0)) * cardinality
        out_channels = planes * self.expansion
        self.use_splat = use_splat
        # the stride moves to an average pool where the block downsamples or changes dilation
        self.avd = avd and (strides > 1 or previous_dilation != dilation)
        self.avd_first = avd_first
        self.dropblock_prob = dropblock_prob
        if dropblock_prob > 0:
            after_stride = _downscaled(input_size, strides)
            middle = after_stride if self.avd and avd_first or not self.avd else input_size
            self.dropblock1 = DropBlock(dropblock_prob, 3, group_width, *input_size)
            self.dropblock2 = DropBlock(dropblock_prob, 3, group_width, *middle)
            self.dropblock3 = DropBlock(dropblock_prob, 3, out_channels, *after_stride)
        conv2_stride = 1 if self.avd else strides
        self.conv1 = nn.Conv2D(group_width, 1, use_bias=False, in_channels=in_channels)
        self.bn1 = make_norm(norm_layer, norm_kwargs, in_channels=group_width)
        self.relu1 = nn.Activation("relu")
        if use_splat:
            self.conv2 = SplitAttentionConv(group_width, 3, conv2_stride, dilation, dilation,
                                            cardinality, group_width, radix, norm_layer=norm_layer,
                                            norm_kwargs=norm_kwargs, drop_ratio=split_drop_ratio)
        else:
            self.conv2 = nn.Conv2D(group_width, 3, conv2_stride, dilation, dilation, groups=cardinality,
                                   use_bias=False, in_channels=group_width)
            self.bn2 = make_norm(norm_layer, norm_kwargs, in_channels=group_width)
            self.relu2 = nn.Activation("relu")
        self.conv3 = nn.Conv2D(out_channels, 1, use_bias=False, in_channels=group_width)
        options = {"gamma_initializer": "zeros"} if last_gamma else {}
        self.bn3 = make_norm(norm_layer, norm_kwargs, in_channels=out_channels, **options)
        if self.avd:
            self.avd_layer = nn.AvgPool2D(3, strides, padding=1)
        self.relu3 = nn.Activation("relu")
        self.downsample = downsample

    def hybrid_forward(self, F, x):
        dropping = self.dropblock_prob > 0
        out = self.bn1(self.conv1(x))
        if dropping:
            out = self.dropblock1(out)
        out = self.relu1(out)
        if self.avd and self.avd_first:
            out = self.avd_layer(out)
        out = self.conv2(out)
        if not self.use_splat:
            out = self.bn2(out)
        if dropping:
            out = self.dropblock2(out)
        if not self.use_splat:
            out = self.relu2(out)
        if self.avd and not self.avd_first:
            out = self.avd_layer(out)
        out = self.bn3(self.conv3(out))
        residual = self.downsample(x) if self.downsample is not None else x
        if dropping:
            out = self.dropblock3(out)
        return self.relu3(out + residual)


class ResNeSt(ResNetV1bLayout):
    """ResNeSt network: deep stem, four stages of split-attention bottlenecks, pool, classifier."""

    def __init__(self, layers: list[int], classes: int = 1000, stem_width: int = 32,
                 cardinality: int = 1, bottleneck_width: int = 64, radix: int = 2,
                 use_splat: bool = True, avd: bool = True, avd_first: bool = False,
                 dropblock_prob: float = 0.0, final_drop: float = 0.0, input_size: int = 224,
                 dilation: int = 1, last_gamma: bool = False, use_global_stats: bool = False,
                 split_drop_ratio: float = 0.0, norm_layer: Callable[..., HybridBlock] = BatchNorm,
                 norm_kwargs: dict | None = None, prefix: str | None = "resnest_") -> None:
        super().__init__(prefix=prefix)
        norm_kwargs = dict(norm_kwargs or {})
        if use_global_stats:
            norm_kwargs["use_global_stats"] = True
        block_options = dict(cardinality=cardinality, bottleneck_width=bottleneck_width, radix=radix,
                             use_splat=use_splat, avd=avd, avd_first=avd_first, last_gamma=last_gamma,
                             split_drop_ratio=split_drop_ratio, norm_layer=norm_layer,
                             norm_kwargs=norm_kwargs)
        size = _downscaled(_downscaled((input_size, input_size), 2), 2)  # after stem and max-pool
        with self.name_scope():
            self.conv1 = add_deep_stem(nn.HybridSequential(prefix="conv1"), stem_width, norm_layer,
                                       norm_kwargs)
            self.bn1 = make_norm(norm_layer, norm_kwargs, in_channels=stem_width * 2)
            self.relu = nn.Activation("relu")
            self.maxpool = nn.MaxPool2D(pool_size=3, strides=2, padding=1)
            in_channels = stem_width * 2
            stages = zip([64, 128, 256, 512], layers, _STAGE_LAYOUTS[dilation])
            for i, (planes, num_blocks, (strides, stage_dilation, first_dilation)) in enumerate(stages, 1):
                # DropBlock acts on the last two stages only, as in the paper
                drop = dropblock_prob if i > 2 else 0.0
                stage = self._make_stage(i, planes, num_blocks, in_channels, strides, stage_dilation,
                                         first_dilation, drop, size, block_options)
                setattr(self, f"layer{i}", stage)
                in_channels = planes * ResNeStBottleneck.expansion
                size = _downscaled(size, strides)
            self._add_head(512 * ResNeStBottleneck.expansion, classes, final_drop)

    def _make_stage(self, index: int, planes: int, num_blocks: int, in_channels: int, strides: int,
                    dilation: int, first_dilation: int, dropblock_prob: float,
                    size: tuple[int, int], block_options: dict) -> Any:
        out_channels = planes * ResNeStBottleneck.expansion
        downsample = None
        if strides != 1 or in_channels != out_channels:
            downsample = nn.HybridSequential(prefix=f"down{index}_")
            with downsample.name_scope():
                if first_dilation == 1 or strides == 1:
                    pool = strides if first_dilation == 1 else 1
                    downsample.add(nn.AvgPool2D(pool_size=pool, strides=pool, ceil_mode=True,
                                                count_include_pad=False))
                else:
                    downsample.add(nn.AvgPool2D(pool_size=first_dilation * strides, strides=strides,
                                                padding=1, ceil_mode=True, count_include_pad=False))
                downsample.add(nn.Conv2D(out_channels, 1, use_bias=False, in_channels=in_channels))
                downsample.add(make_norm(block_options["norm_layer"], block_options["norm_kwargs"],
                                         in_channels=out_channels))
        stage = nn.HybridSequential(prefix=f"layers{index}_")
        with stage.name_scope():
            stage.add(ResNeStBottleneck(planes, in_channels, strides, first_dilation, dilation, downsample,
                                        dropblock_prob=dropblock_prob, input_size=size, **block_options))
            size = _downscaled(size, strides)
            for _ in range(num_blocks - 1):
                stage.add(ResNeStBottleneck(planes, out_channels, 1, dilation, dilation,
                                            dropblock_prob=dropblock_prob, input_size=size,
                                            **block_options))
        return stage


@head_argument("classes")
def resnest(num_layers: int, classes: int = 1000, input_size: int = 224, dilated: bool = False,
            dilation: int = 1, dropblock_prob: float | None = None, final_drop: float | None = None,
            last_gamma: bool = False, use_global_stats: bool = False,
            norm_layer: Callable[..., HybridBlock] = BatchNorm, norm_kwargs: dict | None = None,
            stem_width: int | None = None, cardinality: int = 1, bottleneck_width: int = 64, radix: int = 2,
            avd_first: bool = False, split_drop_ratio: float = 0.0) -> ResNeSt:
    """ResNeSt-14/26/50/101/200/269 (radix 2, one group, 64-wide bottlenecks).

    Parameters
    ----------
    num_layers : depth, one of 14, 26, 50, 101, 200, 269.
    classes : size of the classifier output.
    input_size : training crop size; sets the DropBlock mask size (training only).
    dilated : dilate the last two stages instead of striding (output stride 8), as for
        segmentation; the same as ``dilation=4``.
    dilation : 1 (output stride 32), 2 (last stage dilated, stride 16), 3 or 4.
    dropblock_prob, final_drop : override the depth's DropBlock rate and final dropout.
    last_gamma : start each block's last norm scale at zero.
    use_global_stats : freeze batch-norm statistics (fine-tuning with small batches).
    norm_layer, norm_kwargs : normalization class and its extra arguments.
    stem_width : width of the deep stem's first convolutions (default: the depth's, 32 or 64).
    cardinality, bottleneck_width, radix, avd_first, split_drop_ratio : the split-attention
        block's groups, group width, branches, pooling before (not after) the split-attention
        convolution, and dropout on its attention weights, as GluonCV's keywords of the same name
        (the published weights need the defaults).

    Examples
    --------
    >>> net = resnest(14, classes=10)
    >>> net.fc._units
    10
    """
    check_choice("num_layers", num_layers, _CONFIGS)
    if dilated:
        dilation = 4
    check_choice("dilation", dilation, _STAGE_LAYOUTS)
    layers, depth_stem_width, default_final_drop, default_dropblock = _CONFIGS[num_layers]
    return ResNeSt(layers, classes, depth_stem_width if stem_width is None else stem_width,
                   cardinality=cardinality, bottleneck_width=bottleneck_width, radix=radix,
                   avd_first=avd_first, split_drop_ratio=split_drop_ratio,
                   dropblock_prob=default_dropblock if dropblock_prob is None else dropblock_prob,
                   final_drop=default_final_drop if final_drop is None else final_drop,
                   input_size=input_size, dilation=dilation, last_gamma=last_gamma,
                   use_global_stats=use_global_stats, norm_layer=norm_layer, norm_kwargs=norm_kwargs)
