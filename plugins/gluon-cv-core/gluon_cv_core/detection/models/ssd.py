"""SSD: Single Shot MultiBox Detector (Liu et al., arXiv:1512.02325), as GluonCV 0.10 lays it out.

One network class and one factory, :func:`ssd`, driven by the configurations in
:data:`CONFIGS` (anchor sizes, ratios and steps, backbone and feature taps: the facts of
GluonCV's ``ssd/presets.py``). Backbones are the plugin's classification networks (see
:mod:`.features`) except VGG-16-atrous, which exists only for detection.

In inference the network returns ``(class ids, scores, boxes)`` of shapes ``(B, K, 1)``,
``(B, K, 1)`` and ``(B, K, 4)`` in input pixels, ``K = post_nms``; rows after the last
detection have id -1. In training (``autograd.train_mode``) it returns the raw class
logits ``(B, N, C + 1)``, box offsets ``(B, N, 4)`` and anchors ``(1, N, 4)``.
"""

from __future__ import annotations

from typing import Any, Sequence

from gluon_hub import head_argument
from gluon_hub.compat import mx

from ...common.backbones.features import backbone, expand_features
from ...common.blocks import BUILT_FROM_NAME, check_gluoncv_structure
from ...common.boxes import SSDAnchorGenerator, class_index_map, decode_center_boxes, nms_split, per_class_detections
from ..classes import BY_DATASET, keep_named_classes
from .vgg_atrous import vgg16_atrous_features

nn = mx.gluon.nn
HybridBlock = mx.gluon.HybridBlock

_R6 = [[1, 2, 0.5]] + [[1, 2, 0.5, 3, 1.0 / 3]] * 3 + [[1, 2, 0.5]] * 2
_R7 = [[1, 2, 0.5]] + [[1, 2, 0.5, 3, 1.0 / 3]] * 4 + [[1, 2, 0.5]] * 2
_S300_VOC = [30, 60, 111, 162, 213, 264, 315]
_S300 = [21, 45, 99, 153, 207, 261, 315]
_S512_VGG = [51.2, 76.8, 153.6, 230.4, 307.2, 384.0, 460.8, 537.6]
_S512 = [51.2, 102.4, 189.4, 276.4, 363.52, 450.6, 492]
_S512_COCO = [51.2, 133.12, 215.04, 296.96, 378.88, 460.8, 542.72]
_STEPS300 = [8, 16, 32, 64, 100, 300]
_STEPS512 = [16, 32, 64, 128, 256, 512]
_STEPS512_7 = [8, 16, 32, 64, 128, 256, 512]


def _config(base: str, size: int, sizes: list, ratios: list, steps: list, taps: list | None = None,
            filters: list | None = None, **options: Any) -> dict[str, Any]:
    return dict(base=base, size=size, sizes=sizes, ratios=ratios, steps=steps, taps=taps,
                filters=filters, **options)


_MOBILE_TAPS = ["relu22_fwd", "relu26_fwd"]
_WIDE = [512, 512, 256, 256]

