"""ResNet V1b and its tweaks c, d, e, s ("Bag of Tricks for Image Classification",
arXiv:1812.01187), with GluonCV 0.10's parameter layout.

- ``b``: the stride sits on the 3x3 convolution of the bottleneck, not on the first 1x1.
- ``c``: the 7x7 stem becomes three 3x3 convolutions (width 32, then 64).
- ``d``: ``c`` plus average pooling before the 1x1 projection shortcut.
- ``e``: ``d`` with a stem of width 64.
- ``s``: ``c`` with a stem of width 64.

``dilated=True`` keeps stages 3 and 4 at stride 8 with dilated 3x3 convolutions (2 and 4),
GluonCV's backbone for semantic segmentation.
"""

from __future__ import annotations

from typing import Any, Callable

from gluon_hub import head_argument

from ..blocks import BatchNorm, HybridBlock, add_deep_stem, check_choice, make_norm, nn, projection

__all__ = ["BasicBlockV1b", "BlockV1b", "BottleneckV1b", "ResNetV1bLayout", "ResNetV1b", "resnet_v1b", "resnet_v1b_gn", "VARIANTS"]

#: variant -> (deep_stem, avg_down, stem_width)
VARIANTS = {
    "b": (False, False, 32),
    "c": (True, False, 32),
    "d": (True, True, 32),
    "e": (True, True, 64),
    "s": (True, False, 64),
}

_LAYERS = {18: [2, 2, 2, 2], 34: [3, 4, 6, 3], 50: [3, 4, 6, 3], 101: [3, 4, 23, 3], 152: [3, 8, 36, 3]}


