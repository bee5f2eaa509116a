"""The CIFAR-10 ResNets ("Deep Residual Learning", arXiv:1512.03385; "Identity Mappings",
arXiv:1603.05027) and Wide ResNets ("Wide Residual Networks", arXiv:1605.07146), with GluonCV
0.10's parameter layout. They reuse the ImageNet ResNet blocks with a 3x3 stem and three
stages of 16, 32 and 64 (times the width factor) channels.
"""

from __future__ import annotations

from typing import Callable

from gluon_hub import head_argument

from ...common.backbones.resnet import BasicBlockV1, BasicBlockV2, ResNetV1, ResNetV2
from ...common.blocks import BatchNorm, HybridBlock

__all__ = ["cifar_resnet_v1", "cifar_resnet_v2", "cifar_wide_resnet"]


def _blocks_per_stage(num_layers: int, fixed: int) -> int:
    if not isinstance(num_layers, int) or num_layers <= fixed or (num_layers - fixed) % 6:
        raise ValueError(f"num_layers must be {fixed} plus a positive multiple of 6, got {num_layers!r}")
    return (num_layers - fixed) // 6


@head_argument("classes")
def cifar_resnet_v1(num_layers: int, classes: int = 10, norm_layer: Callable[..., HybridBlock] = BatchNorm,
                    norm_kwargs: dict | None = None) -> ResNetV1:
    """CIFAR ResNet V1 with ``6n + 2`` layers (20, 56, 110 are published)."""
    n = _blocks_per_stage(num_layers, 2)
    return ResNetV1(BasicBlockV1, [n] * 3, [16, 16, 32, 64], classes, stem="cifar",
                    norm_layer=norm_layer, norm_kwargs=norm_kwargs)


@head_argument("classes")
def cifar_resnet_v2(num_layers: int, classes: int = 10, norm_layer: Callable[..., HybridBlock] = BatchNorm,
                    norm_kwargs: dict | None = None) -> ResNetV2:
    """CIFAR ResNet V2 with ``6n + 2`` layers; its projection shortcuts see the raw block input."""
    n = _blocks_per_stage(num_layers, 2)
    return ResNetV2(BasicBlockV2, [n] * 3, [16, 16, 32, 64], classes, stem="thumbnail",
                    norm_layer=norm_layer, norm_kwargs=norm_kwargs, preact_shortcut=False)


@head_argument("classes")
def cifar_wide_resnet(num_layers: int, width_factor: int = 1, drop_rate: float = 0.0, classes: int = 10,
                      norm_layer: Callable[..., HybridBlock] = BatchNorm,
                      norm_kwargs: dict | None = None) -> ResNetV2:
    """Wide ResNet ``WRN-{num_layers}-{width_factor}`` (``6n + 4`` layers), with dropout
    ``drop_rate`` between the two convolutions of each block."""
    n = _blocks_per_stage(num_layers, 4)
    if not isinstance(width_factor, int) or width_factor < 1:
        raise ValueError(f"width_factor must be a positive int, got {width_factor!r}")
    channels = [16, 16 * width_factor, 32 * width_factor, 64 * width_factor]
    return ResNetV2(BasicBlockV2, [n] * 3, channels, classes, stem="wide", norm_layer=norm_layer,
                    norm_kwargs=norm_kwargs, drop_rate=drop_rate)
