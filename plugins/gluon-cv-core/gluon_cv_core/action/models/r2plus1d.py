"""R(2+1)D ("A Closer Look at Spatiotemporal Convolutions for Action Recognition",
arXiv:1711.11248), with GluonCV 0.10's parameter layout.

A ResNet whose every 3x3x3 convolution is factorised into a spatial 1x3x3 convolution to
``midplanes`` channels (chosen so the pair has about the parameters of the full 3D kernel),
batch norm, relu and a temporal 3x1x1 convolution. Stages 2-4 halve frames, height and width:
a 16x112x112 clip (GluonCV's input) ends as 2x7x7 before global pooling.
"""

from __future__ import annotations

from typing import Any, Callable

from gluon_hub import head_argument
from gluon_hub.compat import mx

from ...common.blocks import HybridBlock, make_norm, nn
from ...common.norm import BatchNorm3D
from .layers3d import check_clips

__all__ = ["R2Plus1D", "BasicBlock", "Bottleneck", "Conv2Plus1D", "r2plus1d", "DEPTHS"]


def _conv3d(channels: int, kernel: Any, strides: Any = 1, padding: Any = 0, **options: Any) -> Any:
    """A bias-free 3D convolution, He-initialised as GluonCV initialises its video networks."""
    return nn.Conv3D(channels, kernel, strides, padding, use_bias=False,
                     weight_initializer=mx.init.MSRAPrelu(), **options)


def _midplanes(inplanes: int, planes: int) -> int:
    """Channels between the spatial and the temporal convolution: a (2+1)D pair then has
    about the parameters of a full 3x3x3 convolution from ``inplanes`` to ``planes``."""
    return (inplanes * planes * 27) // (inplanes * 9 + 3 * planes)


class Conv2Plus1D(HybridBlock):
    """``conv1`` (1x3x3, spatial stride), ``bn1``, relu, ``conv2`` (3x1x1, temporal stride)."""

    def __init__(self, inplanes: int, planes: int, midplanes: int, stride: int = 1,
                 norm_layer: Callable[..., HybridBlock] = BatchNorm3D, norm_kwargs: dict | None = None) -> None:
        super().__init__()
        with self.name_scope():
            self.conv1 = _conv3d(midplanes, (1, 3, 3), (1, stride, stride), (0, 1, 1), in_channels=inplanes)
            self.bn1 = make_norm(norm_layer, norm_kwargs, in_channels=midplanes)
            self.relu = nn.Activation("relu")
            self.conv2 = _conv3d(planes, (3, 1, 1), (stride, 1, 1), (1, 0, 0), in_channels=midplanes)

    def hybrid_forward(self, F, x):
        return self.conv2(self.relu(self.bn1(self.conv1(x))))


class BasicBlock(HybridBlock):
    """Two (2+1)D convolutions with batch norm and a residual connection (ResNet-18/34)."""

    expansion = 1

    def __init__(self, inplanes: int, planes: int, stride: int = 1, downsample: HybridBlock | None = None,
                 norm_layer: Callable[..., HybridBlock] = BatchNorm3D, norm_kwargs: dict | None = None) -> None:
        super().__init__()
        self.downsample = downsample
        # both (2+1)D pairs use the first one's middle width, as the published weights do
        midplanes = _midplanes(inplanes, planes)
        with self.name_scope():
            self.conv1 = Conv2Plus1D(inplanes, planes, midplanes, stride, norm_layer, norm_kwargs)
            self.bn1 = make_norm(norm_layer, norm_kwargs, in_channels=planes)
            self.relu = nn.Activation("relu")
            self.conv2 = Conv2Plus1D(planes, planes, midplanes, 1, norm_layer, norm_kwargs)
            self.bn2 = make_norm(norm_layer, norm_kwargs, in_channels=planes)

    def hybrid_forward(self, F, x):
        out = self.bn2(self.conv2(self.relu(self.bn1(self.conv1(x)))))
        identity = x if self.downsample is None else self.downsample(x)
        return F.Activation(out + identity, act_type="relu")


