"""Mask R-CNN's training recipe matches GluonCV 0.10 (the test-only reference) and learns.

Mask targets are compared with GluonCV's ``MaskTargetGenerator`` on the same regions and
masks; the transform with ``MaskRCNNDefaultTrainTransform`` on the same image and polygons;
the five losses and their total with the computation of GluonCV's ``train_mask_rcnn.py``
(its ``ForwardBackwardTask`` lives in the script, which the package does not install: its
computation is restated here with GluonCV's own loss blocks and mask target generator) on
one GluonCV network and batch. Then the training script runs on a tiny COCO-format dataset
made from the toy shapes images.
"""

from __future__ import annotations

import json
import math
import pickle
import shutil
from pathlib import Path

import numpy as np
import pytest
from cv_testlib.detection import SHAPE_CLASSES, write_shapes_voc
from pycocotools import mask as coco_mask

from gluon_cv_core.datasets.coco import COCOInstance
from gluon_cv_core.datasets.voc import VOCDetection
from gluon_cv_core.detection import train_instance
from gluon_cv_core.detection.training import TrainingSamples, recipe_for
from gluon_cv_core.detection.training.mask_rcnn import (
    MASK_DEFAULTS,
    InstanceTrainingSamples,
    MaskRCNNRecipe,
    MaskRCNNTrainTransform,
    mask_targets,
)
from gluon_hub.compat import mx

import gluoncv  # test-only reference; after the compat shim
from gluoncv.data.transforms.presets.rcnn import MaskRCNNDefaultTrainTransform
from gluoncv.model_zoo.rcnn.faster_rcnn.rcnn_target import RCNNTargetGenerator
from gluoncv.model_zoo.rcnn.mask_rcnn.rcnn_target import MaskTargetGenerator

pytestmark = [pytest.mark.parity, pytest.mark.training]

MODEL = "mask_rcnn_resnet18_v1b_coco"  # C4 on ResNet-18: the cheapest Mask R-CNN


def _rectangle(x: float, y: float, w: float, h: float) -> list[float]:
    return [x, y, x + w, y, x + w, y + h, x, y + h]


# ---------------------------------------------------------------- targets and transform


def test_mask_targets_equal_gluoncv_generator() -> None:
    rng = np.random.RandomState(0)
    batch, num, classes, objects, size = 2, 6, 3, 3, (14, 14)
    masks = (rng.uniform(size=(batch, objects, 40, 50)) > 0.5).astype(np.float32)
    masks[:, :, 10:30, 5:25] = 1  # a solid block, so pooled values span 0..1
    x1, y1 = rng.uniform(0, 30, (batch, num)), rng.uniform(0, 20, (batch, num))
    rois = np.stack([x1, y1, x1 + rng.uniform(2, 20, (batch, num)), y1 + rng.uniform(2, 20, (batch, num))], -1)
    matches = rng.randint(-1, objects, (batch, num)).astype(np.float32)
    cls = np.array([[1, 2, 3, 0, -1, 2], [3, 3, 1, 1, 0, 0]], np.float32)  # 0 background, -1 ignored

    expected_targets, expected_weights = MaskTargetGenerator(batch, num, classes, size)(
        mx.nd.array(rois), mx.nd.array(masks), mx.nd.array(matches), mx.nd.array(cls))
    targets, channel = mask_targets(mx.nd.array(rois), mx.nd.array(masks, dtype="uint8"), mx.nd.array(matches),
                                    mx.nd.array(cls), size)
    assert targets.shape == (batch, num) + size
    np.testing.assert_array_equal(channel.asnumpy(), np.where(cls >= 1, cls - 1, -1))
    # GluonCV copies each region's mask into every class channel and weights its class only
    np.testing.assert_allclose(np.broadcast_to(targets.asnumpy()[:, :, None], expected_targets.shape),
                               expected_targets.asnumpy(), rtol=1e-6, atol=1e-7)
    one_hot = channel.asnumpy()[:, :, None] == np.arange(classes)
    np.testing.assert_array_equal(np.broadcast_to(one_hot[..., None, None], expected_weights.shape),
                                  expected_weights.asnumpy())
    values = targets.asnumpy()
    assert values.min() == 0 and values.max() == 1 and ((values > 0) & (values < 1)).any()


