"""Pseudo-3D ResNet ("Learning Spatio-Temporal Representation with Pseudo-3D Residual
Networks", arXiv:1711.10305), with GluonCV 0.10's parameter layout.

A bottleneck ResNet whose 3x3 convolutions in stages 1-3 become a spatial 1x3x3 and a
temporal 3x1x1 convolution, arranged in turn as P3D-A (temporal after spatial), P3D-B
(side by side) and P3D-C (temporal after spatial, both summed). The stem's pooling and a
pooling after each of stages 1-3 halve the frames four times, so a 16-frame clip (GluonCV's
input; 16 to 31 frames work) reaches stage 4 as a single frame, which runs 2D convolutions.
"""

from __future__ import annotations

from typing import Any, Callable

from gluon_hub import head_argument
from gluon_hub.compat import mx

from ...common.blocks import HybridBlock, check_gluoncv_structure, make_norm, nn
from ...common.norm import BatchNorm3D
from .layers3d import check_clips

__all__ = ["P3D", "Bottleneck", "p3d", "DEPTHS"]

#: how each bottleneck of stages 1-3 arranges its spatial and temporal convolutions, in turn
DESIGNS = ("A", "B", "C")


def _conv(dims: int, channels: int, kernel: Any, strides: Any = 1, padding: Any = 0, **options: Any) -> Any:
    """A bias-free 2D or 3D convolution, He-initialised as GluonCV initialises its video networks."""
    conv = nn.Conv3D if dims == 3 else nn.Conv2D
    return conv(channels, kernel, strides, padding, use_bias=False, weight_initializer=mx.init.MSRAPrelu(),
                **options)


