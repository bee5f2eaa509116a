"""YOLOv3's training recipe equals GluonCV's targets and losses, mixes images, and learns
(issue 14, item 7)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from cv_testlib.detection import SHAPE_CLASSES, build_ours, randomize, train_steps, write_shapes_voc

from gluon_cv_core.datasets.voc import VOCDetection
from gluon_cv_core.detection.training import TrainingSamples, recipe_for
from gluon_cv_core.detection.training.yolo3 import (
    MixupDetection,
    YOLO3Recipe,
    yolo3_losses,
    yolo3_merge_targets,
    yolo3_prefetch_targets,
)
from gluon_hub.compat import mx

import gluoncv  # noqa: E402  (test-only reference; after the compat shim)
from gluoncv.loss import YOLOV3Loss
from gluoncv.model_zoo.yolo.yolo_target import YOLOV3PrefetchTargetGenerator, YOLOV3TargetMerger

pytestmark = [pytest.mark.parity, pytest.mark.training]

NAME = "yolo3_mobilenet0.25_custom"
WIDTH, HEIGHT = 160, 96  # not square, so width and height cannot be swapped unnoticed


@pytest.fixture(scope="module")
def net():
    net = build_ours(NAME, classes=SHAPE_CLASSES, pretrained_base=False)
    net.initialize()
    return net


@pytest.fixture(scope="module")
def scales(net):
    """The network's training-mode anchors, offsets and feature-map templates at WIDTH x HEIGHT."""
    with mx.autograd.train_mode():
        _, anchors, offsets, maps, *_ = net(mx.nd.zeros((1, 3, HEIGHT, WIDTH)))
    return anchors, offsets, maps


def random_boxes(rng: np.random.RandomState, counts: list[int], rows: int) -> np.ndarray:
    """Boxes of many sizes (some under a pixel, some the whole image) inside the image,
    ``counts[b]`` per image, then rows of -1; the first image repeats a box so two boxes
    land on one anchor."""
    boxes = -np.ones((len(counts), rows, 4), np.float32)
    for b, count in enumerate(counts):
        size = np.exp(rng.uniform(np.log(0.5), np.log(WIDTH), (count, 2))).clip(0.5, [WIDTH - 1, HEIGHT - 1])
        corner = rng.uniform(0, 1, (count, 2)) * ([WIDTH - 1, HEIGHT - 1] - size)
        boxes[b, :count] = np.hstack([corner, corner + size])
    boxes[0, 1] = boxes[0, 0]
    return boxes


def case(seed: int, with_mix: bool):
    rng = np.random.RandomState(seed)
    counts = [3, 7, 1, 5]
    boxes = random_boxes(rng, counts, rows=8)
    boxes[3, 2], boxes[3, 3:5] = -1, boxes[3, 0]  # a box after a padding row is ignored
    ids = rng.randint(0, 4, boxes.shape[:2]).astype(np.float32)
    mix = rng.uniform(0.1, 1, boxes.shape[:2]).astype(np.float32) if with_mix else None
    return boxes, ids, mix


def gluoncv_prefetch(scales, boxes, ids, mix, num_classes=4):
    anchors, offsets, maps = scales
    generator = YOLOV3PrefetchTargetGenerator(num_class=num_classes)
    return generator(mx.nd.zeros((len(boxes), 3, HEIGHT, WIDTH)), maps, anchors, offsets, mx.nd.array(boxes),
                     mx.nd.array(ids[..., None]), None if mix is None else mx.nd.array(mix[..., None]))


def our_prefetch(recipe, boxes, ids, mix, num_classes=4):
    return yolo3_prefetch_targets(boxes, ids, recipe.anchors, recipe.feature_sizes, (WIDTH, HEIGHT), num_classes, mix)


