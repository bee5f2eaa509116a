"""Double-head Faster R-CNN (Wu et al., arXiv:1904.06493), as GluonCV 0.10 lays it out.

The paper's finding is that classification prefers a fully connected head and box regression
a convolutional one, so each predictor gets its own head on the pooled regions: two dense
layers (``class_features``) for the class scores, two residual bottlenecks then global
average pooling (``newbox_features``) for the box offsets. Everything else (backbone, RPN,
ROIAlign, sampler, decoding and NMS) is :class:`.faster_rcnn.FasterRCNN`'s, so the detector
subclasses it and only replaces :meth:`~.faster_rcnn.FasterRCNN._head_features`. Parameter
names follow GluonCV's (``double_fc_dense0``, ``double_conv0``), so its files load strictly.
"""

from __future__ import annotations

from typing import Any, Sequence

from gluon_hub.compat import mx

from ...common.backbones.features import backbone
from ...common.blocks import BUILT_FROM_NAME, check_gluoncv_structure
from ..classes import BY_DATASET
from .faster_rcnn import _C4, _VOC, FasterRCNN

nn = mx.gluon.nn
HybridBlock = mx.gluon.HybridBlock

#: GluonCV trains the two new heads besides Faster R-CNN's usual layers
_TRAIN = r".*dense|.*rpn|.*down(2|3|4)_conv|.*layers(2|3|4)_conv|.*double_fc|.*double_conv"


class Bottleneck(HybridBlock):
    """A ResNet-v1 bottleneck without normalization (1x1, 3x3, 1x1 convs) with a 1x1
    projection shortcut; the box head's unit."""

    def __init__(self, channels: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        with self.name_scope():
            self.body = nn.HybridSequential(prefix="")
            self.body.add(nn.Conv2D(channels // 4, kernel_size=1), nn.Activation("relu"),
                          nn.Conv2D(channels // 4, kernel_size=3, padding=1, use_bias=False,
                                    in_channels=channels // 4),
                          nn.Activation("relu"), nn.Conv2D(channels, kernel_size=1))
            self.downsample = nn.HybridSequential(prefix="")
            self.downsample.add(nn.Conv2D(channels, kernel_size=1, use_bias=False))

    def hybrid_forward(self, F, x):
        return F.Activation(self.body(x) + self.downsample(x), act_type="relu")


class DoubleHeadRCNN(FasterRCNN):
    """Faster R-CNN whose class and box predictors read separate heads (see the module)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        with self.name_scope():
            self.class_features = nn.HybridSequential(prefix="double_fc_")
            with self.class_features.name_scope():
                for _ in range(2):
                    self.class_features.add(nn.Dense(1024, weight_initializer=mx.init.Normal(0.01)),
                                            nn.Activation("relu"))
            self.newbox_features = nn.HybridSequential(prefix="double_")
            with self.newbox_features.name_scope():
                for _ in range(2):
                    self.newbox_features.add(Bottleneck(1024, prefix=""))

    def _head_features(self, F, top):
        boxes = F.contrib.AdaptiveAvgPooling2D(self.newbox_features(top), output_size=1)
        return self.class_features(top), boxes


def doublehead_rcnn(classes: Sequence[str] | str = "voc", pretrained_base: bool | str = False,
                    features: Any = None, additional_output: bool | None = None,
                    **options: Any) -> DoubleHeadRCNN:
    """GluonCV's ``doublehead_rcnn_resnet50_v1b_voc``: ResNet-50-v1b with frozen BatchNorm,
    ``layer4`` on each 14x14 region, GluonCV's VOC recipe (:data:`.faster_rcnn.CONFIGS`).

    ``pretrained_base`` starts the backbone from its ImageNet weights (through the hub's
    cache); ``options`` override :class:`.faster_rcnn.FasterRCNN` arguments.
    ``features`` (GluonCV's block) is accepted left out only, ``additional_output`` as False only:
    the hub builds the network from its name and returns the detections alone.
    """
    check_gluoncv_structure("doublehead_rcnn", {"features": features, "additional_output": additional_output},
                            {"features": BUILT_FROM_NAME, "additional_output": False})
    names = BY_DATASET.get(classes, classes) if isinstance(classes, str) else tuple(classes)
    if isinstance(names, str) or not names:
        raise ValueError(f"classes must be 'voc', 'coco' or a non-empty list of names, got {classes!r}")
    net = backbone("resnet50_v1b", pretrained_base, use_global_stats=True)
    features, top = nn.HybridSequential(), nn.HybridSequential()
    features.add(*[getattr(net, name) for name in _C4])
    top.add(net.layer4)
    return DoubleHeadRCNN(features, top, names, train_patterns=_TRAIN, **{**_VOC, **options})


__all__ = ["Bottleneck", "DoubleHeadRCNN", "doublehead_rcnn"]
