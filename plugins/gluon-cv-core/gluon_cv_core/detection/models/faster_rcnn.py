"""Faster R-CNN (Ren et al., arXiv:1506.01497) and its FPN form, as GluonCV 0.10 lays them out.

One network class, :class:`FasterRCNN`, and one factory, :func:`faster_rcnn`, driven by
:data:`CONFIGS` (the facts of GluonCV's ``faster_rcnn/predefined_models.py``). Backbones are
the plugin's ResNet-v1b/v1d: without FPN, ``layer1``-``layer3`` feed the RPN and ROIAlign and
``layer4`` runs on each region; with FPN a pyramid (:mod:`.fpn`) feeds both, and regions are
pooled from the level their size selects. As in GluonCV, the backbone's BatchNorm is frozen
(``use_global_stats``) except in the ``*_syncbn`` models, which train it with SyncBatchNorm.

In inference the network returns ``(class ids, scores, boxes)`` of shapes ``(B, C*N, 1)``,
``(B, C*N, 1)`` and ``(B, C*N, 4)``: per-class NMS over the ``N`` proposals of each of the
``C`` classes; suppressed rows have id -1. In training, ``net(x, gt_boxes, gt_labels)``
returns GluonCV's tuple (class logits, box offsets, sampled proposals, samples, matches, raw
RPN scores and offsets, anchors, class and box targets, box masks, positive indices).
"""

from __future__ import annotations

from typing import Any, Sequence

from gluon_hub import head_argument
from gluon_hub.compat import mx

from ...common.backbones.features import backbone
from ...common.blocks import BUILT_FROM_NAME, check_gluoncv_structure
from ...common.boxes import class_index_map
from ...common.norm import SyncBatchNorm
from ..classes import BY_DATASET, keep_named_classes
from .fpn import fpn_features
from .rpn import RPN

nn = mx.gluon.nn
HybridBlock = mx.gluon.HybridBlock

_C4 = ["conv1", "bn1", "relu", "maxpool", "layer1", "layer2", "layer3"]
_TAPS = {
    "resnet18_v1b": ["layers1_relu3_fwd", "layers2_relu3_fwd", "layers3_relu3_fwd", "layers4_relu3_fwd"],
    "resnet50_v1b": ["layers1_relu8_fwd", "layers2_relu11_fwd", "layers3_relu17_fwd", "layers4_relu8_fwd"],
    "resnet101_v1d": ["layers1_relu8_fwd", "layers2_relu11_fwd", "layers3_relu68_fwd", "layers4_relu8_fwd"],
    # a ResNeSt block has four ReLUs (two in its split-attention convolution)
    "resnest50": ["layers1_relu11_fwd", "layers2_relu15_fwd", "layers3_relu23_fwd", "layers4_relu11_fwd"],
    "resnest101": ["layers1_relu11_fwd", "layers2_relu15_fwd", "layers3_relu91_fwd", "layers4_relu11_fwd"],
    "resnest269": ["layers1_relu11_fwd", "layers2_relu119_fwd", "layers3_relu191_fwd", "layers4_relu31_fwd"],
}
#: backbone arguments beyond the normalization: GluonCV switches the ResNeSts' DropBlock off
_BASE_KWARGS = {"resnest50": {"dropblock_prob": 0.0}, "resnest101": {"dropblock_prob": 0.0},
                "resnest269": {"dropblock_prob": 0.0}}
_VOC = dict(short=600, max_size=1000, nms_thresh=0.3, nms_topk=400, post_nms=100, clip=None,
            scales=(2, 4, 8, 16, 32), rpn_test_post_nms=300, rpn_min_size=16, max_num_gt=100)
_COCO = dict(short=800, max_size=1333, nms_thresh=0.5, nms_topk=-1, post_nms=-1, clip=4.14,
             scales=(2, 4, 8, 16, 32), rpn_test_post_nms=1000, rpn_min_size=1, max_num_gt=100)
_FPN = dict(_COCO, min_stage=2, max_stage=6, roi_size=(7, 7), strides=(4, 8, 16, 32, 64),
            alloc_size=(384, 384), num_sample=512)
#: GluonCV's ``*_custom`` constructors pass only the classes, so they get FasterRCNN's own
#: defaults (anchor scales 8-32, 300 proposals, 300 ground-truth boxes per image)
_CUSTOM: dict[str, Any] = {}


def _config(base: str, head: str = "c4", box_convs: int = 0, **options: Any) -> dict[str, Any]:
    return dict(base=base, head=head, box_convs=box_convs, options=options)