def test_recipe_reads_the_networks_anchors_and_feature_maps_before_it_ever_ran(scales) -> None:
    fresh = build_ours(NAME, classes=SHAPE_CLASSES, pretrained_base=False)
    fresh.initialize()  # shapes still deferred: the recipe traces the graph, it runs nothing
    recipe = YOLO3Recipe(fresh, data_shape=(WIDTH, HEIGHT))
    anchors, _, maps = scales
    assert recipe.feature_sizes == [m.shape[2:] for m in maps] == [(3, 5), (6, 10), (12, 20)]
    for ours, theirs in zip(recipe.anchors, anchors):
        np.testing.assert_array_equal(ours, theirs.asnumpy().reshape(-1, 2))


@pytest.mark.parametrize("seed, with_mix", [(0, False), (1, True), (2, False)])
def test_prefetch_targets_equal_gluoncv(net, scales, seed, with_mix) -> None:
    recipe = YOLO3Recipe(net, data_shape=(WIDTH, HEIGHT))
    boxes, ids, mix = case(seed, with_mix)
    expected = gluoncv_prefetch(scales, boxes, ids, mix)
    actual = our_prefetch(recipe, boxes, ids, mix)
    for name, a, e in zip(("objectness", "centers", "scales", "weights", "classes"), actual, expected):
        assert a.shape == e.shape, name
        np.testing.assert_allclose(a, e.asnumpy(), rtol=1e-6, atol=1e-6, err_msg=name)
    # image 0's repeated box keeps one positive, with the later box's class; the padding
    # row stops image 3, so the boxes after it have none
    assert (actual[0][0] > 0).sum() == 2 and (actual[0][3] > 0).sum() == 2
    row = np.flatnonzero(actual[0][0, :, 0] > 0)
    assert ids[0, 1] in actual[4][0, row].argmax(axis=1)


def merge_case(seed: int):
    """Predictions of random boxes, some a jittered copy of a ground-truth box (IoU > 0.7)."""
    rng = np.random.RandomState(seed)
    boxes, ids, mix = case(seed, with_mix=True)
    total = sum(h * w * 3 for h, w in [(3, 5), (6, 10), (12, 20)])
    corner = rng.uniform(0, [WIDTH, HEIGHT], (len(boxes), total, 2))
    preds = np.concatenate([corner, corner + rng.uniform(1, 60, corner.shape)], axis=-1)
    for b in range(len(boxes)):
        rows = rng.choice(total, 40, replace=False)
        preds[b, rows] = boxes[b, rng.randint(0, 2, 40)] + rng.uniform(-0.3, 0.3, (40, 4))
    return preds.astype(np.float32), boxes, ids, mix


@pytest.mark.parametrize("label_smoothing", [False, True])
def test_merged_targets_ignore_overlaps_and_smooth_labels_as_gluoncv(net, scales, label_smoothing) -> None:
    recipe = YOLO3Recipe(net, data_shape=(WIDTH, HEIGHT))
    preds, boxes, ids, mix = merge_case(3)
    prefetched = [mx.nd.array(t) for t in our_prefetch(recipe, boxes, ids, mix)]
    merger = YOLOV3TargetMerger(4, 0.7)
    merger._label_smooth = label_smoothing
    expected = merger(mx.nd.array(preds), mx.nd.array(boxes), *prefetched)
    actual = yolo3_merge_targets(mx.nd.array(preds), mx.nd.array(boxes), *prefetched,
                                 ignore_iou_thresh=0.7, label_smoothing=label_smoothing)
    assert (actual[0].asnumpy() < 0).sum() > 20  # the jittered copies are ignored
    for a, e in zip(actual, expected):
        np.testing.assert_allclose(a.asnumpy(), e.asnumpy(), rtol=1e-6, atol=1e-7)
    if label_smoothing:
        assert set(np.unique(actual[4].asnumpy())) == {-1, np.float32(0.025), np.float32(0.975)}