def test_train_transform_equals_gluoncv_preset() -> None:
    """Image, boxes and rasterised masks, resized and flipped (GluonCV flips by ``np.random``:
    each of its outputs equals ours without or with the flip)."""
    rng = np.random.RandomState(1)
    height, width = 61, 83
    image = mx.nd.array(rng.randint(0, 256, (height, width, 3)), dtype="uint8")
    label = np.array([[3, 4, 40, 50, 2], [30, 10, 80, 58, 0]], np.float32)
    segm = [[np.array([[3, 4], [40, 4], [40, 50], [3, 50]], np.float32)],
            [np.array([[30, 10], [80, 20], [55, 58]], np.float32),
             np.array([[31, 40], [40, 40], [35, 50]], np.float32)]]
    ours = {p: MaskRCNNTrainTransform(short=45, max_size=70, flip_p=p)(image, label, segm) for p in (0.0, 1.0)}
    seen = set()
    for seed in range(6):
        np.random.seed(seed)
        their_image, their_boxes, their_masks = MaskRCNNDefaultTrainTransform(45, 70)(image, label.copy(), segm)
        flipped = not np.array_equal(their_image.asnumpy(), ours[0.0][0].asnumpy())
        seen.add(flipped)
        mine = ours[float(flipped)]
        np.testing.assert_array_equal(mine[0].asnumpy(), their_image.asnumpy())
        np.testing.assert_allclose(mine[1], their_boxes, rtol=1e-6)
        assert mine[2].dtype == np.uint8 and mine[2].shape == their_masks.shape == (2, 45, 61)
        np.testing.assert_array_equal(mine[2], their_masks.asnumpy())
    assert seen == {False, True}
    # decoded masks (RLE objects) follow the same resize and flip, nearest-neighbour
    dense = np.stack([coco_mask.decode(coco_mask.frPyObjects([p.ravel().tolist() for p in obj], height, width)).max(2)
                      for obj in segm])
    plain, mirrored = (MaskRCNNTrainTransform(short=45, max_size=70, flip_p=p)(image, label, dense)[2] for p in (0, 1))
    np.testing.assert_array_equal(mirrored, plain[:, :, ::-1])
    assert (plain == ours[0.0][2]).mean() > 0.97  # rasterised at the new size vs resized: edges differ


# ---------------------------------------------------------------- losses


def _small_reference(batch: int):
    """GluonCV's C4 Mask R-CNN on random weights with fewer proposals and sampled regions
    (its constructor takes none of them), sampling regions for ``batch`` images."""
    mx.random.seed(0)
    net = gluoncv.model_zoo.get_model(MODEL, pretrained=False, pretrained_base=False)
    net.initialize(mx.init.Xavier(magnitude=2.0))
    net.rpn._train_pre_nms, net.rpn._train_post_nms = 200, 32
    net._roi_size = net._target_roi_size = (6, 6)  # 3x3 after layer4, 6x6 masks
    net._rpn_test_post_nms = net.rpn._test_post_nms = net._rcnn_max_dets = 8
    net.sampler._num_proposal = 32
    net._num_sample = net.sampler._num_sample = 16
    net.sampler._max_pos = 4
    net._batch_size = net.sampler._num_image = net.mask._batch_images = batch
    net._target_generator = lambda: RCNNTargetGenerator(net.num_class, net.sampler._max_pos, batch)
    net.mask_target = MaskTargetGenerator(batch, net._num_sample, net.num_class, net._target_roi_size)
    net(mx.nd.zeros((1, 3, 64, 64)))  # deferred initialization draws random numbers: done before the seeded steps
    return net


