"""Wide ResNet-38 "A2" (Wu et al., 2016; the in-place-ABN variant), the backbone of GluonCV's
``deeplab_v3b_plus_wideresnet_citys``.

Pre-activation residual units: each unit normalizes its input once and feeds that to both
its convolutions and (when the shape changes) its 1x1 projection shortcut. Modules 1-3 are
VGG-like with max pooling between them; the last two are wide bottlenecks with dropout.
Built dilated, the segmentation setting (GluonCV publishes no classification WRN-38): only
module 4 downsamples and modules 5-7 dilate by 2, 4 and 4, so the features are at 1/8 of
the input.

Parameter names are GluonCV's: ``mod1.0``; ``mod<k>.<unit>.bn1.0``, ``.convs.<i>``, ``.proj_conv``.
"""

from __future__ import annotations

from typing import Any, Callable

from gluon_hub.compat import mx

from ...common.blocks import make_norm

nn = mx.gluon.nn
HybridBlock = mx.gluon.HybridBlock

#: (units, channels) of modules 2-7: two entries a 3x3-3x3 unit, three a 1x1-3x3-1x1 bottleneck
WRN38_MODULES: tuple[tuple[int, tuple[int, ...]], ...] = (
    (3, (128, 128)), (3, (256, 256)), (6, (512, 512)), (3, (512, 1024)),
    (1, (512, 1024, 2048)), (1, (1024, 2048, 4096)),
)
#: dropout before the last convolution of modules 6 and 7
_DROPOUT = {6: 0.3, 7: 0.5}
#: dilation of modules 5-7, which keep module 4's stride 8 instead of striding further
_DILATION = {5: 2, 6: 4, 7: 4}


def _norm_relu(norm_layer: Callable[..., HybridBlock], norm_kwargs: dict | None) -> Any:
    seq = nn.HybridSequential(prefix="")
    seq.add(make_norm(norm_layer, norm_kwargs), nn.Activation("relu"))
    return seq


class IdentityResidualUnit(HybridBlock):
    """Pre-activation residual unit: ``convs(norm_relu(x)) + shortcut``, where the shortcut is
    ``x`` or, when strides or widths change, a 1x1 conv of ``norm_relu(x)``."""

    def __init__(self, in_channels: int, channels: tuple[int, ...], strides: int = 1, dilation: int = 1,
                 dropout: float | None = None, norm_layer: Callable[..., HybridBlock] = nn.BatchNorm,
                 norm_kwargs: dict | None = None) -> None:
        super().__init__()
        if len(channels) not in (2, 3):
            raise ValueError(f"channels must list two (basic unit) or three (bottleneck) widths, got {channels}")
        with self.name_scope():
            self.bn1 = _norm_relu(norm_layer, norm_kwargs)
            self.convs = nn.HybridSequential(prefix="")
            if len(channels) == 2:
                self.convs.add(nn.Conv2D(channels[0], 3, strides, dilation, dilation, use_bias=False),
                               _norm_relu(norm_layer, norm_kwargs))
            else:
                self.convs.add(nn.Conv2D(channels[0], 1, strides, use_bias=False),
                               _norm_relu(norm_layer, norm_kwargs),
                               nn.Conv2D(channels[1], 3, 1, dilation, dilation, use_bias=False),
                               _norm_relu(norm_layer, norm_kwargs))
            if dropout is not None:
                self.convs.add(nn.Dropout(dropout))
            if len(channels) == 2:
                self.convs.add(nn.Conv2D(channels[-1], 3, 1, dilation, dilation, use_bias=False))
            else:
                self.convs.add(nn.Conv2D(channels[-1], 1, use_bias=False))
            self._project = strides != 1 or in_channels != channels[-1]
            if self._project:
                self.proj_conv = nn.Conv2D(channels[-1], 1, strides, use_bias=False)

    def hybrid_forward(self, F, x):
        activated = self.bn1(x)
        shortcut = self.proj_conv(activated) if self._project else x
        return self.convs(activated) + shortcut


def wider_resnet38_modules(norm_layer: Callable[..., HybridBlock] = nn.BatchNorm,
                           norm_kwargs: dict | None = None) -> list[tuple[str, HybridBlock]]:
    """``(name, block)`` of dilated WRN-38's modules in forward order: ``mod1``, ``pool2``,
    ``mod2``, ``pool3``, ``mod3`` ... ``mod7``; a network sets them as attributes of these names."""
    stem = nn.HybridSequential(prefix="mod1")
    stem.add(nn.Conv2D(64, 3, 1, 1, use_bias=False))
    modules: list[tuple[str, HybridBlock]] = [("mod1", stem)]
    in_channels = 64
    for k, (units, channels) in enumerate(WRN38_MODULES, start=2):
        if k in (2, 3):
            modules.append((f"pool{k}", nn.MaxPool2D(pool_size=3, strides=2, padding=1)))
        strides, dilation = (2 if k == 4 else 1), _DILATION.get(k, 1)
        module = nn.HybridSequential(prefix=f"mod{k}")
        for unit in range(units):
            module.add(IdentityResidualUnit(in_channels, channels, strides if unit == 0 else 1, dilation,
                                            _DROPOUT.get(k), norm_layer, norm_kwargs))
            in_channels = channels[-1]
        modules.append((f"mod{k}", module))
    return modules


__all__ = ["IdentityResidualUnit", "WRN38_MODULES", "wider_resnet38_modules"]
