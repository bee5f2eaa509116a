"""DarkNet-53, the YOLOv3 backbone as a classifier ("YOLOv3", arXiv:1804.02767), with
GluonCV 0.10's parameter layout."""

from __future__ import annotations

from typing import Callable

from gluon_hub import head_argument

from ...common.blocks import BatchNorm, HybridBlock, conv_norm, nn

__all__ = ["DarknetV3", "darknet53"]

_NORM = {"epsilon": 1e-5, "momentum": 0.9}


class _DarknetBlock(HybridBlock):
    """Residual pair: 1x1 halving conv, 3x3 conv back to full width, plus the input."""

    def __init__(self, channels: int, norm_layer: Callable[..., HybridBlock], norm_kwargs: dict | None) -> None:
        super().__init__()
        options = {"act": "leaky", "norm_layer": norm_layer, "norm_kwargs": norm_kwargs, "norm_options": _NORM}
        self.body = nn.HybridSequential(prefix="")
        self.body.add(conv_norm(channels, 1, **options))
        self.body.add(conv_norm(channels * 2, 3, padding=1, **options))

    def hybrid_forward(self, F, x):
        return self.body(x) + x


class DarknetV3(HybridBlock):
    """Strided 3x3 convs each followed by residual blocks, global pool, classifier."""

    def __init__(self, layers: list[int], channels: list[int], classes: int = 1000,
                 norm_layer: Callable[..., HybridBlock] = BatchNorm, norm_kwargs: dict | None = None) -> None:
        super().__init__()
        options = {"act": "leaky", "norm_layer": norm_layer, "norm_kwargs": norm_kwargs, "norm_options": _NORM}
        with self.name_scope():
            self.features = nn.HybridSequential()
            self.features.add(conv_norm(channels[0], 3, padding=1, **options))
            for num_blocks, width in zip(layers, channels[1:]):
                self.features.add(conv_norm(width, 3, strides=2, padding=1, **options))
                for _ in range(num_blocks):
                    self.features.add(_DarknetBlock(width // 2, norm_layer, norm_kwargs))
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        # A global pool ignores its kernel, but MXNet 1.9.1's int8 pooling checks it against
        # the input: a 1x1 kernel lets gluon_hub.quantize run below 224 pixels (GluonCV: 7x7).
        x = F.Pooling(self.features(x), kernel=(1, 1), global_pool=True, pool_type="avg")
        return self.output(x)


@head_argument("classes")
def darknet53(classes: int = 1000, norm_layer: Callable[..., HybridBlock] = BatchNorm,
              norm_kwargs: dict | None = None) -> DarknetV3:
    """DarkNet-53: 52 convolutions in five stages and a classifier."""
    return DarknetV3([1, 2, 8, 8, 4], [32, 64, 128, 256, 512, 1024], classes, norm_layer, norm_kwargs)
