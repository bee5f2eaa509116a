"""DANet, the Dual Attention Network (Fu et al., CVPR 2019), with the parameter structure of
GluonCV 0.10's ``danet_resnet50_citys`` / ``danet_resnet101_citys``.

Two branches over the dilated backbone's stride-8 features: position attention (every pixel
a weighted sum of all pixels, weights from query/key projections) and channel attention
(every channel a weighted sum of all channels). Each branch is scaled by a learned ``gamma``
(zero at start, so training begins from the plain features) and added to its input. The
model predicts from their sum and, for the auxiliary losses, from each branch alone.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from gluon_hub import head_argument
from gluon_hub.compat import mx

from ...common.blocks import BatchNorm, add_conv_norm, check_gluoncv_structure
from .base import SegBaseModel, check_output_size, class_names, resize_like

nn = mx.gluon.nn
HybridBlock = mx.gluon.HybridBlock


class PositionAttention(HybridBlock):
    """``x + gamma * (value(x) @ softmax(query(x)^T key(x))^T)``: each pixel attends to all pixels."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        with self.name_scope():
            self.gamma = self.params.get("gamma", shape=(1,), init=mx.init.Zero())
            self.query_conv = nn.Conv2D(channels // 8, 1, in_channels=channels)
            self.key_conv = nn.Conv2D(channels // 8, 1, in_channels=channels)
            self.value_conv = nn.Conv2D(channels, 1, in_channels=channels)

    def hybrid_forward(self, F, x, gamma):
        query = F.reshape(self.query_conv(x), (0, 0, -1))  # (batch, c/8, pixels)
        key = F.reshape(self.key_conv(x), (0, 0, -1))
        attention = F.softmax(F.batch_dot(query, key, transpose_a=True))  # (batch, pixels, pixels)
        value = F.reshape(self.value_conv(x), (0, 0, -1))
        out = F.batch_dot(value, attention, transpose_b=True)
        out = F.reshape_like(out, x, lhs_begin=2, lhs_end=None, rhs_begin=2, rhs_end=None)
        return F.broadcast_mul(gamma, out) + x


class ChannelAttention(HybridBlock):
    """``x + gamma * (softmax(max(E) - E) @ x)`` with ``E = x x^T`` over pixels: each channel
    attends to all channels (subtracting from the row maximum favours dissimilar channels,
    as in the paper's code)."""

    def __init__(self) -> None:
        super().__init__()
        with self.name_scope():
            self.gamma = self.params.get("gamma", shape=(1,), init=mx.init.Zero())

    def hybrid_forward(self, F, x, gamma):
        flat = F.reshape(x, (0, 0, -1))  # (batch, channels, pixels)
        energy = F.batch_dot(flat, flat, transpose_b=True)
        attention = F.softmax(F.max(energy, -1, True).broadcast_like(energy) - energy)
        out = F.reshape_like(F.batch_dot(attention, flat), x, lhs_begin=2, lhs_end=None, rhs_begin=2, rhs_end=None)
        return F.broadcast_mul(gamma, out) + x


def _conv3x3(channels: int, norm: dict[str, Any]) -> Any:
    return add_conv_norm(nn.HybridSequential(), channels, 3, 1, 1, **norm)


def _classifier(num_classes: int) -> Any:
    seq = nn.HybridSequential()
    seq.add(nn.Conv2D(num_classes, 1))
    return seq


class DANetHead(HybridBlock):
    """Both attention branches on a quarter of the input channels; returns the scores of
    their sum, of position attention and of channel attention."""

    def __init__(self, in_channels: int, num_classes: int, norm: dict[str, Any]) -> None:
        super().__init__()
        inter = in_channels // 4
        with self.name_scope():
            self.conv5a = _conv3x3(inter, norm)
            self.conv5c = _conv3x3(inter, norm)
            self.sa = PositionAttention(inter)
            self.sc = ChannelAttention()
            self.conv51 = _conv3x3(inter, norm)
            self.conv52 = _conv3x3(inter, norm)
            self.conv6 = _classifier(num_classes)
            self.conv7 = _classifier(num_classes)
            self.conv8 = _classifier(num_classes)

    def hybrid_forward(self, F, x):
        position = self.conv51(self.sa(self.conv5a(x)))
        channel = self.conv52(self.sc(self.conv5c(x)))
        return self.conv8(position + channel), self.conv6(position), self.conv7(channel)


class DANet(SegBaseModel):
    """DANet; returns ``(fused, position, channel)`` scores at the input's size: the first is
    the prediction, the other two feed GluonCV's auxiliary losses.

    Parameters are :class:`~.base.SegBaseModel`'s but ``aux``: GluonCV's DANet has no
    separate auxiliary head (``aux`` is false) and always returns the three outputs.
    """

    def __init__(self, classes: str | Sequence[str] = "citys", backbone: str = "resnet50",
                 pretrained_base: bool | str = False, base_size: int = 520, crop_size: int = 480,
                 norm_layer: Callable[..., HybridBlock] = BatchNorm, norm_kwargs: dict | None = None) -> None:
        super().__init__(classes, False, backbone, pretrained_base, base_size, crop_size, norm_layer, norm_kwargs)
        with self.name_scope():
            self.head = DANetHead(self.stage_channels[1], self.nclass,
                                  {"norm_layer": norm_layer, "norm_kwargs": norm_kwargs})

    def hybrid_forward(self, F, x):
        _, c4 = self.base_forward(x)
        return tuple(resize_like(F, out, x) for out in self.head(c4))


@head_argument("classes", count=lambda classes: len(class_names(classes)))
def danet(backbone: str = "resnet50", classes: str | Sequence[str] = "citys", pretrained_base: bool | str = False,
          base_size: int = 520, crop_size: int = 480, norm_layer: Callable[..., HybridBlock] = BatchNorm,
          norm_kwargs: dict | None = None,
          height: int | None = None, width: int | None = None, aux: bool | None = None,
          dilated: bool | None = None) -> DANet:
    """DANet on a dilated ``backbone`` (GluonCV's ``resnet50``, ``resnet101``) for ``classes``
    (``"citys"`` ... or a list of names).

    ``height`` and ``width`` (GluonCV's fixed output size) are accepted left out only: the outputs
    always have the input's size (:func:`~.base.check_output_size`).
    ``aux`` and ``dilated`` are GluonCV's keywords, accepted with this network's own values
    (no auxiliary head, a dilated backbone); others raise ValueError.

    Examples
    --------
    >>> net = danet("resnet50", "citys")
    >>> net.nclass
    19
    """
    check_output_size("danet", height, width)
    check_gluoncv_structure("danet", {"aux": aux, "dilated": dilated}, {"aux": False, "dilated": True})
    return DANet(classes, backbone, pretrained_base, base_size, crop_size, norm_layer, norm_kwargs)


__all__ = ["ChannelAttention", "DANet", "DANetHead", "PositionAttention", "danet"]
