"""MobileNet V3 large and small ("Searching for MobileNetV3", arXiv:1905.02244), with
GluonCV 0.10's parameter layout."""

from __future__ import annotations

import math
from typing import Callable

from gluon_hub import head_argument

from ...common.blocks import BatchNorm, HardSwish, HybridBlock, activation, check_choice, make_norm, nn

__all__ = ["MobileNetV3", "mobilenet_v3", "CONFIGS"]

#: name -> (blocks as (kernel, expansion channels, out channels, squeeze-excite, activation,
#: stride), channels of the last 1x1 conv, channels of the pre-classifier conv)
CONFIGS = {
    "large": ([
        (3, 16, 16, False, "relu", 1), (3, 64, 24, False, "relu", 2),
        (3, 72, 24, False, "relu", 1), (5, 72, 40, True, "relu", 2),
        (5, 120, 40, True, "relu", 1), (5, 120, 40, True, "relu", 1),
        (3, 240, 80, False, "hard_swish", 2), (3, 200, 80, False, "hard_swish", 1),
        (3, 184, 80, False, "hard_swish", 1), (3, 184, 80, False, "hard_swish", 1),
        (3, 480, 112, True, "hard_swish", 1), (3, 672, 112, True, "hard_swish", 1),
        (5, 672, 160, True, "hard_swish", 2), (5, 960, 160, True, "hard_swish", 1),
        (5, 960, 160, True, "hard_swish", 1),
    ], 960, 1280),
    "small": ([
        (3, 16, 16, True, "relu", 2), (3, 72, 24, False, "relu", 2),
        (3, 88, 24, False, "relu", 1), (5, 96, 40, True, "hard_swish", 2),
        (5, 240, 40, True, "hard_swish", 1), (5, 240, 40, True, "hard_swish", 1),
        (5, 120, 48, True, "hard_swish", 1), (5, 144, 48, True, "hard_swish", 1),
        (5, 288, 96, True, "hard_swish", 2), (5, 576, 96, True, "hard_swish", 1),
        (5, 576, 96, True, "hard_swish", 1),
    ], 576, 1280),
}


def make_divisible(x: float, divisor: int = 8) -> int:
    """Round ``x`` up to a multiple of ``divisor`` (channel counts hardware likes)."""
    return int(math.ceil(x / divisor) * divisor)


