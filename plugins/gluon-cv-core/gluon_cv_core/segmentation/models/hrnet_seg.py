"""HRNet for semantic segmentation ("Deep High-Resolution Representation Learning for Visual
Recognition", arXiv:1908.07919), with the parameter structure of GluonCV 0.10's
``hrnet_w18_small_v1_s``, ``hrnet_w18_small_v2_s`` and ``hrnet_w48_s`` (Cityscapes, 19 classes).

The classification network's stem and stages (:class:`gluon_cv_core.common.backbones.hrnet.HRNetStages`) keep four
branches at strides 4, 8, 16 and 32; here the modules fuse them bilinearly (each coarser
branch resized to the finer one's size), the three coarser outputs are resized to the finest
and concatenated, and a 1x1 conv, norm, ReLU and a 1x1 classifier score every pixel.

As in GluonCV, the scores stay at stride 4: ``(batch, classes, ceil(H / 4), ceil(W / 4))``
(evaluation and ``predict`` resize them to the image). Every resize takes its size from a
tensor, so the network runs at any input size. GluonCV publishes no weights for these models.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from gluon_hub import head_argument
from gluon_hub.compat import mx

from ...common.backbones.hrnet import HRNetStages
from ...common.blocks import BatchNorm, HybridBlock, make_norm, nn
from .base import class_names

__all__ = ["HRNetSeg", "hrnet_seg"]

#: GluonCV's norm momentum of the stem, transitions and head (its modules keep MXNet's 0.9)
STEM_AND_HEAD_MOMENTUM = 0.99


class HRNetSeg(HRNetStages):
    """HRNet's stages and GluonCV's segmentation head (``last_layer``); returns ``(scores,)``
    at stride 4 (see the module docstring).

    Parameters
    ----------
    config : a key of :data:`gluon_cv_core.common.backbones.hrnet.CONFIGS` (GluonCV's: ``"w18_small_v1"``,
        ``"w18_small_v2"``, ``"w48"``).
    classes : dataset key (``"citys"`` ...) or class names; one output channel per class.
    base_size, crop_size : the training recipe's sizes (read by multi-scale evaluation); the
        network itself runs at any size.
    norm_layer, norm_kwargs : normalization (``SyncBatchNorm`` with ``num_devices`` to
        synchronise) and its arguments; the stem, transitions and head add GluonCV's
        momentum of 0.99 to ``norm_kwargs`` unless it sets one.
    """

    def __init__(self, config: str = "w18_small_v1", classes: str | Sequence[str] = "citys",
                 base_size: int = 2048, crop_size: int = 768,
                 norm_layer: Callable[..., HybridBlock] = BatchNorm, norm_kwargs: dict | None = None) -> None:
        outer = {"momentum": STEM_AND_HEAD_MOMENTUM, **(norm_kwargs or {})}
        super().__init__(config, norm_layer, outer, norm_kwargs, interp="bilinear_like")
        self.classes = class_names(classes)
        self.nclass = len(self.classes)
        self.aux = False
        self.base_size, self.crop_size = base_size, crop_size
        channels = sum(self.branch_widths)
        with self.name_scope():
            self.last_layer = nn.HybridSequential()
            self.last_layer.add(nn.Conv2D(channels, 1, in_channels=channels))
            self.last_layer.add(make_norm(norm_layer, outer))
            self.last_layer.add(nn.Activation("relu"))
            self.last_layer.add(nn.Conv2D(self.nclass, 1, in_channels=channels))

    def hybrid_forward(self, F, x):
        finest, *coarser = self.branches(F, x)
        resized = [F.contrib.BilinearResize2D(y, finest, mode="like", align_corners=False) for y in coarser]
        return (self.last_layer(F.concat(finest, *resized, dim=1)),)

    def evaluate(self, x: Any) -> Any:
        """The scores resized to ``x``'s size (corners aligned, as evaluation resizes them)."""
        return mx.nd.contrib.BilinearResize2D(self(x)[0], x, mode="like")


@head_argument("classes", count=lambda classes: len(class_names(classes)))
def hrnet_seg(config: str = "w18_small_v1", classes: str | Sequence[str] = "citys",
              pretrained_base: bool | str = False, base_size: int = 2048, crop_size: int = 768,
              norm_layer: Callable[..., HybridBlock] = BatchNorm, norm_kwargs: dict | None = None) -> HRNetSeg:
    """HRNet-``config`` for segmentation as GluonCV builds it (``hrnet_<config>_s``).

    ``pretrained_base`` must be false: GluonCV builds its segmentation HRNets without
    ImageNet backbone weights (and publishes no weights for them).

    Examples
    --------
    >>> net = hrnet_seg("w18_small_v1")
    >>> net.nclass, net.branch_widths
    (19, (16, 32, 64, 128))
    """
    if pretrained_base:
        raise ValueError(f"hrnet_{config}_s is built without a pretrained backbone, as GluonCV builds it; "
                         "leave pretrained_base false")
    return HRNetSeg(config, classes, base_size, crop_size, norm_layer, norm_kwargs)