def test_losses_equal_gluoncv_yolov3_loss(net) -> None:
    recipe = YOLO3Recipe(net, data_shape=(WIDTH, HEIGHT))
    preds, boxes, ids, mix = merge_case(4)
    prefetched = [mx.nd.array(t) for t in our_prefetch(recipe, boxes, ids, mix)]
    targets = yolo3_merge_targets(mx.nd.array(preds), mx.nd.array(boxes), *prefetched, label_smoothing=True)
    rng = np.random.RandomState(5)
    batch, total = preds.shape[:2]
    outputs = [mx.nd.array(rng.normal(0, 2, (batch, total, k))) for k in (1, 2, 2, 4)]
    expected = YOLOV3Loss()(*outputs, *targets)
    actual = yolo3_losses(*outputs, *targets)
    for a, e in zip(actual, expected):
        assert a.shape == (batch,)
        np.testing.assert_allclose(a.asnumpy(), e.asnumpy(), rtol=1e-5)


def shapes_samples(tmp_path, count=6):
    root = write_shapes_voc(tmp_path, count=count, size=(96, 80))
    return TrainingSamples(VOCDetection(root, splits=[("shapes", "train")], classes=SHAPE_CLASSES), len(SHAPE_CLASSES))


@pytest.mark.parametrize("label_smoothing", [False, True])
def test_recipe_losses_equal_gluoncv_networks_own_losses(tmp_path, label_smoothing) -> None:
    reference = gluoncv.model_zoo.get_model(NAME, classes=list(SHAPE_CLASSES), pretrained_base=False)
    reference.initialize()
    with mx.autograd.train_mode():
        reference(mx.nd.zeros((1, 3, HEIGHT, WIDTH)))
    randomize(reference, seed=1)
    reference.save_parameters(str(tmp_path / "yolo.params"))
    ours = build_ours(NAME, classes=SHAPE_CLASSES, pretrained_base=False)
    ours.load_parameters(str(tmp_path / "yolo.params"), allow_missing=False, ignore_extra=False)
    recipe = recipe_for(NAME, ours, data_shape=(WIDTH, HEIGHT), seed=0, label_smoothing=label_smoothing)
    assert isinstance(recipe, YOLO3Recipe)
    data = recipe.training_data(shapes_samples(tmp_path, count=3))
    batch = recipe.batchify()([data[k] for k in range(3)])
    reference._target_generator._label_smooth = label_smoothing
    with mx.autograd.record():
        expected = reference(batch[0], batch[6], *batch[1:6])
        actual = recipe.losses(batch)
    assert len(actual) == len(recipe.loss_names) == 4
    for a, e in zip(actual, expected):
        np.testing.assert_allclose(a.asscalar(), e.mean().asscalar(), rtol=1e-5)


def test_the_train_transform_pickles_and_replays_the_same_sample(net, tmp_path) -> None:
    samples = shapes_samples(tmp_path, count=2)
    transform = YOLO3Recipe(net, data_shape=(WIDTH, HEIGHT), seed=7).train_transform()
    copy = pickle.loads(pickle.dumps(transform))
    image, label = samples[0]
    first, second = transform(image, label), copy(image, label)
    assert len(first) == 7 and first[0].shape == (3, HEIGHT, WIDTH) and first[1].shape == (3 * (15 + 60 + 240), 1)
    assert first[1].sum() == len(first[6])  # one positive per box (shapes do not share an anchor)
    for a, b in zip(first, second):
        np.testing.assert_array_equal(np.asarray(a.asnumpy() if hasattr(a, "asnumpy") else a),
                                      np.asarray(b.asnumpy() if hasattr(b, "asnumpy") else b))


class Pair(mx.gluon.data.Dataset):
    """Two constant images of different sizes with known boxes."""

    def __len__(self):
        return 2

    def __getitem__(self, index):
        size, value = ((40, 60), 200) if index == 0 else ((50, 30), 100)
        label = np.array([[5, 5, 20, 20, index, 0]], np.float32)
        return mx.nd.full((*size, 3), value, dtype="uint8"), label


