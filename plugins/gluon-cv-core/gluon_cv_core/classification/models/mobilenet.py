"""MobileNet V1 ("MobileNets", arXiv:1704.04861) and V2 ("Inverted Residuals and Linear
Bottlenecks", arXiv:1801.04381), with GluonCV 0.10's parameter layout."""

from __future__ import annotations

from typing import Callable

from gluon_hub import head_argument

from ...common.blocks import BatchNorm, HybridBlock, add_conv_norm, nn

__all__ = ["MobileNet", "MobileNetV2", "LinearBottleneck", "mobilenet", "mobilenet_v2"]


def _check_multiplier(multiplier: float) -> None:
    if not isinstance(multiplier, (int, float)) or multiplier < 0.25:
        raise ValueError(f"multiplier must be a number >= 0.25, got {multiplier!r}")


class MobileNet(HybridBlock):
    """MobileNet V1: a 3x3 conv then 13 depthwise-separable pairs, pool, classifier."""

    def __init__(self, multiplier: float = 1.0, classes: int = 1000,
                 norm_layer: Callable[..., HybridBlock] = BatchNorm, norm_kwargs: dict | None = None) -> None:
        super().__init__()
        options = {"norm_layer": norm_layer, "norm_kwargs": norm_kwargs}
        dw_channels = [int(c * multiplier) for c in [32, 64] + [128] * 2 + [256] * 2 + [512] * 6 + [1024]]
        channels = [int(c * multiplier) for c in [64] + [128] * 2 + [256] * 2 + [512] * 6 + [1024] * 2]
        strides = [1, 2] * 3 + [1] * 5 + [2, 1]
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            with self.features.name_scope():
                add_conv_norm(self.features, int(32 * multiplier), 3, 2, 1, **options)
                for dwc, c, s in zip(dw_channels, channels, strides):
                    add_conv_norm(self.features, dwc, 3, s, 1, groups=dwc, **options)
                    add_conv_norm(self.features, c, 1, **options)
                self.features.add(nn.GlobalAvgPool2D())
                self.features.add(nn.Flatten())
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


class LinearBottleneck(HybridBlock):
    """Inverted residual: 1x1 expand by ``t`` (relu6), depthwise 3x3 (relu6), linear 1x1."""

    def __init__(self, in_channels: int, channels: int, t: int, strides: int,
                 norm_layer: Callable[..., HybridBlock] = BatchNorm, norm_kwargs: dict | None = None) -> None:
        super().__init__()
        options = {"norm_layer": norm_layer, "norm_kwargs": norm_kwargs}
        self.use_shortcut = strides == 1 and in_channels == channels
        with self.name_scope():
            self.out = nn.HybridSequential()
            if t != 1:
                add_conv_norm(self.out, in_channels * t, 1, act="relu6", **options)
            add_conv_norm(self.out, in_channels * t, 3, strides, 1, groups=in_channels * t, act="relu6",
                          **options)
            add_conv_norm(self.out, channels, 1, act=None, **options)

    def hybrid_forward(self, F, x):
        out = self.out(x)
        return F.elemwise_add(out, x) if self.use_shortcut else out


class MobileNetV2(HybridBlock):
    """MobileNet V2: a 3x3 conv, 17 inverted residuals, 1x1 conv, pool, 1x1-conv classifier."""

    def __init__(self, multiplier: float = 1.0, classes: int = 1000,
                 norm_layer: Callable[..., HybridBlock] = BatchNorm, norm_kwargs: dict | None = None) -> None:
        super().__init__()
        options = {"norm_layer": norm_layer, "norm_kwargs": norm_kwargs}
        in_group = [int(c * multiplier) for c in [32, 16] + [24] * 2 + [32] * 3 + [64] * 4 + [96] * 3 + [160] * 3]
        out_group = [int(c * multiplier) for c in [16] + [24] * 2 + [32] * 3 + [64] * 4 + [96] * 3 + [160] * 3 + [320]]
        ts = [1] + [6] * 16
        strides = [1, 2] * 2 + [1, 1, 2] + [1] * 6 + [2] + [1] * 3
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="features_")
            with self.features.name_scope():
                add_conv_norm(self.features, int(32 * multiplier), 3, 2, 1, act="relu6", **options)
                for in_c, c, t, s in zip(in_group, out_group, ts, strides):
                    self.features.add(LinearBottleneck(in_c, c, t, s, **options))
                # the last conv only grows with the multiplier, never shrinks
                add_conv_norm(self.features, int(1280 * multiplier) if multiplier > 1.0 else 1280, 1,
                              act="relu6", **options)
                self.features.add(nn.GlobalAvgPool2D())
            self.output = nn.HybridSequential(prefix="output_")
            with self.output.name_scope():
                self.output.add(nn.Conv2D(classes, 1, use_bias=False, prefix="pred_"), nn.Flatten())

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


@head_argument("classes")
def mobilenet(multiplier: float = 1.0, classes: int = 1000,
              norm_layer: Callable[..., HybridBlock] = BatchNorm, norm_kwargs: dict | None = None) -> MobileNet:
    """MobileNet V1 with channel width ``multiplier`` (GluonCV publishes 1.0, 0.75, 0.5, 0.25).

    Examples
    --------
    >>> net = mobilenet(0.25, classes=10)
    >>> net.output._units
    10
    """
    _check_multiplier(multiplier)
    return MobileNet(multiplier, classes, norm_layer, norm_kwargs)


@head_argument("classes")
def mobilenet_v2(multiplier: float = 1.0, classes: int = 1000,
                 norm_layer: Callable[..., HybridBlock] = BatchNorm,
                 norm_kwargs: dict | None = None) -> MobileNetV2:
    """MobileNet V2 with channel width ``multiplier`` (GluonCV publishes 1.0, 0.75, 0.5, 0.25)."""
    _check_multiplier(multiplier)
    return MobileNetV2(multiplier, classes, norm_layer, norm_kwargs)