def _gluoncv_step(net, batch):
    """``train_mask_rcnn.py``'s ``ForwardBackwardTask.forward_backward`` on one device: its
    five logged losses and the total it backpropagates."""
    data, label, gt_mask, rpn_cls_targets, rpn_box_targets, rpn_box_masks = batch
    gt_mask = gt_mask.astype("float32")
    rpn_cls_loss = mx.gluon.loss.SigmoidBinaryCrossEntropyLoss(from_sigmoid=False)
    rpn_box_loss = mx.gluon.loss.HuberLoss(rho=1 / 9.0)
    rcnn_cls_loss = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    rcnn_box_loss = mx.gluon.loss.HuberLoss(rho=1.0)
    rcnn_mask_loss = mx.gluon.loss.SigmoidBinaryCrossEntropyLoss(from_sigmoid=False)
    with mx.autograd.record():
        cls_pred, box_pred, mask_pred, roi, samples, matches, rpn_score, rpn_box, anchors, \
            cls_targets, box_targets, box_masks, indices = net(data, label[:, :, :4], label[:, :, 4:5])
        rpn_score = rpn_score.squeeze(axis=-1)
        num_rpn_pos = (rpn_cls_targets >= 0).sum()
        rpn_loss1 = rpn_cls_loss(rpn_score, rpn_cls_targets, rpn_cls_targets >= 0) * rpn_cls_targets.size / num_rpn_pos
        rpn_loss2 = rpn_box_loss(rpn_box, rpn_box_targets, rpn_box_masks) * rpn_box.size / num_rpn_pos
        num_rcnn_pos = (cls_targets >= 0).sum()
        rcnn_loss1 = rcnn_cls_loss(cls_pred, cls_targets, cls_targets.expand_dims(-1) >= 0) * cls_targets.size / \
            num_rcnn_pos
        rcnn_loss2 = rcnn_box_loss(box_pred, box_targets, box_masks) * box_pred.size / num_rcnn_pos
        roi = mx.nd.concat(*[mx.nd.take(roi[i], indices[i]) for i in range(indices.shape[0])], dim=0) \
            .reshape((indices.shape[0], -1, 4))
        m_cls_targets = mx.nd.concat(*[mx.nd.take(cls_targets[i], indices[i]) for i in range(indices.shape[0])],
                                     dim=0).reshape((indices.shape[0], -1))
        matches = mx.nd.concat(*[mx.nd.take(matches[i], indices[i]) for i in range(indices.shape[0])], dim=0) \
            .reshape((indices.shape[0], -1))
        mask_targets_, mask_masks = net.mask_target(roi, gt_mask, matches, m_cls_targets)
        mask_loss = rcnn_mask_loss(mask_pred, mask_targets_, mask_masks) * mask_targets_.size / mask_masks.sum()
        total = rpn_loss1.sum() + rpn_loss2.sum() + rcnn_loss1.sum() + rcnn_loss2.sum() + mask_loss.sum()
    total.backward()
    return [rpn_loss1, rpn_loss2, rcnn_loss1, rcnn_loss2, mask_loss], float(total.asscalar())


def test_losses_and_total_equal_gluoncv_training_step() -> None:
    batch_size = 2
    net = _small_reference(batch_size)
    recipe = MaskRCNNRecipe(net, data_shape=(96, 72), seed=0)
    transform = pickle.loads(pickle.dumps(recipe.train_transform()))  # data-loader workers get a copy
    rng = np.random.RandomState(5)
    samples = []
    for height, width in [(80, 100), (100, 90)]:  # different sizes: images and masks are padded
        image = mx.nd.array(rng.randint(0, 256, (height, width, 3)), dtype="uint8")
        boxes = [(5, 6, 50, 60, 3), (30, 20, 85, 70, 0), (2, 40, 40, 78, 17)]
        label = np.array(boxes, np.float32)
        segm = [[np.array(_rectangle(x1, y1, x2 - x1, y2 - y1), np.float32).reshape(-1, 2)]
                for x1, y1, x2, y2, _ in boxes]
        samples.append(transform(image, label, segm))
    batch = recipe.batchify()(samples)
    assert batch[2].dtype == np.uint8 and batch[2].shape == (2, 3) + tuple(batch[0].shape[2:])

    mx.random.seed(11)  # the region sampler draws random numbers
    expected, total = _gluoncv_step(net, batch)
    expected_grad = net.mask.mask.weight.grad().copy()
    mx.random.seed(11)
    with mx.autograd.record():
        losses = recipe.losses(batch)
    mx.autograd.backward(losses)
    actual = [float(v.asscalar()) for v in losses]
    # GluonCV's per-image values average to ours; its total is the per-image sum (then divided
    # by the batch in its trainer step), so the gradient is the batch size times ours
    np.testing.assert_allclose(actual, [float(v.mean().asscalar()) for v in expected], rtol=1e-5)
    assert total == pytest.approx(batch_size * sum(actual), rel=1e-5)
    assert all(v > 0 for v in actual) and recipe.loss_names[-1] == "rcnn_mask"
    np.testing.assert_allclose(batch_size * net.mask.mask.weight.grad().asnumpy(), expected_grad.asnumpy(),
                               rtol=1e-4, atol=1e-8)


# ---------------------------------------------------------------- the script on a tiny COCO dataset


