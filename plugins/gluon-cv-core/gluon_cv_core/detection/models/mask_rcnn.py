"""Mask R-CNN (He et al., arXiv:1703.06870): a mask head on the plugin's Faster R-CNN.

:class:`MaskRCNN` subclasses :class:`~gluon_cv_core.detection.models.faster_rcnn.FasterRCNN`
and adds GluonCV 0.10's mask branch: a few 3x3 convs (FPN models), a 2x2 stride-2
transposed conv and a 1x1 conv with one channel per class. :data:`CONFIGS` holds the facts
of GluonCV's ``mask_rcnn/predefined_models.py`` and ``custom_mask_rcnn_fpn``.

In inference the network returns ``(ids, scores, boxes, masks)`` of shapes ``(B, K, 1)``,
``(B, K, 1)``, ``(B, K, 4)`` and ``(B, K, M, M)``: the ``K = rcnn_max_dets`` best
detections of Faster R-CNN's per-class NMS, and for each the sigmoid mask of its class on
an ``M x M`` grid over its box (:func:`paste_masks` puts them on the image). In training
``net(x, gt_boxes, gt_labels)`` returns Faster R-CNN's tuple with the mask logits of the
positive regions ``(B, P, C, M, M)`` third, as GluonCV does.
"""

from __future__ import annotations

import warnings
from typing import Any, Sequence

from gluon_hub.compat import mx

from ...common.backbones.features import _shared, backbone, gluoncv_names
from ...common.blocks import BUILT_FROM_NAME, check_gluoncv_structure
from ...common.boxes import class_index_map
from ...common.norm import SyncBatchNorm
from ...common.shapes import shape_parameters
from ..classes import BY_DATASET
from ..masks import paste_masks
from .faster_rcnn import _C4, _TAPS, FasterRCNN
from .fpn import fpn_features

nn = mx.gluon.nn
HybridBlock = mx.gluon.HybridBlock

#: FPN taps (GluonCV's internal output names) of the backbones Mask R-CNN adds
_MASK_TAPS = dict(_TAPS, resnet18_v1b=["layers1_relu3_fwd", "layers2_relu3_fwd", "layers3_relu3_fwd",
                                       "layers4_relu3_fwd"],
                  mobilenet1_0=["relu6_fwd", "relu10_fwd", "relu22_fwd", "relu26_fwd"])
#: GluonCV's backbone name -> the hub's
_HUB_NAMES = {"mobilenet1_0": "mobilenet1.0"}
_COCO = dict(short=800, max_size=1333, nms_thresh=0.5, nms_topk=-1, post_nms=-1, roi_mode="align",
             roi_size=(14, 14), strides=16, clip=4.42, rpn_channel=1024, base_size=16, scales=(2, 4, 8, 16, 32),
             ratios=(0.5, 1, 2), alloc_size=(128, 128), rpn_nms_thresh=0.7, rpn_train_pre_nms=12000,
             rpn_train_post_nms=2000, rpn_test_pre_nms=6000, rpn_test_post_nms=1000, rpn_min_size=1,
             num_sample=128, pos_iou_thresh=0.5, pos_ratio=0.25, mask_channels=256, rcnn_max_dets=1000)
_FPN = dict(_COCO, min_stage=2, max_stage=6, strides=(4, 8, 16, 32, 64), alloc_size=(384, 384), num_sample=512,
            target_roi_scale=2)
_C4_TRAIN = r".*dense|.*rpn|.*mask|.*down(2|3|4)_conv|.*layers(2|3|4)_conv"
_FPN_TRAIN = r".*dense|.*rpn|.*mask|P|.*down(2|3|4)_conv|.*layers(2|3|4)_conv"
_CUSTOM_TRAIN = r".*dense|.*rpn|.*down(2|3|4)_conv|.*layers(2|3|4)_conv|.*mask|P"


