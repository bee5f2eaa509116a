"""DeepLabV3+ on Wide ResNet-38 (GluonCV's ``deeplab_v3b_plus_wideresnet_citys``, the
semantic-segmentation model of Zhu et al.'s "Improving Semantic Segmentation via Video
Propagation and Label Relaxation", CVPR 2019).

An atrous spatial pyramid (rates 12, 24, 36 and image pooling) over the dilated backbone's
1/8 features is upsampled to the 1/2-resolution features of module 2, concatenated with a
48-channel projection of them, and decoded by two 3x3 convolutions.

GluonCV resizes to sizes fixed at construction, so its network runs only at multiples of 8;
here each resize takes its size from the tensor it must meet (:func:`.base.resize_like`),
which equals GluonCV's at those sizes and runs at any other.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from gluon_hub import head_argument
from gluon_hub.compat import mx

from ...common.blocks import add_conv_norm, check_gluoncv_structure, make_norm
from .base import check_output_size, class_names, resize_like
from .wideresnet import wider_resnet38_modules

nn = mx.gluon.nn
HybridBlock = mx.gluon.HybridBlock


class _ImagePooling(HybridBlock):
    """Global average pool, 1x1 conv, norm, ReLU, resized to the feature map's size."""

    def __init__(self, channels: int, norm: dict[str, Any]) -> None:
        super().__init__()
        with self.name_scope():
            self.gap = nn.HybridSequential()
        with self.gap.name_scope():
            self.gap.add(nn.GlobalAvgPool2D())
            add_conv_norm(self.gap, channels, 1, **norm)

    def hybrid_forward(self, F, x):
        return resize_like(F, self.gap(x), x)


class _ASPP(HybridBlock):
    """A 1x1 branch, three dilated 3x3 branches and image pooling (256 channels each),
    concatenated (pooling first) and projected to 256 channels by a bare 1x1 conv."""

    def __init__(self, rates: Sequence[int], norm: dict[str, Any]) -> None:
        super().__init__()
        with self.name_scope():
            self.b0 = add_conv_norm(nn.HybridSequential(), 256, 1, **norm)
            for k, rate in enumerate(rates, start=1):
                branch = nn.HybridSequential()
                with branch.name_scope():
                    branch.add(nn.Conv2D(256, 3, padding=rate, dilation=rate, use_bias=False), make_norm(**norm),
                               nn.Activation("relu"))
                setattr(self, f"b{k}", branch)
            self.b4 = _ImagePooling(256, norm)
            self.project = nn.HybridSequential(prefix="bot_aspp_")
            self.project.add(nn.Conv2D(256, 1, use_bias=False))

    def hybrid_forward(self, F, x):
        return self.project(F.concat(self.b4(x), self.b0(x), self.b1(x), self.b2(x), self.b3(x), dim=1))


class _Decoder(HybridBlock):
    """ASPP at 1/8, upsampled to the 1/2 features, fused by two 3x3 convs, 1x1 to the classes."""

    def __init__(self, num_classes: int, norm: dict[str, Any]) -> None:
        super().__init__()
        with self.name_scope():
            self.aspp = _ASPP((12, 24, 36), norm)
            self.c1_block = nn.HybridSequential(prefix="bot_fine_")
            self.c1_block.add(nn.Conv2D(48, 1, use_bias=False))
            self.block = nn.HybridSequential(prefix="final_")
            add_conv_norm(self.block, 256, 3, 1, 1, **norm)
            add_conv_norm(self.block, 256, 3, 1, 1, **norm)
            self.block.add(nn.Conv2D(num_classes, 1, use_bias=False))

    def hybrid_forward(self, F, x, fine):
        coarse = resize_like(F, self.aspp(x), fine)
        return self.block(F.concat(self.c1_block(fine), coarse, dim=1))


class DeepLabV3PlusWRN(HybridBlock):
    """DeepLabV3+ on a dilated Wide ResNet-38; returns ``(scores,)``, ``(batch, classes, height, width)``.

    Parameters
    ----------
    classes : dataset key (``"citys"`` ...) or class names; one output channel per class.
    base_size, crop_size : the training recipe's sizes (GluonCV's attributes, read by
        multi-scale evaluation); the network itself runs at any size.
    norm_layer, norm_kwargs : normalization of backbone and head (``SyncBatchNorm`` with
        ``num_devices`` to synchronise).
    """

    def __init__(self, classes: str | Sequence[str] = "citys", base_size: int = 520, crop_size: int = 480,
                 norm_layer: Callable[..., HybridBlock] = nn.BatchNorm, norm_kwargs: dict | None = None) -> None:
        super().__init__()
        self.classes = class_names(classes)
        self.nclass = len(self.classes)
        self.aux = False
        self.base_size, self.crop_size = base_size, crop_size
        norm = {"norm_layer": norm_layer, "norm_kwargs": norm_kwargs}
        with self.name_scope():
            modules = wider_resnet38_modules(norm_layer, norm_kwargs)
            for name, block in modules:
                setattr(self, name, block)
            self.head = _Decoder(self.nclass, norm)
        self._order = tuple(name for name, _ in modules)

    def hybrid_forward(self, F, x):
        features, fine = x, None
        for name in self._order:
            features = self._children[name](features)
            if name == "mod2":  # the 1/2-resolution features the decoder refines with
                fine = features
        return (resize_like(F, self.head(features, fine), x),)

    def evaluate(self, x: Any) -> Any:
        """The prediction alone (what evaluation scores), at ``x``'s size."""
        return self(x)[0]


@head_argument("classes", count=lambda classes: len(class_names(classes)))
def deeplab_v3b_plus(backbone: str = "wideresnet", classes: str | Sequence[str] = "citys",
                     pretrained_base: bool | str = False, base_size: int = 520, crop_size: int = 480,
                     norm_layer: Callable[..., HybridBlock] = nn.BatchNorm,
                     norm_kwargs: dict | None = None,
                     height: int | None = None, width: int | None = None, aux: bool | None = None,
                     dilated: bool | None = None) -> DeepLabV3PlusWRN:
    """DeepLabV3+ on Wide ResNet-38 as GluonCV builds it (``deeplab_v3b_plus_wideresnet_citys``)
    for ``classes`` (``"citys"`` ... or a list of names).

    ``backbone`` must be ``"wideresnet"`` (WRN-38), the only one GluonCV builds this model on;
    ``pretrained_base`` must be false: no ImageNet weights of WRN-38 were published with GluonCV
    (which ignores the option and starts the backbone from random values); ``pretrained=True``
    gives the Cityscapes weights of the whole model.

    ``height`` and ``width`` (GluonCV's fixed output size) are accepted left out only: the outputs
    always have the input's size (:func:`~.base.check_output_size`).
    ``aux`` and ``dilated`` are GluonCV's keywords, accepted with this network's own values
    (no auxiliary head, a dilated backbone); others raise ValueError.
    """
    check_output_size("deeplab_v3b_plus", height, width)
    check_gluoncv_structure("deeplab_v3b_plus", {"aux": aux, "dilated": dilated}, {"aux": False, "dilated": True})
    if backbone != "wideresnet":
        raise ValueError(f"DeepLabV3+ (v3b) is built on backbone='wideresnet' only, got {backbone!r}")
    if pretrained_base:
        raise ValueError("no ImageNet weights of Wide ResNet-38 are published; leave pretrained_base false "
                         "(use pretrained=True for the Cityscapes weights of the whole model)")
    return DeepLabV3PlusWRN(classes, base_size, crop_size, norm_layer, norm_kwargs)


__all__ = ["DeepLabV3PlusWRN", "deeplab_v3b_plus"]
