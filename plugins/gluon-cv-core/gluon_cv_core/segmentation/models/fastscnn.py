"""Fast-SCNN (Poudel et al., BMVC 2019), with the parameter structure of GluonCV 0.10's ``fastscnn_citys``.

A shallow "learning to downsample" branch (1/8 resolution) is shared by a MobileNetV2-style
global feature extractor (1/32, with pyramid pooling) and the fusion module that adds the
two back together at 1/8; an auxiliary head on the shared 1/8 features helps training.

GluonCV resizes to sizes fixed at construction (``height // 8``, ``height // 32`` ...), so
its network runs only at sizes where those meet the feature maps (multiples of 32, and 33,
34, 65, 66 ...); here each resize takes its size from the tensor it must meet
(:func:`.base.resize_like`), which equals GluonCV's wherever GluonCV's runs, at any size.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from gluon_hub import head_argument
from gluon_hub.compat import mx

from ...common.blocks import add_conv_norm, make_norm
from .base import check_output_size, class_names, resize_like
from .fcn import HEAD_LR_MULT
from .pspnet import PyramidPooling

nn = mx.gluon.nn
HybridBlock = mx.gluon.HybridBlock


class _Holder(HybridBlock):
    """One layer sequence kept under a fixed attribute name (``block``, ``conv``), the
    extra level GluonCV's small wrapper classes add to parameter names."""

    def __init__(self, attribute: str, seq: HybridBlock) -> None:
        super().__init__(prefix="")
        self._attribute = attribute
        self.register_child(seq, attribute)

    def hybrid_forward(self, F, x):
        return self._children[self._attribute](x)


def _conv_norm_relu(attribute: str, channels: int, kernel: int, strides: int = 1, padding: int = 0,
                    norm: dict[str, Any] | None = None) -> _Holder:
    """Conv (no bias), norm, ReLU under ``attribute``."""
    seq = nn.HybridSequential(prefix="")
    add_conv_norm(seq, channels, kernel, strides, padding, **(norm or {}))
    return _Holder(attribute, seq)


def _depthwise_separable(in_channels: int, channels: int, strides: int, norm: dict[str, Any]) -> _Holder:
    """3x3 depthwise conv, norm, ReLU, then 1x1 conv, norm, ReLU."""
    seq = nn.HybridSequential(prefix="")
    add_conv_norm(seq, in_channels, 3, strides, 1, groups=in_channels, **norm)
    add_conv_norm(seq, channels, 1, **norm)
    return _Holder("conv", seq)


def _depthwise(channels: int, strides: int, norm: dict[str, Any]) -> _Holder:
    """3x3 depthwise conv, norm, ReLU."""
    seq = nn.HybridSequential(prefix="")
    add_conv_norm(seq, channels, 3, strides, 1, groups=channels, **norm)
    return _Holder("conv", seq)


class _LearningToDownsample(HybridBlock):
    """Three stride-2 convolutions to 1/8 resolution, 64 channels."""

    def __init__(self, norm: dict[str, Any]) -> None:
        super().__init__()
        with self.name_scope():
            self.conv = _conv_norm_relu("block", 32, 3, 2, 0, norm)
            self.dsconv1 = _depthwise_separable(32, 48, 2, norm)
            self.dsconv2 = _depthwise_separable(48, 64, 2, norm)

    def hybrid_forward(self, F, x):
        return self.dsconv2(self.dsconv1(self.conv(x)))


class _LinearBottleneck(HybridBlock):
    """MobileNetV2's inverted residual: expand ``t`` times, depthwise, project (no ReLU)."""

    def __init__(self, in_channels: int, channels: int, t: int, strides: int, norm: dict[str, Any]) -> None:
        super().__init__()
        self._residual = strides == 1 and in_channels == channels
        with self.name_scope():
            self.block = nn.HybridSequential(prefix="")
            self.block.add(_conv_norm_relu("block", in_channels * t, 1, norm=norm))
            self.block.add(_depthwise(in_channels * t, strides, norm))
            add_conv_norm(self.block, channels, 1, act=None, **norm)

    def hybrid_forward(self, F, x):
        out = self.block(x)
        return out + x if self._residual else out


class _FastPyramidPooling(PyramidPooling):
    """PSPNet's pyramid pooling (1, 2, 3, 6 cells) fused back to ``channels`` by a 1x1 conv."""

    def __init__(self, channels: int, norm: dict[str, Any]) -> None:
        super().__init__(channels, **norm)
        with self.name_scope():
            self.out = _conv_norm_relu("block", channels, 1, norm=norm)

    def hybrid_forward(self, F, x):
        return self.out(super().hybrid_forward(F, x))


class _GlobalFeatureExtractor(HybridBlock):
    """Three stages of linear bottlenecks (64, 96, 128 channels; 1/32) and pyramid pooling."""

    def __init__(self, norm: dict[str, Any]) -> None:
        super().__init__()
        with self.name_scope():
            in_channels = 64
            for k, (channels, strides) in enumerate(((64, 2), (96, 2), (128, 1)), start=1):
                stage = nn.HybridSequential()
                with stage.name_scope():
                    for i in range(3):
                        stage.add(_LinearBottleneck(in_channels, channels, 6, strides if i == 0 else 1, norm))
                        in_channels = channels
                setattr(self, f"bottleneck{k}", stage)
            self.ppm = _FastPyramidPooling(128, norm)

    def hybrid_forward(self, F, x):
        return self.ppm(self.bottleneck3(self.bottleneck2(self.bottleneck1(x))))


