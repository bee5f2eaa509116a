"""SiamRPN ("High Performance Visual Tracking with Siamese Region Proposal Network", CVPR 2018)
with the depth-wise correlation head of SiamRPN++, in GluonCV 0.10's parameter layout.

The template (the target with some context, 127x127) and the search region (287x287 when
tracking) go through the same backbone; the head correlates each channel of the template's
features with the search region's and predicts, for each of the 5 anchors at each position of a
21x21 grid, two class logits (``cls``: background, target) and four box offsets (``loc``).

Unlike GluonCV's network, batch size and search size are free, hybridized or not: the
correlation is a sum of the template's per-position weights times shifted views of the search
features, which needs only the template's feature size (fixed by ``template_size``).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from gluon_hub.compat import mx

from ...common.blocks import HybridBlock, nn
from ..geometry import ALEXNET_LAYERS, feature_size

__all__ = ["AlexNetLegacy", "DepthwiseXCorr", "DepthwiseRPN", "SiamRPN", "TrackOutput",
           "siamrpn_alexnet_v2_otb15", "feature_size"]

class AlexNetLegacy(HybridBlock):
    """The unpadded, batch-normalised AlexNet of SiamRPN: ``features`` (stride 8, 256 channels,
    no relu after the last convolution)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            with self.features.name_scope():
                for channels, kernel, pool, relu in ALEXNET_LAYERS:
                    self.features.add(nn.Conv2D(channels, kernel, strides=2 if kernel == 11 else 1),
                                      nn.BatchNorm())
                    if pool:  # GluonCV pools before the relu: the same values, kept for the layer order
                        self.features.add(nn.MaxPool2D(pool_size=3, strides=2))
                    if relu:
                        self.features.add(nn.Activation("relu"))

    def hybrid_forward(self, F, x):
        return self.features(x)


def _conv_bn_relu(channels: int, kernel: int) -> list:
    return [nn.Conv2D(channels, kernel, use_bias=False), nn.BatchNorm(), nn.Activation("relu")]