class _SqueezeExcite(HybridBlock):
    """Channel attention: pool, 1x1 reduce by 4 (relu), 1x1 expand (hard sigmoid), rescale."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.pool = nn.GlobalAvgPool2D()
        self.conv1 = nn.Conv2D(make_divisible(channels // 4), 1)
        self.act1 = activation("relu")
        self.conv2 = nn.Conv2D(channels, 1)
        self.act2 = activation("hard_sigmoid")

    def hybrid_forward(self, F, x):
        return F.broadcast_mul(x, self.act2(self.conv2(self.act1(self.conv1(self.pool(x))))))


class _ConvUnit(HybridBlock):
    """Bias-free conv, norm and an optional activation, as named children ``conv, bn, act``."""

    def __init__(self, channels: int, kernel_size: int, strides: int = 1, groups: int = 1,
                 act: str | None = "relu", norm_layer: Callable[..., HybridBlock] = BatchNorm,
                 norm_kwargs: dict | None = None) -> None:
        super().__init__()
        self.conv = nn.Conv2D(channels, kernel_size, strides, kernel_size // 2, groups=groups,
                              use_bias=False)
        self.bn = make_norm(norm_layer, norm_kwargs)
        self.act = activation(act) if act is not None else None

    def hybrid_forward(self, F, x):
        x = self.bn(self.conv(x))
        return self.act(x) if self.act is not None else x


class _InvertedResidual(HybridBlock):
    """Optional 1x1 expand, depthwise conv, optional squeeze-excite, linear 1x1 projection."""

    def __init__(self, in_channels: int, mid_channels: int, out_channels: int, kernel_size: int,
                 act: str, use_se: bool, strides: int, norm_layer: Callable[..., HybridBlock],
                 norm_kwargs: dict | None) -> None:
        super().__init__()
        options = {"norm_layer": norm_layer, "norm_kwargs": norm_kwargs}
        self.use_shortcut = in_channels == out_channels and strides == 1
        with self.name_scope():
            # GluonCV expands when the output width differs from the expansion width
            self.expand = _ConvUnit(mid_channels, 1, act=act, **options) if out_channels != mid_channels else None
            self.conv1 = _ConvUnit(mid_channels, kernel_size, strides, mid_channels, act, **options)
            self.se = _SqueezeExcite(mid_channels) if use_se else None
            self.conv2 = _ConvUnit(out_channels, 1, act=None, **options)

    def hybrid_forward(self, F, x):
        out = self.expand(x) if self.expand is not None else x
        out = self.conv1(out)
        if self.se is not None:
            out = self.se(out)
        out = self.conv2(out)
        return x + out if self.use_shortcut else out


class MobileNetV3(HybridBlock):
    """MobileNet V3: hard-swish stem, inverted residuals, 1x1 conv, pool, 1x1-conv head."""

    def __init__(self, config: str, multiplier: float = 1.0, classes: int = 1000, final_drop: float = 0.2,
                 norm_layer: Callable[..., HybridBlock] = BatchNorm, norm_kwargs: dict | None = None,
                 prefix: str | None = None) -> None:
        super().__init__(prefix=prefix)
        check_choice("config", config, CONFIGS)
        blocks, squeeze_channels, expand_channels = CONFIGS[config]
        in_channels = 16
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            self.features.add(nn.Conv2D(make_divisible(multiplier * in_channels), 3, 2, 1, use_bias=False))
            self.features.add(make_norm(norm_layer, norm_kwargs))
            self.features.add(HardSwish())
            for kernel, mid, out, use_se, act, strides in blocks:
                out = make_divisible(multiplier * out)
                self.features.add(_InvertedResidual(in_channels, make_divisible(multiplier * mid), out,
                                                    kernel, act, use_se, strides, norm_layer, norm_kwargs))
                in_channels = out
            self.features.add(nn.Conv2D(make_divisible(multiplier * squeeze_channels), 1, use_bias=False))
            self.features.add(make_norm(norm_layer, norm_kwargs))
            self.features.add(HardSwish())
            self.features.add(nn.GlobalAvgPool2D())
            self.features.add(nn.Conv2D(expand_channels, 1, use_bias=False))
            self.features.add(HardSwish())
            if final_drop > 0:
                self.features.add(nn.Dropout(final_drop))
            self.output = nn.HybridSequential(prefix="output_")
            with self.output.name_scope():
                self.output.add(nn.Conv2D(classes, 1, in_channels=expand_channels, prefix="fc_"), nn.Flatten())

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


@head_argument("classes")
def mobilenet_v3(config: str = "large", multiplier: float = 1.0, classes: int = 1000,
                 final_drop: float = 0.2, norm_layer: Callable[..., HybridBlock] = BatchNorm,
                 norm_kwargs: dict | None = None, use_global_stats: bool = False, last_gamma: bool = False,
                 name_prefix: str | None = None) -> MobileNetV3:
    """MobileNet V3 ``"large"`` or ``"small"``.

    Parameters
    ----------
    config : ``"large"`` or ``"small"``.
    multiplier : channel width multiplier (GluonCV publishes 1.0).
    classes : size of the classifier output.
    final_drop : dropout rate before the classifier.
    norm_layer, norm_kwargs : normalization class and its extra arguments.
    use_global_stats : freeze batch-norm statistics (fine-tuning with small batches).
    last_gamma : accepted for GluonCV's call pattern and ignored: GluonCV's MobileNetV3 stores it
        and never reads it.
    name_prefix : the block's parameter-name prefix (GluonCV's keyword; loading weights does
        not depend on it).
    """
    if use_global_stats:
        norm_kwargs = {**(norm_kwargs or {}), "use_global_stats": True}
    return MobileNetV3(config, multiplier, classes, final_drop, norm_layer, norm_kwargs, prefix=name_prefix)