def test_mixup_blends_two_images_and_weights_their_boxes() -> None:
    mixed = MixupDetection(Pair(), alpha=1.5, seed=3)
    image, label = mixed[0]
    weight = label[0, -1]
    assert 0 < weight < 1 and image.shape == (50, 60, 3)
    np.testing.assert_allclose(label, [[5, 5, 20, 20, 0, 0, weight], [5, 5, 20, 20, 1, 0, 1 - weight]], rtol=1e-6)
    pixels = image.asnumpy()
    assert pixels[0, 0, 0] == np.uint8(np.float32(200) * weight + np.float32(100) * (1 - weight))
    assert pixels[45, 0, 0] == np.uint8(np.float32(100) * (1 - weight))  # only the second image reaches there
    assert pixels[0, 45, 0] == np.uint8(np.float32(200) * weight)
    mixed.enabled = False
    image, label = mixed[1]
    np.testing.assert_array_equal(label, [[5, 5, 20, 20, 1, 0, 1]])
    assert image.shape == (50, 30, 3) and (image.asnumpy() == 100).all()
    assert pickle.loads(pickle.dumps(mixed)).enabled is False  # a copy keeps the switch's state


def test_mixup_needs_two_images() -> None:
    class One(Pair):
        def __len__(self):
            return 1

    with pytest.raises(ValueError, match="mixup blends pairs of images; the training set has 1 image"):
        MixupDetection(One())


def test_mixup_weights_become_objectness_targets_and_stop_in_the_last_epochs(net, tmp_path) -> None:
    recipe = YOLO3Recipe(net, data_shape=(WIDTH, HEIGHT), seed=0, mixup=True, no_mixup_epochs=2)
    data = recipe.training_data(shapes_samples(tmp_path, count=4))
    loader = mx.gluon.data.DataLoader(data, batch_size=4, batchify_fn=recipe.batchify(), num_workers=1)
    recipe.begin_epoch(0, 5)
    objectness = next(iter(loader))[1].asnumpy()
    weights = objectness[objectness > 0]
    assert (weights < 1).any() and weights.min() > 0  # mixed boxes carry their image's weight
    recipe.begin_epoch(3, 5)  # the loader's worker was started before: it sees the switch
    objectness = next(iter(loader))[1].asnumpy()
    assert set(np.unique(objectness)) == {0, 1}


def test_unknown_options_and_bad_no_mixup_epochs_are_rejected(net) -> None:
    with pytest.raises(ValueError, match="YOLO3Recipe does not take the option.*mosaic"):
        YOLO3Recipe(net, data_shape=(WIDTH, HEIGHT), mosaic=True)
    with pytest.raises(ValueError, match="no_mixup_epochs must be 0 or more"):
        YOLO3Recipe(net, data_shape=(WIDTH, HEIGHT), no_mixup_epochs=-1)


def test_the_loss_goes_down_on_the_shapes_dataset(tmp_path) -> None:
    mx.random.seed(0)
    np.random.seed(0)  # the loader's shuffle
    net = build_ours("yolo3_mobilenet0.25_voc", classes=SHAPE_CLASSES, pretrained_base=False)
    net.initialize(mx.init.Xavier())
    recipe = recipe_for("yolo3_mobilenet0.25_voc", net, data_shape=(96, 96), seed=0)
    data = recipe.training_data(shapes_samples(tmp_path, count=8))
    loader = mx.gluon.data.DataLoader(data, batch_size=4, shuffle=True, batchify_fn=recipe.batchify(),
                                      last_batch="discard")
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": recipe.defaults["lr"], "momentum": 0.9})
    history = train_steps(recipe, loader, trainer, 30)
    assert np.isfinite(history).all()
    first, last = history[:5].mean(axis=0), history[-5:].mean(axis=0)
    assert last.sum() < 0.25 * first.sum(), (first, last)
    assert last[0] < 0.2 * first[0], (first, last)  # objectness: most cells learn "no object"


