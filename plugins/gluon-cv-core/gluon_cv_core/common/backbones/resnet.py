"""ResNet V1 and V2 ("Deep Residual Learning", arXiv:1512.03385; "Identity Mappings",
arXiv:1603.05027) with optional squeeze-and-excitation, as GluonCV 0.10 lays them out.

GluonCV's ``BottleneckV1`` keeps biases on its two 1x1 convolutions; they are kept here
because the published weights have them.
"""

from __future__ import annotations

from typing import Any, Callable

from gluon_hub import head_argument

from ..blocks import BatchNorm, HybridBlock, add_imagenet_stem, check_choice, make_norm, nn, projection

__all__ = [
    "BasicBlockV1",
    "BottleneckV1",
    "BasicBlockV2",
    "BottleneckV2",
    "ResNetV1",
    "ResNetV2",
    "resnet_v1",
    "resnet_v2",
]

#: layers -> (block kind, blocks per stage, channels of the stem and of each stage)
RESNET_SPEC = {
    18: ("basic", [2, 2, 2, 2], [64, 64, 128, 256, 512]),
    34: ("basic", [3, 4, 6, 3], [64, 64, 128, 256, 512]),
    50: ("bottleneck", [3, 4, 6, 3], [64, 256, 512, 1024, 2048]),
    101: ("bottleneck", [3, 4, 23, 3], [64, 256, 512, 1024, 2048]),
    152: ("bottleneck", [3, 8, 36, 3], [64, 256, 512, 1024, 2048]),
}


def _conv3x3(channels: int, strides: int, in_channels: int = 0):
    return nn.Conv2D(channels, 3, strides, 1, use_bias=False, in_channels=in_channels)


