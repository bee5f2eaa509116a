"""DeepLabV3 ("Rethinking Atrous Convolution for Semantic Image Segmentation", arXiv:1706.05587)
on a dilated ResNet or ResNeSt, as GluonCV 0.10 builds it: atrous spatial pyramid pooling
(a 1x1 conv, 3x3 convs dilated 12, 24 and 36, and image pooling, concatenated and projected
to 256 channels) on stage 4, a 3x3 head, and an FCN auxiliary head on stage 3.
"""

from __future__ import annotations

from typing import Callable, Sequence

from gluon_hub import head_argument
from gluon_hub.compat import mx

from ...common.blocks import BatchNorm, HybridBlock, make_norm, nn
from .base import check_output_size, class_names, resize_like
from .fcn import HeadedSegModel

__all__ = ["ASPP", "DeepLabV3", "deeplab"]

#: ASPP's width and the dilation rates of its three 3x3 branches (output stride 8)
ASPP_CHANNELS = 256
ATROUS_RATES = (12, 24, 36)


def _branch(in_channels: int, kernel: int, rate: int, norm_layer, norm_kwargs) -> nn.HybridSequential:
    """Conv (``kernel``, dilated ``rate``), norm, ReLU."""
    block = nn.HybridSequential()
    with block.name_scope():
        block.add(nn.Conv2D(ASPP_CHANNELS, kernel, padding=rate if kernel == 3 else 0, dilation=rate,
                            use_bias=False, in_channels=in_channels))
        block.add(make_norm(norm_layer, norm_kwargs, in_channels=ASPP_CHANNELS))
        block.add(nn.Activation("relu"))
    return block


class _ImagePooling(HybridBlock):
    """Global average, 1x1 conv, norm, ReLU, broadcast back to the input's size."""

    def __init__(self, in_channels: int, norm_layer, norm_kwargs) -> None:
        super().__init__()
        self.gap = nn.HybridSequential()
        with self.gap.name_scope():
            self.gap.add(nn.GlobalAvgPool2D())
            self.gap.add(nn.Conv2D(ASPP_CHANNELS, 1, use_bias=False, in_channels=in_channels))
            self.gap.add(make_norm(norm_layer, norm_kwargs, in_channels=ASPP_CHANNELS))
            self.gap.add(nn.Activation("relu"))

    def hybrid_forward(self, F, x):
        return resize_like(F, self.gap(x), x)


class ASPP(HybridBlock):
    """Atrous spatial pyramid pooling: five parallel branches concatenated, then a 1x1
    projection to 256 channels with norm, ReLU and dropout 0.5."""

    def __init__(self, in_channels: int, norm_layer: Callable[..., HybridBlock] = BatchNorm,
                 norm_kwargs: dict | None = None) -> None:
        super().__init__()
        branches = [_branch(in_channels, 1, 1, norm_layer, norm_kwargs)]
        branches += [_branch(in_channels, 3, rate, norm_layer, norm_kwargs) for rate in ATROUS_RATES]
        branches.append(_ImagePooling(in_channels, norm_layer, norm_kwargs))
        # GluonCV's attribute name (sic): the published files say "concurent"
        self.concurent = mx.gluon.contrib.nn.HybridConcurrent(axis=1)
        with self.concurent.name_scope():
            self.concurent.add(*branches)
        self.project = nn.HybridSequential()
        with self.project.name_scope():
            self.project.add(nn.Conv2D(ASPP_CHANNELS, 1, use_bias=False, in_channels=len(branches) * ASPP_CHANNELS))
            self.project.add(make_norm(norm_layer, norm_kwargs, in_channels=ASPP_CHANNELS))
            self.project.add(nn.Activation("relu"))
            self.project.add(nn.Dropout(0.5))

    def hybrid_forward(self, F, x):
        return self.project(self.concurent(x))


class _DeepLabHead(HybridBlock):
    """ASPP, then 3x3 conv, norm, ReLU, dropout 0.1, 1x1 conv to the classes."""

    def __init__(self, in_channels: int, nclass: int, norm_layer, norm_kwargs) -> None:
        super().__init__()
        with self.name_scope():
            self.aspp = ASPP(in_channels, norm_layer, norm_kwargs)
            self.block = nn.HybridSequential()
            self.block.add(nn.Conv2D(ASPP_CHANNELS, 3, padding=1, use_bias=False, in_channels=ASPP_CHANNELS))
            self.block.add(make_norm(norm_layer, norm_kwargs, in_channels=ASPP_CHANNELS))
            self.block.add(nn.Activation("relu"))
            self.block.add(nn.Dropout(0.1))
            self.block.add(nn.Conv2D(nclass, 1, in_channels=ASPP_CHANNELS))

    def hybrid_forward(self, F, x):
        return self.block(self.aspp(x))


class DeepLabV3(HeadedSegModel):
    """DeepLabV3: an ASPP head on stage 4 (see :class:`~.fcn.HeadedSegModel`)."""

    head_class = _DeepLabHead


@head_argument("classes", count=lambda classes: len(class_names(classes)))
def deeplab(backbone: str = "resnet50", classes: str | Sequence[str] = "voc", aux: bool = True,
            pretrained_base: bool | str = False, base_size: int = 520, crop_size: int = 480,
            norm_layer: Callable[..., HybridBlock] = BatchNorm, norm_kwargs: dict | None = None,
            height: int | None = None, width: int | None = None) -> DeepLabV3:
    """DeepLabV3 on a dilated ``backbone`` (``resnet50`` ... ``resnet152``, ``resnest50`` ...
    ``resnest269``) for ``classes``.

    ``height`` and ``width`` (GluonCV's fixed output size) are accepted left out only: the outputs
    always have the input's size (:func:`~.base.check_output_size`).

    Examples
    --------
    >>> net = deeplab("resnet50", "citys", crop_size=768)
    >>> net.nclass, net.crop_size
    (19, 768)
    """
    check_output_size("deeplab", height, width)
    return DeepLabV3(classes, backbone, aux, pretrained_base, base_size, crop_size, norm_layer, norm_kwargs)
