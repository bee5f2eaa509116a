"""YOLOv3 (Redmon and Farhadi, arXiv:1804.02767) as GluonCV 0.10 lays it out.

The backbone is one of the plugin's classification networks (DarkNet-53 or MobileNet),
cut into three stages of stride 8, 16 and 32. Detection runs coarse to fine: each scale
predicts ``3 * (5 + classes)`` numbers per cell, then its route is upsampled and joined
to the next finer stage.

In inference the network returns ``(class ids, scores, boxes)`` like SSD. In training mode
it returns GluonCV's tuple (boxes, anchors, offsets, feature-map templates, raw centres,
raw scales, objectness, class logits); the YOLOv3 loss and target generation are not
part of this module.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from gluon_hub import head_argument
from gluon_hub.compat import mx

from ...common.backbones.features import backbone
from ...common.blocks import BatchNorm, check_gluoncv_structure, conv_norm
from ...common.boxes import class_index_map, nms_split, per_class_detections, yolo_offset_grid
from ..classes import BY_DATASET, keep_named_classes

nn = mx.gluon.nn
HybridBlock = mx.gluon.HybridBlock

#: anchor (width, height) pairs in pixels for strides 8, 16, 32 (YOLOv3's COCO k-means)
ANCHORS = ([10, 13, 16, 30, 33, 23], [30, 61, 62, 45, 59, 119], [116, 90, 156, 198, 373, 326])
STRIDES = (8, 16, 32)
#: backbone -> (stage boundaries in its ``features``, detection-block widths, coarse first)
BACKBONES = {
    "darknet53": ((15, 24, None), (512, 256, 128)),
    "mobilenet1.0": ((33, 69, -2), (512, 256, 128)),
    "mobilenet0.25": ((33, 69, -2), (256, 128, 128)),
}
_NORM = {"epsilon": 1e-5, "momentum": 0.9}


def _conv(channels: int, kernel: int, norm_layer: Any, norm_kwargs: dict | None) -> HybridBlock:
    """Conv, BatchNorm, LeakyReLU(0.1): DarkNet's unit."""
    return conv_norm(channels, kernel, padding=kernel // 2, act="leaky", norm_layer=norm_layer,
                     norm_kwargs=norm_kwargs, norm_options=_NORM)


