"""Residual Attention Networks ("Residual Attention Network for Image Classification",
arXiv:1704.06904) for ImageNet and CIFAR-10, with GluonCV 0.10's parameter layout.
GluonCV publishes no weights for them.

Each attention module multiplies its trunk branch by ``1 + mask``, where the mask branch is
an hourglass: max-pools down to a few pixels, residual blocks, bilinear upsampling back with
skip connections, and a sigmoid. The upsampling goes to fixed sizes, as in GluonCV, so the
networks run at 224x224 (ImageNet; 221 to 224 pixels give the same maps) and at 32x32 (CIFAR)
only.
"""

from __future__ import annotations

from typing import Any, Callable

from gluon_hub import head_argument

from ...common.blocks import BatchNorm, HybridBlock, check_choice, make_norm, nn

__all__ = ["ResidualAttentionNet", "residual_attention", "cifar_residual_attention"]

#: depth -> (attention modules per stage, (p, t, r)): p residual blocks before the module's
#: split, t in the trunk, r per mask level (2r at its lowest level)
_SPEC = {
    56: ((1, 1, 1), (1, 2, 1)),
    92: ((1, 2, 3), (1, 2, 1)),
    128: ((2, 3, 4), (1, 2, 1)),
    164: ((3, 4, 5), (1, 2, 1)),
    200: ((4, 5, 6), (1, 2, 1)),
    236: ((5, 6, 7), (1, 2, 1)),
    452: ((5, 6, 7), (2, 4, 3)),
}
_CIFAR_DEPTHS = (56, 92, 452)