def write_shapes_coco(root: Path, count: int, size: tuple[int, int]) -> Path:
    """The toy shapes images (:func:`write_shapes_voc`) as COCO instances: each shape's box
    and its rectangle polygon, in ``annotations/instances_{train,val}.json`` over the same images."""
    voc_root = write_shapes_voc(root / "voc", count=count, size=size, seed=0)
    voc = VOCDetection(voc_root, splits=[("shapes", "train")], classes=SHAPE_CLASSES)
    categories = [{"id": k + 1, "name": name, "supercategory": "shape"} for k, name in enumerate(SHAPE_CLASSES)]
    for split in ("train", "val"):
        images, annotations = [], []
        for index in range(len(voc)):
            path = Path(voc.image_path(index))
            (root / split).mkdir(parents=True, exist_ok=True)
            shutil.copy(path, root / split / path.name)
            images.append({"id": index + 1, "file_name": path.name, "width": size[0], "height": size[1]})
            for x1, y1, x2, y2, cls in voc.label(index)[:, :5].tolist():
                w, h = x2 - x1 + 1, y2 - y1 + 1
                annotations.append({"id": len(annotations) + 1, "image_id": index + 1, "category_id": int(cls) + 1,
                                    "iscrowd": 0, "area": w * h, "bbox": [x1, y1, w, h],
                                    "segmentation": [_rectangle(x1, y1, w, h)]})
        (root / "annotations").mkdir(parents=True, exist_ok=True)
        (root / "annotations" / f"instances_{split}.json").write_text(
            json.dumps({"images": images, "annotations": annotations, "categories": categories}))
    return root


#: region and proposal counts small enough for a CPU test
SMALL = [f"--model-option={option}" for option in ("rpn_train_pre_nms=300", "rpn_train_post_nms=32", "num_sample=16",
                                                    "roi_size=(8, 8)", "rpn_test_post_nms=24", "rcnn_max_dets=12")]


def _script_args(root: Path, *extra: str) -> list[str]:
    return ["--model", MODEL, "--coco-root", str(root), "--train-segment", "instances_train",
            "--val-segment", "instances_val", "--no-pretrained-base", "--image-short", "64", "--image-max-size", "80",
            "-j", "0", "--log-interval", "0", *SMALL, *extra]


def test_script_trains_and_scores_box_and_mask_ap(tmp_path) -> None:
    root = write_shapes_coco(tmp_path / "coco", count=3, size=(80, 64))
    save = tmp_path / "params"
    args = train_instance.build_parser().parse_args(_script_args(
        root, "--num-epochs", "3", "--val-interval", "3", "--lr", "0.002", "--lr-warmup", "0", "--save-dir", str(save)))
    history = train_instance.train(args)
    assert [r["epoch"] for r in history] == [1, 2, 3]
    assert args.lr_decay_epoch == "17,23" and args.wd == MASK_DEFAULTS["wd"]  # GluonCV's COCO schedule
    for record in history:
        assert all(math.isfinite(record[name]) and record[name] > 0 for name in MaskRCNNRecipe.loss_names)
    totals = [sum(r[n] for n in MaskRCNNRecipe.loss_names) for r in history]
    assert totals[-1] < 0.8 * totals[0], totals
    assert history[-1]["rcnn_mask"] < history[0]["rcnn_mask"]
    assert "val_bbox_mAP" not in history[0]
    last = history[-1]
    assert 0.0 <= last["val_bbox_mAP"] <= 1.0 and 0.0 <= last["val_segm_mAP"] <= 1.0
    assert sorted(p.name for p in save.iterdir()) == [f"{MODEL}-{e:04d}.params" for e in (1, 2, 3)] + \
        [f"{MODEL}-best.params"]


def test_custom_fpn_trains_within_what_its_anchors_cover() -> None:
    """custom_mask_rcnn_fpn's anchors cover 512 pixels (its network's max_size of 1000 fails in
    MXNet beyond): the script resizes to at most 512, as prediction does, and refuses more;
    the other models keep their own sizes unless asked."""
    from types import SimpleNamespace

    custom = SimpleNamespace(short=600, max_size=1000)
    c4 = SimpleNamespace(short=800, max_size=1333)

    def shape(model, net, *argv):
        args = train_instance.build_parser().parse_args(
            ["--model", model, "--coco-root", "unused", *argv])
        return train_instance.data_shape(args, net)

    assert shape("custom_mask_rcnn_fpn", custom) == (512, 512)
    assert shape("custom_mask_rcnn_fpn", custom, "--image-short", "400") == (512, 400)
    assert shape(MODEL, c4) is None
    assert shape(MODEL, c4, "--image-short", "600") == (1333, 600)
    assert shape(MODEL, c4, "--image-short", "1400") == (1400, 1400)
    with pytest.raises(ValueError, match="--image-max-size 1000 is larger than custom_mask_rcnn_fpn's anchors "
                                         r"cover \(512 pixels"):
        shape("custom_mask_rcnn_fpn", custom, "--image-max-size", "1000")