class DepthwiseXCorr(HybridBlock):
    """One branch of the head: adapt both feature maps (``conv_kernel``, ``conv_search``), correlate
    them channel by channel, and map the result to ``out_channels`` with ``head`` (1x1 convolutions).

    Parameters
    ----------
    hidden : channels of the adapted features and of the correlation.
    out_channels : outputs per position (anchors x 2 for classes, anchors x 4 for offsets).
    kernel_size : side of the adapted template features (4 for a 127x127 template).
    """

    def __init__(self, hidden: int, out_channels: int, kernel_size: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._kernel_size = kernel_size
        with self.name_scope():
            self.conv_kernel = nn.HybridSequential(prefix="")
            self.conv_search = nn.HybridSequential(prefix="")
            self.head = nn.HybridSequential(prefix="")
            with self.conv_kernel.name_scope():
                self.conv_kernel.add(*_conv_bn_relu(hidden, 3))
            with self.conv_search.name_scope():
                self.conv_search.add(*_conv_bn_relu(hidden, 3))
            with self.head.name_scope():
                self.head.add(*_conv_bn_relu(hidden, 1), nn.Conv2D(out_channels, 1))

    def hybrid_forward(self, F, kernel, search):
        kernel = self.conv_kernel(kernel)
        search = self.conv_search(search)
        if F is mx.nd and kernel.shape[2:] != (self._kernel_size,) * 2:  # symbols have no shape yet
            raise ValueError(f"template features of shape {getattr(kernel, 'shape', '?')} do not match the "
                             f"{self._kernel_size}x{self._kernel_size} this network was built for; build it "
                             "with the template_size the templates have")
        side = self._kernel_size
        out = None
        for i in range(side):  # out[b, c, y, x] = sum_ij kernel[b, c, i, j] * search[b, c, y + i, x + j]
            rows = F.slice_axis(search, axis=2, begin=i, end=i - side + 1 or None)
            for j in range(side):
                window = F.slice_axis(rows, axis=3, begin=j, end=j - side + 1 or None)
                weight = F.slice(kernel, begin=(None, None, i, j), end=(None, None, i + 1, j + 1))
                term = F.broadcast_mul(window, weight)
                out = term if out is None else out + term
        return self.head(out)


class DepthwiseRPN(HybridBlock):
    """The region-proposal head: ``cls`` (2 logits per anchor) and ``loc`` (4 offsets per anchor)."""

    def __init__(self, kernel_size: int, anchor_num: int = 5, hidden: int = 256, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        with self.name_scope():
            self.cls = DepthwiseXCorr(hidden, 2 * anchor_num, kernel_size)
            self.loc = DepthwiseXCorr(hidden, 4 * anchor_num, kernel_size)

    def hybrid_forward(self, F, template_features, search_features):
        return self.cls(template_features, search_features), self.loc(template_features, search_features)


class TrackOutput(NamedTuple):
    """``(cls, loc)`` of :meth:`SiamRPN.track`; ``out["cls"]`` and ``out["loc"]`` also work, as on
    the dict GluonCV's ``track`` returns."""

    cls: Any
    loc: Any

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            if key not in self._fields:
                raise KeyError(f"{key!r}: track() outputs are 'cls' and 'loc'")
            return getattr(self, key)
        return tuple.__getitem__(self, key)


class SiamRPN(HybridBlock):
    """``backbone`` shared by both inputs and ``rpn_head``; ``net(template, search)`` gives
    ``(cls, loc)`` of shapes ``(N, 2A, S, S)`` and ``(N, 4A, S, S)``.

    Tracking runs the template once: :meth:`template` gives its features, :meth:`track` scores a
    search region against them. Both GluonCV's stateful form (``net.template(z)`` then
    ``net.track(x)``, the features kept on the network) and the stateless one
    (``net.track(x, net.template(z))``, the features passed explicitly) work.

    Parameters
    ----------
    template_size : side of the template crops (127): it fixes the correlation kernel's size.
    anchor_num : anchors per position (5 aspect ratios).
    """

    def __init__(self, template_size: int = 127, anchor_num: int = 5, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        kernel_size = feature_size(template_size) - 2  # the head's 3x3 adaptation
        if kernel_size < 1:
            raise ValueError(f"template_size {template_size} is too small for SiamRPN's backbone; use 127")
        self.template_size = template_size
        self.anchor_num = anchor_num
        self._template_features: Any = None
        with self.name_scope():
            self.backbone = AlexNetLegacy()
            self.rpn_head = DepthwiseRPN(kernel_size, anchor_num)

    def template(self, template: Any) -> Any:
        """The backbone features of template crops ``(N, 3, 127, 127)``, for :meth:`track`; they
        are also kept for a later ``track(search)`` without features (GluonCV's stateful form)."""
        self._template_features = self.backbone(template)
        return self._template_features

    def track(self, search: Any, template_features: Any = None) -> TrackOutput:
        """``(cls, loc)`` of search crops against ``template_features`` from :meth:`template`, or
        against those of the last :meth:`template` call when none are given."""
        if template_features is None:
            template_features = self._template_features
            if template_features is None:
                raise RuntimeError("track(search) without template features needs a template first: "
                                   "call net.template(z) once, or pass net.track(search, net.template(z))")
        return TrackOutput(*self.rpn_head(template_features, self.backbone(search)))

    def hybrid_forward(self, F, template, search):
        return self.rpn_head(self.backbone(template), self.backbone(search))


def siamrpn_alexnet_v2_otb15(template_size: int = 127, bz: int = 1, is_train: bool = False,
                             **kwargs: Any) -> SiamRPN:
    """SiamRPN with the AlexNet backbone, GluonCV's ``siamrpn_alexnet_v2_otb15`` (tuned for OTB2015).

    Parameters
    ----------
    template_size : side of the template crops the network correlates (127 for the published weights).
    bz, is_train : accepted for GluonCV's call pattern and ignored: GluonCV's network fixes its
        batch size and search size (287 to track, 255 to train) with them, this one takes any
        batch and search size at run time.
    kwargs : :class:`SiamRPN` arguments.
    """
    if not isinstance(bz, int) or bz < 1:
        raise ValueError(f"bz must be a positive batch size, got {bz!r}")
    return SiamRPN(template_size=template_size, **kwargs)
