"""What every dilated-backbone segmentation model shares: the backbone by name, its stride-8
features, and the upsampling of predictions to the input's size.

GluonCV's segmentation models take the stem and four stages of a classification network
built with ``dilated=True`` (stages 3 and 4 keep stride 8 and dilate instead), as attributes
``conv1, bn1, relu, maxpool, layer1 .. layer4`` of the model itself: the published files
name the backbone's parameters ``conv1.0.weight``, ``layer3.5.bn2.gamma`` and so on. The
backbone is the plugin's own classification network, reused as it is, and
``pretrained_base`` weights come from the hub's cache like any classification model.

GluonCV resizes predictions to a size fixed at construction (``crop_size``, or
``height``/``width``), so its networks run only at that size; here every resize takes its
size from a tensor of the running graph (``mode="like"``), with the same bilinear kernel and
corner alignment, so one model, hybridized or not, runs at any input size and equals
GluonCV's whenever GluonCV's is built for that size.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from ...common.blocks import BatchNorm, HybridBlock, check_choice
from ..classes import BY_DATASET

__all__ = ["BACKBONES", "SegBaseModel", "check_output_size", "class_names", "dilated_backbone", "resize_like"]

#: GluonCV's segmentation backbone names -> the plugin's classification model built dilated
BACKBONES: dict[str, str] = {
    "resnet18": "resnet18_v1b", "resnet34": "resnet34_v1b",
    "resnet50": "resnet50_v1s", "resnet101": "resnet101_v1s", "resnet152": "resnet152_v1s",
    "resnest50": "resnest50", "resnest101": "resnest101", "resnest200": "resnest200", "resnest269": "resnest269",
}
#: the parts of the classification network a segmentation model keeps (not its pool and classifier)
_STEM_AND_STAGES = ("conv1", "bn1", "relu", "maxpool", "layer1", "layer2", "layer3", "layer4")
#: multiplier of the stage widths 64/128/256/512: basic blocks 1, bottlenecks 4
_EXPANSION = {"resnet18": 1, "resnet34": 1}


def dilated_backbone(name: str, pretrained_base: bool | str = False, **kwargs: Any) -> HybridBlock:
    """The classification network ``name`` (a key of :data:`BACKBONES`), dilated to output
    stride 8, with its ImageNet weights from the hub's cache when ``pretrained_base``.

    ``kwargs`` go to the network's factory (``norm_layer``, ``norm_kwargs``).
    """
    from ...common.backbones.features import backbone

    check_choice("backbone", name, BACKBONES)
    return backbone(BACKBONES[name], pretrained_base, dilated=True, **kwargs)


def class_names(classes: str | Sequence[str]) -> tuple[str, ...]:
    """Class names from a dataset key of :data:`~.classes.BY_DATASET` or a list of names."""
    names = BY_DATASET.get(classes) if isinstance(classes, str) else tuple(classes)
    if not names:
        raise ValueError(f"classes must be one of {', '.join(sorted(BY_DATASET))} or a non-empty list "
                         f"of class names, got {classes!r}")
    return names


def check_output_size(model: str, height: int | None, width: int | None) -> None:
    """Refuse GluonCV's ``height``/``width``: they fix the size GluonCV resizes its outputs to
    (``crop_size`` when left out), where the hub's outputs always take the input's size."""
    if height is not None or width is not None:
        raise ValueError(
            f"{model}: height={height!r}, width={width!r} fix the size of GluonCV's outputs; the hub's "
            "outputs always have the input's size. Leave height and width out and resize the input "
            "(or the output) to the size you need")


def resize_like(F: Any, x: Any, like: Any) -> Any:
    """``x`` resized bilinearly to ``like``'s height and width, corners aligned: the kernel
    and alignment of GluonCV's ``BilinearResize2D(x, height, width)``."""
    return F.contrib.BilinearResize2D(x, like, mode="like", align_corners=True)


class SegBaseModel(HybridBlock):
    """A dilated backbone's stem and stages as this block's own layers, for a head to follow.

    Parameters
    ----------
    classes : dataset key (``"voc"``, ``"ade"``, ``"citys"`` ...) or class names; the output
        has one channel per class.
    aux : also predict from stage 3 (GluonCV's auxiliary loss, training only).
    backbone : a key of :data:`BACKBONES`.
    pretrained_base : start the backbone from its ImageNet weights, through the hub's cache
        (GluonCV's default is ``True``; the hub's is ``False`` so that building never
        downloads unasked).
    base_size, crop_size : the training recipe's base and crop sizes (GluonCV's attributes,
        read by multi-scale evaluation); the network itself runs at any size.
    norm_layer, norm_kwargs : normalization of backbone and heads (``SyncBatchNorm`` and its
        ``num_devices`` to train on several devices).
    """

    def __init__(self, classes: str | Sequence[str], aux: bool, backbone: str = "resnet50",
                 pretrained_base: bool | str = False, base_size: int = 520, crop_size: int = 480,
                 norm_layer: Callable[..., HybridBlock] = BatchNorm, norm_kwargs: dict | None = None) -> None:
        super().__init__()
        self.classes = class_names(classes)
        self.nclass = len(self.classes)
        self.aux = aux
        self.base_size = base_size
        self.crop_size = crop_size
        expansion = _EXPANSION.get(backbone, 4)
        #: channels of stage 3 and stage 4's outputs
        self.stage_channels = (256 * expansion, 512 * expansion)
        with self.name_scope():
            net = dilated_backbone(backbone, pretrained_base, norm_layer=norm_layer, norm_kwargs=norm_kwargs)
            for name in _STEM_AND_STAGES:
                setattr(self, name, getattr(net, name))

    def base_forward(self, x: Any) -> tuple[Any, Any]:
        """The outputs of stage 3 and stage 4, both at stride 8."""
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        c3 = self.layer3(self.layer2(self.layer1(x)))
        return c3, self.layer4(c3)

    def hybrid_forward(self, F, x):
        """``self.head`` on stage 4 and, with ``aux``, ``self.auxlayer`` on stage 3, each
        upsampled to the input's size: the forward of FCN, PSPNet and DeepLab."""
        c3, c4 = self.base_forward(x)
        outputs = [resize_like(F, self.head(c4), x)]
        if self.aux:
            outputs.append(resize_like(F, self.auxlayer(c3), x))
        return tuple(outputs)

    def evaluate(self, x: Any) -> Any:
        """The main prediction alone (what evaluation scores), at ``x``'s size."""
        return self(x)[0]
