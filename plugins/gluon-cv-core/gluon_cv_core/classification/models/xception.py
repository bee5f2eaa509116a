"""Aligned Xception 65 and 71 (the DeepLabv3+ variant of "Xception", arXiv:1610.02357 and
arXiv:1802.02611), with GluonCV 0.10's parameter layout.

Every convolution of the entry, middle and exit flows is depthwise-separable (depthwise 3x3,
norm, pointwise 1x1); each block adds a residual, projected by a strided 1x1 conv where the
width or resolution changes. ``output_stride`` 16 or 8 trades the last strides for dilation,
as semantic-segmentation backbones need.
"""

from __future__ import annotations

from typing import Callable

from gluon_hub import head_argument

from ...common.blocks import BatchNorm, HybridBlock, check_choice, make_norm, nn

__all__ = ["Xception", "xception"]

#: output stride -> (stride of the last entry block, stride of the first exit block,
#: dilation of the middle flow, dilations of the exit flow)
_STRIDES = {
    32: (2, 2, 1, (1, 1)),
    16: (2, 1, 1, (1, 2)),
    8: (1, 1, 2, (2, 4)),
}

#: depth -> entry-flow blocks after the first, as (in, out, stride, start with relu)
_ENTRY = {
    65: [(128, 256, 2, False)],
    71: [(128, 256, 1, False), (256, 256, 2, False), (256, 728, 2, False)],
}


class _SeparableConv(HybridBlock):
    """Depthwise 3x3 conv ('same' padding for its dilation), norm, pointwise 1x1 conv."""

    def __init__(self, in_channels: int, channels: int, strides: int = 1, dilation: int = 1,
                 norm_layer: Callable[..., HybridBlock] = BatchNorm, norm_kwargs: dict | None = None) -> None:
        super().__init__()
        with self.name_scope():
            self.conv1 = nn.Conv2D(in_channels, 3, strides, padding=dilation, dilation=dilation,
                                   groups=in_channels, use_bias=False, in_channels=in_channels)
            self.bn = make_norm(norm_layer, norm_kwargs, in_channels=in_channels)
            self.pointwise = nn.Conv2D(channels, 1, use_bias=False, in_channels=in_channels)

    def hybrid_forward(self, F, x):
        return self.pointwise(self.bn(self.conv1(x)))


class _Block(HybridBlock):
    """Separable convs with norms (``rep``) plus a shortcut; relus sit between them."""

    def __init__(self, in_channels: int, channels: int, reps: int, strides: int = 1, dilation: int = 1,
                 start_with_relu: bool = True, grow_first: bool = True, is_last: bool = False,
                 norm_layer: Callable[..., HybridBlock] = BatchNorm, norm_kwargs: dict | None = None) -> None:
        super().__init__()
        norm = {"norm_layer": norm_layer, "norm_kwargs": norm_kwargs}
        # (in, out, strides, dilation, relu first) of each separable conv, in order
        units = []
        if grow_first:
            units.append((in_channels, channels, 1, dilation, start_with_relu))
            units += [(channels, channels, 1, dilation, True)] * (reps - 1)
        else:
            units += [(in_channels, in_channels, 1, dilation, start_with_relu)] * (reps - 1)
            units.append((in_channels, channels, 1, dilation, True))
        if strides != 1:
            units.append((channels, channels, strides, 1, True))
        elif is_last:
            units.append((channels, channels, 1, dilation, True))
        with self.name_scope():
            if channels != in_channels or strides != 1:
                self.skip = nn.Conv2D(channels, 1, strides, use_bias=False, in_channels=in_channels)
                self.skipbn = make_norm(norm_layer, norm_kwargs, in_channels=channels)
            else:
                self.skip = None
            self.rep = nn.HybridSequential()
            for unit_in, unit_out, unit_strides, unit_dilation, relu in units:
                if relu:
                    self.rep.add(nn.Activation("relu"))
                self.rep.add(_SeparableConv(unit_in, unit_out, unit_strides, unit_dilation, **norm))
                self.rep.add(make_norm(norm_layer, norm_kwargs, in_channels=unit_out))

    def hybrid_forward(self, F, x):
        shortcut = self.skipbn(self.skip(x)) if self.skip is not None else x
        return self.rep(x) + shortcut


