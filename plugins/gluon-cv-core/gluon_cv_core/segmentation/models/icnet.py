"""ICNet, the Image Cascade Network (Zhao et al., ECCV 2018), with the parameter structure of
GluonCV 0.10's ``icnet_resnet50_citys`` / ``icnet_resnet50_mhpv1``.

Three branches share the work: the full image through three cheap stride-2 convolutions
(1/8), the half-size image through the dilated backbone's stem and first two stages (1/16),
and those stage-2 features halved again through stages 3-4 and pyramid pooling (1/32).
Cascade feature fusion adds each coarser branch, upsampled and dilated-convolved, to the
next finer one, with a classifier on each coarse input for the cascade's auxiliary losses.

GluonCV resizes to fixed fractions of the construction size (``height // 2``, ``// 32``,
``// 4``); here those fractions are taken of the running input's size (the same integer
sizes), and every other resize takes its size from the tensor it must meet, so the network
equals GluonCV's wherever GluonCV's runs and runs at any size.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from gluon_hub import head_argument

from ...common.blocks import BatchNorm, HybridBlock, check_gluoncv_structure, make_norm, nn
from .base import SegBaseModel, check_output_size, class_names, resize_like
from .fcn import HEAD_LR_MULT
from .pspnet import PyramidPooling


def _resize_to_fraction(F: Any, x: Any, image: Any, fraction: float) -> Any:
    """``x`` resized to ``floor(fraction * image size)``: the size of ``image`` scaled by
    ``fraction``, which MXNet rounds down like GluonCV's ``height // n``."""
    like = F.contrib.BilinearResize2D(image, scale_height=fraction, scale_width=fraction)
    return resize_like(F, x, like)


class ConvBnRelu(HybridBlock):
    """Conv (no bias), norm, ReLU as attributes ``conv``, ``bn``, ``relu``."""

    def __init__(self, channels: int, kernel: int, strides: int = 1, padding: int = 0,
                 norm_layer: Callable[..., HybridBlock] = BatchNorm, norm_kwargs: dict | None = None) -> None:
        super().__init__()
        with self.name_scope():
            self.conv = nn.Conv2D(channels, kernel, strides, padding, use_bias=False)
            self.bn = make_norm(norm_layer, norm_kwargs)
            self.relu = nn.Activation("relu")

    def hybrid_forward(self, F, x):
        return self.relu(self.bn(self.conv(x)))


class _PyramidHead(HybridBlock):
    """PSPNet's head without its classifier: pyramid pooling, 3x3 conv to 512, norm, ReLU, dropout."""

    def __init__(self, in_channels: int, norm_layer: Callable[..., HybridBlock], norm_kwargs: dict | None) -> None:
        super().__init__()
        with self.name_scope():
            self.psp = PyramidPooling(in_channels, norm_layer, norm_kwargs)
            self.block = nn.HybridSequential(prefix="")
            self.block.add(nn.Conv2D(512, 3, padding=1, use_bias=False), make_norm(norm_layer, norm_kwargs),
                           nn.Activation("relu"), nn.Dropout(0.1))

    def hybrid_forward(self, F, x):
        return self.block(self.psp(x))


class CascadeFeatureFusion(HybridBlock):
    """``relu(conv_low(up(low)) + conv_hign(high))`` and a classifier on ``conv_low(up(low))``;
    the coarse input is upsampled to the fine one's size and dilated by 2."""

    def __init__(self, channels: int, num_classes: int, norm_layer: Callable[..., HybridBlock],
                 norm_kwargs: dict | None) -> None:
        super().__init__()
        with self.name_scope():
            self.conv_low = nn.HybridSequential()
            with self.conv_low.name_scope():
                self.conv_low.add(nn.Conv2D(channels, 3, padding=2, dilation=2, use_bias=False),
                                  make_norm(norm_layer, norm_kwargs))
            # "hign": GluonCV's spelling, part of the published parameter names
            self.conv_hign = nn.HybridSequential()
            with self.conv_hign.name_scope():
                self.conv_hign.add(nn.Conv2D(channels, 1, use_bias=False), make_norm(norm_layer, norm_kwargs))
            self.conv_low_cls = nn.Conv2D(num_classes, 1, use_bias=False)

    def hybrid_forward(self, F, low, high):
        low = self.conv_low(resize_like(F, low, high))
        return F.relu(low + self.conv_hign(high)), self.conv_low_cls(low)