class _ResidualBlock(HybridBlock):
    """Pre-activation bottleneck (norm-relu-conv x3, width / 4 inside); the shortcut is a
    1x1 conv of the first activation where the width or resolution changes."""

    def __init__(self, channels: int, in_channels: int | None = None, strides: int = 1,
                 norm_layer: Callable[..., HybridBlock] = BatchNorm, norm_kwargs: dict | None = None) -> None:
        super().__init__()
        self.project = strides != 1 or (in_channels or channels) != channels
        with self.name_scope():
            self.bn1 = make_norm(norm_layer, norm_kwargs)
            self.conv1 = nn.Conv2D(channels // 4, 1, 1, use_bias=False)
            self.bn2 = make_norm(norm_layer, norm_kwargs)
            self.conv2 = nn.Conv2D(channels // 4, 3, strides, padding=1, use_bias=False)
            self.bn3 = make_norm(norm_layer, norm_kwargs)
            self.conv3 = nn.Conv2D(channels, 1, 1, use_bias=False)
            if self.project:
                self.conv4 = nn.Conv2D(channels, 1, strides, use_bias=False)

    def hybrid_forward(self, F, x):
        act = F.Activation(self.bn1(x), act_type="relu")
        out = self.conv1(act)
        out = self.conv2(F.Activation(self.bn2(out), act_type="relu"))
        out = self.conv3(F.Activation(self.bn3(out), act_type="relu"))
        return out + (self.conv4(act) if self.project else x)


def _blocks(count: int, channels: int, norm: dict) -> Any:
    seq = nn.HybridSequential()
    with seq.name_scope():
        for _ in range(count):
            seq.add(_ResidualBlock(channels, **norm))
    return seq


class _AttentionModule(HybridBlock):
    """Trunk times ``1 + mask``; the mask's hourglass has ``levels`` max-pools (0: none) below
    the module's ``size`` x ``size`` input.

    Children keep GluonCV's names: going down, ``mpool<k>`` and ``softmax<k>_blocks`` for
    k = 1..D (D = max(levels, 1)) with ``skip<k>_connection_residual_block`` above the lowest
    level; coming up, an upsampling to level j's size and ``softmax<2D-j+1>_blocks``; the
    sigmoid head is ``softmax<2D>_blocks``.
    """

    def __init__(self, channels: int, size: int, levels: int, scale: tuple[int, int, int], norm: dict) -> None:
        super().__init__()
        p, t, r = scale
        self.size = size
        self.levels = levels
        self.depth = max(levels, 1)
        with self.name_scope():
            self.first_residual_blocks = _blocks(p, channels, norm)
            self.trunk_branches = _blocks(t, channels, norm)
            for k in range(1, self.depth + 1):
                if levels:
                    setattr(self, f"mpool{k}", nn.MaxPool2D(pool_size=3, strides=2, padding=1))
                setattr(self, f"softmax{k}_blocks", _blocks(2 * r if k == self.depth else r, channels, norm))
                if k < self.depth:
                    setattr(self, f"skip{k}_connection_residual_block", _ResidualBlock(channels, **norm))
            for j in range(self.depth, 1, -1):
                setattr(self, f"softmax{2 * self.depth - j + 1}_blocks", _blocks(r, channels, norm))
            head = nn.HybridSequential()
            with head.name_scope():
                for _ in range(2):
                    head.add(make_norm(norm["norm_layer"], norm["norm_kwargs"]), nn.Activation("relu"),
                             nn.Conv2D(channels, 1, use_bias=False))
                head.add(nn.Activation("sigmoid"))
            setattr(self, f"softmax{2 * self.depth}_blocks", head)
            self.last_blocks = _ResidualBlock(channels, **norm)

    def _upsample(self, F, x, level: int):
        """Bilinear resize to the map size above mask level ``level`` (``interpolation<level>``)."""
        size = self.size >> (level - 1)
        return F.contrib.BilinearResize2D(x, height=size, width=size)

    def hybrid_forward(self, F, x):
        x = self.first_residual_blocks(x)
        trunk = self.trunk_branches(x)
        mask, skips = x, []
        for k in range(1, self.depth + 1):
            if self.levels:
                mask = getattr(self, f"mpool{k}")(mask)
            mask = getattr(self, f"softmax{k}_blocks")(mask)
            if k < self.depth:
                skips.append((mask, getattr(self, f"skip{k}_connection_residual_block")(mask)))
        for j in range(self.depth, 1, -1):
            above, skip = skips[j - 2]
            mask = self._upsample(F, mask, j) + above + skip
            mask = getattr(self, f"softmax{2 * self.depth - j + 1}_blocks")(mask)
        if self.levels:
            mask = self._upsample(F, mask, 1) + trunk
        mask = getattr(self, f"softmax{2 * self.depth}_blocks")(mask)
        # GluonCV's ops (ones_like + mask, not mask + 1): hybridized, the scalar form does not
        # give bit-equal results, and the 452-layer stacks amplify such last-bit differences
        return self.last_blocks(F.elemwise_mul(F.elemwise_add(F.ones_like(mask), mask), trunk))


class ResidualAttentionNet(HybridBlock):
    """Stem, then three stages of a strided residual block followed by attention modules
    (hourglasses of decreasing depth), three residual blocks, norm-relu, fixed pool, 1x1-conv
    classifier."""

    def __init__(self, num_layers: int, cifar: bool = False, classes: int = 1000,
                 norm_layer: Callable[..., HybridBlock] = BatchNorm, norm_kwargs: dict | None = None) -> None:
        super().__init__()
        check_choice("num_layers", num_layers, _CIFAR_DEPTHS if cifar else _SPEC)
        modules, scale = _SPEC[num_layers]
        norm = {"norm_layer": norm_layer, "norm_kwargs": norm_kwargs}
        # stem width, widths of the stages and the tail, map size of the first stage, hourglass
        # levels, tail stride, last pool
        stem, widths, size, levels, tail_stride, pool = (
            (32, (128, 256, 512, 1024), 32, (2, 1, 0), 1, 8) if cifar else
            (64, (256, 512, 1024, 2048), 56, (3, 2, 1), 2, 7))
        with self.name_scope():
            self.conv1 = nn.HybridSequential()
            with self.conv1.name_scope():
                if cifar:
                    self.conv1.add(nn.Conv2D(stem, 3, 1, 1, use_bias=False))
                else:
                    self.conv1.add(nn.Conv2D(stem, 7, 2, 3, use_bias=False))
                self.conv1.add(make_norm(norm_layer, norm_kwargs), nn.Activation("relu"))
            self.mpool1 = None if cifar else nn.MaxPool2D(pool_size=3, strides=2, padding=1)
            in_channels = stem
            for i, (width, level, count) in enumerate(zip(widths, levels, modules), 1):
                block = _ResidualBlock(width, in_channels, 1 if i == 1 else 2, **norm)
                setattr(self, f"residual_block{i}", block)
                stage = nn.HybridSequential()
                with stage.name_scope():
                    for _ in range(count):
                        stage.add(_AttentionModule(width, size >> (i - 1), level, scale, norm))
                setattr(self, f"attention_module{i}", stage)
                in_channels = width
            self.residual_block4 = _ResidualBlock(widths[3], widths[2], tail_stride, **norm)
            self.residual_block5 = _ResidualBlock(widths[3], **norm)
            self.residual_block6 = _ResidualBlock(widths[3], **norm)
            self.mpool2 = nn.HybridSequential()
            with self.mpool2.name_scope():
                self.mpool2.add(make_norm(norm_layer, norm_kwargs), nn.Activation("relu"),
                                nn.AvgPool2D(pool_size=pool, strides=1))
            self.fc = nn.Conv2D(classes, 1)

    def hybrid_forward(self, F, x):
        x = self.conv1(x)
        if self.mpool1 is not None:
            x = self.mpool1(x)
        x = self.attention_module1(self.residual_block1(x))
        x = self.attention_module2(self.residual_block2(x))
        x = self.attention_module3(self.residual_block3(x))
        x = self.residual_block6(self.residual_block5(self.residual_block4(x)))
        return F.Flatten(self.fc(self.mpool2(x)))


@head_argument("classes")
def residual_attention(num_layers: int, classes: int = 1000, norm_layer: Callable[..., HybridBlock] = BatchNorm,
                       norm_kwargs: dict | None = None) -> ResidualAttentionNet:
    """ImageNet Residual Attention Network (56, 92, 128, 164, 200, 236 or 452 layers), 224x224."""
    return ResidualAttentionNet(num_layers, False, classes, norm_layer, norm_kwargs)


@head_argument("classes")
def cifar_residual_attention(num_layers: int, classes: int = 10,
                             norm_layer: Callable[..., HybridBlock] = BatchNorm,
                             norm_kwargs: dict | None = None) -> ResidualAttentionNet:
    """CIFAR-10 Residual Attention Network (56, 92 or 452 layers), 32x32."""
    return ResidualAttentionNet(num_layers, True, classes, norm_layer, norm_kwargs)