def _config(base: str, head: str, box_head: tuple[str, ...] = (), **options: Any) -> dict[str, Any]:
    """``box_head``: GluonCV's box head layers in order, ``"pool"`` (3x3 stride-2 average
    pooling, 14x14 regions to 7x7), ``"dense"`` (1024 + ReLU) or ``"conv"`` (256 3x3 with
    bias, SyncBatchNorm, ReLU); C4 models have none (global pooling)."""
    return dict(base=base, head=head, box_head=box_head, options=options)


#: configuration name -> architecture; the name is GluonCV's model name without ``mask_rcnn_``
CONFIGS: dict[str, dict[str, Any]] = {
    "resnet18_v1b_coco": _config("resnet18_v1b", "c4", **dict(_COCO, num_sample=256)),
    "resnet50_v1b_coco": _config("resnet50_v1b", "c4", **_COCO),
    "resnet101_v1d_coco": _config("resnet101_v1d", "c4", **_COCO),
    "fpn_resnet18_v1b_coco": _config("resnet18_v1b", "fpn", ("dense", "dense"),
                                     **dict(_FPN, roi_size=(7, 7), num_fcn_convs=2)),
    "fpn_resnet50_v1b_coco": _config("resnet50_v1b", "fpn", ("pool", "dense", "dense"),
                                     **dict(_FPN, num_fcn_convs=4)),
    "fpn_resnet101_v1d_coco": _config("resnet101_v1d", "fpn", ("pool", "dense", "dense"),
                                      **dict(_FPN, num_fcn_convs=4)),
    "fpn_syncbn_resnet18_v1b_coco": _config("resnet18_v1b", "fpn_syncbn", ("conv", "dense"),
                                            **dict(_FPN, short=(640, 800), roi_size=(7, 7), num_fcn_convs=2)),
    "fpn_syncbn_mobilenet1_0_coco": _config("mobilenet1_0", "fpn_syncbn", ("pool", "conv", "dense"),
                                            **dict(_FPN, short=(640, 800), num_fcn_convs=2)),
    # ``custom_mask_rcnn_fpn`` passes only what it builds, so the rest are the networks'
    # defaults: one stage (P2 at stride 16), Faster R-CNN's anchors and NMS
    "custom_fpn": _config("resnet18_v1b", "fpn", ("pool", "dense", "dense")),
}