def prefetch_rows(side: int) -> int:
    """Prediction rows of a YOLOv3 at ``side`` x ``side``: 3 anchors per cell at strides 32, 16, 8."""
    return 3 * sum((side // stride) ** 2 for stride in (32, 16, 8))


def test_multi_scale_training_changes_the_size_every_interval_batches(net, tmp_path) -> None:
    sides, interval = (64, 96, 128), 3
    recipe = YOLO3Recipe(net, data_shape=(WIDTH, HEIGHT), seed=5, random_shapes=sides, random_shape_interval=interval)
    data = recipe.training_data(shapes_samples(tmp_path, count=4))
    copy = pickle.loads(pickle.dumps(data))  # what a spawned loader worker gets
    for a, b in zip(data[(1, 2)], copy[(1, 2)]):
        np.testing.assert_array_equal(np.asarray(a.asnumpy() if hasattr(a, "asnumpy") else a),
                                      np.asarray(b.asnumpy() if hasattr(b, "asnumpy") else b))
    batches = recipe.batch_sampler(list(range(4)) * 12, 2)  # 24 batches in one epoch
    assert len(batches) == 24
    loader = mx.gluon.data.DataLoader(data, batch_sampler=batches, batchify_fn=recipe.batchify(), num_workers=1)
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 1e-4, "momentum": 0.9})
    seen = []
    for batch in loader:
        side = batch[0].shape[2]
        assert batch[0].shape == (2, 3, side, side) and batch[1].shape == (2, prefetch_rows(side), 1)
        with mx.autograd.record():
            losses = recipe.losses(batch)
        mx.autograd.backward(losses)
        trainer.step(1)
        assert all(np.isfinite(loss.asscalar()) for loss in losses), (side, losses)
        seen.append(side)
    assert len(seen) == 24 and set(seen) <= set(sides) and all(side % 32 == 0 for side in seen)
    runs = [seen[k:k + interval] for k in range(0, len(seen), interval)]
    assert all(len(set(run)) == 1 for run in runs), seen  # one size per interval
    assert len({run[0] for run in runs}) > 1, seen  # and the size does change
    # the same seed draws the same sizes again (a new epoch starts with a new draw, as GluonCV's)
    again = [key[1] for key in (keys[0] for keys in recipe.batch_sampler(list(range(4)) * 12, 2))]
    assert [sides[k] for k in again] == seen


def test_without_random_shape_every_batch_has_the_data_shape(net, tmp_path) -> None:
    recipe = YOLO3Recipe(net, data_shape=(WIDTH, HEIGHT), seed=5, random_shape=False)
    data = recipe.training_data(shapes_samples(tmp_path, count=4))
    loader = mx.gluon.data.DataLoader(data, batch_sampler=recipe.batch_sampler(list(range(4)) * 6, 2),
                                      batchify_fn=recipe.batchify())
    assert {batch[0].shape for batch in loader} == {(2, 3, HEIGHT, WIDTH)}


def test_random_shape_options_are_checked_and_reach_the_recipe(net) -> None:
    with pytest.raises(ValueError, match="positive multiples of 32"):
        YOLO3Recipe(net, data_shape=(WIDTH, HEIGHT), random_shapes=(64, 100))
    with pytest.raises(ValueError, match="random_shape_interval must be at least 1"):
        YOLO3Recipe(net, data_shape=(WIDTH, HEIGHT), random_shape_interval=0)
    from gluon_cv_core.detection.train import _family_options, build_parser

    parse = build_parser().parse_args
    base = ["--model", NAME, "--voc-root", "x", "--classes", "a"]
    assert _family_options(parse(base)) == {}
    assert _family_options(parse([*base, "--no-random-shape"])) == {"random_shape": False}
    assert _family_options(parse([*base, "--random-shapes", "64,96", "--random-shape-interval", "3"])) == {
        "random_shapes": (64, 96), "random_shape_interval": 3}
