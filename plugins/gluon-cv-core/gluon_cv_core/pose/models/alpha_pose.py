"""AlphaPose's single-person network ("RMPE: Regional Multi-person Pose Estimation",
arXiv:1612.00137), as GluonCV 0.10 publishes it for COCO, with its parameter layout.

A ResNet V1b whose first block of every stage carries squeeze-and-excitation (``preact``),
a pixel shuffle, two :class:`~.layers.DUC` upsamplings and a 3x3 convolution to one
heatmap per keypoint: a 320x256 crop gives 80x64 heatmaps.
"""

from __future__ import annotations

from typing import Any, Callable

from gluon_hub import head_argument
from gluon_hub.compat import mx

from ...common.backbones.resnetv1b import BottleneckV1b
from ...common.blocks import BatchNorm, HybridBlock, check_choice, make_norm, nn, projection
from .layers import DUC

__all__ = ["SEResNetV1b", "AlphaPose", "alpha_pose"]

_LAYERS = {50: (3, 4, 6, 3), 101: (3, 4, 23, 3)}


class _SqueezeExcite(HybridBlock):
    """Channel gates from globally pooled features: ``fc`` is dense (relu), dense (sigmoid)."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        with self.name_scope():
            self.fc = nn.HybridSequential()
            self.fc.add(nn.Dense(channels), nn.Activation("relu"), nn.Dense(channels, activation="sigmoid"))

    def hybrid_forward(self, F, x):
        # the pooling operator GluonCV's files were trained with (a mean sums in another order)
        gates = self.fc(F.contrib.AdaptiveAvgPooling2D(x, output_size=1))
        return F.broadcast_mul(x, F.expand_dims(F.expand_dims(gates, -1), -1))


class _SEBottleneck(BottleneckV1b):
    """A V1b bottleneck whose residual branch is gated by ``se`` before the sum, when given."""

    def __init__(self, planes: int, strides: int, downsample: Any, norm_layer: Callable[..., HybridBlock],
                 norm_kwargs: dict | None, squeeze_excite: bool) -> None:
        super().__init__(planes, strides, downsample, norm_layer, norm_kwargs, last_gamma=False)
        self.se = _SqueezeExcite(planes * self.expansion) if squeeze_excite else None

    def hybrid_forward(self, F, x):
        out = self.relu1(self.bn1(self.conv1(x)))
        out = self.relu2(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        if self.se is not None:
            out = self.se(out)
        residual = self.downsample(x) if self.downsample is not None else x
        return self.relu3(out + residual)


class SEResNetV1b(HybridBlock):
    """Stem (``conv1, bn1, relu, maxpool``) and ``layer1`` to ``layer4`` of bottlenecks, the
    first of each stage (the one with a projection shortcut) with squeeze-and-excitation."""

    def __init__(self, num_layers: int = 101, norm_layer: Callable[..., HybridBlock] = BatchNorm,
                 norm_kwargs: dict | None = None) -> None:
        super().__init__()
        check_choice("num_layers", num_layers, _LAYERS)
        with self.name_scope():
            self.conv1 = nn.Conv2D(64, 7, 2, 3, use_bias=False, in_channels=3)
            self.bn1 = make_norm(norm_layer, norm_kwargs)
            self.relu = nn.Activation("relu")
            self.maxpool = nn.MaxPool2D(pool_size=3, strides=2, padding=1)
            in_channels = 64
            for i, (planes, blocks) in enumerate(zip((64, 128, 256, 512), _LAYERS[num_layers]), 1):
                strides = 1 if i == 1 else 2
                out_channels = planes * BottleneckV1b.expansion
                stage = nn.HybridSequential()
                shortcut = projection(out_channels, strides, False, norm_layer, norm_kwargs, in_channels)
                stage.add(_SEBottleneck(planes, strides, shortcut, norm_layer, norm_kwargs, True))
                for _ in range(blocks - 1):
                    stage.add(_SEBottleneck(planes, 1, None, norm_layer, norm_kwargs, False))
                setattr(self, f"layer{i}", stage)
                in_channels = out_channels

    def hybrid_forward(self, F, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        return self.layer4(self.layer3(self.layer2(self.layer1(x))))


class AlphaPose(HybridBlock):
    """``preact`` (stride 32, 2048 channels), ``shuffle1`` (to 512 channels at stride 16),
    ``duc1`` and ``duc2`` (to 128 channels at stride 4), ``conv_out`` (heatmaps)."""

    def __init__(self, preact: Any, num_joints: int = 17, norm_layer: Callable[..., HybridBlock] = BatchNorm,
                 norm_kwargs: dict | None = None) -> None:
        super().__init__()
        options = {"norm_layer": norm_layer, "norm_kwargs": norm_kwargs}
        with self.name_scope():
            self.preact = preact
            self.shuffle1 = mx.gluon.contrib.nn.PixelShuffle2D(2)
            self.duc1 = DUC(1024, 2, in_channels=512, **options)
            self.duc2 = DUC(512, 2, in_channels=256, **options)
            self.conv_out = nn.Conv2D(num_joints, 3, padding=1, in_channels=128)

    def hybrid_forward(self, F, x):
        return self.conv_out(self.duc2(self.duc1(self.shuffle1(self.preact(x)))))


@head_argument("num_joints")
def alpha_pose(num_layers: int = 101, num_joints: int = 17, norm_layer: Callable[..., HybridBlock] = BatchNorm,
               norm_kwargs: dict | None = None, pretrained_base: bool | str = False) -> AlphaPose:
    """AlphaPose on an SE-ResNet-``num_layers`` V1b (GluonCV publishes 101 for COCO).

    Parameters
    ----------
    num_layers : 50 or 101.
    num_joints : keypoints (heatmaps) to predict; 17 for COCO.
    norm_layer, norm_kwargs : normalization everywhere (``SyncBatchNorm`` for multi-device training).
    pretrained_base : accepted for GluonCV's call pattern and ignored: GluonCV's downloads the
        ImageNet SE-ResNet but loads it into that network itself, never into AlphaPose's, so its
        AlphaPose starts at random either way, as here.
    """
    options = {"norm_layer": norm_layer, "norm_kwargs": norm_kwargs}
    return AlphaPose(SEResNetV1b(num_layers, **options), num_joints, **options)