class Xception(HybridBlock):
    """Stem (two 3x3 convs), entry flow, 16 middle blocks, exit flow, global pool, classifier."""

    def __init__(self, num_layers: int = 65, classes: int = 1000, output_stride: int = 32,
                 norm_layer: Callable[..., HybridBlock] = BatchNorm, norm_kwargs: dict | None = None) -> None:
        super().__init__()
        check_choice("num_layers", num_layers, _ENTRY)
        check_choice("output_stride", output_stride, _STRIDES)
        entry_strides, exit_strides, middle_dilation, exit_dilations = _STRIDES[output_stride]
        norm = {"norm_layer": norm_layer, "norm_kwargs": norm_kwargs}
        with self.name_scope():
            self.conv1 = nn.Conv2D(32, 3, 2, 1, use_bias=False, in_channels=3)
            self.bn1 = make_norm(norm_layer, norm_kwargs, in_channels=32)
            self.relu = nn.Activation("relu")
            self.conv2 = nn.Conv2D(64, 3, 1, 1, use_bias=False, in_channels=32)
            self.bn2 = make_norm(norm_layer, norm_kwargs, in_channels=64)
            self.block1 = _Block(64, 128, 2, 2, start_with_relu=False, **norm)
            entry = [_Block(i, o, 2, s, start_with_relu=r, **norm) for i, o, s, r in _ENTRY[num_layers]]
            if len(entry) == 1:
                self.block2 = entry[0]
            else:
                self.block2 = nn.HybridSequential()
                self.block2.add(*entry)
            self.block3 = _Block(_ENTRY[num_layers][-1][1], 728, 2, entry_strides, is_last=True, **norm)
            self.midflow = nn.HybridSequential()
            for _ in range(16):
                self.midflow.add(_Block(728, 728, 3, 1, middle_dilation, **norm))
            self.block20 = _Block(728, 1024, 2, exit_strides, exit_dilations[0], grow_first=False,
                                  is_last=True, **norm)
            self.conv3 = _SeparableConv(1024, 1536, dilation=exit_dilations[1], **norm)
            self.bn3 = make_norm(norm_layer, norm_kwargs, in_channels=1536)
            self.conv4 = _SeparableConv(1536, 1536, dilation=exit_dilations[1], **norm)
            self.bn4 = make_norm(norm_layer, norm_kwargs, in_channels=1536)
            self.conv5 = _SeparableConv(1536, 2048, dilation=exit_dilations[1], **norm)
            self.bn5 = make_norm(norm_layer, norm_kwargs, in_channels=2048)
            self.avgpool = nn.GlobalAvgPool2D()
            self.fc = nn.Dense(classes, in_units=2048)

    def hybrid_forward(self, F, x):
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.relu(self.bn2(self.conv2(x)))
        x = self.relu(self.block1(x))
        x = self.midflow(self.block3(self.block2(x)))
        x = self.relu(self.block20(x))
        x = self.relu(self.bn3(self.conv3(x)))
        x = self.relu(self.bn4(self.conv4(x)))
        x = self.relu(self.bn5(self.conv5(x)))
        return self.fc(F.Flatten(self.avgpool(x)))


@head_argument("classes")
def xception(num_layers: int = 65, classes: int = 1000, output_stride: int = 32,
             norm_layer: Callable[..., HybridBlock] = BatchNorm, norm_kwargs: dict | None = None) -> Xception:
    """Aligned Xception with 65 or 71 layers; ``output_stride`` 32 (classification), 16 or 8."""
    return Xception(num_layers, classes, output_stride, norm_layer, norm_kwargs)