class _ICHead(HybridBlock):
    """Fuses 1/32 into 1/16 and that into 1/8, classifies at 1/4 and upsamples to the input."""

    def __init__(self, num_classes: int, norm_layer: Callable[..., HybridBlock], norm_kwargs: dict | None) -> None:
        super().__init__()
        with self.name_scope():
            self.cff_12 = CascadeFeatureFusion(128, num_classes, norm_layer, norm_kwargs)
            self.cff_24 = CascadeFeatureFusion(128, num_classes, norm_layer, norm_kwargs)
            self.conv_cls = nn.Conv2D(num_classes, 1, use_bias=False)

    def hybrid_forward(self, F, image, sub1, sub2, sub4):
        fused_24, scores_24 = self.cff_24(sub4, sub2)
        fused_12, scores_12 = self.cff_12(fused_24, sub1)
        scores_4 = self.conv_cls(_resize_to_fraction(F, fused_12, image, 0.25))
        return resize_like(F, scores_4, image), scores_4, scores_12, scores_24


class ICNet(SegBaseModel):
    """ICNet; returns ``(scores, scores at 1/4, at 1/8, at 1/16)``: the first at the input's
    size is the prediction, all four feed GluonCV's ICNet loss.

    Parameters are :class:`~.base.SegBaseModel`'s but ``aux`` (false: the cascade's outputs
    are always returned), and ``lr_mult``: the learning-rate multiplier of every layer outside
    the backbone (GluonCV's 10).
    """

    def __init__(self, classes: str | Sequence[str] = "citys", backbone: str = "resnet50",
                 pretrained_base: bool | str = False, base_size: int = 520, crop_size: int = 480,
                 norm_layer: Callable[..., HybridBlock] = BatchNorm, norm_kwargs: dict | None = None,
                 lr_mult: float = HEAD_LR_MULT) -> None:
        super().__init__(classes, False, backbone, pretrained_base, base_size, crop_size, norm_layer, norm_kwargs)
        norm = {"norm_layer": norm_layer, "norm_kwargs": norm_kwargs}
        with self.name_scope():
            self.conv_sub1 = nn.HybridSequential()
            with self.conv_sub1.name_scope():
                self.conv_sub1.add(ConvBnRelu(32, 3, 2, 1, **norm), ConvBnRelu(32, 3, 2, 1, **norm),
                                   ConvBnRelu(64, 3, 2, 1, **norm))
            self.psp_head = _PyramidHead(self.stage_channels[1], norm_layer, norm_kwargs)
            self.head = _ICHead(self.nclass, norm_layer, norm_kwargs)
            self.conv_sub4 = ConvBnRelu(256, 1, **norm)
            self.conv_sub2 = ConvBnRelu(256, 1, **norm)
        for block in (self.conv_sub1, self.psp_head, self.head, self.conv_sub4, self.conv_sub2):
            block.collect_params().setattr("lr_mult", lr_mult)

    def hybrid_forward(self, F, x):
        sub1 = self.conv_sub1(x)
        half = F.contrib.BilinearResize2D(x, scale_height=0.5, scale_width=0.5)
        sub2 = self.layer2(self.layer1(self.maxpool(self.relu(self.bn1(self.conv1(half))))))
        quarter = _resize_to_fraction(F, sub2, x, 1 / 32)
        sub4 = self.psp_head(self.layer4(self.layer3(quarter)))
        return self.head(x, sub1, self.conv_sub2(sub2), self.conv_sub4(sub4))


@head_argument("classes", count=lambda classes: len(class_names(classes)))
def icnet(backbone: str = "resnet50", classes: str | Sequence[str] = "citys", pretrained_base: bool | str = False,
          base_size: int = 520, crop_size: int = 480, norm_layer: Callable[..., HybridBlock] = BatchNorm,
          norm_kwargs: dict | None = None, lr_mult: float = HEAD_LR_MULT,
          height: int | None = None, width: int | None = None, aux: bool | None = None) -> ICNet:
    """ICNet on a dilated ``backbone`` (GluonCV's ``resnet50``) for ``classes``
    (``"citys"``, ``"mhpv1"`` ... or a list of names).

    ``height`` and ``width`` (GluonCV's fixed output size) are accepted left out only: the outputs
    always have the input's size (:func:`~.base.check_output_size`).
    ``aux`` is GluonCV's keyword, accepted as False only: the cascade's outputs are always returned.

    Examples
    --------
    >>> net = icnet("resnet50", "mhpv1")
    >>> net.nclass
    19
    """
    check_output_size("icnet", height, width)
    check_gluoncv_structure("icnet", {"aux": aux}, {"aux": False})
    return ICNet(classes, backbone, pretrained_base, base_size, crop_size, norm_layer, norm_kwargs, lr_mult)


__all__ = ["CascadeFeatureFusion", "ConvBnRelu", "ICNet", "icnet"]