class YOLODetectionBlockV3(HybridBlock):
    """Five alternating 1x1/3x3 convs (the route) and one 3x3 conv (the tip)."""

    def __init__(self, channels: int, norm_layer: Any = BatchNorm, norm_kwargs: dict | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        with self.name_scope():
            self.body = nn.HybridSequential(prefix="")
            for kernel in (1, 3, 1, 3, 1):
                self.body.add(_conv(channels * (2 if kernel == 3 else 1), kernel, norm_layer, norm_kwargs))
            self.tip = _conv(channels * 2, 3, norm_layer, norm_kwargs)

    def hybrid_forward(self, F, x):
        route = self.body(x)
        return route, self.tip(route)


class YOLOOutputV3(HybridBlock):
    """One scale's predictions decoded into corner boxes and per-class scores."""

    def __init__(self, index: int, num_classes: int, anchors: Sequence[float], stride: int,
                 alloc_size: tuple[int, int] = (128, 128), **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._num_classes = num_classes
        self._num_anchors = len(anchors) // 2
        self._stride = stride
        with self.name_scope():
            self.prediction = nn.Conv2D(self._num_anchors * self._num_pred, 1)
            self.anchors = self.params.get_constant(
                f"anchor_{index}", np.asarray(anchors, dtype="float32").reshape(1, 1, -1, 2))
            self.offsets = self.params.get_constant(f"offset_{index}", yolo_offset_grid(alloc_size))

    @property
    def _num_pred(self) -> int:
        return 5 + self._num_classes

    def reset_class(self, num_classes: int, mapping: dict[int, int]) -> None:
        """New class count; box, objectness and the ``{new: old}`` class rows are kept."""
        old = self.prediction
        old_pred, self._num_classes = self._num_pred, num_classes
        new = nn.Conv2D(self._num_anchors * self._num_pred, 1, in_channels=old.weight.shape[1],
                        prefix=old.prefix)
        new.initialize(ctx=old.weight.list_ctx())
        for old_param, new_param in ((old.weight, new.weight), (old.bias, new.bias)):
            src, dst = old_param.data().asnumpy(), new_param.data().asnumpy()
            for a in range(self._num_anchors):
                dst[a * self._num_pred:a * self._num_pred + 5] = src[a * old_pred:a * old_pred + 5]
                for k, v in mapping.items():
                    dst[a * self._num_pred + 5 + k] = src[a * old_pred + 5 + v]
            new_param.set_data(mx.nd.array(dst, dtype=dst.dtype))
        self.prediction = new

    def hybrid_forward(self, F, x, anchors, offsets):
        pred = self.prediction(x).reshape((0, self._num_anchors * self._num_pred, -1))
        pred = pred.transpose(axes=(0, 2, 1)).reshape((0, -1, self._num_anchors, self._num_pred))
        raw_centers = pred.slice_axis(axis=-1, begin=0, end=2)
        raw_scales = pred.slice_axis(axis=-1, begin=2, end=4)
        objectness = pred.slice_axis(axis=-1, begin=4, end=5)
        class_pred = pred.slice_axis(axis=-1, begin=5, end=None)
        offsets = F.slice_like(offsets, x, axes=(2, 3)).reshape((1, -1, 1, 2))
        centers = F.broadcast_add(F.sigmoid(raw_centers), offsets) * self._stride
        half = F.broadcast_mul(F.exp(raw_scales), anchors) / 2.0
        bbox = F.concat(centers - half, centers + half, dim=-1)  # (B, cells, anchors, 4)
        if mx.autograd.is_training():
            return bbox.reshape((0, -1, 4)), raw_centers, raw_scales, objectness, class_pred, anchors, offsets
        scores = F.broadcast_mul(F.sigmoid(class_pred), F.sigmoid(objectness))
        return per_class_detections(F, scores.reshape((0, -3, -1)), bbox.reshape((0, -3, -1)),
                                    self._num_classes, None)


class YOLOV3(HybridBlock):
    """YOLOv3 over backbone ``stages`` (fine to coarse) with one output per stage.

    Parameters
    ----------
    stages : three blocks; stage ``i`` has stride ``strides[i]``.
    channels : widths of the detection blocks, coarse scale first.
    anchors, strides : anchor sizes and strides, fine scale first.
    classes : names of the foreground classes.
    alloc_size : side of the stored cell-offset grid; inputs up to ``alloc * 32`` pixels.
    nms_thresh, nms_topk, post_nms : see :meth:`set_nms`.
    """

    def __init__(self, stages: Sequence[HybridBlock], channels: Sequence[int], anchors: Sequence[Sequence[float]],
                 strides: Sequence[int], classes: Sequence[str], alloc_size: tuple[int, int] = (128, 128),
                 nms_thresh: float = 0.45, nms_topk: int = 400, post_nms: int = 100,
                 norm_layer: Any = BatchNorm, norm_kwargs: dict | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not len(stages) == len(channels) == len(anchors) == len(strides):
            raise ValueError("YOLOV3 needs as many stages as channels, anchor groups and strides")
        self._classes = tuple(classes)
        self.nms_thresh, self.nms_topk, self.post_nms = nms_thresh, nms_topk, post_nms
        with self.name_scope():
            self.stages = nn.HybridSequential()
            self.transitions = nn.HybridSequential()
            self.yolo_blocks = nn.HybridSequential()
            self.yolo_outputs = nn.HybridSequential()
            for i, (stage, width, anchor, stride) in enumerate(zip(stages, channels, anchors[::-1], strides[::-1])):
                self.stages.add(stage)
                self.yolo_blocks.add(YOLODetectionBlockV3(width, norm_layer, norm_kwargs))
                self.yolo_outputs.add(YOLOOutputV3(i, len(classes), anchor, stride, alloc_size))
                if i > 0:
                    self.transitions.add(_conv(width, 1, norm_layer, norm_kwargs))

    @property
    def classes(self) -> tuple[str, ...]:
        """Names of the foreground classes."""
        return self._classes

    @property
    def num_class(self) -> int:
        """Number of foreground classes."""
        return len(self._classes)

    def set_nms(self, nms_thresh: float = 0.45, nms_topk: int = 400, post_nms: int = 100) -> None:
        """Change NMS: ``nms_thresh`` outside (0, 1) disables it; ``nms_topk`` boxes per image
        enter it (-1: all); ``post_nms`` boxes are returned (-1: all)."""
        self._clear_cached_op()
        self.nms_thresh, self.nms_topk, self.post_nms = nms_thresh, nms_topk, post_nms

    def tips(self, F: Any, x: Any) -> list[Any]:
        """Each scale's detection-block tip, coarse first: what its output convolution reads."""
        routes = []
        for stage in self.stages:
            x = stage(x)
            routes.append(x)
        tips = []
        for i, block in enumerate(self.yolo_blocks):
            x, tip = block(x)
            tips.append(tip)
            if i == len(routes) - 1:
                break
            x = self.transitions[i](x)
            finer = routes[-2 - i]
            up = x.repeat(axis=-1, repeats=2).repeat(axis=-2, repeats=2)
            x = F.concat(F.slice_like(up, finer, axes=(2, 3)), finer, dim=1)
        return tips

    def hybrid_forward(self, F, x):
        training = mx.autograd.is_training()
        outputs = []
        for tip, head in zip(self.tips(F, x), self.yolo_outputs):
            outputs.append(head(tip))
            if training:  # an all-zero 1x1-channel map per scale, for target generation
                outputs[-1] += (F.zeros_like(tip.slice_axis(axis=0, begin=0, end=1)
                                             .slice_axis(axis=1, begin=0, end=1)),)
        if training:
            boxes, centers, scales, objectness, class_pred, anchors, offsets, maps = zip(*outputs)
            return (F.concat(*boxes, dim=1), list(anchors), list(offsets), list(maps),
                    *[F.concat(*[t.reshape((0, -3, -1)) for t in part], dim=1)
                      for part in (centers, scales, objectness, class_pred)])
        return nms_split(F, F.concat(*outputs, dim=1), self.nms_thresh, self.nms_topk, self.post_nms)

    def reset_class(self, classes: Sequence[str], reuse_weights: Any = None) -> None:
        """Replace the class predictions for new ``classes`` (transfer learning); see
        :meth:`gluon_cv_core.detection.models.ssd.SSD.reset_class` for ``reuse_weights``."""
        mapping = class_index_map(reuse_weights, self._classes, classes)
        self._clear_cached_op()
        for head in self.yolo_outputs:
            head.reset_class(len(classes), mapping)
        self._classes = tuple(classes)


#: largest |output| of each term in a trained YOLOv3's range (:func:`scale_yolo3_heads`), as
#: slices of a prediction's ``5 + classes`` numbers per anchor: centre logits within 4 (sigmoid
#: 0.98 of a cell), log-scales within 2 (7.4 anchors), objectness and class logits within 8
#: (sigmoid 0.9997)
_HEAD_RANGES = {"center": (slice(0, 2), 4.0), "scale": (slice(2, 4), 2.0),
                "objectness": (slice(4, 5), 8.0), "class": (slice(5, None), 8.0)}


def scale_yolo3_heads(net: YOLOV3, x: Any) -> dict[str, list[float]]:
    """Scale the initialised ``net``'s output convolutions so that on the batch ``x`` each
    scale's centre, log-scale, objectness and class terms have their largest |output| in a
    trained YOLOv3's range (:data:`_HEAD_RANGES`); returns each term's factor per scale,
    coarse first.

    Random He weights through DarkNet-53's 23 residual blocks grow the features to 1e5 (each
    residual sum adds its branch's variance to its input's), so every term reaches tens of
    thousands: objectness and class sigmoids give exactly 1.0 (NMS chooses among ties) and the
    exponentiated log-scales overflow to infinity. Each output convolution is read only by its
    decoder, so scaling the weight and bias rows of one term's channels (for every anchor)
    scales that term exactly. Used by the ONNX portability measurement
    (``gluon_hub_deploy._measure.TRAINED_LIKE``).
    """
    if not isinstance(net, YOLOV3):
        raise TypeError(f"scale_yolo3_heads takes a YOLOV3, not {type(net).__name__}")
    tips = net.tips(mx.nd, x if isinstance(x, mx.nd.NDArray) else mx.nd.array(x))
    factors: dict[str, list[float]] = {key: [] for key in _HEAD_RANGES}
    for head, tip in zip(net.yolo_outputs, tips):
        conv = head.prediction
        pred = conv(tip).asnumpy()
        pred = pred.reshape(pred.shape[0], head._num_anchors, head._num_pred, -1)
        channel = np.ones(head._num_pred, dtype=np.float32)
        for key, (terms, target) in _HEAD_RANGES.items():
            largest = float(np.abs(pred[:, :, terms]).max())
            channel[terms] = target / largest if largest > 0 else 1.0
            factors[key].append(float(channel[terms][0]))
        scale = np.tile(channel, head._num_anchors)  # output channel a * (5 + classes) + k
        conv.weight.set_data(conv.weight.data() * mx.nd.array(scale).reshape((-1, 1, 1, 1)))
        conv.bias.set_data(conv.bias.data() * mx.nd.array(scale))
    return factors


@head_argument("classes", transfer=keep_named_classes)
def yolo3(base: str, classes: Sequence[str] | str = "voc", pretrained_base: bool | str = False,
          transfer: str | None = None, norm_layer: Any = BatchNorm, norm_kwargs: dict | None = None,
          ignore_iou_thresh: float | None = None, pos_iou_thresh: float | None = None,
          **options: Any) -> YOLOV3:
    """A YOLOv3 detector on one of GluonCV's backbones.

    Parameters
    ----------
    base : ``"darknet53"``, ``"mobilenet1.0"`` or ``"mobilenet0.25"``.
    classes : foreground class names, or ``"voc"`` / ``"coco"`` for those datasets' classes.
    pretrained_base : start the backbone from its ImageNet weights through the hub's cache
        (GluonCV's default is ``True``; the hub's is ``False``, so building never downloads).
    transfer : ``"voc"`` or ``"coco"``: start from that dataset's published model on this
        backbone and keep the classes both share (GluonCV's ``*_custom(..., transfer=...)``).
    norm_layer, norm_kwargs : normalization of the backbone and the detection layers.
    options : :class:`YOLOV3` arguments (``nms_thresh``, ``post_nms``, ``alloc_size`` ...).
    ``ignore_iou_thresh`` and ``pos_iou_thresh`` (GluonCV's training-target thresholds, stored on its
    network) are accepted with GluonCV's values, 0.7 and 1.0, which the hub's training uses; the
    recipe takes another ``ignore_iou_thresh`` (``detection.training.yolo3.YOLO3Recipe``), so the
    network refuses one.
    """
    check_gluoncv_structure(f"YOLOv3 {base}", {"ignore_iou_thresh": ignore_iou_thresh, "pos_iou_thresh": pos_iou_thresh},
                            {"ignore_iou_thresh": 0.7, "pos_iou_thresh": 1.0})
    if base not in BACKBONES:
        raise ValueError(f"unknown YOLOv3 backbone {base!r}; known: {', '.join(BACKBONES)}")
    names = BY_DATASET.get(classes, classes) if isinstance(classes, str) else tuple(classes)
    if isinstance(names, str) or not names:
        raise ValueError(f"classes must be 'voc', 'coco' or a non-empty list of names, got {classes!r}")
    if transfer is not None:
        import gluon_hub

        net = gluon_hub.load(f"cv/yolo3_{base}_{transfer}", pretrained=True)
        net.reset_class(names, reuse_weights=[c for c in names if c in net.classes])
        return net
    cuts, channels = BACKBONES[base]
    features = backbone(base, pretrained_base, norm_layer=norm_layer, norm_kwargs=norm_kwargs).features
    stages = [features[:cuts[0]], features[cuts[0]:cuts[1]], features[cuts[1]:cuts[2]]]
    return YOLOV3(stages, channels, ANCHORS, STRIDES, names, norm_layer=norm_layer, norm_kwargs=norm_kwargs,
                  **options)


__all__ = ["ANCHORS", "BACKBONES", "STRIDES", "YOLODetectionBlockV3", "YOLOOutputV3", "YOLOV3", "scale_yolo3_heads",
           "yolo3"]
