"""Mobile Pose: GluonCV 0.10's fast heatmap networks, with its parameter layout.

A light classification network without its head, a 1x1 convolution to 256 channels, three
:class:`~.layers.DUC` pixel-shuffle upsamplings (512, 256, 128 channels before each
shuffle) and a 1x1 convolution to one heatmap per keypoint: a 256x192 crop gives 64x48
heatmaps.
"""

from __future__ import annotations

from typing import Any

from gluon_hub import head_argument
from gluon_hub.compat import mx

from ...common.blocks import HybridBlock, check_gluoncv_structure, nn
from .layers import DUC
from .simple_pose import RESNET_LAYERS

__all__ = ["MobilePose", "mobile_pose", "BACKBONES"]

#: backbone -> how many trailing ``features`` layers to drop (its pooling and classifier
#: part); ``None`` keeps a ResNet's stem and stages instead
BACKBONES: dict[str, int | None] = {
    "resnet18_v1b": None,
    "resnet50_v1b": None,
    "mobilenet1.0": 2,  # global pool, flatten
    "mobilenetv2_1.0": 1,  # global pool
    "mobilenetv3_large": 4,  # global pool, 1x1 conv, activation, dropout
    "mobilenetv3_small": 4,
}


class MobilePose(HybridBlock):
    """``features`` (the backbone, stride 32) then ``upsampling`` (to stride 4 and heatmaps)."""

    def __init__(self, features: Any, num_joints: int = 17) -> None:
        super().__init__()
        with self.name_scope():
            self.features = features
            self.upsampling = nn.HybridSequential()
            self.upsampling.add(
                nn.Conv2D(256, 1, use_bias=False),
                DUC(512, 2),
                DUC(256, 2),
                DUC(128, 2),
                nn.Conv2D(num_joints, 1, use_bias=False, weight_initializer=mx.init.Normal(0.001)),
            )

    def hybrid_forward(self, F, x):
        return self.upsampling(self.features(x))


@head_argument("num_joints")
def mobile_pose(backbone: str = "mobilenet1.0", num_joints: int = 17,
                pretrained_base: bool | str = False, base_attrs: Any = None, pretrained_ctx: Any = None) -> MobilePose:
    """Mobile Pose on one of GluonCV's backbones (see :data:`BACKBONES`).

    Parameters
    ----------
    backbone : the classification network whose features are upsampled.
    num_joints : keypoints (heatmaps) to predict; 17 for COCO.
    pretrained_base : start the backbone from its ImageNet weights through the hub's cache.
    base_attrs : GluonCV's keyword, accepted with the backbone's own layers (``("features",)``,
        or the ResNet's stem and stages); others raise ValueError.
    pretrained_ctx : accepted for GluonCV's call pattern and ignored: the hub reads the
        backbone's weights on the CPU; ``gluon_hub.load(..., ctx=)`` places the whole network.
    """
    from ...common.backbones.features import backbone as classification_network

    if backbone not in BACKBONES:
        raise ValueError(f"unknown Mobile Pose backbone {backbone!r}; known: {', '.join(BACKBONES)}")
    drop = BACKBONES[backbone]
    check_gluoncv_structure(backbone, {"base_attrs": base_attrs},
                            {"base_attrs": RESNET_LAYERS if drop is None else ("features",)})
    base = classification_network(backbone, pretrained_base)
    features = nn.HybridSequential()
    if drop is None:
        for layer in RESNET_LAYERS:
            features.add(getattr(base, layer))
    else:
        features.add(base.features[:-drop])
    return MobilePose(features, num_joints)