#: configuration name -> architecture; the name is GluonCV's model name without ``ssd_``
#: (``_custom`` constructors use the configuration of the dataset GluonCV gives them)
CONFIGS: dict[str, dict[str, Any]] = {
    "300_vgg16_atrous_voc": _config("vgg16_atrous", 300, _S300_VOC, _R6, _STEPS300),
    "300_vgg16_atrous_coco": _config("vgg16_atrous", 300, _S300, _R6, _STEPS300),
    "512_vgg16_atrous": _config("vgg16_atrous", 512, _S512_VGG, _R7, _STEPS512_7),
    "512_resnet18_v1": _config("resnet18_v1", 512, _S512, _R6, _STEPS512,
                               ["stage3_activation1", "stage4_activation1"], _WIDE),
    "512_resnet50_v1_voc": _config("resnet50_v1", 512, _S512, _R6, _STEPS512,
                                   ["stage3_activation5", "stage4_activation2"], _WIDE),
    "512_resnet50_v1_coco": _config("resnet50_v1", 512, _S512_COCO, _R6, _STEPS512,
                                    ["stage3_activation5", "stage4_activation2"], _WIDE),
    "512_resnet101_v2": _config("resnet101_v2", 512, _S512, _R6, _STEPS512,
                                ["stage3_activation22", "stage4_activation2"], _WIDE),
    "512_resnet152_v2": _config("resnet152_v2", 512, _S512_VGG, _R7, _STEPS512_7,
                                ["stage2_activation7", "stage3_activation35", "stage4_activation2"],
                                _WIDE),
    "512_mobilenet1.0": _config("mobilenet1.0", 512, _S512, _R6, _STEPS512, _MOBILE_TAPS, _WIDE),
    "300_mobilenet1.0_lite": _config("mobilenet1.0", 300, [60, 105, 150, 195, 240, 285, 300],
                                     [[1, 2, 0.5]] + [[1, 2, 0.5, 3, 1.0 / 3]] * 5,
                                     [16, 30, 60, 100, 150, 300], _MOBILE_TAPS, [512, 256, 256, 128],
                                     predictor_kernel=1, lite_anchors=True, min_depth=64,
                                     reduce_ratio=0.5),
    "300_mobilenet0.25": _config("mobilenet0.25", 300, _S300, _R6, _STEPS300, _MOBILE_TAPS,
                                 [256, 256, 128, 128]),
    "300_resnet34_v1b": _config("resnet34_v1b", 300, _S300, _R6, _STEPS300),
}

_FEATURE_OPTIONS = ("min_depth", "reduce_ratio")


