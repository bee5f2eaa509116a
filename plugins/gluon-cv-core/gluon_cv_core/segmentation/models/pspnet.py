"""PSPNet ("Pyramid Scene Parsing Network", arXiv:1612.01105) on a dilated ResNet, as GluonCV
0.10 builds it: stage 4's features average-pooled to 1x1, 2x2, 3x3 and 6x6 bins, each reduced
by a 1x1 conv and upsampled back, concatenated with the features, then a 3x3 head; an FCN
auxiliary head on stage 3.
"""

from __future__ import annotations

from typing import Callable, Sequence

from gluon_hub import head_argument

from ...common.blocks import BatchNorm, HybridBlock, make_norm, nn
from .base import check_output_size, class_names, resize_like
from .fcn import HeadedSegModel

__all__ = ["PSPNet", "PyramidPooling", "psp"]

#: output sides of the pyramid's adaptive average pools
BINS = (1, 2, 3, 6)


def _conv_norm_relu(in_channels: int, channels: int, norm_layer, norm_kwargs) -> nn.HybridSequential:
    block = nn.HybridSequential()
    with block.name_scope():
        block.add(nn.Conv2D(channels, 1, use_bias=False, in_channels=in_channels))
        block.add(make_norm(norm_layer, norm_kwargs, in_channels=channels))
        block.add(nn.Activation("relu"))
    return block


class PyramidPooling(HybridBlock):
    """``concat(x, up(conv1(pool1(x))), ..., up(conv4(pool6(x))))``: twice ``x``'s channels."""

    def __init__(self, in_channels: int, norm_layer: Callable[..., HybridBlock] = BatchNorm,
                 norm_kwargs: dict | None = None) -> None:
        super().__init__()
        with self.name_scope():
            for i in range(1, len(BINS) + 1):
                setattr(self, f"conv{i}", _conv_norm_relu(in_channels, in_channels // 4, norm_layer, norm_kwargs))

    def hybrid_forward(self, F, x):
        features = [x]
        for i, bins in enumerate(BINS, 1):
            pooled = F.contrib.AdaptiveAvgPooling2D(x, output_size=bins)
            features.append(resize_like(F, getattr(self, f"conv{i}")(pooled), x))
        return F.concat(*features, dim=1)


class _PSPHead(HybridBlock):
    """Pyramid pooling, then 3x3 conv to 512, norm, ReLU, dropout 0.1, 1x1 conv to the classes."""

    def __init__(self, in_channels: int, nclass: int, norm_layer, norm_kwargs) -> None:
        super().__init__()
        self.psp = PyramidPooling(in_channels, norm_layer, norm_kwargs)
        with self.name_scope():
            self.block = nn.HybridSequential(prefix="")
            self.block.add(nn.Conv2D(512, 3, padding=1, use_bias=False, in_channels=in_channels * 2))
            self.block.add(make_norm(norm_layer, norm_kwargs, in_channels=512))
            self.block.add(nn.Activation("relu"))
            self.block.add(nn.Dropout(0.1))
            self.block.add(nn.Conv2D(nclass, 1, in_channels=512))

    def hybrid_forward(self, F, x):
        return self.block(self.psp(x))


class PSPNet(HeadedSegModel):
    """PSPNet: a pyramid-pooling head on stage 4 (see :class:`~.fcn.HeadedSegModel`)."""

    head_class = _PSPHead


@head_argument("classes", count=lambda classes: len(class_names(classes)))
def psp(backbone: str = "resnet50", classes: str | Sequence[str] = "voc", aux: bool = True,
        pretrained_base: bool | str = False, base_size: int = 520, crop_size: int = 480,
        norm_layer: Callable[..., HybridBlock] = BatchNorm, norm_kwargs: dict | None = None,
        height: int | None = None, width: int | None = None) -> PSPNet:
    """PSPNet on a dilated ``backbone`` (``resnet50``, ``resnet101`` ...) for ``classes``.

    ``height`` and ``width`` (GluonCV's fixed output size) are accepted left out only: the outputs
    always have the input's size (:func:`~.base.check_output_size`).

    Examples
    --------
    >>> net = psp("resnet50", "ade")
    >>> net.nclass
    150
    """
    check_output_size("psp", height, width)
    return PSPNet(classes, backbone, aux, pretrained_base, base_size, crop_size, norm_layer, norm_kwargs)