class Bottleneck(HybridBlock):
    """1x1x1 reduction, a (2+1)D convolution, 1x1x1 expansion (x4) and a residual (ResNet-50+)."""

    expansion = 4

    def __init__(self, inplanes: int, planes: int, stride: int = 1, downsample: HybridBlock | None = None,
                 norm_layer: Callable[..., HybridBlock] = BatchNorm3D, norm_kwargs: dict | None = None) -> None:
        super().__init__()
        self.downsample = downsample
        midplanes = _midplanes(inplanes, planes)
        with self.name_scope():
            self.conv1 = _conv3d(planes, 1, in_channels=inplanes)
            self.bn1 = make_norm(norm_layer, norm_kwargs, in_channels=planes)
            self.relu = nn.Activation("relu")
            self.conv2 = Conv2Plus1D(planes, planes, midplanes, stride, norm_layer, norm_kwargs)
            self.bn2 = make_norm(norm_layer, norm_kwargs, in_channels=planes)
            self.conv3 = _conv3d(planes * self.expansion, 1, in_channels=planes)
            self.bn3 = make_norm(norm_layer, norm_kwargs, in_channels=planes * self.expansion)

    def hybrid_forward(self, F, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        identity = x if self.downsample is None else self.downsample(x)
        return F.Activation(out + identity, act_type="relu")


#: depth -> (block, blocks per stage), the ResNets GluonCV builds R(2+1)D on
DEPTHS: dict[int, tuple[type, tuple[int, int, int, int]]] = {
    18: (BasicBlock, (2, 2, 2, 2)),
    34: (BasicBlock, (3, 4, 6, 3)),
    50: (Bottleneck, (3, 4, 6, 3)),
    101: (Bottleneck, (3, 4, 23, 3)),
    152: (Bottleneck, (3, 8, 36, 3)),
}


class R2Plus1D(HybridBlock):
    """(2+1)D stem (``conv1`` 1x7x7 to 45 channels, ``conv2`` 3x1x1 to 64), ``layer1``-``layer4``,
    global average pooling, the mean over a sample's ``num_segments x num_crop`` clips, ``fc``.

    Input ``(batch x num_segments x num_crop, 3, frames, height, width)``; scores
    ``(batch, nclass)``, or the pooled ``feat_dim`` features when ``feat_ext``.
    """

    def __init__(self, nclass: int, block: type, layers: tuple[int, ...], dropout_ratio: float = 0.5,
                 num_segments: int = 1, num_crop: int = 1, feat_ext: bool = False, init_std: float = 0.001,
                 norm_layer: Callable[..., HybridBlock] = BatchNorm3D, norm_kwargs: dict | None = None,
                 partial_bn: bool = False) -> None:
        super().__init__()
        self.num_segments = num_segments
        self.num_crop = num_crop
        self.feat_ext = feat_ext
        self.feat_dim = 512 * block.expansion
        inplanes = 64
        with self.name_scope():
            self.conv1 = _conv3d(45, (1, 7, 7), (1, 2, 2), (0, 3, 3), in_channels=3)
            self.bn1 = make_norm(norm_layer, norm_kwargs, in_channels=45)
            self.relu = nn.Activation("relu")
            self.conv2 = _conv3d(64, (3, 1, 1), 1, (1, 0, 0), in_channels=45)
            self.bn2 = make_norm(norm_layer, norm_kwargs, in_channels=64)
            if partial_bn:  # every norm after the stem's two keeps its running statistics
                norm_kwargs = {**(norm_kwargs or {}), "use_global_stats": True}
            for index, (planes, count) in enumerate(zip((64, 128, 256, 512), layers)):
                stride = 1 if index == 0 else 2
                name = f"layer{index + 1}"
                downsample = None
                if stride != 1 or inplanes != planes * block.expansion:
                    downsample = nn.HybridSequential(prefix=f"{name}_downsample_")
                    with downsample.name_scope():
                        downsample.add(_conv3d(planes * block.expansion, 1, stride, in_channels=inplanes))
                        downsample.add(make_norm(norm_layer, norm_kwargs, in_channels=planes * block.expansion))
                stage = nn.HybridSequential(prefix=f"{name}_")
                with stage.name_scope():
                    stage.add(block(inplanes, planes, stride, downsample, norm_layer, norm_kwargs))
                    inplanes = planes * block.expansion
                    for _ in range(1, count):
                        stage.add(block(inplanes, planes, 1, None, norm_layer, norm_kwargs))
                setattr(self, name, stage)
            self.avgpool = nn.GlobalAvgPool3D()
            self.dropout = nn.Dropout(dropout_ratio)
            self.fc = nn.Dense(nclass, in_units=self.feat_dim, weight_initializer=mx.init.Normal(init_std))

    def hybrid_forward(self, F, x):
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.relu(self.bn2(self.conv2(x)))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        x = self.avgpool(x)
        # segmental consensus: the clips of one video (segments x crops) are consecutive rows
        x = F.reshape(x, shape=(-1, self.num_segments * self.num_crop, self.feat_dim)).mean(axis=1)
        if self.feat_ext:
            return x
        return self.fc(self.dropout(x))


@head_argument("nclass")
def r2plus1d(depth: int = 18, nclass: int = 400, num_segments: int = 1, num_crop: int = 1,
             feat_ext: bool = False, dropout_ratio: float = 0.5, init_std: float = 0.001,
             norm_layer: Callable[..., HybridBlock] = BatchNorm3D, norm_kwargs: dict | None = None,
             partial_bn: bool = False, pretrained_base: bool | str = False) -> R2Plus1D:
    """R(2+1)D on a ResNet of ``depth`` (18, 34, 50, 101 or 152), trained from scratch.

    Parameters
    ----------
    depth : the ResNet's depth; 18 and 34 use basic blocks, the others bottlenecks.
    nclass : classes scored.
    num_segments, num_crop : clips per video averaged inside the network (GluonCV's
        multi-clip, multi-crop testing feeds them as consecutive batch rows).
    feat_ext : return the pooled features instead of scores.
    dropout_ratio : dropout before ``fc`` in training.
    init_std : standard deviation of ``fc``'s initial weights.
    norm_layer, norm_kwargs : the normalization (``SyncBatchNorm`` with ``num_devices`` ...).
    partial_bn : freeze the running statistics of every norm after the stem's two (GluonCV's
        ``partial_bn``).
    pretrained_base : accepted for GluonCV's call pattern and ignored: R(2+1)D has no ImageNet
        starting point, in GluonCV as here (GluonCV's R(2+1)D never reads it).
    """
    if depth not in DEPTHS:
        raise ValueError(f"unknown R(2+1)D depth {depth!r}; known: {', '.join(map(str, DEPTHS))}")
    check_clips(num_segments, num_crop)
    block, layers = DEPTHS[depth]
    return R2Plus1D(nclass, block, layers, dropout_ratio, num_segments, num_crop, feat_ext, init_std,
                    norm_layer, norm_kwargs, partial_bn)