# ---------------------------------------------------------------- bad input


class _Items(mx.gluon.data.Dataset):
    def __init__(self, items):
        self._items = items

    def __len__(self):
        return len(self._items)

    def __getitem__(self, index):
        return self._items[index]


def test_objects_without_masks_fail_naming_the_sample(tmp_path, capsys) -> None:
    image = mx.nd.array(np.zeros((40, 50, 3)), dtype="uint8")
    label = np.array([[2, 3, 20, 30, 0], [10, 10, 45, 35, 1]], np.float32)
    good = [[_rectangle(2, 3, 18, 27)], [_rectangle(10, 10, 35, 25)]]
    samples = InstanceTrainingSamples(_Items([(image, label, good), (image, label, [])]), 2)
    assert len(samples[0][2]) == 2
    with pytest.raises(ValueError, match=r"sample 1: 2 object\(s\) in the label but 0 mask\(s\)"):
        samples[1]
    flat = InstanceTrainingSamples(_Items([(image, label, [good[0], [[5, 5, 10, 5, 15, 5]]])]), 2)
    with pytest.raises(ValueError, match=r"sample 0: object\(s\) \[1\] have no mask"):
        flat[0]  # three collinear points cover nothing

    # a COCO file whose object decodes to an empty mask: the file and image are named
    root = write_shapes_coco(tmp_path / "coco", count=2, size=(48, 40))
    path = root / "annotations" / "instances_train.json"
    data = json.loads(path.read_text())
    first = next(a for a in data["annotations"] if a["image_id"] == 2)
    first["segmentation"] = {"counts": [40 * 48], "size": [40, 48]}  # uncompressed RLE, no pixel set
    path.write_text(json.dumps(data))
    dataset = COCOInstance(root, "instances_train", segm_format="mask", classes=None)
    checked = InstanceTrainingSamples(dataset, 2)
    with pytest.raises(ValueError, match=r"sample 1 \(.*000001\.jpg, image id 2\): object\(s\) \[0\] have no mask"):
        checked[1]
    with pytest.raises(ValueError, match=r"RLE, not polygons; pass segm_format='mask'"):
        train_instance.train(train_instance.build_parser().parse_args(_script_args(root)))
    assert train_instance.main(_script_args(root)) == 2  # the command line prints the message, no traceback
    assert "train_instance: error:" in capsys.readouterr().err
    args = train_instance.build_parser().parse_args(_script_args(root, "--segm-format", "mask", "--num-epochs", "1"))
    with pytest.raises(ValueError, match=r"sample 1 \(.*000001\.jpg, image id 2\): object\(s\) \[0\] have no mask"):
        train_instance.train(args)


def test_detection_samples_are_refused_with_the_instance_script(tmp_path) -> None:
    net = gluoncv.model_zoo.get_model(MODEL, pretrained=False, pretrained_base=False)
    net.rpn.initialize()
    recipe = recipe_for("mask_rcnn_fpn_resnet50_v1b_coco", net, data_shape=(96, 64))
    assert isinstance(recipe, MaskRCNNRecipe) and recipe.defaults == MASK_DEFAULTS
    assert isinstance(recipe_for("custom_mask_rcnn_fpn", net), MaskRCNNRecipe)
    voc = _Items([(mx.nd.zeros((20, 20, 3), dtype="uint8"), np.array([[1, 1, 10, 10, 0]], np.float32))])
    with pytest.raises(ValueError, match="python -m gluon_cv_core.detection.train_instance"):
        recipe.training_data(TrainingSamples(voc, 80))
    # the detection evaluation scores a Mask R-CNN's boxes on COCO, scaled back like Faster R-CNN's
    from gluon_cv_core.datasets.coco import COCODetection
    from gluon_cv_core.detection._script import detection_metric
    from gluon_cv_core.detection.metrics import COCODetectionMetric

    coco = COCODetection(write_shapes_coco(tmp_path, count=1, size=(48, 40)), "instances_val", classes=None)
    assert isinstance(detection_metric(coco, "mask_rcnn_", None), COCODetectionMetric)