class MaskHead(HybridBlock):
    """Per-class mask logits ``(R, C, 2S, 2S)`` of ``R`` region features ``(R, D, S, S)``."""

    def __init__(self, num_class: int, channels: int, num_convs: int = 0, norm_kwargs: dict | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        init = mx.init.Xavier(rnd_type="gaussian", factor_type="out", magnitude=2)
        with self.name_scope():
            if num_convs:
                self.deconv = nn.HybridSequential()
                for _ in range(num_convs):
                    self.deconv.add(nn.Conv2D(channels, 3, 1, 1, weight_initializer=init))
                    if norm_kwargs is not None:
                        self.deconv.add(SyncBatchNorm(**norm_kwargs))
                    self.deconv.add(nn.Activation("relu"))
                self.deconv.add(nn.Conv2DTranspose(channels, 2, 2, 0, weight_initializer=init))
                if norm_kwargs is not None:
                    self.deconv.add(SyncBatchNorm(**norm_kwargs))
            else:  # the C4 models: the transposed conv alone, directly on the head
                self.deconv = nn.Conv2DTranspose(channels, 2, 2, 0, weight_initializer=init)
            self.mask = nn.Conv2D(num_class, 1, 1, 0, weight_initializer=init)

    def hybrid_forward(self, F, x):
        return self.mask(F.relu(self.deconv(x)))


class MaskRCNN(FasterRCNN):
    """Faster R-CNN with a mask branch on its region features.

    Parameters
    ----------
    features, top_features, classes : as :class:`FasterRCNN`.
    mask_channels : width of the mask branch.
    rcnn_max_dets : detections per image that get a mask (at most the test proposals).
    target_roi_scale : mask side / pooled region side (2 for FPN: 14x14 regions, 28x28 masks).
    num_fcn_convs : 3x3 convs before the transposed conv (FPN models).
    mask_norm_kwargs : SyncBatchNorm arguments for the mask branch's norm layers (``*_syncbn``
        models); None: no norm layers.
    kwargs : :class:`FasterRCNN`'s.
    """

    def __init__(self, features: HybridBlock, top_features: HybridBlock | None, classes: Sequence[str],
                 mask_channels: int = 256, rcnn_max_dets: int = 1000, rpn_test_pre_nms: int = 6000,
                 rpn_test_post_nms: int = 1000, target_roi_scale: int = 1, num_fcn_convs: int = 0,
                 mask_norm_kwargs: dict | None = None, **kwargs: Any) -> None:
        super().__init__(features, top_features, classes, rpn_test_pre_nms=rpn_test_pre_nms,
                         rpn_test_post_nms=rpn_test_post_nms, **kwargs)
        self.rcnn_max_dets = min(rcnn_max_dets, rpn_test_pre_nms, rpn_test_post_nms)
        # the masks' side: C4 heads halve the regions in layer4, the transposed conv doubles them
        self.target_size = (self._roi_size[0] * target_roi_scale, self._roi_size[1] * target_roi_scale)
        self._mask_args = (mask_channels, num_fcn_convs, mask_norm_kwargs)
        with self.name_scope():
            self.mask = MaskHead(self.num_class, *self._mask_args)

    def hybrid_forward(self, F, x, gt_box=None, gt_label=None):
        outputs, features, top = self._forward(F, x, gt_box, gt_label)
        if mx.autograd.is_training():
            indices = outputs[-1]  # (B, P) positive regions of each image
            offsets = F.contrib.arange_like(indices, axis=0).reshape((-1, 1)) * self._num_sample
            positives = F.take(top, F.broadcast_add(indices, offsets).reshape((-1,)))
            mask_pred = self.mask(positives).reshape((-4, self._batch_size, -1, 0, 0, 0))
            return outputs[:2] + (mask_pred,) + outputs[2:]
        ids, scores, boxes = outputs
        count = min(self.rcnn_max_dets, self.num_class * self.rpn.test_post_nms)
        # the best ``count`` detections of each image, gathered with one flat index
        order = F.slice_axis(F.argsort(scores.squeeze(axis=-1), axis=1, is_ascend=False), axis=1, begin=0, end=count)
        image = F.contrib.arange_like(order, axis=0).reshape((-1, 1))
        flat = F.broadcast_add(order, image * (self.num_class * self.rpn.test_post_nms)).reshape((-1,))
        ids, scores, boxes = (F.take(a.reshape((-3, 0)), flat).reshape((-4, -1, count, 0))
                              for a in (ids, scores, boxes))
        with mx.autograd.pause():
            batch = F.broadcast_like(image, order).reshape((-1, 1))
            rois = F.stop_gradient(F.concat(batch, boxes.reshape((-3, 0)), dim=-1))
        pooled = self._pool(F, features, rois)
        logits = self.mask(self.top_features(pooled) if self.top_features is not None else pooled)
        # each detection's mask is the channel of its class (-1, no detection: class 0's)
        cls = F.clip(ids.reshape((-1,)), 0, self.num_class - 1)
        logits = F.gather_nd(logits, F.stack(F.contrib.arange_like(cls, axis=0), cls, axis=0))
        return ids, scores, boxes, F.sigmoid(logits.reshape((-4, -1, count, 0, 0)))

    def reset_class(self, classes: Sequence[str], reuse_weights: Any = None) -> None:
        """As :meth:`FasterRCNN.reset_class`; the mask predictor's reused channels are kept too."""
        mapping = class_index_map(reuse_weights, self.classes, classes)
        old = self.mask.mask
        super().reset_class(classes, reuse_weights)
        ctx = old.weight.list_ctx()
        new = nn.Conv2D(len(classes), 1, 1, 0, in_channels=old.weight.shape[1], prefix=old.prefix,
                        weight_initializer=mx.init.Xavier(rnd_type="gaussian", factor_type="out", magnitude=2))
        new.initialize(ctx=ctx)
        for name in ("weight", "bias"):
            src, dst = getattr(old, name).data().asnumpy(), getattr(new, name).data().asnumpy()
            for k, v in mapping.items():
                dst[k] = src[v]
            getattr(new, name).set_data(mx.nd.array(dst, dtype=dst.dtype))
        self.mask.mask = new


def _box_head(layers: Sequence[str], norm_kwargs: dict) -> HybridBlock | None:
    if not layers:
        return None
    head = nn.HybridSequential()
    for layer in layers:
        if layer == "pool":
            head.add(nn.AvgPool2D(pool_size=3, strides=2, padding=1))
        elif layer == "conv":
            head.add(nn.Conv2D(256, 3, padding=1), SyncBatchNorm(**norm_kwargs), nn.Activation("relu"))
        else:
            head.add(nn.Dense(1024, weight_initializer=mx.init.Normal(0.01)), nn.Activation("relu"))
    return head


def mask_rcnn(config: str, classes: Sequence[str] | str = "coco", pretrained_base: bool | str = False,
              transfer: str | None = None, num_devices: int = 0, base_network_name: str | None = None,
              dataset: str | None = None, minimal_opset: bool | None = None,
              features: Any = None, top_features: Any = None, norm_layer: Any = None, norm_kwargs: dict | None = None,
              sym_norm_layer: Any = None, sym_norm_kwargs: dict | None = None, num_box_head_conv: int | None = None,
              num_box_head_conv_filters: int | None = None, num_box_head_dense_filters: int | None = None,
              num_fpn_filters: int | None = None,
              **options: Any) -> MaskRCNN:
    """A Mask R-CNN in one of GluonCV's configurations.

    Parameters
    ----------
    config : a key of :data:`CONFIGS`: GluonCV's model name without ``mask_rcnn_``
        (``custom_fpn`` for ``custom_mask_rcnn_fpn``).
    classes : foreground class names, or ``"coco"``.
    pretrained_base : start the backbone from its ImageNet weights, fetched through the hub's
        cache (GluonCV's default is ``True``; the hub's ``False`` never downloads unasked).
    transfer : ``"coco"`` (``custom_fpn``): start from the published FPN model of this
        backbone and keep the predictors of the classes both share.
    num_devices : devices the ``*_syncbn`` models synchronise BatchNorm over (0: all).
    base_network_name : ``custom_fpn``'s backbone: ``resnet18_v1b`` (default),
        ``resnet50_v1b`` or ``resnet101_v1d``.
    options : :class:`MaskRCNN` arguments overriding the configuration's (``rcnn_max_dets``,
        ``rpn_test_post_nms``, ``per_device_batch_size`` ...).

    ``dataset`` is accepted for GluonCV's call pattern and ignored: it only names GluonCV's model.
    ``minimal_opset`` is accepted as False only; GluonCV's blocks and layer options (``features``,
    ``top_features``, ``norm_layer``, ``norm_kwargs``, ``sym_norm_layer``, ``sym_norm_kwargs``,
    ``num_box_head_conv``, ``num_box_head_conv_filters``, ``num_box_head_dense_filters``,
    ``num_fpn_filters``) left out only: the hub builds them from ``config``; others raise ValueError.
    """
    check_gluoncv_structure(
        f"Mask R-CNN {config}",
        {"minimal_opset": minimal_opset, **{k: v for k, v in locals().items() if k in ('features', 'top_features', 'norm_layer', 'norm_kwargs', 'sym_norm_layer', 'sym_norm_kwargs', 'num_box_head_conv', 'num_box_head_conv_filters', 'num_box_head_dense_filters', 'num_fpn_filters')}},
        {"minimal_opset": False, **dict.fromkeys(('features', 'top_features', 'norm_layer', 'norm_kwargs', 'sym_norm_layer', 'sym_norm_kwargs', 'num_box_head_conv', 'num_box_head_conv_filters', 'num_box_head_dense_filters', 'num_fpn_filters'), BUILT_FROM_NAME)})
    if config not in CONFIGS:
        raise ValueError(f"unknown Mask R-CNN configuration {config!r}; known: {', '.join(sorted(CONFIGS))}")
    names = BY_DATASET.get(classes, classes) if isinstance(classes, str) else tuple(classes)
    if isinstance(names, str) or not names:
        raise ValueError(f"classes must be 'coco' or a non-empty list of names, got {classes!r}")
    spec = dict(CONFIGS[config])
    if base_network_name is not None:
        if config != "custom_fpn" or base_network_name not in ("resnet18_v1b", "resnet50_v1b", "resnet101_v1d"):
            raise ValueError(f"base_network_name applies to custom_fpn with resnet18_v1b, resnet50_v1b or "
                             f"resnet101_v1d, got {base_network_name!r} for {config!r}")
        spec["base"] = base_network_name
    if transfer is not None:
        if config != "custom_fpn":
            raise ValueError(f"transfer= applies to the custom_fpn configuration, not {config!r}")
        import gluon_hub

        net = gluon_hub.load(f"cv/mask_rcnn_fpn_{spec['base']}_{transfer}", pretrained=True, **options)
        net.reset_class(names, reuse_weights=[c for c in names if c in net.classes])
        return net
    sync = spec["head"] == "fpn_syncbn"
    norm_kwargs = {"num_devices": num_devices} if num_devices >= 1 else {}
    hub_name = _HUB_NAMES.get(spec["base"], spec["base"])
    if sync:
        net = backbone(hub_name, pretrained_base, norm_layer=SyncBatchNorm, norm_kwargs=norm_kwargs)
    else:  # small detection batches: the backbone keeps its ImageNet statistics
        net = backbone(hub_name, pretrained_base, use_global_stats=True)
    if spec["head"] == "c4":
        features, top = nn.HybridSequential(), nn.HybridSequential()
        features.add(*[getattr(net, name) for name in _C4])
        top.add(net.layer4)
        patterns = _C4_TRAIN
    else:
        if not spec["base"].startswith("resnet"):
            # GluonCV keys these files by the backbone's generated names (``mobilenet0_conv0_weight``):
            # give the parameters those names before the pyramid's symbol is traced
            _shared(gluoncv_names(net))
        features = fpn_features(net, _MASK_TAPS[spec["base"]], sync_norm=sync, num_devices=num_devices)
        top = None
        patterns = "(?!.*moving)" if sync else _CUSTOM_TRAIN if config == "custom_fpn" else _FPN_TRAIN
    net = MaskRCNN(features, top, names, box_features=_box_head(spec["box_head"], norm_kwargs),
                   train_patterns=patterns, mask_norm_kwargs=norm_kwargs if sync else None,
                   **{**spec["options"], **options})
    if config == "custom_fpn":  # its heads leave P3-P6 unused: no parameter may wait for the first call
        shape_parameters(net, mx.sym.Group(list(net(mx.sym.var("data")))), (1, 3, 512, 512))
        # and MXNet's warning about them, on every hybridized first call, is expected here
        warnings.filterwarnings("ignore", message=r"Parameter (P[3-6]_conv1_(weight|bias)(, )?)+ is not used by "
                                "any computation", category=UserWarning)
    return net


__all__ = ["CONFIGS", "MaskHead", "MaskRCNN", "mask_rcnn", "paste_masks"]