class _FeatureFusion(HybridBlock):
    """Upsample the global features to 1/8, add them to the shared 1/8 features, ReLU."""

    def __init__(self, norm: dict[str, Any]) -> None:
        super().__init__()
        with self.name_scope():
            self.dwconv = _depthwise(128, 1, norm)
            self.conv_lower_res = nn.Conv2D(128, 1)
            self.conv_higher_res = nn.Conv2D(128, 1)
            # GluonCV leaves norm_kwargs out of these two, which would leave a SyncBatchNorm
            # without its device count: same layers, but synchronised like the others
            self.bn = make_norm(**norm)
            self.bn_high = make_norm(**norm)
            self.relu = nn.Activation("relu")

    def hybrid_forward(self, F, higher, lower):
        lower = self.dwconv(resize_like(F, lower, higher))
        return self.relu(self.bn_high(self.conv_higher_res(higher)) + self.bn(self.conv_lower_res(lower)))


class _Classifier(HybridBlock):
    """Two depthwise-separable convolutions, dropout and a 1x1 conv to the classes."""

    def __init__(self, num_classes: int, norm: dict[str, Any]) -> None:
        super().__init__()
        with self.name_scope():
            self.dsconv1 = _depthwise_separable(128, 128, 1, norm)
            self.dsconv2 = _depthwise_separable(128, 128, 1, norm)
            self.dp = nn.Dropout(0.1)
            self.conv = nn.Conv2D(num_classes, 1)

    def hybrid_forward(self, F, x):
        return self.conv(self.dp(self.dsconv2(self.dsconv1(x))))


def _aux_head(num_classes: int, norm: dict[str, Any]) -> _Holder:
    """3x3 conv, norm, ReLU, dropout, 1x1 conv to the classes."""
    seq = nn.HybridSequential()
    with seq.name_scope():
        add_conv_norm(seq, 64, 3, 1, 1, **norm)
        seq.add(nn.Dropout(0.1), nn.Conv2D(num_classes, 1))
    return _Holder("block", seq)


class FastSCNN(HybridBlock):
    """Fast-SCNN; returns ``(scores,)`` or ``(scores, auxiliary scores)``, each
    ``(batch, classes, height, width)``.

    Parameters
    ----------
    classes : dataset key (``"citys"`` ...) or class names; one output channel per class.
    aux : add the auxiliary head (an output and a loss term in training; GluonCV's default).
    base_size, crop_size : the training recipe's sizes (GluonCV's attributes, read by
        multi-scale evaluation); the network itself runs at any size.
    norm_layer, norm_kwargs : normalization (``SyncBatchNorm`` with ``num_devices`` to synchronise).
    """

    def __init__(self, classes: str | Sequence[str] = "citys", aux: bool = True, base_size: int = 2048,
                 crop_size: int = 1024,
                 norm_layer: Callable[..., HybridBlock] = nn.BatchNorm, norm_kwargs: dict | None = None) -> None:
        super().__init__()
        self.classes = class_names(classes)
        self.nclass = len(self.classes)
        self.aux = aux
        self.base_size, self.crop_size = base_size, crop_size
        norm = {"norm_layer": norm_layer, "norm_kwargs": norm_kwargs}
        with self.name_scope():
            self.learning_to_downsample = _LearningToDownsample(norm)
            self.global_feature_extractor = _GlobalFeatureExtractor(norm)
            self.feature_fusion = _FeatureFusion(norm)
            self.classifier = _Classifier(self.nclass, norm)
            if aux:
                self.auxlayer = _aux_head(self.nclass, norm)
                # as GluonCV: the auxiliary head alone learns ten times faster
                self.auxlayer.collect_params().setattr("lr_mult", HEAD_LR_MULT)

    def hybrid_forward(self, F, x):
        shared = self.learning_to_downsample(x)
        fused = self.feature_fusion(shared, self.global_feature_extractor(shared))
        outputs = [resize_like(F, self.classifier(fused), x)]
        if self.aux:
            outputs.append(resize_like(F, self.auxlayer(shared), x))
        return tuple(outputs)

    def evaluate(self, x: Any) -> Any:
        """The main prediction alone (what evaluation scores), at ``x``'s size."""
        return self(x)[0]


@head_argument("classes", count=lambda classes: len(class_names(classes)))
def fastscnn(classes: str | Sequence[str] = "citys", aux: bool = True, pretrained_base: bool | str = False,
             base_size: int = 2048, crop_size: int = 1024, norm_layer: Callable[..., HybridBlock] = nn.BatchNorm,
             norm_kwargs: dict | None = None,
             height: int | None = None, width: int | None = None) -> FastSCNN:
    """Fast-SCNN as GluonCV builds it (``fastscnn_citys``) for ``classes`` (``"citys"`` ... or
    a list of names).

    ``pretrained_base`` must be false: Fast-SCNN has no ImageNet backbone (it is trained from
    scratch); ``pretrained=True`` gives the Cityscapes weights.

    ``height`` and ``width`` (GluonCV's fixed output size) are accepted left out only: the outputs
    always have the input's size (:func:`~.base.check_output_size`).

    Examples
    --------
    >>> net = fastscnn("citys")
    >>> len(net.classes), net.aux
    (19, True)
    """
    check_output_size("fastscnn", height, width)
    if pretrained_base:
        raise ValueError("Fast-SCNN is trained from scratch and has no pretrained backbone; "
                         "leave pretrained_base false (use pretrained=True for the Cityscapes weights)")
    return FastSCNN(classes, aux, base_size, crop_size, norm_layer, norm_kwargs)


__all__ = ["FastSCNN", "fastscnn"]
