"""The upsampling block Mobile Pose and AlphaPose share."""

from __future__ import annotations

from typing import Any, Callable

from gluon_hub.compat import mx

from ...common.blocks import BatchNorm, HybridBlock, make_norm, nn

__all__ = ["DUC"]


class DUC(HybridBlock):
    """Dense upsampling convolution: a 3x3 conv to ``channels``, norm, relu, then a pixel
    shuffle that trades ``factor ** 2`` channels for a ``factor``-times larger map.

    Learned upsampling without the checkerboard artefacts of strided deconvolution, at the
    cost of a wider convolution; children ``conv, bn, relu, pixel_shuffle`` as GluonCV names them.
    """

    def __init__(self, channels: int, factor: int = 2, in_channels: int = 0,
                 norm_layer: Callable[..., HybridBlock] = BatchNorm, norm_kwargs: dict | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        with self.name_scope():
            self.conv = nn.Conv2D(channels, 3, padding=1, use_bias=False, in_channels=in_channels)
            self.bn = make_norm(norm_layer, norm_kwargs)
            self.relu = nn.Activation("relu")
            self.pixel_shuffle = mx.gluon.contrib.nn.PixelShuffle2D(factor)

    def hybrid_forward(self, F, x):
        return self.pixel_shuffle(self.relu(self.bn(self.conv(x))))