class BlockV1b(HybridBlock):
    """``relu(body(x) + shortcut(x))`` with the body as named layers ``conv1, bn1, ...``.

    ``widths`` are the convolutions' output channels: two for a basic block (3x3, 3x3), three
    for a bottleneck (1x1, 3x3, 1x1); the pruned ResNets give each block its own.
    ``dilation`` is the strided 3x3's; a basic block's second 3x3 takes ``previous_dilation``
    (GluonCV's rule, which its published dilated networks were trained with).
    """

    def __init__(self, widths: list[int], strides: int, downsample: Any, norm_layer: Callable[..., HybridBlock],
                 norm_kwargs: dict | None, last_gamma: bool = False, dilation: int = 1,
                 previous_dilation: int = 1) -> None:
        super().__init__()
        kernels = [3, 3] if len(widths) == 2 else [1, 3, 1]
        # the stride sits on the first 3x3 convolution: what "V1b" means
        strided = kernels.index(3) + 1
        for i, (kernel, channels) in enumerate(zip(kernels, widths), 1):
            last = i == len(kernels)
            stride = strides if i == strided else 1
            dilate = 1 if kernel == 1 else dilation if i == strided else previous_dilation
            setattr(self, f"conv{i}", nn.Conv2D(channels, kernel, stride, dilate * (kernel // 2), dilate,
                                                use_bias=False))
            options = {"gamma_initializer": "zeros"} if last and last_gamma else {}
            setattr(self, f"bn{i}", make_norm(norm_layer, norm_kwargs, in_channels=channels, **options))
            setattr(self, f"relu{i}", nn.Activation("relu"))
        self._depth = len(kernels)
        self.downsample = downsample

    def hybrid_forward(self, F, x):
        out = x
        for i in range(1, self._depth + 1):
            out = getattr(self, f"bn{i}")(getattr(self, f"conv{i}")(out))
            if i < self._depth:
                out = getattr(self, f"relu{i}")(out)
        residual = self.downsample(x) if self.downsample is not None else x
        return getattr(self, f"relu{self._depth}")(out + residual)


class _PlanesBlockV1b(BlockV1b):
    """A block of the standard widths: ``planes`` each, the last ``planes * expansion``."""

    expansion = 1

    def __init__(self, planes: int, strides: int, downsample: Any, norm_layer: Callable[..., HybridBlock],
                 norm_kwargs: dict | None, last_gamma: bool, dilation: int = 1, previous_dilation: int = 1) -> None:
        depth = 2 if self.expansion == 1 else 3
        super().__init__([planes] * (depth - 1) + [planes * self.expansion], strides, downsample, norm_layer,
                         norm_kwargs, last_gamma, dilation, previous_dilation)


class BasicBlockV1b(_PlanesBlockV1b):
    """Two 3x3 convolutions, the first strided."""

    expansion = 1


class BottleneckV1b(_PlanesBlockV1b):
    """1x1 reduce, strided 3x3, 1x1 expand by 4."""

    expansion = 4


class ResNetV1bLayout(HybridBlock):
    """The layout ResNet V1b, its pruned variants and ResNeSt share, and their forward pass:
    stem (``conv1, bn1, relu, maxpool``), ``layer1`` to ``layer4``, then global pool, optional
    dropout and classifier. Subclasses build the stem and stages, then call ``_add_head``."""

    def _add_head(self, in_units: int, classes: int, final_drop: float) -> None:
        self.avgpool = nn.GlobalAvgPool2D()
        self.flat = nn.Flatten()
        self.drop = nn.Dropout(final_drop) if final_drop > 0.0 else None
        self.fc = nn.Dense(in_units=in_units, units=classes)

    def hybrid_forward(self, F, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        x = self.flat(self.avgpool(x))
        if self.drop is not None:
            x = self.drop(x)
        return self.fc(x)


class ResNetV1b(ResNetV1bLayout):
    """ResNet V1b-style network: stem, four stages, global pool, optional dropout, classifier."""

    def __init__(self, block: type, layers: list[int], classes: int = 1000, deep_stem: bool = False,
                 stem_width: int = 32, avg_down: bool = False, final_drop: float = 0.0,
                 last_gamma: bool = False, use_global_stats: bool = False,
                 norm_layer: Callable[..., HybridBlock] = BatchNorm, norm_kwargs: dict | None = None,
                 prefix: str | None = None, dilated: bool = False) -> None:
        super().__init__(prefix=prefix)
        norm_kwargs = dict(norm_kwargs or {})
        if use_global_stats:
            norm_kwargs["use_global_stats"] = True
        stem_channels = stem_width * 2 if deep_stem else 64
        with self.name_scope():
            if deep_stem:
                self.conv1 = add_deep_stem(nn.HybridSequential(prefix="conv1"), stem_width,
                                           norm_layer, norm_kwargs)
            else:
                self.conv1 = nn.Conv2D(64, 7, 2, 3, use_bias=False)
            self.bn1 = make_norm(norm_layer, norm_kwargs, in_channels=stem_channels)
            self.relu = nn.Activation("relu")
            self.maxpool = nn.MaxPool2D(pool_size=3, strides=2, padding=1)
            in_channels = stem_channels
            # dilated: stages 3 and 4 keep stride 8 and dilate by 2 and 4 instead
            dilations = [1, 1, 2, 4] if dilated else [1, 1, 1, 1]
            for i, (planes, num_blocks, dilation) in enumerate(zip([64, 128, 256, 512], layers, dilations), 1):
                strides = 1 if i == 1 or dilation > 1 else 2
                stage = self._make_layer(i, block, planes, num_blocks, strides, in_channels,
                                         avg_down, last_gamma, norm_layer, norm_kwargs, dilation)
                setattr(self, f"layer{i}", stage)
                in_channels = planes * block.expansion
            self._add_head(512 * block.expansion, classes, final_drop)

    @staticmethod
    def _make_layer(stage_index: int, block: type, planes: int, num_blocks: int, strides: int,
                    in_channels: int, avg_down: bool, last_gamma: bool, norm_layer, norm_kwargs,
                    dilation: int = 1):
        out_channels = planes * block.expansion
        downsample = None
        if strides != 1 or in_channels != out_channels:
            # the norm's width is given, as for the blocks' norms: GroupNorm cannot infer it
            downsample = projection(out_channels, strides, avg_down, norm_layer,
                                    {"in_channels": out_channels, **(norm_kwargs or {})},
                                    prefix=f"down{stage_index}_")
        stage = nn.HybridSequential(prefix=f"layers{stage_index}_")
        # a dilated stage's first block still has the previous stage's dilation (half of it)
        first = 1 if dilation <= 2 else dilation // 2
        with stage.name_scope():
            stage.add(block(planes, strides, downsample, norm_layer, norm_kwargs, last_gamma, first, dilation))
            for _ in range(num_blocks - 1):
                stage.add(block(planes, 1, None, norm_layer, norm_kwargs, last_gamma, dilation, dilation))
        return stage


@head_argument("classes")
def resnet_v1b(num_layers: int, variant: str = "b", classes: int = 1000, final_drop: float = 0.0,
               last_gamma: bool = False, use_global_stats: bool = False,
               norm_layer: Callable[..., HybridBlock] = BatchNorm,
               norm_kwargs: dict | None = None, dilated: bool = False, deep_stem: bool | None = None,
               stem_width: int | None = None, avg_down: bool | None = None) -> ResNetV1b:
    """ResNet V1b/c/d/e/s with 18, 34, 50, 101 or 152 layers.

    Parameters
    ----------
    num_layers : depth, one of 18, 34, 50, 101, 152.
    variant : ``"b"``, ``"c"``, ``"d"``, ``"e"`` or ``"s"`` (see the module docstring).
    classes : size of the classifier output.
    final_drop : dropout rate before the classifier.
    last_gamma : start each block's last norm scale at zero.
    use_global_stats : freeze batch-norm statistics (fine-tuning with small batches).
    norm_layer, norm_kwargs : normalization class and its extra arguments.
    dilated : dilate stages 3 and 4 (2 and 4) instead of striding: output stride 8, the
        backbone of the segmentation models.
    deep_stem, stem_width, avg_down : override the variant's stem (three 3x3 convolutions, of
        width ``stem_width`` then twice that) and shortcut pooling, as GluonCV's keywords of the
        same name; the published weights need the variant's own.

    Examples
    --------
    >>> net = resnet_v1b(50, "d", classes=10)
    >>> net.fc._units
    10
    """
    check_choice("num_layers", num_layers, _LAYERS)
    check_choice("variant", variant, VARIANTS)
    own = dict(zip(("deep_stem", "avg_down", "stem_width"), VARIANTS[variant]))
    chosen = {k: own[k] if v is None else v
              for k, v in (("deep_stem", deep_stem), ("avg_down", avg_down), ("stem_width", stem_width))}
    deep_stem, avg_down, stem_width = chosen["deep_stem"], chosen["avg_down"], chosen["stem_width"]
    block = BasicBlockV1b if num_layers < 50 else BottleneckV1b
    return ResNetV1b(block, _LAYERS[num_layers], classes, deep_stem, stem_width, avg_down, final_drop,
                     last_gamma, use_global_stats, norm_layer, norm_kwargs,
                     prefix=f"resnetv1{variant}_", dilated=dilated)


@head_argument("classes")
def resnet_v1b_gn(num_layers: int, classes: int = 1000, num_groups: int = 32, final_drop: float = 0.0,
                  last_gamma: bool = False, norm_kwargs: dict | None = None, dilated: bool = False,
                  deep_stem: bool | None = None, stem_width: int | None = None, avg_down: bool | None = None,
                  use_global_stats: bool = False) -> ResNetV1b:
    """ResNet V1b with group normalization ("Group Normalization", arXiv:1803.08494) in place of
    batch norm: no batch statistics, so small or uneven batches train the same.

    ``norm_kwargs``, ``dilated``, ``deep_stem``, ``stem_width`` and ``avg_down`` are
    :func:`resnet_v1b`'s; ``use_global_stats`` is accepted for GluonCV's call pattern and changes
    nothing: group normalization keeps no running statistics.

    Examples
    --------
    >>> net = resnet_v1b_gn(50, classes=10)
    >>> net.bn1
    GroupNorm(num_groups=32, in_channels=64)
    """
    from ..norm import GroupNorm

    return resnet_v1b(num_layers, "b", classes, final_drop, last_gamma, norm_layer=GroupNorm,
                      norm_kwargs={"num_groups": num_groups, **(norm_kwargs or {})}, dilated=dilated,
                      deep_stem=deep_stem, stem_width=stem_width, avg_down=avg_down)