class Bottleneck(HybridBlock):
    """``conv1`` (1x1), spatial ``conv2`` (+ temporal ``conv_temporal`` in 3D blocks), ``conv3``
    (1x1, x4 channels), each with its norm, and a residual connection.

    ``index`` is the block's position in the whole network: blocks before ``depth_3d`` are 3D
    and use design ``DESIGNS[index % 3]``; the others (stage 4) are 2D bottlenecks.
    """

    expansion = 4

    def __init__(self, inplanes: int, planes: int, index: int, depth_3d: int, downsample: HybridBlock | None = None,
                 norm_layer: Callable[..., HybridBlock] = BatchNorm3D, norm_kwargs: dict | None = None) -> None:
        super().__init__()
        self.downsample = downsample
        self.is_3d = index < depth_3d
        self.design = DESIGNS[index % len(DESIGNS)]
        dims = 3 if self.is_3d else 2
        # a stage's first block strides its 1x1 reduction: spatially in 3D stages (not in the
        # network's very first block), by 2 on both axes when stage 4 begins
        if self.is_3d:
            strides: Any = (1, 2, 2) if downsample is not None and index > 0 else 1
        else:
            strides = 2 if index == depth_3d else 1
        norm = dict(norm_layer=norm_layer, norm_kwargs=norm_kwargs)
        with self.name_scope():
            self.conv1 = _conv(dims, planes, 1, strides, in_channels=inplanes)
            self.bn1 = make_norm(**norm, in_channels=planes)
            if self.is_3d:
                self.conv2 = _conv(3, planes, (1, 3, 3), 1, (0, 1, 1), in_channels=planes)
                self.bn2 = make_norm(**norm, in_channels=planes)
                self.conv_temporal = _conv(3, planes, (3, 1, 1), 1, (1, 0, 0), in_channels=planes)
                self.bn_temporal = make_norm(**norm, in_channels=planes)
            else:
                self.conv2 = _conv(2, planes, 3, 1, 1, in_channels=planes)
                self.bn2 = make_norm(**norm, in_channels=planes)
            self.conv3 = _conv(dims, planes * self.expansion, 1, in_channels=planes)
            self.bn3 = make_norm(**norm, in_channels=planes * self.expansion)
            self.relu = nn.Activation("relu")

    def _pseudo_3d(self, x):
        """The spatial and temporal convolutions in this block's design."""
        spatial = self.relu(self.bn2(self.conv2(x)))
        if self.design == "B":
            return spatial + self.relu(self.bn_temporal(self.conv_temporal(x)))
        temporal = self.relu(self.bn_temporal(self.conv_temporal(spatial)))
        return temporal if self.design == "A" else spatial + temporal

    def hybrid_forward(self, F, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self._pseudo_3d(out) if self.is_3d else self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        identity = x if self.downsample is None else self.downsample(x)
        return F.Activation(out + identity, act_type="relu")


#: depth -> bottlenecks per stage
DEPTHS: dict[int, tuple[int, int, int, int]] = {50: (3, 4, 6, 3), 101: (3, 4, 23, 3)}


class P3D(HybridBlock):
    """Stem (``conv1`` 1x7x7, ``bn1``, relu, 2x3x3 max pooling), ``layer1``-``layer3`` (3D, each
    followed by 2x1x1 max pooling), ``layer4`` (2D), global average pooling, the mean over a
    sample's ``num_segments x num_crop`` clips, ``fc``.

    Input ``(batch x num_segments x num_crop, 3, 16, height, width)``; scores ``(batch, nclass)``,
    or the pooled ``feat_dim`` features when ``feat_ext``.
    """

    def __init__(self, nclass: int, layers: tuple[int, ...], dropout_ratio: float = 0.5, num_segments: int = 1,
                 num_crop: int = 1, feat_ext: bool = False, init_std: float = 0.001,
                 norm_layer: Callable[..., HybridBlock] = BatchNorm3D, norm_kwargs: dict | None = None,
                 partial_bn: bool = False) -> None:
        super().__init__()
        self.num_segments = num_segments
        self.num_crop = num_crop
        self.feat_ext = feat_ext
        self.feat_dim = 512 * Bottleneck.expansion
        depth_3d = sum(layers[:3])
        norm = dict(norm_layer=norm_layer, norm_kwargs=norm_kwargs)
        inplanes, index = 64, 0
        with self.name_scope():
            self.conv1 = _conv(3, 64, (1, 7, 7), (1, 2, 2), (0, 3, 3), in_channels=3)
            self.bn1 = make_norm(**norm, in_channels=64)
            if partial_bn:  # every norm after the stem's keeps its running statistics
                norm["norm_kwargs"] = {**(norm_kwargs or {}), "use_global_stats": True}
            self.relu = nn.Activation("relu")
            self.pool = nn.MaxPool3D((2, 3, 3), 2, (0, 1, 1))
            self.pool2 = nn.MaxPool3D((2, 1, 1), (2, 1, 1))
            for stage_index, (planes, count) in enumerate(zip((64, 128, 256, 512), layers)):
                stride = 1 if stage_index == 0 else 2
                name = f"layer{stage_index + 1}"
                downsample = None
                if stride != 1 or inplanes != planes * Bottleneck.expansion:
                    downsample = nn.HybridSequential(prefix=f"{name}_downsample_")
                    with downsample.name_scope():
                        if index < depth_3d:
                            downsample.add(_conv(3, planes * 4, 1, (1, stride, stride), in_channels=inplanes))
                        else:
                            downsample.add(_conv(2, planes * 4, 1, stride, in_channels=inplanes))
                        downsample.add(make_norm(**norm, in_channels=planes * 4))
                stage = nn.HybridSequential(prefix=f"{name}_")
                with stage.name_scope():
                    for position in range(count):
                        stage.add(Bottleneck(inplanes, planes, index, depth_3d,
                                             downsample if position == 0 else None, **norm))
                        inplanes, index = planes * Bottleneck.expansion, index + 1
                setattr(self, name, stage)
            self.avgpool = nn.GlobalAvgPool2D()
            self.dropout = nn.Dropout(dropout_ratio)
            self.fc = nn.Dense(nclass, in_units=self.feat_dim, weight_initializer=mx.init.Normal(init_std))

    def hybrid_forward(self, F, x):
        x = self.pool(self.relu(self.bn1(self.conv1(x))))
        x = self.pool2(self.layer1(x))
        x = self.pool2(self.layer2(x))
        x = self.pool2(self.layer3(x))
        # one frame is left: drop the time axis for the 2D stage (as GluonCV does, a longer clip
        # would fold its remaining frames into the batch)
        x = F.reshape(x, (-1, 0, 1, 0, 0)).squeeze(axis=2)
        x = self.avgpool(self.layer4(x))
        # segmental consensus: the clips of one video (segments x crops) are consecutive rows
        x = F.reshape(x, shape=(-1, self.num_segments * self.num_crop, self.feat_dim)).mean(axis=1)
        if self.feat_ext:
            return x
        return self.fc(self.dropout(x))


@head_argument("nclass")
def p3d(depth: int = 50, nclass: int = 400, num_segments: int = 1, num_crop: int = 1, feat_ext: bool = False,
        dropout_ratio: float = 0.5, init_std: float = 0.001, norm_layer: Callable[..., HybridBlock] = BatchNorm3D,
        norm_kwargs: dict | None = None, partial_bn: bool = False, pretrained_base: bool | str = False,
        block_design: tuple[str, ...] | None = None, shortcut_type: str | None = None) -> P3D:
    """P3D on a bottleneck ResNet of ``depth`` (50 or 101), trained from scratch.

    Parameters
    ----------
    depth : the ResNet's depth.
    nclass : classes scored.
    num_segments, num_crop : clips per video averaged inside the network (consecutive rows).
    feat_ext : return the pooled features instead of scores.
    dropout_ratio : dropout before ``fc`` in training.
    init_std : standard deviation of ``fc``'s initial weights.
    norm_layer, norm_kwargs : the normalization (``SyncBatchNorm`` with ``num_devices`` ...).
    partial_bn : freeze the running statistics of every norm but the stem's (GluonCV's ``partial_bn``).
    pretrained_base : accepted for GluonCV's call pattern and ignored: P3D has no ImageNet
        starting point, in GluonCV as here (GluonCV's P3D never reads it).
    block_design, shortcut_type : GluonCV's keywords, accepted with this network's own values
        (``("A", "B", "C")`` blocks in turn, projection shortcuts ``"B"``); others raise ValueError.
    """
    check_gluoncv_structure(f"P3D ResNet-{depth}", {"block_design": block_design, "shortcut_type": shortcut_type},
                            {"block_design": ("A", "B", "C"), "shortcut_type": "B"})
    if depth not in DEPTHS:
        raise ValueError(f"unknown P3D depth {depth!r}; known: {', '.join(map(str, DEPTHS))}")
    check_clips(num_segments, num_crop)
    return P3D(nclass, DEPTHS[depth], dropout_ratio, num_segments, num_crop, feat_ext, init_std,
               norm_layer, norm_kwargs, partial_bn)
