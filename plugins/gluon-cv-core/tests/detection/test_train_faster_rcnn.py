"""Faster R-CNN's training recipe matches GluonCV 0.10 (the test-only reference) and learns.

RPN targets are compared with GluonCV's ``RPNTargetGenerator`` (same anchors, boxes and
random seed) and with its training transform and batchify on the same images (C4 and
FPN); the losses with its training step (``ForwardBackwardTask``) on one network and
batch; then a small network trains on the toy shapes dataset.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from cv_testlib.detection import SHAPE_CLASSES, build_ours, train_steps, write_shapes_voc

from gluon_cv_core.datasets.voc import VOCDetection
from gluon_cv_core.detection.training import TrainingSamples, recipe_for
from gluon_cv_core.detection.training.faster_rcnn import (
    COCO_DEFAULTS,
    VOC_DEFAULTS,
    FasterRCNNBatchify,
    FasterRCNNRecipe,
    RPNTargetMaker,
    rpn_anchor_targets,
)
from gluon_hub.compat import mx

import gluoncv  # test-only reference; after the compat shim
from gluoncv.data.batchify import FasterRCNNTrainBatchify
from gluoncv.data.transforms.presets.rcnn import FasterRCNNDefaultTrainTransform
from gluoncv.model_zoo.rcnn.faster_rcnn.data_parallel import ForwardBackwardTask
from gluoncv.model_zoo.rcnn.faster_rcnn.rcnn_target import RCNNTargetGenerator
from gluoncv.model_zoo.rcnn.rpn.rpn_target import RPNTargetGenerator

pytestmark = [pytest.mark.parity, pytest.mark.training]

C4, FPN = "faster_rcnn_resnet50_v1b_voc", "faster_rcnn_fpn_resnet50_v1b_coco"


def _reference(name: str, **kwargs):
    with mx.name.NameManager():
        net = gluoncv.model_zoo.get_model(name, pretrained=False, pretrained_base=False, **kwargs)
    net.rpn.initialize()  # the stored anchors: all the transform reads
    return net


def _ours(name: str, **kwargs):
    net = build_ours(name, **kwargs)
    net.rpn.initialize()
    return net


def _random_boxes(rng: np.random.RandomState, count: int, width: int, height: int) -> np.ndarray:
    """Boxes of many sizes, some touching the border, one tiny (no anchor fits it well)."""
    x1, y1 = rng.uniform(0, width - 8, count), rng.uniform(0, height - 8, count)
    w, h = rng.uniform(4, width, count), rng.uniform(4, height, count)
    boxes = np.stack([x1, y1, np.minimum(x1 + w, width - 1), np.minimum(y1 + h, height - 1)], axis=1)
    boxes[0] = [3, 4, 9, 8]
    return np.round(boxes).astype(np.float32)


# ---------------------------------------------------------------- RPN targets


@pytest.mark.parametrize("name", [C4, FPN])
@pytest.mark.parametrize("num_sample", [256, 16])  # 16: more positives than allowed, dropped at random
def test_rpn_targets_equal_gluoncv_generator(name: str, num_sample: int) -> None:
    maker = RPNTargetMaker.from_network(_ours(name))
    reference = RPNTargetGenerator(num_sample=num_sample)
    rng = np.random.RandomState(3)
    seen = set()
    # one image with only a tiny box: its best anchor is below the negative threshold
    for case, (height, width, count) in enumerate([(96, 128, 1), (131, 97, 3), (200, 150, 12), (64, 80, 40)]):
        anchors = maker.anchors(height, width)
        boxes = _random_boxes(rng, count, width, height)
        np.random.seed(case)
        cls, box, mask = reference(mx.nd.array(boxes), mx.nd.array(anchors), width, height)
        ours = rpn_anchor_targets(anchors, boxes, width, height, np.random.RandomState(case), num_sample=num_sample)
        np.testing.assert_array_equal(ours[0], cls)
        np.testing.assert_array_equal(ours[2], mask)
        np.testing.assert_allclose(ours[1], box, rtol=1e-6, atol=1e-6)
        assert (cls >= 0).sum() <= num_sample
        seen.update(np.unique(cls).tolist())
    assert seen == {-1.0, 0.0, 1.0}


@pytest.mark.parametrize("name", [C4, FPN])
def test_anchor_layout_and_batch_equal_gluoncv_transform_and_batchify(name: str) -> None:
    """Feature sizes, anchors per level, the split into levels and the padded batch, for
    images of several sizes (not multiples of the strides) and box counts."""
    fpn = name == FPN
    reference_net = _reference(name)
    maker = RPNTargetMaker.from_network(_ours(name), num_sample=10 ** 6)  # nothing dropped at random
    expected_transform = FasterRCNNDefaultTrainTransform(
        96, 160, reference_net, num_sample=10 ** 6, flip_p=0.0, multi_stage=fpn,
        ashape=reference_net.ashape if fpn else 128)
    rng = np.random.RandomState(0)
    expected_samples, our_samples = [], []
    for height, width, count in [(80, 100, 2), (90, 70, 1), (77, 131, 5)]:
        image = mx.nd.array(rng.randint(0, 256, (height, width, 3)), dtype="uint8")
        label = np.concatenate([_random_boxes(rng, count, width, height), rng.randint(0, 20, (count, 1))], axis=1)
        expected = expected_transform(image, label)
        tensor, boxes = expected[0], expected[1]
        cls, box, mask = maker(boxes[:, :4], tensor.shape[1], tensor.shape[2], np.random.RandomState(0))
        assert len(cls) == (5 if fpn else 1)
        for ours, theirs in zip((cls, box, mask), expected[2:]):
            assert len(ours) == len(theirs)
            for level, (a, e) in enumerate(zip(ours, theirs)):
                assert a.shape == e.shape, level
                np.testing.assert_allclose(a, e, rtol=1e-6, atol=1e-6)
        expected_samples.append(expected)
        our_samples.append((tensor, boxes, cls, box, mask))
    images, labels, rpn_cls, rpn_box, rpn_mask = FasterRCNNTrainBatchify(reference_net)(
        [(e[0], mx.nd.array(e[1]), *[[mx.nd.array(t) for t in targets] for targets in e[2:]])
         for e in expected_samples])
    batch = FasterRCNNBatchify(maker.strides)(our_samples)
    assert len(batch) == 5
    for ours, theirs in zip(batch, (images, labels, rpn_cls[0], rpn_box[0], rpn_mask[0])):  # one shard
        assert ours.shape == theirs.shape
        np.testing.assert_allclose(ours.asnumpy(), theirs.asnumpy(), rtol=1e-6, atol=1e-6)
    assert (batch[1].asnumpy()[1, 1:] == -1).all()  # the one-box image's label is padded


# ---------------------------------------------------------------- losses


def _small_reference(batch: int):
    """GluonCV's C4 network with fewer proposals, sampled regions and pooled cells (its
    constructor takes none of them) and a region sampler for ``batch`` images, on random
    weights."""
    mx.random.seed(0)
    net = gluoncv.model_zoo.get_model(C4, pretrained=False, pretrained_base=False)
    net.box_predictor.weight.init = mx.init.Normal(0.1)  # offsets far from the targets: a real box loss
    net.initialize(mx.init.Xavier(magnitude=2.0))
    net._roi_size = (6, 6)
    net.rpn._train_pre_nms, net.rpn._train_post_nms = 200, 32
    net.sampler._num_proposal = 32
    net._num_sample = net.sampler._num_sample = 16
    net.sampler._max_pos = 4
    net._batch_size = net.sampler._num_image = batch
    net._target_generator = lambda: RCNNTargetGenerator(net.num_class, net.sampler._max_pos, batch)
    return net


def test_losses_equal_gluoncv_training_step() -> None:
    net = _small_reference(batch=2)
    recipe = FasterRCNNRecipe(net, data_shape=(128, 96), seed=0)
    transform = recipe.train_transform()
    rng = np.random.RandomState(5)
    samples = []
    for height, width, count in [(80, 100, 2), (100, 90, 3)]:  # different sizes: the batch is padded
        image = mx.nd.array(rng.randint(0, 256, (height, width, 3)), dtype="uint8")
        label = np.concatenate([_random_boxes(rng, count, width, height), rng.randint(0, 20, (count, 1))], axis=1)
        samples.append(transform(image, label))
    batch = recipe.batchify()(samples)
    assert batch[0].shape[2:] != samples[0][0].shape[1:]

    task = ForwardBackwardTask(net, None, mx.gluon.loss.SigmoidBinaryCrossEntropyLoss(from_sigmoid=False),
                               mx.gluon.loss.HuberLoss(rho=1 / 9.0), mx.gluon.loss.SoftmaxCrossEntropyLoss(),
                               mx.gluon.loss.HuberLoss(rho=1.0), mix_ratio=1.0, amp_enabled=False)
    mx.random.seed(11)  # the region sampler draws random numbers
    expected = [float(v.asscalar()) for v in task.forward_backward(batch)[:4]]
    mx.random.seed(11)
    with mx.autograd.record():
        losses = recipe.losses(batch)
    actual = [float(v.asscalar()) for v in losses]
    np.testing.assert_allclose(actual, expected, rtol=1e-5)
    assert all(v > 0 for v in actual)


# ---------------------------------------------------------------- training


def _small_ours(batch: int = 1):
    return build_ours(C4, classes=SHAPE_CLASSES, rpn_train_pre_nms=200, rpn_train_post_nms=32, num_sample=16,
                      roi_size=(6, 6), per_device_batch_size=batch)


def test_loss_goes_down_on_the_shapes_dataset(tmp_path) -> None:
    mx.random.seed(0)
    net = _small_ours()
    net.initialize(mx.init.Xavier(magnitude=2.0))
    recipe = recipe_for("faster_rcnn_resnet50_v1b_voc", net, data_shape=(96, 64), seed=0)
    assert isinstance(recipe, FasterRCNNRecipe)
    root = write_shapes_voc(tmp_path, count=6, size=(96, 80), seed=0)
    samples = TrainingSamples(VOCDetection(root, splits=[("shapes", "train")], classes=SHAPE_CLASSES),
                              len(SHAPE_CLASSES))
    loader = mx.gluon.data.DataLoader(recipe.training_data(samples), 1, shuffle=False, last_batch="discard",
                                      batchify_fn=recipe.batchify())
    recipe.prepare()
    assert net.features[0].weight.grad_req == "null"  # GluonCV keeps the stem fixed
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.03, "momentum": 0.9, "wd": 5e-4})
    values = train_steps(recipe, loader, trainer, 20)
    assert np.isfinite(values).all()
    total = values.sum(axis=1)
    first, last = total[:5].mean(), total[-5:].mean()
    assert last < 0.7 * first, (first, last)
    assert values[-5:, 0].mean() < 0.8 * values[:5, 0].mean()  # the RPN learns objectness


def test_fpn_targets_line_up_with_the_pyramid_anchors_in_training() -> None:
    """Two images of different sizes through the FPN network: the batch carries one target
    per anchor of the five levels of the padded input, and every loss is finite."""
    net = build_ours(FPN, classes=SHAPE_CLASSES, rpn_train_pre_nms=200, rpn_train_post_nms=32, num_sample=16,
                     per_device_batch_size=2)
    net.initialize()
    recipe = FasterRCNNRecipe(net, data_shape=(96, 64), seed=0)
    transform = recipe.train_transform()
    label = np.array([[10, 10, 50, 40, 0], [30, 20, 60, 50, 1]], np.float32)
    samples = [transform(mx.nd.array(np.zeros((h, w, 3))).astype("uint8"), label) for h, w in [(80, 96), (70, 60)]]
    batch = recipe.batchify()(samples)
    height, width = batch[0].shape[2:]
    assert batch[2].shape[1] == len(recipe.targets.anchors(height, width)) == sum(
        h * w * 3 for h, w in recipe.targets.feature_sizes(height, width))
    with mx.autograd.record():
        losses = recipe.losses(batch)
    mx.autograd.backward(losses)
    assert all(np.isfinite(v.asscalar()) for v in losses)
    assert np.abs(net.rpn.rpn_head.conv1[0].weight.grad().asnumpy()).sum() > 0


def test_train_transform_pickles_and_repeats_with_a_seed() -> None:
    net = _ours(FPN)
    recipe = FasterRCNNRecipe(net, data_shape=(128, 96), seed=4)
    transform = recipe.train_transform()
    copy = pickle.loads(pickle.dumps(transform))
    rng = np.random.RandomState(1)
    for _ in range(3):  # flips and anchor sampling both drawn: the copies stay in step
        image = mx.nd.array(rng.randint(0, 256, (70, 90, 3)), dtype="uint8")
        label = np.array([[5, 6, 40, 50, 1], [30, 10, 80, 60, 0]], np.float32)
        a, b = transform(image, label), copy(image, label)
        np.testing.assert_array_equal(a[0].asnumpy(), b[0].asnumpy())
        np.testing.assert_array_equal(a[1], b[1])
        for ours, theirs in zip(a[2:], b[2:]):
            for x, y in zip(ours, theirs):
                np.testing.assert_array_equal(x, y)
    other = FasterRCNNRecipe(net, data_shape=(128, 96), seed=5).train_transform()
    outputs = [other(image, label)[2] for _ in range(4)], [transform(image, label)[2] for _ in range(4)]
    assert any(not all(np.array_equal(x, y) for x, y in zip(p, q)) for p, q in zip(*outputs))


# ---------------------------------------------------------------- settings and bad input


def test_defaults_follow_the_dataset_of_the_classes() -> None:
    assert FasterRCNNRecipe(_ours(C4)).defaults == VOC_DEFAULTS
    assert VOC_DEFAULTS["lr"] == 0.001 and VOC_DEFAULTS["lr_decay_epoch"] == (14, 20)
    coco = FasterRCNNRecipe(_ours(FPN))
    assert coco.defaults == COCO_DEFAULTS and coco.defaults["lr_decay_epoch"] == (17, 23)
    assert (coco.short, coco.max_size) == (800, 1333)


def test_a_batch_larger_than_the_network_samples_for_says_how_to_build_it() -> None:
    net = _small_ours(batch=1)
    net.initialize()
    recipe = FasterRCNNRecipe(net, data_shape=(64, 64), seed=0)
    transform = recipe.train_transform()
    image = mx.nd.array(np.zeros((60, 60, 3)), dtype="uint8")
    sample = transform(image, np.array([[5, 5, 50, 50, 0]], np.float32))
    with pytest.raises(ValueError, match="per_device_batch_size=2"), mx.autograd.record():
        recipe.losses(recipe.batchify()([sample, sample]))


def test_an_uninitialized_network_is_refused_with_the_fix() -> None:
    with pytest.raises(ValueError, match="initialize the network"):
        FasterRCNNRecipe(build_ours(C4))


def test_coco_schedule_warms_up_per_iteration_as_gluoncv_does() -> None:
    import argparse

    from gluon_cv_core.detection.fit import fill_defaults, warmed_schedule

    args = argparse.Namespace(lr=None, lr_mode=None, lr_decay=None, lr_decay_epoch=None, warmup_epochs=None,
                              warmup_lr=0.0, wd=None, momentum=None, num_epochs=None, optimizer=None,
                              batch_size=None, lr_warmup=None, lr_warmup_factor=None)
    fill_defaults(args, COCO_DEFAULTS)
    assert (args.lr, args.lr_warmup, args.lr_warmup_factor) == (0.00125, 1000, 1.0 / 3.0)
    steps_per_epoch = 1500
    param = mx.gluon.Parameter("w", shape=(1,))
    param.initialize()
    trainer = mx.gluon.Trainer([param], "sgd", {"learning_rate": args.lr,
                                                "lr_scheduler": warmed_schedule(args, steps_per_epoch)})
    rates = []
    for _ in range(1003):
        with mx.autograd.record():
            loss = param.data() * 2
        loss.backward()
        trainer.step(1)
        rates.append(trainer.learning_rate)
    # GluonCV's train_faster_rcnn.py: batch i of epoch 0, i <= lr_warmup, runs at
    # lr * (factor * (1 - i / lr_warmup) + i / lr_warmup)
    for i in (0, 1, 500, 999, 1000, 1001, 1002):
        alpha = min(i / 1000, 1.0)
        expected = 0.00125 * ((1 - alpha) / 3 + alpha)
        assert rates[i] == pytest.approx(expected, rel=1e-9), i
    assert rates[0] == pytest.approx(0.00125 / 3)
    # the warm-up belongs to the first epoch only: a short epoch ends it early
    short = warmed_schedule(args, 10)
    assert short(10) == pytest.approx(0.00125 * ((1 - 0.009) / 3 + 0.009)) and short(11) == 0.00125
    voc = argparse.Namespace(**{**vars(args), "lr_warmup": None, "lr_warmup_factor": None})
    fill_defaults(voc, VOC_DEFAULTS)
    assert voc.lr_warmup == 0 and warmed_schedule(voc, 10)(1) == voc.lr
