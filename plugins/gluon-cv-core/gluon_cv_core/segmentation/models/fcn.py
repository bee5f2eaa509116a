"""FCN ("Fully Convolutional Networks for Semantic Segmentation", arXiv:1411.4038) on a dilated
ResNet, as GluonCV 0.10 builds it: a 3x3 head on stage 4 (stride 8), bilinearly upsampled to
the input, and an auxiliary head of the same kind on stage 3.
"""

from __future__ import annotations

from typing import Callable, Sequence

from gluon_hub import head_argument

from ...common.blocks import BatchNorm, HybridBlock, make_norm, nn
from .base import SegBaseModel, check_output_size, class_names

__all__ = ["FCN", "FCNHead", "HeadedSegModel", "fcn"]

#: GluonCV trains every segmentation head ten times faster than the pretrained backbone
HEAD_LR_MULT = 10


class FCNHead(HybridBlock):
    """3x3 conv to a quarter of the channels, norm, ReLU, dropout 0.1, 1x1 conv to ``channels``.

    Also the auxiliary head of PSPNet and DeepLab.
    """

    def __init__(self, in_channels: int, channels: int, norm_layer: Callable[..., HybridBlock] = BatchNorm,
                 norm_kwargs: dict | None = None) -> None:
        super().__init__()
        inter_channels = in_channels // 4
        with self.name_scope():
            self.block = nn.HybridSequential()
            with self.block.name_scope():
                self.block.add(nn.Conv2D(inter_channels, 3, padding=1, use_bias=False, in_channels=in_channels))
                self.block.add(make_norm(norm_layer, norm_kwargs, in_channels=inter_channels))
                self.block.add(nn.Activation("relu"))
                self.block.add(nn.Dropout(0.1))
                self.block.add(nn.Conv2D(channels, 1, in_channels=inter_channels))

    def hybrid_forward(self, F, x):
        return self.block(x)


class HeadedSegModel(SegBaseModel):
    """The layout FCN, PSPNet and DeepLabV3 share: ``head_class`` on stage 4 and, with ``aux``,
    an FCN head on stage 3; both learn ``HEAD_LR_MULT`` times faster than the backbone.

    Returns ``(prediction, aux prediction)``, each ``(N, classes, H, W)`` for an
    ``(N, 3, H, W)`` input of any size; ``aux=False`` returns the prediction alone (in a
    1-tuple). See :class:`~.base.SegBaseModel` for the parameters.
    """

    #: the stage-4 head, called as ``head_class(in_channels, nclass, norm_layer, norm_kwargs)``
    head_class: Callable[..., HybridBlock]

    def __init__(self, classes: str | Sequence[str], backbone: str = "resnet50", aux: bool = True,
                 pretrained_base: bool | str = False, base_size: int = 520, crop_size: int = 480,
                 norm_layer: Callable[..., HybridBlock] = BatchNorm, norm_kwargs: dict | None = None) -> None:
        super().__init__(classes, aux, backbone, pretrained_base, base_size, crop_size, norm_layer, norm_kwargs)
        c3, c4 = self.stage_channels
        with self.name_scope():
            self.head = self.head_class(c4, self.nclass, norm_layer, norm_kwargs)
            self.head.collect_params().setattr("lr_mult", HEAD_LR_MULT)
            if aux:
                self.auxlayer = aux_head(c3, self.nclass, norm_layer, norm_kwargs)


class FCN(HeadedSegModel):
    """FCN: an :class:`FCNHead` on stage 4 (see :class:`HeadedSegModel`)."""

    head_class = FCNHead


def aux_head(in_channels: int, nclass: int, norm_layer: Callable[..., HybridBlock], norm_kwargs: dict | None) -> FCNHead:
    """The auxiliary head on stage 3 of FCN, PSPNet and DeepLab (learning rate x10 like the head)."""
    head = FCNHead(in_channels, nclass, norm_layer, norm_kwargs)
    head.collect_params().setattr("lr_mult", HEAD_LR_MULT)
    return head


@head_argument("classes", count=lambda classes: len(class_names(classes)))
def fcn(backbone: str = "resnet50", classes: str | Sequence[str] = "voc", aux: bool = True,
        pretrained_base: bool | str = False, base_size: int = 520, crop_size: int = 480,
        norm_layer: Callable[..., HybridBlock] = BatchNorm, norm_kwargs: dict | None = None,
        height: int | None = None, width: int | None = None) -> FCN:
    """FCN on a dilated ``backbone`` (``resnet50``, ``resnet101`` ...) for ``classes``.

    ``height`` and ``width`` (GluonCV's fixed output size) are accepted left out only: the outputs
    always have the input's size (:func:`~.base.check_output_size`).

    Examples
    --------
    >>> net = fcn("resnet50", "voc")
    >>> net.nclass, net.aux
    (21, True)
    """
    check_output_size("fcn", height, width)
    return FCN(classes, backbone, aux, pretrained_base, base_size, crop_size, norm_layer, norm_kwargs)