class _Predictor(HybridBlock):
    """A convolution predicting ``depth * values`` numbers per feature-map cell."""

    def __init__(self, channels: int, kernel: int, in_channels: int = 0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        with self.name_scope():
            self.predictor = nn.Conv2D(channels, kernel, padding=kernel // 2, in_channels=in_channels,
                                       weight_initializer=mx.init.Xavier(magnitude=2),
                                       bias_initializer="zeros")

    def hybrid_forward(self, F, x):
        return self.predictor(x)


class ResNetV1bSSDFeatures(HybridBlock):
    """ResNet-34-v1b cut after ``layer2`` and after ``layer4`` (``layer3`` unstrided), then extras.

    The layout of GluonCV's ``ssd_300_resnet34_v1b`` (after MLPerf's SSD reference):
    four extra stages of a 1x1 conv and a 3x3 stride-2 conv, with biases and no norm.
    """

    def __init__(self, net: Any, extra_filters: Sequence[int] = (256, 256, 128, 128), **kwargs: Any) -> None:
        super().__init__(**kwargs)
        first = net.layer3[0]
        first.conv1._kwargs["stride"] = (1, 1)  # keep layer3 at stride 8, as the detector was trained
        first.downsample[0]._kwargs["stride"] = (1, 1)
        init = mx.init.Xavier(rnd_type="gaussian", factor_type="out", magnitude=2)
        with self.name_scope():
            self.stage1 = nn.HybridSequential("stage1")
            for name in ("conv1", "bn1", "relu", "maxpool", "layer1", "layer2"):
                self.stage1.add(getattr(net, name))
            self.stage2 = nn.HybridSequential("stage2")
            self.stage2.add(net.layer3, net.layer4)
            self.more_stages = nn.HybridSequential("more_stages")
            for i, filters in enumerate(extra_filters):
                stage = nn.HybridSequential(f"more_stages_{i}")
                stage.add(nn.Conv2D(max(128, filters), 1, weight_initializer=init), nn.Activation("relu"))
                padding = 0 if i == len(extra_filters) - 1 else 1
                stage.add(nn.Conv2D(filters, 3, 2, padding, weight_initializer=init), nn.Activation("relu"))
                self.more_stages.add(stage)

    def hybrid_forward(self, F, x):
        y1 = self.stage1(x)
        outputs = [y1, self.stage2(y1)]
        for stage in self.more_stages:
            outputs.append(stage(outputs[-1]))
        return outputs


class SSD(HybridBlock):
    """Single-shot detector over multi-scale ``features`` (a block returning a list of maps).

    Parameters
    ----------
    features : the feature extractor, one output per anchor layer.
    sizes : ``len(features outputs) + 1`` anchor sizes in pixels; layer ``i`` uses
        ``sizes[i]`` and ``sqrt(sizes[i] * sizes[i + 1])``.
    ratios, steps : aspect ratios and stride (pixels) of each layer's anchors.
    classes : names of the foreground classes.
    predictor_kernel : kernel of the class and box predictors (3, or 1 for the lite model).
    lite_anchors : TF-detection-API anchor layout (``ssd_300_mobilenet1.0_lite``).
    stds : box-offset scaling of the box coder.
    nms_thresh, nms_topk, post_nms : see :meth:`set_nms`.
    anchor_alloc_size : side of the first layer's stored anchor grid; inputs up to
        ``alloc * step`` pixels are supported.
    """

    def __init__(self, features: HybridBlock, sizes: Sequence[float], ratios: Sequence[Sequence[float]],
                 steps: Sequence[float], classes: Sequence[str], predictor_kernel: int = 3,
                 lite_anchors: bool = False, stds: Sequence[float] = (0.1, 0.1, 0.2, 0.2),
                 nms_thresh: float = 0.45, nms_topk: int = 400, post_nms: int = 100,
                 anchor_alloc_size: int = 128, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not (len(sizes) == len(ratios) + 1 == len(steps) + 1):
            raise ValueError(f"SSD needs len(sizes) == len(ratios) + 1 == len(steps) + 1, got "
                             f"{len(sizes)}, {len(ratios)}, {len(steps)}")
        self.classes = tuple(classes)
        self._stds = tuple(stds)
        self._kernel = predictor_kernel
        #: anchor stride of each layer in input pixels; the last equals the input side the
        #: configuration was designed for (training uses it as the default data shape)
        self.steps = tuple(float(s) for s in steps)
        self.nms_thresh, self.nms_topk, self.post_nms = nms_thresh, nms_topk, post_nms
        with self.name_scope():
            self.features = features
            self.class_predictors = nn.HybridSequential()
            self.box_predictors = nn.HybridSequential()
            self.anchor_generators = nn.HybridSequential()
            alloc = anchor_alloc_size
            for i, pair, ratio, step in zip(range(len(steps)), zip(sizes[:-1], sizes[1:]), ratios, steps):
                generator = SSDAnchorGenerator(i, pair, ratio, step, (alloc, alloc), lite=lite_anchors)
                alloc = max(alloc // 2, 16)
                self.anchor_generators.add(generator)
                self.class_predictors.add(_Predictor(generator.num_depth * (len(self.classes) + 1),
                                                     predictor_kernel))
                self.box_predictors.add(_Predictor(generator.num_depth * 4, predictor_kernel))

    @property
    def num_classes(self) -> int:
        """Number of foreground classes."""
        return len(self.classes)

    def set_nms(self, nms_thresh: float = 0.45, nms_topk: int = 400, post_nms: int = 100) -> None:
        """Change NMS: ``nms_thresh`` outside (0, 1) disables it; ``nms_topk`` boxes per image
        enter it (-1: all); ``post_nms`` boxes are returned (-1: all)."""
        self._clear_cached_op()
        self.nms_thresh, self.nms_topk, self.post_nms = nms_thresh, nms_topk, post_nms

    def hybrid_forward(self, F, x):
        features = self.features(x)

        def flat(block, feat):
            return F.flatten(F.transpose(block(feat), axes=(0, 2, 3, 1)))

        cls_preds = F.concat(*[flat(p, f) for p, f in zip(self.class_predictors, features)], dim=1)
        box_preds = F.concat(*[flat(p, f) for p, f in zip(self.box_predictors, features)], dim=1)
        anchors = F.concat(*[g(f).reshape((1, -1)) for g, f in zip(self.anchor_generators, features)],
                           dim=1).reshape((1, -1, 4))
        cls_preds = cls_preds.reshape((0, -1, self.num_classes + 1))
        box_preds = box_preds.reshape((0, -1, 4))
        if mx.autograd.is_training():
            return [cls_preds, box_preds, anchors]
        boxes = decode_center_boxes(F, box_preds, anchors, self._stds)
        scores = F.softmax(cls_preds, axis=-1).slice_axis(axis=-1, begin=1, end=None)
        rows = per_class_detections(F, scores, boxes, self.num_classes, 0.01)
        return nms_split(F, rows, self.nms_thresh, self.nms_topk, self.post_nms)

    def reset_class(self, classes: Sequence[str], reuse_weights: Any = None) -> None:
        """Replace the class predictors for new ``classes`` (transfer learning).

        ``reuse_weights`` copies old predictor rows into the new ones: ``{new: old}`` by
        name or index, or a list of names present in both; the background rows are always
        kept. Other classes start from the predictors' initializer.
        """
        mapping = class_index_map(reuse_weights, self.classes, classes)
        old_n, new_n = self.num_classes + 1, len(classes) + 1
        self._clear_cached_op()
        predictors = nn.HybridSequential(prefix=self.class_predictors.prefix)
        for old, generator in zip(self.class_predictors, self.anchor_generators):
            weight = old.predictor.weight
            new = _Predictor(generator.num_depth * new_n, self._kernel, in_channels=weight.shape[1],
                             prefix=old.prefix)
            new.initialize(ctx=weight.list_ctx())
            for old_param, new_param in ((weight, new.predictor.weight), (old.predictor.bias, new.predictor.bias)):
                src, dst = old_param.data().asnumpy(), new_param.data().asnumpy()
                dst[0::new_n] = src[0::old_n]  # background
                for k, v in mapping.items():
                    dst[k + 1::new_n] = src[v + 1::old_n]
                new_param.set_data(mx.nd.array(dst, dtype=dst.dtype))
            predictors.add(new)
        self.class_predictors = predictors
        self.classes = tuple(classes)


#: largest |output| of each head in a trained SSD's range (:func:`scale_ssd_heads`): class
#: logits within 8, box offsets (before the coder's 0.1/0.2 standard deviations) within 2
_HEAD_RANGES = {"class": 8.0, "box": 2.0}


def scale_ssd_heads(net: SSD, x: Any) -> dict[str, list[float]]:
    """Scale the initialised ``net``'s class and box predictors so that on the batch ``x`` each
    layer's largest |output| is in a trained SSD's range (:data:`_HEAD_RANGES`); returns each
    head's factor per feature layer.

    Random He weights through a ResNet's residual stages grow the features to thousands (each
    residual sum adds its branch's variance to its input's), so ResNet-34's logits reach 3e3,
    the softmax gives exactly 1.0 and its box offsets, exponentiated, overflow to infinity: a comparison of two runtimes would measure float32 rounding in saturated ties.
    Each predictor is a convolution only the output reads, so scaling its weight and bias
    scales that layer's logits or offsets exactly. Used by the ONNX portability measurement
    (``gluon_hub_deploy._measure.TRAINED_LIKE``).
    """
    if not isinstance(net, SSD):
        raise TypeError(f"scale_ssd_heads takes an SSD, not {type(net).__name__}")
    features = net.features(x if isinstance(x, mx.nd.NDArray) else mx.nd.array(x))
    factors: dict[str, list[float]] = {"class": [], "box": []}
    for key, predictors in (("class", net.class_predictors), ("box", net.box_predictors)):
        for predictor, feature in zip(predictors, features):
            largest = float(predictor(feature).abs().max().asscalar())
            factor = _HEAD_RANGES[key] / largest if largest > 0 else 1.0
            for param in predictor.collect_params().values():
                param.set_data(param.data() * factor)
            factors[key].append(factor)
    return factors


def _features(config: dict[str, Any], pretrained_base: bool | str, norm_layer: Any,
              norm_kwargs: dict | None) -> HybridBlock:
    base = config["base"]
    if base == "vgg16_atrous":  # no normalization layers to configure
        return vgg16_atrous_features(config["size"], pretrained_base)
    net = backbone(base, pretrained_base, norm_layer=norm_layer, norm_kwargs=norm_kwargs)
    if base == "resnet34_v1b":
        return ResNetV1bSSDFeatures(net)
    options = {k: config[k] for k in _FEATURE_OPTIONS if k in config}
    return expand_features(net, config["taps"], config["filters"], **options)


@head_argument("classes", transfer=keep_named_classes)
def ssd(config: str, classes: Sequence[str] | str = "voc", pretrained_base: bool | str = False,
        transfer: str | None = None, norm_layer: Any = nn.BatchNorm, norm_kwargs: dict | None = None,
        anchor_generator: Any = None, global_pool: bool | None = None, min_depth: int | None = None,
        predictors_kernel: tuple[int, int] | None = None, predictors_pad: tuple[int, int] | None = None,
        reduce_ratio: float | None = None, use_1x1_transition: bool | None = None, use_bn: bool | None = None,
        **options: Any) -> SSD:
    """An SSD detector in one of GluonCV's configurations.

    Parameters
    ----------
    config : a key of :data:`CONFIGS`, GluonCV's model name without ``ssd_`` and, where
        the anchors do not depend on it, without the dataset (``"512_resnet50_v1_coco"``).
    classes : foreground class names, or ``"voc"`` / ``"coco"`` for those datasets' classes.
    pretrained_base : start the backbone from its ImageNet weights, fetched through the
        hub's cache (GluonCV's default is ``True``; the hub's is ``False`` so that building
        a model never downloads unasked).
    transfer : ``"voc"`` or ``"coco"``: start from that dataset's published SSD of this
        configuration and keep the predictors of the classes both share (GluonCV's
        ``*_custom(..., transfer=...)``).
    norm_layer, norm_kwargs : normalization class of the backbone (``SyncBatchNorm`` for
        multi-device training) and its extra arguments.
    options : :class:`SSD` arguments (``nms_thresh``, ``post_nms``, ``anchor_alloc_size`` ...).
    ``anchor_generator`` (GluonCV's class) is accepted left out only; ``global_pool``, ``min_depth``,
    ``predictors_kernel``, ``predictors_pad``, ``reduce_ratio``, ``use_1x1_transition`` and ``use_bn``
    with GluonCV's defaults only, which every published SSD uses: others raise ValueError.
    """
    check_gluoncv_structure(
        f"SSD {config}",
        {"anchor_generator": anchor_generator, "global_pool": global_pool, "min_depth": min_depth,
         "predictors_kernel": predictors_kernel, "predictors_pad": predictors_pad, "reduce_ratio": reduce_ratio,
         "use_1x1_transition": use_1x1_transition, "use_bn": use_bn},
        {"anchor_generator": BUILT_FROM_NAME, **{'global_pool': False, 'min_depth': 128, 'predictors_kernel': (3, 3), 'predictors_pad': (1, 1), 'reduce_ratio': 1.0, 'use_1x1_transition': True, 'use_bn': True}})
    if config not in CONFIGS:
        raise ValueError(f"unknown SSD configuration {config!r}; known: {', '.join(sorted(CONFIGS))}")
    names = BY_DATASET.get(classes, classes) if isinstance(classes, str) else tuple(classes)
    if isinstance(names, str) or not names:
        raise ValueError(f"classes must be 'voc', 'coco' or a non-empty list of names, got {classes!r}")
    if transfer is not None:
        import gluon_hub

        base_name = f"ssd_{config.rsplit('_', 1)[0] if config.endswith(('_voc', '_coco')) else config}"
        net = gluon_hub.load(f"cv/{base_name}_{transfer}", pretrained=True)
        net.reset_class(names, reuse_weights=[c for c in names if c in net.classes])
        return net
    spec = CONFIGS[config]
    layers = {k: spec[k] for k in ("predictor_kernel", "lite_anchors") if k in spec}
    return SSD(_features(spec, pretrained_base, norm_layer, norm_kwargs), spec["sizes"], spec["ratios"],
               spec["steps"], names, **layers, **options)


__all__ = ["CONFIGS", "SSD", "ResNetV1bSSDFeatures", "scale_ssd_heads", "ssd"]
