"""Simple Baselines for pose ("Simple Baselines for Human Pose Estimation and Tracking",
arXiv:1804.06208), with GluonCV 0.10's parameter layout.

A ResNet V1b/V1d without its classifier, three stride-2 deconvolutions (each with batch
norm and relu) and a 1x1 convolution to one heatmap per keypoint: a 256x192 crop gives
64x48 heatmaps.
"""

from __future__ import annotations

from typing import Any

from gluon_hub import head_argument
from gluon_hub.compat import mx

from ...common.blocks import HybridBlock, check_gluoncv_structure, nn

__all__ = ["SimplePoseResNet", "simple_pose", "BACKBONES"]

#: the backbones GluonCV publishes Simple Pose weights for
BACKBONES = ("resnet18_v1b", "resnet50_v1b", "resnet101_v1b", "resnet152_v1b",
             "resnet50_v1d", "resnet101_v1d", "resnet152_v1d")
#: the stem and stages of a ResNet V1b, in order: the layers a heatmap network keeps
RESNET_LAYERS = ("conv1", "bn1", "relu", "maxpool", "layer1", "layer2", "layer3", "layer4")


class SimplePoseResNet(HybridBlock):
    """``resnet`` (backbone layers), ``deconv_layers`` (deconv, norm, relu per level), ``final_layer``.

    Parameters
    ----------
    resnet : the backbone layers, applied in order (stride 32).
    num_joints : heatmaps out, one per keypoint.
    deconv_channels : output channels of each stride-2 deconvolution.
    deconv_kernel : 4 (padding 1), 3 (padding 1, output padding 1) or 2: each doubles the size.
    final_kernel : 1, or 3 (padded) for the heatmap convolution.
    """

    def __init__(self, resnet: Any, num_joints: int = 17, deconv_channels: tuple[int, ...] = (256, 256, 256),
                 deconv_kernel: int = 4, final_kernel: int = 1, deconv_with_bias: bool = False) -> None:
        super().__init__()
        padding, output_padding = {4: (1, 0), 3: (1, 1), 2: (0, 0)}[deconv_kernel]
        small = mx.init.Normal(0.001)  # heatmaps start near zero, as the paper's recipe has them
        with self.name_scope():
            self.resnet = resnet
            self.deconv_layers = nn.HybridSequential(prefix="")
            with self.deconv_layers.name_scope():
                for channels in deconv_channels:
                    self.deconv_layers.add(nn.Conv2DTranspose(
                        channels, deconv_kernel, strides=2, padding=padding, output_padding=output_padding,
                        use_bias=deconv_with_bias, weight_initializer=small, bias_initializer="zeros"))
                    self.deconv_layers.add(nn.BatchNorm())
                    self.deconv_layers.add(nn.Activation("relu"))
            self.final_layer = nn.Conv2D(num_joints, final_kernel, padding=1 if final_kernel == 3 else 0,
                                         weight_initializer=small, bias_initializer="zeros")

    def hybrid_forward(self, F, x):
        return self.final_layer(self.deconv_layers(self.resnet(x)))


@head_argument("num_joints")
def simple_pose(backbone: str = "resnet50_v1b", num_joints: int = 17, pretrained_base: bool | str = False,
                num_deconv_filters: tuple[int, ...] | None = None, num_deconv_layers: int | None = None,
                num_deconv_kernels: tuple[int, ...] | None = None, final_conv_kernel: int | None = None,
                pretrained_ctx: Any = None, **options: Any) -> SimplePoseResNet:
    """Simple Pose on one of GluonCV's ResNets (see :data:`BACKBONES`).

    Parameters
    ----------
    backbone : the classification network whose stem and stages extract features.
    num_joints : keypoints (heatmaps) to predict; 17 for COCO.
    pretrained_base : start the backbone from its ImageNet weights through the hub's cache.
    num_deconv_filters, num_deconv_layers, num_deconv_kernels, final_conv_kernel : GluonCV's
        names of ``deconv_channels`` (its length is the layer count), ``deconv_kernel`` (one
        kernel for every layer here: a list must repeat it) and ``final_kernel``.
    pretrained_ctx : accepted for GluonCV's call pattern and ignored: the hub reads the
        backbone's weights on the CPU; ``gluon_hub.load(..., ctx=)`` places the whole network.
    options : :class:`SimplePoseResNet` arguments (``deconv_channels`` ...).
    """
    from ...common.backbones.features import backbone as classification_network

    if backbone not in BACKBONES:
        raise ValueError(f"unknown Simple Pose backbone {backbone!r}; known: {', '.join(BACKBONES)}")
    if num_deconv_filters is not None:
        options["deconv_channels"] = tuple(num_deconv_filters)
    channels = options.get("deconv_channels", (256, 256, 256))
    check_gluoncv_structure(backbone, {"num_deconv_layers": num_deconv_layers}, {"num_deconv_layers": len(channels)})
    if num_deconv_kernels is not None:
        kernels = set(num_deconv_kernels)
        if len(kernels) != 1 or len(num_deconv_kernels) != len(channels):
            raise ValueError(f"num_deconv_kernels={num_deconv_kernels!r}: the hub's Simple Pose uses one kernel "
                             f"for all {len(channels)} deconvolutions; pass that kernel {len(channels)} times")
        options["deconv_kernel"] = kernels.pop()
    if final_conv_kernel is not None:
        options["final_kernel"] = final_conv_kernel
    base = classification_network(backbone, pretrained_base)
    resnet = nn.HybridSequential()
    for layer in RESNET_LAYERS:
        resnet.add(getattr(base, layer))
    return SimplePoseResNet(resnet, num_joints, **options)