#: configuration name -> architecture; the name is GluonCV's model name without ``faster_rcnn_``
CONFIGS: dict[str, dict[str, Any]] = {
    "resnet50_v1b_voc": _config("resnet50_v1b", **_VOC),
    "resnet50_v1b_coco": _config("resnet50_v1b", **_COCO),
    "resnet50_v1b_custom": _config("resnet50_v1b", **_CUSTOM),
    "resnet101_v1d_voc": _config("resnet101_v1d", **_VOC),
    "resnet101_v1d_coco": _config("resnet101_v1d", **_COCO),
    "resnet101_v1d_custom": _config("resnet101_v1d", **_CUSTOM),
    "fpn_resnet50_v1b_coco": _config("resnet50_v1b", "fpn", **_FPN),
    "fpn_resnet101_v1d_coco": _config("resnet101_v1d", "fpn", **_FPN),
    "fpn_syncbn_resnet50_v1b_coco": _config("resnet50_v1b", "fpn_syncbn", 1, **dict(_FPN, short=(640, 800),
                                                                                    rpn_channel=256)),
    "fpn_syncbn_resnet101_v1d_coco": _config("resnet101_v1d", "fpn_syncbn", 4, **dict(_FPN, short=(640, 800),
                                                                                      rpn_channel=256)),
    "fpn_syncbn_resnest50_coco": _config("resnest50", "fpn_syncbn", 4, **dict(_FPN, short=(640, 800),
                                                                              rpn_channel=256)),
    "fpn_syncbn_resnest101_coco": _config("resnest101", "fpn_syncbn", 4, **dict(_FPN, short=(640, 800),
                                                                                rpn_channel=256)),
    "fpn_syncbn_resnest269_coco": _config("resnest269", "fpn_syncbn", 4, **dict(_FPN, short=(640, 864),
                                                                                max_size=1440, rpn_channel=256)),
}

_C4_TRAIN = r".*dense|.*rpn|.*down(2|3|4)_conv|.*layers(2|3|4)_conv"


