"""CIFAR-10 ResNeXt-29 ("Aggregated Residual Transformations", arXiv:1611.05431), with GluonCV
0.10's parameter layout: a 3x3 stem and three stages of the ImageNet ResNeXt block.
"""

from __future__ import annotations

from typing import Callable

from gluon_hub import head_argument

from ...common.blocks import BatchNorm, HybridBlock, add_conv_norm, nn
from .resnext import add_resnext_stages

__all__ = ["CIFARResNeXt", "cifar_resnext"]


class CIFARResNeXt(HybridBlock):
    """3x3 stem, three stages of grouped bottlenecks (64, 128, 256 wide before expansion), pool,
    classifier."""

    def __init__(self, blocks_per_stage: int, cardinality: int, bottleneck_width: int, classes: int = 10,
                 norm_layer: Callable[..., HybridBlock] = BatchNorm, norm_kwargs: dict | None = None) -> None:
        super().__init__()
        options = {"norm_layer": norm_layer, "norm_kwargs": norm_kwargs}
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            add_conv_norm(self.features, 64, 3, 1, 1, **options)
            add_resnext_stages(self.features, [blocks_per_stage] * 3, cardinality, bottleneck_width, **options)
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


@head_argument("classes")
def cifar_resnext(num_layers: int = 29, cardinality: int = 16, bottleneck_width: int = 64, classes: int = 10,
                  norm_layer: Callable[..., HybridBlock] = BatchNorm,
                  norm_kwargs: dict | None = None) -> CIFARResNeXt:
    """CIFAR ResNeXt with ``9n + 2`` layers, ``{cardinality}x{bottleneck_width}d``.

    Examples
    --------
    >>> net = cifar_resnext(29, 32, 4)
    >>> len(net.features[3])
    3
    """
    if not isinstance(num_layers, int) or num_layers <= 2 or (num_layers - 2) % 9:
        raise ValueError(f"num_layers must be 2 plus a positive multiple of 9 (29 is published), got {num_layers!r}")
    return CIFARResNeXt((num_layers - 2) // 9, cardinality, bottleneck_width, classes, norm_layer, norm_kwargs)