def _dense_se(channels: int):
    """Squeeze-and-excitation weights from the pooled features (two bias-free dense layers)."""
    se = nn.HybridSequential(prefix="")
    se.add(nn.Dense(channels // 16, use_bias=False))
    se.add(nn.Activation("relu"))
    se.add(nn.Dense(channels, use_bias=False))
    se.add(nn.Activation("sigmoid"))
    return se


class _SEMixin:
    """Rescale channels by ``self.se`` when the block has one."""

    se: Any

    def _excite(self, F, x):
        if self.se is None:
            return x
        w = self.se(F.contrib.AdaptiveAvgPooling2D(x, output_size=1))
        return F.broadcast_mul(x, w.expand_dims(axis=2).expand_dims(axis=2))


class _ResidualV1(_SEMixin, HybridBlock):
    """Post-activation residual unit: ``relu(se(body(x)) + shortcut(x))``."""

    def __init__(self, channels: int, strides: int, downsample: bool, in_channels: int,
                 use_se: bool, norm_layer: Callable[..., HybridBlock], norm_kwargs: dict | None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.body = nn.HybridSequential(prefix="")
        self.se = _dense_se(channels) if use_se else None
        self.downsample = (
            projection(channels, strides, False, norm_layer, norm_kwargs, in_channels)
            if downsample else None
        )

    def hybrid_forward(self, F, x):
        residual = self.downsample(x) if self.downsample is not None else x
        return F.Activation(self._excite(F, self.body(x)) + residual, act_type="relu")


def _last_norm(norm_layer, norm_kwargs, last_gamma: bool):
    """The block's last norm; ``last_gamma`` starts it at zero so each block starts as identity."""
    if last_gamma:
        return make_norm(norm_layer, norm_kwargs, gamma_initializer="zeros")
    return make_norm(norm_layer, norm_kwargs)


class BasicBlockV1(_ResidualV1):
    """Two 3x3 convolutions (ResNet-18/34 and the CIFAR ResNets)."""

    def __init__(self, channels: int, strides: int = 1, downsample: bool = False, in_channels: int = 0,
                 last_gamma: bool = False, use_se: bool = False,
                 norm_layer: Callable[..., HybridBlock] = BatchNorm, norm_kwargs: dict | None = None,
                 **kwargs: Any) -> None:
        super().__init__(channels, strides, downsample, in_channels, use_se, norm_layer, norm_kwargs,
                         **kwargs)
        self.body.add(_conv3x3(channels, strides, in_channels))
        self.body.add(make_norm(norm_layer, norm_kwargs))
        self.body.add(nn.Activation("relu"))
        self.body.add(_conv3x3(channels, 1, channels))
        self.body.add(_last_norm(norm_layer, norm_kwargs, last_gamma))


class BottleneckV1(_ResidualV1):
    """1x1 reduce (strided), 3x3, 1x1 expand (ResNet-50/101/152 V1)."""

    def __init__(self, channels: int, strides: int = 1, downsample: bool = False, in_channels: int = 0,
                 last_gamma: bool = False, use_se: bool = False,
                 norm_layer: Callable[..., HybridBlock] = BatchNorm, norm_kwargs: dict | None = None,
                 **kwargs: Any) -> None:
        super().__init__(channels, strides, downsample, in_channels, use_se, norm_layer, norm_kwargs,
                         **kwargs)
        self.body.add(nn.Conv2D(channels // 4, 1, strides))
        self.body.add(make_norm(norm_layer, norm_kwargs))
        self.body.add(nn.Activation("relu"))
        self.body.add(_conv3x3(channels // 4, 1, channels // 4))
        self.body.add(make_norm(norm_layer, norm_kwargs))
        self.body.add(nn.Activation("relu"))
        self.body.add(nn.Conv2D(channels, 1, 1))
        self.body.add(_last_norm(norm_layer, norm_kwargs, last_gamma))


class _ResidualV2(_SEMixin, HybridBlock):
    """Pre-activation residual unit: norm-relu-conv repeated, added to the shortcut.

    ``preact_shortcut`` says whether the projection shortcut sees the pre-activated input
    (ImageNet ResNetV2, Wide ResNet) or the raw input (GluonCV's CIFAR ResNetV2).
    """

    def __init__(self, convs: list, channels: int, strides: int, downsample: bool, in_channels: int,
                 use_se: bool, preact_shortcut: bool, drop_rate: float,
                 norm_layer: Callable[..., HybridBlock], norm_kwargs: dict | None,
                 last_gamma: bool, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._depth = len(convs)
        self._preact_shortcut = preact_shortcut
        self._drop_rate = drop_rate
        for i, conv in enumerate(convs, 1):
            setattr(self, f"bn{i}", _last_norm(norm_layer, norm_kwargs, last_gamma and i == len(convs)))
            setattr(self, f"conv{i}", conv)
        self.se = _dense_se(channels) if use_se else None
        self.downsample = (
            nn.Conv2D(channels, 1, strides, use_bias=False, in_channels=in_channels)
            if downsample else None
        )

    def hybrid_forward(self, F, x):
        residual = x
        x = F.Activation(self.bn1(x), act_type="relu")
        if self.downsample is not None:
            residual = self.downsample(x if self._preact_shortcut else residual)
        x = self.conv1(x)
        for i in range(2, self._depth + 1):
            x = F.Activation(getattr(self, f"bn{i}")(x), act_type="relu")
            if i == self._depth and self._drop_rate > 0:
                x = F.Dropout(x, p=self._drop_rate)
            x = getattr(self, f"conv{i}")(x)
        return self._excite(F, x) + residual


class BasicBlockV2(_ResidualV2):
    """Pre-activation pair of 3x3 convolutions (ResNet-18/34 V2, CIFAR ResNetV2, Wide ResNet)."""

    def __init__(self, channels: int, strides: int = 1, downsample: bool = False, in_channels: int = 0,
                 last_gamma: bool = False, use_se: bool = False, preact_shortcut: bool = True,
                 drop_rate: float = 0.0, norm_layer: Callable[..., HybridBlock] = BatchNorm,
                 norm_kwargs: dict | None = None, **kwargs: Any) -> None:
        convs = [_conv3x3(channels, strides, in_channels), _conv3x3(channels, 1, channels)]
        super().__init__(convs, channels, strides, downsample, in_channels, use_se, preact_shortcut,
                         drop_rate, norm_layer, norm_kwargs, last_gamma, **kwargs)


class BottleneckV2(_ResidualV2):
    """Pre-activation bottleneck, strided in its 3x3 convolution (ResNet-50/101/152 V2)."""

    def __init__(self, channels: int, strides: int = 1, downsample: bool = False, in_channels: int = 0,
                 last_gamma: bool = False, use_se: bool = False, preact_shortcut: bool = True,
                 drop_rate: float = 0.0, norm_layer: Callable[..., HybridBlock] = BatchNorm,
                 norm_kwargs: dict | None = None, **kwargs: Any) -> None:
        convs = [
            nn.Conv2D(channels // 4, 1, 1, use_bias=False),
            _conv3x3(channels // 4, strides, channels // 4),
            nn.Conv2D(channels, 1, 1, use_bias=False),
        ]
        super().__init__(convs, channels, strides, downsample, in_channels, use_se, preact_shortcut,
                         drop_rate, norm_layer, norm_kwargs, last_gamma, **kwargs)


def make_stage(block: type, num_blocks: int, channels: int, strides: int, in_channels: int,
               stage_index: int, **block_options: Any):
    """A stage: a first block that may downsample, then ``num_blocks - 1`` plain ones."""
    stage = nn.HybridSequential(prefix=f"stage{stage_index}_")
    with stage.name_scope():
        stage.add(block(channels, strides, channels != in_channels, in_channels=in_channels,
                        prefix="", **block_options))
        for _ in range(num_blocks - 1):
            stage.add(block(channels, 1, False, in_channels=channels, prefix="", **block_options))
    return stage


class ResNetV1(HybridBlock):
    """ResNet V1: stem, four stages of post-activation blocks, global pool, dense classifier.

    ``stem`` is ``"imagenet"`` (7x7/2 conv and max-pool), ``"thumbnail"`` (one 3x3 conv, for
    small images) or ``"cifar"`` (3x3 conv and norm, as GluonCV's CIFAR ResNetV1).
    """

    def __init__(self, block: type, layers: list[int], channels: list[int], classes: int = 1000,
                 stem: str = "imagenet", norm_layer: Callable[..., HybridBlock] = BatchNorm,
                 norm_kwargs: dict | None = None, **block_options: Any) -> None:
        super().__init__()
        check_choice("stem", stem, {"imagenet", "thumbnail", "cifar"})
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            if stem == "imagenet":
                add_imagenet_stem(self.features, norm_layer, norm_kwargs)
            else:
                self.features.add(_conv3x3(channels[0], 1))
                if stem == "cifar":
                    self.features.add(make_norm(norm_layer, norm_kwargs))
            for i, num_blocks in enumerate(layers):
                self.features.add(make_stage(block, num_blocks, channels[i + 1], 1 if i == 0 else 2,
                                             channels[i], i + 1, norm_layer=norm_layer,
                                             norm_kwargs=norm_kwargs, **block_options))
            self.features.add(nn.GlobalAvgPool2D())
            self.output = nn.Dense(classes, in_units=channels[-1])

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


class ResNetV2(HybridBlock):
    """ResNet V2: an input norm, stem, pre-activation stages, final norm-relu, pool, classifier.

    ``stem`` is ``"imagenet"``, ``"thumbnail"`` (one 3x3 conv) or ``"wide"`` (3x3 conv then
    norm, as GluonCV's CIFAR Wide ResNet).
    """

    def __init__(self, block: type, layers: list[int], channels: list[int], classes: int = 1000,
                 stem: str = "imagenet", norm_layer: Callable[..., HybridBlock] = BatchNorm,
                 norm_kwargs: dict | None = None, **block_options: Any) -> None:
        super().__init__()
        check_choice("stem", stem, {"imagenet", "thumbnail", "wide"})
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            self.features.add(make_norm(norm_layer, norm_kwargs, scale=False, center=False))
            if stem == "imagenet":
                self.features.add(nn.Conv2D(channels[0], 7, 2, 3, use_bias=False))
                self.features.add(make_norm(norm_layer, norm_kwargs))
                self.features.add(nn.Activation("relu"))
                self.features.add(nn.MaxPool2D(3, 2, 1))
            else:
                self.features.add(_conv3x3(channels[0], 1))
                if stem == "wide":
                    self.features.add(make_norm(norm_layer, norm_kwargs))
            for i, num_blocks in enumerate(layers):
                self.features.add(make_stage(block, num_blocks, channels[i + 1], 1 if i == 0 else 2,
                                             channels[i], i + 1, norm_layer=norm_layer,
                                             norm_kwargs=norm_kwargs, **block_options))
            self.features.add(make_norm(norm_layer, norm_kwargs))
            self.features.add(nn.Activation("relu"))
            self.features.add(nn.GlobalAvgPool2D())
            self.features.add(nn.Flatten())
            self.output = nn.Dense(classes, in_units=channels[-1])

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def _resnet(version: int, num_layers: int, classes: int, use_se: bool, thumbnail: bool,
            last_gamma: bool, norm_layer, norm_kwargs):
    check_choice("num_layers", num_layers, RESNET_SPEC)
    kind, layers, channels = RESNET_SPEC[num_layers]
    if version == 1:
        net_class, block = ResNetV1, BasicBlockV1 if kind == "basic" else BottleneckV1
    else:
        net_class, block = ResNetV2, BasicBlockV2 if kind == "basic" else BottleneckV2
    return net_class(block, layers, channels, classes, "thumbnail" if thumbnail else "imagenet",
                     norm_layer=norm_layer, norm_kwargs=norm_kwargs, last_gamma=last_gamma,
                     use_se=use_se)


@head_argument("classes")
def resnet_v1(num_layers: int, classes: int = 1000, use_se: bool = False, thumbnail: bool = False,
              last_gamma: bool = False, norm_layer: Callable[..., HybridBlock] = BatchNorm,
              norm_kwargs: dict | None = None) -> ResNetV1:
    """ResNet V1 with 18, 34, 50, 101 or 152 layers.

    Parameters
    ----------
    num_layers : depth, one of 18, 34, 50, 101, 152.
    classes : size of the classifier output.
    use_se : add squeeze-and-excitation to every block (GluonCV's ``se_resnet*_v1``).
    thumbnail : replace the 7x7/2 stem and max-pool by one 3x3 conv, for small images.
    last_gamma : start each block's last norm scale at zero (helps large-batch training).
    norm_layer, norm_kwargs : normalization class and its extra arguments
        (for example ``mxnet.gluon.contrib.nn.SyncBatchNorm`` with ``{"num_devices": 4}``).
    """
    return _resnet(1, num_layers, classes, use_se, thumbnail, last_gamma, norm_layer, norm_kwargs)


@head_argument("classes")
def resnet_v2(num_layers: int, classes: int = 1000, use_se: bool = False, thumbnail: bool = False,
              last_gamma: bool = False, norm_layer: Callable[..., HybridBlock] = BatchNorm,
              norm_kwargs: dict | None = None) -> ResNetV2:
    """ResNet V2 (pre-activation) with 18, 34, 50, 101 or 152 layers; arguments as :func:`resnet_v1`."""
    return _resnet(2, num_layers, classes, use_se, thumbnail, last_gamma, norm_layer, norm_kwargs)