class RCNNTargetSampler(HybridBlock):
    """Samples ``num_sample`` training regions per image from the proposals and the ground truth.

    Up to ``pos_ratio * num_sample`` positives (IoU >= ``pos_iou_thresh`` with a ground-truth
    box) and negatives for the rest, chosen in a random order, then sorted by area. Returns
    the regions, their labels (1 positive, -1 negative, 0 ignored) and matched box indices.
    The random draw is one ``(num_proposal + max_num_gt)`` uniform vector per image, GluonCV's,
    so both sample the same regions from the same seed.
    """

    def __init__(self, num_image: int, num_proposal: int, num_sample: int, pos_iou_thresh: float,
                 pos_ratio: float, max_num_gt: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._num_image, self._num_proposal, self._num_sample = num_image, num_proposal, num_sample
        self.max_pos = int(round(num_sample * pos_ratio))
        self._pos_iou_thresh, self._max_num_gt = pos_iou_thresh, max_num_gt

    def _pick(self, F, order, index, mask, matches, begin: int, count: int, negative: float):
        chosen = F.slice_axis(order, axis=0, begin=begin, end=begin + count)
        samples = F.take(mask, chosen)
        samples = F.where(samples == 3, F.ones_like(samples), samples)
        samples = F.where(samples == negative, F.ones_like(samples) * -1, samples)
        return F.take(index, chosen), samples, F.take(matches, chosen)

    def hybrid_forward(self, F, rois, scores, gt_boxes):
        out_rois, out_samples, out_matches = [], [], []
        with mx.autograd.pause():
            for i in range(self._num_image):  # one random draw per image, as GluonCV
                roi = F.slice_axis(rois, axis=0, begin=i, end=i + 1).squeeze(axis=0)
                score = F.slice_axis(scores, axis=0, begin=i, end=i + 1).squeeze(axis=0)
                gt_box = F.slice_axis(gt_boxes, axis=0, begin=i, end=i + 1).squeeze(axis=0)
                # padding rows of the ground truth are all -1: a negative "score"
                gt_score = F.sign(F.sum(gt_box, axis=-1, keepdims=True) + 1)
                all_roi = F.concat(roi, gt_box, dim=0)
                all_score = F.concat(score, gt_score, dim=0).squeeze(axis=-1)
                ious = F.contrib.box_iou(all_roi, gt_box, format="corner")
                best, matches = ious.max(axis=-1), ious.argmax(axis=-1)
                # 3: positive, 2: negative candidate, 0: invalid proposal
                mask = F.ones_like(best) * 2
                mask = F.where(all_score < 0, F.zeros_like(mask), mask)
                mask = F.where(best >= self._pos_iou_thresh, F.ones_like(mask) * 3, mask)
                rand = F.random.uniform(0, 1, shape=(self._num_proposal + self._max_num_gt,))
                index = F.argsort(F.slice_like(rand, matches))
                mask, matches = F.take(mask, index), F.take(matches, index)
                pos = self._pick(F, F.argsort(mask, is_ascend=False), index, mask, matches, 0,
                                 self.max_pos, 2)
                rest = [F.slice_axis(a, axis=0, begin=self.max_pos, end=None) for a in (index, mask, matches)]
                rest[1] = F.where(rest[1] == 2, F.ones_like(rest[1]) * 4, rest[1])
                neg = self._pick(F, F.argsort(rest[1], is_ascend=False), *rest, 0,
                                 self._num_sample - self.max_pos, 4)
                indices, samples, picked = (F.concat(a, b, dim=0) for a, b in zip(pos, neg))
                chosen = all_roi.take(indices)
                x1, y1, x2, y2 = F.split(chosen, axis=-1, num_outputs=4, squeeze_axis=True)
                by_area = F.argsort((x2 - x1) * (y2 - y1))
                out_rois.append(chosen.take(by_area))
                out_samples.append(samples.take(by_area))
                out_matches.append(picked.take(by_area))
            return (F.stack(*out_rois, axis=0), F.stack(*out_samples, axis=0),
                    F.stack(*out_matches, axis=0))


def rcnn_targets(F, rois, samples, matches, gt_labels, gt_boxes, num_class: int, max_pos: int,
                 batch_size: int, num_rois: int):
    """Class targets ``(B, N)``, and for the first ``max_pos`` positives of each image the box
    targets and masks ``(B, max_pos, C, 4)`` and their indices ``(B, max_pos)``."""
    refs = F.broadcast_like(F.reshape(gt_labels, (0, 1, -1)), matches, lhs_axes=1, rhs_axes=1)
    matched = F.pick(refs, matches, axis=2)
    cls_targets = F.where(samples > 0.5, matched + 1, F.ones_like(matched) * -1)
    cls_targets = F.where(samples < -0.5, F.zeros_like(cls_targets), cls_targets)
    means = F.zeros((4,))
    stds = F.concat(F.ones((2,)) * 0.1, F.ones((2,)) * 0.2, dim=0)
    targets, masks = F.contrib.box_encode(samples, matches, rois, gt_boxes, means, stds)
    same_class = F.broadcast_equal(matched.reshape((0, -1)).expand_dims(2),
                                   F.arange(num_class).reshape((1, 1, -1)))
    order = F.argsort(F.slice_axis(masks, axis=-1, begin=0, end=1), axis=1, is_ascend=False)
    indices = F.slice_axis(order.reshape((batch_size, -1)), axis=1, begin=0, end=max_pos)
    # gather each image's rows at once: flat index = image * N + index
    flat = F.broadcast_add(indices, F.contrib.arange_like(indices, axis=0).reshape((-1, 1)) * num_rois)
    flat = flat.reshape((-1,))

    def gather(x):
        return F.take(x.reshape((-3, -2)), flat).reshape((batch_size, max_pos, -1))

    targets, masks, same_class = gather(targets), gather(masks), gather(same_class)
    box_targets = F.broadcast_axes(targets.expand_dims(2), axis=2, size=num_class)
    box_masks = F.broadcast_mul(masks.expand_dims(2), F.broadcast_axes(same_class.expand_dims(3), axis=3, size=4))
    return cls_targets, box_targets, box_masks, indices


class FasterRCNN(HybridBlock):
    """Two-stage detector: RPN proposals, ROIAlign features, per-class scores and boxes.

    Parameters
    ----------
    features : backbone up to the RPN's feature map (a block, or a pyramid returning a list).
    top_features : layers run on each pooled region before ``box_features`` (``layer4``), or None.
    classes : names of the foreground classes.
    box_features : head on the pooled regions; None: global average pooling.
    short, max_size : GluonCV's preferred input sizes (short side, longest side), kept as
        attributes for the transform presets.
    min_stage, max_stage : pyramid levels (2-6 for FPN; 4-4 for a single map).
    train_patterns : regular expression of the parameters GluonCV trains (:meth:`collect_train_params`).
    nms_thresh, nms_topk, post_nms, force_nms : see :meth:`set_nms`.
    roi_mode, roi_size, strides : ``"align"`` (ROIAlign) or ``"pool"`` (ROIPooling), the pooled
        region size and the feature stride(s).
    clip : cap of the decoded log-size offsets (None: no cap).
    rpn_channel, base_size, scales, ratios, alloc_size, rpn_* : the :class:`.rpn.RPN`'s.
    per_device_batch_size, num_sample, pos_iou_thresh, pos_ratio, max_num_gt : training
        sampler (:class:`RCNNTargetSampler`).
    """

    def __init__(self, features: HybridBlock, top_features: HybridBlock | None, classes: Sequence[str],
                 box_features: HybridBlock | None = None, short: int | tuple = 600, max_size: int = 1000,
                 min_stage: int = 4, max_stage: int = 4, train_patterns: str | None = None,
                 nms_thresh: float = 0.3, nms_topk: int = 400, post_nms: int = 100,
                 roi_mode: str = "align", roi_size: tuple[int, int] = (14, 14),
                 strides: int | Sequence[int] = 16, clip: float | None = None, rpn_channel: int = 1024,
                 base_size: int = 16, scales: Sequence[float] = (8, 16, 32),
                 ratios: Sequence[float] = (0.5, 1, 2), alloc_size: tuple[int, int] = (128, 128),
                 rpn_nms_thresh: float = 0.7, rpn_train_pre_nms: int = 12000, rpn_train_post_nms: int = 2000,
                 rpn_test_pre_nms: int = 6000, rpn_test_post_nms: int = 300, rpn_min_size: float = 16,
                 per_device_batch_size: int = 1, num_sample: int = 128, pos_iou_thresh: float = 0.5,
                 pos_ratio: float = 0.25, max_num_gt: int = 300, force_nms: bool = False,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not classes:
            raise ValueError("Faster R-CNN needs at least one class")
        if roi_mode not in ("align", "pool"):
            raise ValueError(f"roi_mode must be 'align' or 'pool', got {roi_mode!r}")
        num_stages = max_stage - min_stage + 1
        if num_stages > 1 and not (isinstance(strides, (list, tuple)) and len(strides) == len(scales) == num_stages):
            raise ValueError(f"{num_stages} pyramid levels need as many strides and scales, got "
                             f"strides={strides!r}, scales={scales!r}")
        self.classes = tuple(classes)
        self.short, self.max_size, self.train_patterns = short, max_size, train_patterns
        self.nms_thresh, self.nms_topk, self.post_nms, self.force_nms = nms_thresh, nms_topk, post_nms, force_nms
        self._roi_mode, self._roi_size, self._strides = roi_mode, tuple(roi_size), strides
        self._min_stage, self._max_stage, self._clip = min_stage, max_stage, clip
        self._batch_size, self._num_sample = per_device_batch_size, num_sample
        rpn_train_post_nms = min(rpn_train_post_nms, rpn_train_pre_nms)
        rpn_test_post_nms = min(rpn_test_post_nms, rpn_test_pre_nms)
        with self.name_scope():
            self.features = features
            self.top_features = top_features
            self.box_features = box_features
            self.class_predictor = nn.Dense(self.num_class + 1, weight_initializer=mx.init.Normal(0.01))
            self.box_predictor = nn.Dense(self.num_class * 4, weight_initializer=mx.init.Normal(0.001))
            self.rpn = RPN(rpn_channel, strides, base_size, scales, ratios, alloc_size, clip, rpn_nms_thresh,
                           rpn_train_pre_nms, rpn_train_post_nms, rpn_test_pre_nms, rpn_test_post_nms,
                           rpn_min_size)
            self.sampler = RCNNTargetSampler(per_device_batch_size, rpn_train_post_nms, num_sample,
                                             pos_iou_thresh, pos_ratio, max_num_gt)

    @property
    def num_class(self) -> int:
        """Number of foreground classes."""
        return len(self.classes)

    def collect_train_params(self, select: str | None = None) -> Any:
        """The parameters GluonCV's recipe trains (frozen-BatchNorm backbones keep their stem
        and first stage fixed), or those matching ``select``."""
        return self.collect_params(select if select is not None else self.train_patterns)

    def set_nms(self, nms_thresh: float = 0.3, nms_topk: int = 400, force_nms: bool = False,
                post_nms: int = 100) -> None:
        """Change NMS: ``nms_thresh`` outside (0, 1) disables it; the best ``nms_topk`` proposals
        of each class enter it (-1: all); ``force_nms`` suppresses across classes too.
        ``post_nms`` is stored for GluonCV compatibility (its forward pass ignores it too)."""
        self._clear_cached_op()
        self.nms_thresh, self.nms_topk, self.force_nms, self.post_nms = nms_thresh, nms_topk, force_nms, post_nms

    def _pool(self, F, features, rois):
        """ROI features; with a pyramid, each region from the level its size selects (FPN eq. 1).
        With one stage only the first map is pooled (GluonCV's custom Mask R-CNN pools P2 so)."""
        if self._min_stage == self._max_stage:
            if self._roi_mode == "pool":
                return F.ROIPooling(features[0], rois, self._roi_size, 1.0 / self._strides)
            return F.contrib.ROIAlign(features[0], rois, self._roi_size, 1.0 / self._strides, sample_ratio=2)
        top = min(self._max_stage, 5)  # P6 only feeds the RPN
        _, x1, y1, x2, y2 = F.split(rois, axis=-1, num_outputs=5)
        size = F.sqrt((x2 - x1 + 1) * (y2 - y1 + 1))
        level = F.floor(4 + F.log2(size / 224.0 + 1e-6))
        level = F.squeeze(F.clip(level, self._min_stage, top))
        pooled = []
        # every level pools every region and keeps its own: MXNet 1.9's CPU ROIAlign leaves
        # the rows of regions with batch index -1 uninitialized, so they cannot be masked out
        # that way (GluonCV does, and its FPN models give varying results on CPU)
        for i, stage in enumerate(range(self._min_stage, top + 1)):
            if self._roi_mode == "pool":
                feat = F.ROIPooling(features[i], rois, self._roi_size, 1.0 / self._strides[i])
            else:
                feat = F.contrib.ROIAlign(features[i], rois, self._roi_size, 1.0 / self._strides[i], sample_ratio=2)
            pooled.append(F.where(level == stage, feat, F.zeros_like(feat)))
        return F.ElementWiseSum(*pooled)

    def _head_features(self, F, top):
        """Region features for the class and the box predictors (one shared head here;
        the double-head detector gives each predictor its own)."""
        box_feat = (F.contrib.AdaptiveAvgPooling2D(top, output_size=1) if self.box_features is None
                    else self.box_features(top))
        return box_feat, box_feat

    def hybrid_forward(self, F, x, gt_box=None, gt_label=None):
        return self._forward(F, x, gt_box, gt_label)[0]

    def _forward(self, F, x, gt_box, gt_label):
        """``(outputs, feature maps, region features before box_features)``: heads built on
        this detector (Mask R-CNN's) reuse the maps and the regions' features."""
        features = self.features(x)
        features = list(features) if isinstance(features, (list, tuple)) else [features]
        training = mx.autograd.is_training()
        if training:
            if gt_box is None or gt_label is None:
                raise ValueError("Faster R-CNN in training mode needs net(x, gt_boxes, gt_labels)")
            rpn_score, rpn_box, raw_rpn_score, raw_rpn_box, anchors = self.rpn(x, *features)
            rpn_box, samples, matches = self.sampler(rpn_box, rpn_score, gt_box)
            num_roi = self._num_sample
        else:
            _, rpn_box = self.rpn(x, *features)
            num_roi = self.rpn.test_post_nms
        with mx.autograd.pause():
            image = F.broadcast_like(F.contrib.arange_like(rpn_box, axis=0).reshape((-1, 1, 1)),
                                     rpn_box.slice_axis(axis=-1, begin=0, end=1))
            rois = F.stop_gradient(F.concat(image, rpn_box, dim=-1).reshape((-1, 5)))
        pooled = self._pool(F, features, rois)
        top = self.top_features(pooled) if self.top_features is not None else pooled
        cls_feat, box_feat = self._head_features(F, top)
        cls_pred = self.class_predictor(cls_feat).reshape((-1, num_roi, self.num_class + 1))
        if training:
            cls_targets, box_targets, box_masks, indices = rcnn_targets(
                F, rpn_box, samples, matches, gt_label, gt_box, self.num_class, self.sampler.max_pos,
                self._batch_size, num_roi)
            offsets = F.contrib.arange_like(indices, axis=0).reshape((-1, 1)) * num_roi
            positives = F.take(box_feat, F.broadcast_add(indices, offsets).reshape((-1,)))
            box_pred = self.box_predictor(positives).reshape((self._batch_size, -1, self.num_class, 4))
            return (cls_pred, box_pred, rpn_box, samples, matches, raw_rpn_score, raw_rpn_box, anchors,
                    cls_targets, box_targets, box_masks, indices), features, top
        return self._detect(F, cls_pred, self.box_predictor(box_feat), rpn_box, num_roi), features, top

    def _detect(self, F, cls_pred, box_pred, rpn_box, num_roi: int):
        """Per-class decoding and NMS of every proposal: ``(ids, scores, boxes)``."""
        scores = F.softmax(cls_pred, axis=-1).slice_axis(axis=-1, begin=1, end=None)
        scores = scores.transpose((0, 2, 1)).expand_dims(-1)  # (B, C, N, 1)
        ids = F.broadcast_add(F.zeros_like(scores), F.arange(self.num_class).reshape((1, -1, 1, 1)))
        keep = scores > 0.01
        ids = F.where(keep, ids, F.ones_like(ids) * -1)
        scores = F.where(keep, scores, F.zeros_like(scores))
        offsets = box_pred.reshape((-1, num_roi, self.num_class, 4)).transpose((0, 2, 1, 3))  # (B, C, N, 4)
        anchors = F.broadcast_like(rpn_box.expand_dims(1), offsets, lhs_axes=(1,), rhs_axes=(1,))
        # box_decode takes one anchor set for the whole batch: decode every row as one image
        boxes = F.contrib.box_decode(offsets.reshape((1, -1, 4)), anchors.reshape((1, -1, 4)), 0.1, 0.1, 0.2, 0.2,
                                     clip=-1.0 if self._clip is None else float(self._clip), format="corner")
        boxes = boxes.reshape((-1, num_roi, 4))
        rows = F.concat(ids.reshape((-3, 0, 0)), scores.reshape((-3, 0, 0)), boxes, dim=-1)  # (B*C, N, 6)
        if self.force_nms:
            rows = rows.reshape((-1, self.num_class * num_roi, 6))
        rows = F.contrib.box_nms(rows, overlap_thresh=self.nms_thresh, topk=self.nms_topk, valid_thresh=0.0001,
                                 id_index=0, score_index=1, coord_start=2, force_suppress=self.force_nms)
        rows = rows.reshape((-1, self.num_class * num_roi, 6))
        return (rows.slice_axis(axis=-1, begin=0, end=1), rows.slice_axis(axis=-1, begin=1, end=2),
                rows.slice_axis(axis=-1, begin=2, end=6))

    def reset_class(self, classes: Sequence[str], reuse_weights: Any = None) -> None:
        """Replace the class and box predictors for new ``classes`` (transfer learning).

        ``reuse_weights`` copies old predictor rows into the new ones: ``{new: old}`` by name
        or index, or a list of names present in both; the background row is always kept.
        """
        mapping = class_index_map(reuse_weights, self.classes, classes)
        self._clear_cached_op()
        old_cls, old_box = self.class_predictor, self.box_predictor
        in_units = old_cls.weight.shape[1]
        ctx = old_cls.weight.list_ctx()
        new_n = len(classes)
        cls = nn.Dense(new_n + 1, weight_initializer=mx.init.Normal(0.01), in_units=in_units, prefix=old_cls.prefix)
        box = nn.Dense(new_n * 4, weight_initializer=mx.init.Normal(0.001), in_units=in_units, prefix=old_box.prefix)
        for new, old, width, offset in ((cls, old_cls, 1, 1), (box, old_box, 4, 0)):
            new.initialize(ctx=ctx)
            for name in ("weight", "bias"):
                src, dst = getattr(old, name).data().asnumpy(), getattr(new, name).data().asnumpy()
                if offset:
                    dst[:width] = src[:width]  # background
                for k, v in mapping.items():
                    dst[(k + offset) * width:(k + offset + 1) * width] = src[(v + offset) * width:(v + offset + 1) * width]
                getattr(new, name).set_data(mx.nd.array(dst, dtype=dst.dtype))
        self.class_predictor, self.box_predictor = cls, box
        self.classes = tuple(classes)


def _box_features(config: dict[str, Any], norm_kwargs: dict) -> HybridBlock | None:
    if config["head"] == "c4":
        return None
    head = nn.HybridSequential()
    init = mx.init.Normal(0.01)
    if config["head"] == "fpn":
        for _ in range(2):
            head.add(nn.Dense(1024, weight_initializer=init), nn.Activation("relu"))
        return head
    for _ in range(config["box_convs"]):
        head.add(nn.Conv2D(256, 3, padding=1, use_bias=False), SyncBatchNorm(**norm_kwargs), nn.Activation("relu"))
    head.add(nn.Dense(1024, weight_initializer=init), nn.Activation("relu"))
    return head


@head_argument("classes", transfer=keep_named_classes)
def faster_rcnn(config: str, classes: Sequence[str] | str = "voc", pretrained_base: bool | str = False,
                transfer: str | None = None, num_devices: int = 0, features: Any = None, top_features: Any = None,
                box_features: Any = None, additional_output: bool | None = None, train_patterns: str | None = None,
                **options: Any) -> FasterRCNN:
    """A Faster R-CNN in one of GluonCV's configurations.

    Parameters
    ----------
    config : a key of :data:`CONFIGS`: GluonCV's model name without ``faster_rcnn_``.
    classes : foreground class names, or ``"voc"`` / ``"coco"`` for those datasets' classes.
    pretrained_base : start the backbone from its ImageNet weights, fetched through the
        hub's cache (GluonCV's default is ``True``; the hub's is ``False`` so that building
        a model never downloads unasked).
    transfer : ``"voc"`` or ``"coco"`` (``*_custom`` configurations): start from that
        dataset's published model of this backbone and keep the predictors of the classes
        both share.
    num_devices : devices the ``*_syncbn`` models synchronise BatchNorm over (0: all).
    options : :class:`FasterRCNN` arguments overriding the configuration's (``rpn_test_post_nms``,
        ``nms_thresh``, ``per_device_batch_size`` ...).
    features, top_features, box_features : GluonCV's blocks, accepted left out only: the hub builds
        them from ``config``.
    additional_output : GluonCV's keyword, accepted as False only (the detections alone are returned).
    train_patterns : the regular expression of the parameters ``collect_train_params`` returns,
        replacing the configuration's (GluonCV's keyword).
    """
    check_gluoncv_structure(f"Faster R-CNN {config}",
                            {"features": features, "top_features": top_features, "box_features": box_features,
                             "additional_output": additional_output},
                            {**dict.fromkeys(("features", "top_features", "box_features"), BUILT_FROM_NAME),
                             "additional_output": False})
    if config not in CONFIGS:
        raise ValueError(f"unknown Faster R-CNN configuration {config!r}; known: {', '.join(sorted(CONFIGS))}")
    names = BY_DATASET.get(classes, classes) if isinstance(classes, str) else tuple(classes)
    if isinstance(names, str) or not names:
        raise ValueError(f"classes must be 'voc', 'coco' or a non-empty list of names, got {classes!r}")
    if transfer is not None:
        if not config.endswith("_custom"):
            raise ValueError(f"transfer= applies to the *_custom configurations, not {config!r}")
        import gluon_hub

        net = gluon_hub.load(f"cv/faster_rcnn_{config[:-len('_custom')]}_{transfer}", pretrained=True)
        net.reset_class(names, reuse_weights=[c for c in names if c in net.classes])
        return net
    spec = CONFIGS[config]
    sync = spec["head"] == "fpn_syncbn"
    norm_kwargs = {"num_devices": num_devices} if sync and num_devices >= 1 else {}
    if sync:
        net = backbone(spec["base"], pretrained_base, norm_layer=SyncBatchNorm, norm_kwargs=norm_kwargs,
                       **_BASE_KWARGS.get(spec["base"], {}))
    else:  # small detection batches: the backbone keeps its ImageNet statistics
        net = backbone(spec["base"], pretrained_base, use_global_stats=True)
    if spec["head"] == "c4":
        features, top = nn.HybridSequential(), nn.HybridSequential()
        features.add(*[getattr(net, name) for name in _C4])
        top.add(net.layer4)
        patterns = _C4_TRAIN
    else:
        features = fpn_features(net, _TAPS[spec["base"]], no_bias=sync, sync_norm=sync, num_devices=num_devices)
        top = None
        patterns = "(?!.*moving)" if sync else _C4_TRAIN + "|P"
    return FasterRCNN(features, top, names, box_features=_box_features(spec, norm_kwargs),
                      train_patterns=patterns if train_patterns is None else train_patterns,
                      **{**spec["options"], **options})


#: backbones GluonCV's ``custom_faster_rcnn_fpn`` builds its pyramid on
CUSTOM_FPN_BASES = ("resnet18_v1b", "resnet50_v1b", "resnet101_v1d", "resnest50", "resnest101")
#: the custom-model defaults of GluonCV's ``train_faster_rcnn.py`` (its COCO FPN recipe, 256 RPN channels)
CUSTOM_FPN: dict[str, Any] = dict(_FPN, rpn_channel=256)


@head_argument("classes", transfer=keep_named_classes)
def custom_faster_rcnn_fpn(classes: Sequence[str] | str = "voc", base_network_name: str = "resnet18_v1b",
                           pretrained_base: bool | str = False, transfer: str | None = None,
                           num_fpn_filters: int = 256, num_box_head_dense_filters: int = 1024,
                           dataset: str = "custom", additional_output: bool | None = None,
                           features: Any = None, top_features: Any = None, box_features: Any = None,
                           norm_layer: Any = None, norm_kwargs: dict | None = None, sym_norm_layer: Any = None,
                           sym_norm_kwargs: dict | None = None, num_box_head_conv: int | None = None,
                           num_box_head_conv_filters: int | None = None, train_patterns: str | None = None,
                           **options: Any) -> FasterRCNN:
    """GluonCV's ``custom_faster_rcnn_fpn``: a feature pyramid on ``base_network_name`` (frozen
    BatchNorm), regions averaged 3x3/2 then two dense layers, for your own classes.

    ``options`` are :class:`FasterRCNN`'s; they default to :data:`CUSTOM_FPN`, the custom-model
    defaults of GluonCV's ``train_faster_rcnn.py``: the settings this constructor is run with
    there. (Called bare, GluonCV's constructor keeps FasterRCNN's single-level defaults, under
    which its anchors do not cover a 600-pixel input; and GluonCV 0.10 registers the name to its
    double-head module's copy, whose forward pass fails: it never computes the class features
    when a box head is given. This is the Faster R-CNN its ``faster_rcnn`` module defines.)
    ``transfer="coco"`` starts from the published ``faster_rcnn_fpn_<base>_coco`` model.

    ``dataset`` is accepted for GluonCV's call pattern and ignored: it only names GluonCV's model.
    ``additional_output`` is accepted as False only; GluonCV's blocks and layer options (``features``,
    ``top_features``, ``box_features``, ``norm_layer``, ``norm_kwargs``, ``sym_norm_layer``,
    ``sym_norm_kwargs``, ``num_box_head_conv``, ``num_box_head_conv_filters``, ``train_patterns``)
    left out only: the hub builds them from ``base_network_name``; others raise ValueError.
    """
    check_gluoncv_structure(
        "custom_faster_rcnn_fpn",
        {"additional_output": additional_output, **{k: v for k, v in locals().items() if k in ('features', 'top_features', 'box_features', 'norm_layer', 'norm_kwargs', 'sym_norm_layer', 'sym_norm_kwargs', 'num_box_head_conv', 'num_box_head_conv_filters', 'train_patterns')}},
        {"additional_output": False, **dict.fromkeys(('features', 'top_features', 'box_features', 'norm_layer', 'norm_kwargs', 'sym_norm_layer', 'sym_norm_kwargs', 'num_box_head_conv', 'num_box_head_conv_filters', 'train_patterns'), BUILT_FROM_NAME)})
    if base_network_name not in CUSTOM_FPN_BASES:
        raise ValueError(f"base_network_name must be one of {', '.join(CUSTOM_FPN_BASES)}, got {base_network_name!r}")
    names = BY_DATASET.get(classes, classes) if isinstance(classes, str) else tuple(classes)
    if isinstance(names, str) or not names:
        raise ValueError(f"classes must be 'voc', 'coco' or a non-empty list of names, got {classes!r}")
    if transfer is not None:
        import gluon_hub

        net = gluon_hub.load(f"cv/faster_rcnn_fpn_{base_network_name}_{transfer}", pretrained=True)
        net.reset_class(names, reuse_weights=[c for c in names if c in net.classes])
        return net
    net = backbone(base_network_name, pretrained_base, use_global_stats=True,
                   **_BASE_KWARGS.get(base_network_name, {}))
    features = fpn_features(net, _TAPS[base_network_name], num_filters=num_fpn_filters)
    head = nn.HybridSequential()
    head.add(nn.AvgPool2D(pool_size=(3, 3), strides=2, padding=1))
    for _ in range(2):
        head.add(nn.Dense(num_box_head_dense_filters, weight_initializer=mx.init.Normal(0.01)),
                 nn.Activation("relu"))
    return FasterRCNN(features, None, names, box_features=head, train_patterns=_C4_TRAIN + "|P",
                      **{**CUSTOM_FPN, **options})


__all__ = ["CONFIGS", "CUSTOM_FPN", "CUSTOM_FPN_BASES", "FasterRCNN", "RCNNTargetSampler", "custom_faster_rcnn_fpn",
           "faster_rcnn", "rcnn_targets", "scale_rcnn_heads"]

#: the largest |output| each head is scaled to by :func:`scale_rcnn_heads`: score logits within 8
#: (a trained detector's are), box offsets within 1 (RPN, anchors' units) and 2 (the region
#: head's, divided by its 0.1/0.2 standard deviations), mask logits within 8
_HEAD_RANGES = (("rpn score", 8.0), ("rpn loc", 1.0), ("class", 8.0), ("box", 2.0), ("mask", 8.0))


def scale_rcnn_heads(net: FasterRCNN, x: Any) -> dict[str, float]:
    """Scale the initialised ``net``'s output heads (RPN scores and offsets, class scores, box
    offsets, Mask R-CNN's mask logits) so that on the batch ``x`` each one's largest |output| is
    in a trained detector's range (:data:`_HEAD_RANGES`); returns each head's factor.

    Random He weights through a ResNet make these outputs huge: the scores saturate, so top-k
    and NMS choose among ties, and exponentiated offsets put boxes at 1e5 pixels or infinity,
    so a comparison of two runtimes measures float32 rounding in ties. Each head is a linear
    layer nothing else reads, so scaling its weight and bias scales its output exactly; the RPN
    is scaled first, since its proposals decide what the region heads see. Used by the ONNX
    portability measurement (``gluon_hub_deploy._measure.TRAINED_LIKE``) and the runner tests.
    """
    if not isinstance(net, FasterRCNN):
        raise TypeError(f"scale_rcnn_heads takes a Faster or Mask R-CNN, not {type(net).__name__}")
    rpn = getattr(net.rpn, "rpn_head", net.rpn)
    mask = getattr(getattr(net, "mask", None), "mask", None)
    blocks = {"rpn score": rpn.score, "rpn loc": rpn.loc, "class": net.class_predictor, "box": net.box_predictor,
              "mask": mask}
    data = x if isinstance(x, mx.nd.NDArray) else mx.nd.array(x)
    hybridized = net._active
    net.hybridize(False)  # forward hooks see the heads' outputs only when the network runs imperatively
    factors: dict[str, float] = {}
    try:
        for stage in (("rpn score", "rpn loc"), ("class", "box", "mask")):
            largest: dict[str, float] = {}
            hooks = [blocks[key].register_forward_hook(
                lambda _block, _inputs, out, key=key, seen=largest: seen.__setitem__(
                    key, max(seen.get(key, 0.0), float(out.abs().max().asscalar()))))
                for key in stage if blocks[key] is not None]
            net(data)
            for hook in hooks:
                hook.detach()
            for key, target in _HEAD_RANGES:
                if key in largest and largest[key] > 0:
                    factors[key] = target / largest[key]
                    for param in blocks[key].collect_params().values():
                        param.set_data(param.data() * factors[key])
    finally:
        if hybridized:
            net.hybridize()
    return factors
