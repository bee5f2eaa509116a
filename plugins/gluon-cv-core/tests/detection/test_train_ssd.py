"""SSD training (issue 14, item 7): targets and losses equal GluonCV's, and a small SSD learns."""

from __future__ import annotations

import pickle
import random

import numpy as np
import pytest
from cv_testlib.detection import SHAPE_CLASSES, build_ours, running_stats, train_steps, write_shapes_voc

from gluon_cv_core.common.boxes import ssd_anchor_grid
from gluon_cv_core.datasets.voc import VOCDetection
from gluon_cv_core.detection.training import TrainingSamples, recipe_for
from gluon_cv_core.detection.training.ssd import SSDRecipe, SSDTargets, multibox_loss, ssd_targets
from gluon_hub.compat import mx

from gluoncv.loss import SSDMultiBoxLoss
from gluoncv.model_zoo.ssd.target import SSDTargetGenerator

pytestmark = [pytest.mark.parity, pytest.mark.training]

SIZE = 128
SMALL_SSD = "ssd_300_mobilenet0.25_voc"


def anchors_at(size: int = SIZE) -> np.ndarray:
    """Centre-format anchors of three SSD layers over a ``size`` image, ``(N, 4)`` float32."""
    layers = [((20, 40), [1, 2, 0.5], 16), ((40, 70), [1, 2, 0.5, 3, 1 / 3], 32), ((70, 110), [1, 2, 0.5], 64)]
    grids = [ssd_anchor_grid(sizes, ratios, step, (size // step, size // step)).reshape(-1, 4)
             for sizes, ratios, step in layers]
    return np.concatenate(grids).astype(np.float32)


def random_labels(rng: np.random.RandomState, counts: list[int], size: int = SIZE) -> tuple[np.ndarray, np.ndarray]:
    """Boxes ``(B, M, 4)`` and ids ``(B, M)`` with ``counts[b]`` objects each, padded with -1 rows;
    some boxes sit on the integer grid so that IoU ties with symmetric anchors occur."""
    width = max(counts)
    boxes, ids = -np.ones((len(counts), width, 4), np.float32), -np.ones((len(counts), width), np.float32)
    for b, count in enumerate(counts):
        xy = rng.uniform(0, size * 0.7, (count, 2))
        wh = rng.uniform(6, size * 0.6, (count, 2))
        if b == 0:
            xy, wh = np.round(xy / 8) * 8, np.round(wh / 8) * 8 + 8
        boxes[b, :count] = np.concatenate([xy, np.minimum(xy + wh, size - 1)], axis=1)
        ids[b, :count] = rng.randint(0, 5, count)
    return boxes, ids


def gluoncv_targets(anchors: np.ndarray, boxes: np.ndarray, ids: np.ndarray) -> list[np.ndarray]:
    """GluonCV's SSD targets as its train transform builds them (no sampling)."""
    generator = SSDTargetGenerator(iou_thresh=0.5, stds=(0.1, 0.1, 0.2, 0.2), negative_mining_ratio=-1)
    out = generator(mx.nd.array(anchors[None]), None, mx.nd.array(boxes), mx.nd.array(ids[..., None]))
    return [o.asnumpy() for o in out]


@pytest.mark.parametrize("seed", range(4))
def test_targets_equal_gluoncv_on_padded_batches(seed: int) -> None:
    rng = np.random.RandomState(seed)
    anchors = anchors_at()
    boxes, ids = random_labels(rng, [2, 5, 1, 3][: 2 + seed % 3])
    cls_targets, box_targets, masks = ssd_targets(anchors, boxes, ids)
    expected_cls, expected_box, expected_mask = gluoncv_targets(anchors, boxes, ids)
    np.testing.assert_array_equal(cls_targets, expected_cls)
    np.testing.assert_array_equal(masks, expected_mask)
    np.testing.assert_allclose(box_targets, expected_box, rtol=1e-5, atol=1e-5)
    assert (cls_targets > 0).sum() >= (ids >= 0).sum()  # every box got at least its bipartite anchor


def test_targets_of_one_image_match_the_batched_ones_and_gluoncv() -> None:
    anchors = anchors_at()
    boxes, ids = random_labels(np.random.RandomState(7), [4])
    cls_targets, box_targets = SSDTargets(anchors)(boxes[0], ids[0])
    expected_cls, expected_box, _ = gluoncv_targets(anchors, boxes, ids)
    np.testing.assert_array_equal(cls_targets, expected_cls[0])
    np.testing.assert_allclose(box_targets, expected_box[0], rtol=1e-5, atol=1e-5)
    assert cls_targets.shape == (len(anchors),) and box_targets.shape == (len(anchors), 4)


def test_a_box_overlapping_no_anchor_does_not_collect_the_anchors_overlapping_nothing() -> None:
    anchors = np.array([[10, 10, 8, 8], [50, 50, 8, 8], [90, 90, 8, 8]], np.float32)
    boxes = np.array([[[200, 200, 210, 210], [46, 46, 54, 54]]], np.float32)
    cls_targets, _, _ = ssd_targets(anchors, boxes, np.array([[0, 1]], np.float32))
    np.testing.assert_array_equal(cls_targets, [[0, 2, 0]])


def test_images_without_boxes_and_degenerate_boxes_give_finite_background_targets() -> None:
    anchors = anchors_at()
    empty = ssd_targets(anchors, np.zeros((2, 0, 4)), np.zeros((2, 0)))
    flat = ssd_targets(anchors, np.array([[[20, 30, 20, 90], [10, 10, 60, 60]]]), np.array([[0, 1]]))
    assert all(np.isfinite(t).all() for t in empty + flat)
    assert not empty[0].any() and not empty[1].any()
    assert set(np.unique(flat[0])) == {0.0, 2.0}  # only the real box matched, none of the zero-width one


def random_predictions(seed: int, batch: int = 3, anchors: int = 300, classes: int = 3):
    rng = np.random.RandomState(seed)
    cls_pred = rng.normal(0, 2, (batch, anchors, classes + 1)).astype(np.float32)
    box_pred = rng.normal(0, 1.5, (batch, anchors * 4)).astype(np.float32)  # flat, as GluonCV reshapes it
    cls_target = np.zeros((batch, anchors), np.float32)
    for b, count in enumerate([7, 0, 40][:batch]):  # one image without positives
        cls_target[b, rng.choice(anchors, count, replace=False)] = rng.randint(1, classes + 1, count)
    box_target = (rng.normal(0, 1, (batch, anchors, 4)) * (cls_target > 0)[..., None]).astype(np.float32)
    return cls_pred, box_pred, cls_target, box_target


def loss_and_grads(fn, arrays):
    """``(class loss, box loss, d/d cls_pred, d/d box_pred)`` of ``fn`` on numpy inputs."""
    cls_pred, box_pred, cls_target, box_target = [mx.nd.array(a) for a in arrays]
    for x in (cls_pred, box_pred):
        x.attach_grad()
    with mx.autograd.record():
        cls_loss, box_loss = fn(cls_pred, box_pred, cls_target, box_target)
        total = cls_loss.sum() + box_loss.sum()
    total.backward()
    return (float(cls_loss.sum().asscalar()), float(box_loss.sum().asscalar()), cls_pred.grad.asnumpy(),
            box_pred.grad.asnumpy())


def gluoncv_loss(cls_pred, box_pred, cls_target, box_target):
    _, cls_losses, box_losses = SSDMultiBoxLoss()(cls_pred, box_pred, cls_target, box_target)
    return cls_losses[0], box_losses[0]


@pytest.mark.parametrize("seed", range(3))
def test_losses_and_gradients_equal_gluoncv(seed: int) -> None:
    arrays = random_predictions(seed)
    ours, theirs = loss_and_grads(multibox_loss, arrays), loss_and_grads(gluoncv_loss, arrays)
    assert ours[0] > 0 and ours[1] > 0
    for a, b in zip(ours[:2], theirs[:2]):
        assert a == pytest.approx(b, rel=1e-5)
    for a, b in zip(ours[2:], theirs[2:]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)


def test_more_hard_negatives_than_background_anchors_and_no_positives_at_all() -> None:
    crowded = random_predictions(3, batch=1, anchors=40)
    crowded[2][0, :30] = 1  # 30 positives want 90 negatives, 10 exist
    ours, theirs = loss_and_grads(multibox_loss, crowded), loss_and_grads(gluoncv_loss, crowded)
    assert ours[0] == pytest.approx(theirs[0], rel=1e-5) and ours[1] == pytest.approx(theirs[1], rel=1e-5)
    cls_pred, box_pred, _, _ = random_predictions(4, batch=2)
    nothing = (cls_pred, box_pred, np.zeros((2, 300), np.float32), np.zeros((2, 300, 4), np.float32))
    assert loss_and_grads(multibox_loss, nothing)[:2] == loss_and_grads(gluoncv_loss, nothing)[:2] == (0.0, 0.0)


def test_ignored_anchors_count_neither_as_positive_nor_as_negative() -> None:
    cls_pred, box_pred, cls_target, box_target = random_predictions(5, batch=1)
    ignored = np.flatnonzero(cls_target[0] == 0)[::3]
    marked = cls_target.copy()
    marked[0, ignored] = -1
    kept = np.setdiff1d(np.arange(cls_target.shape[1]), ignored)
    flat_boxes = box_pred.reshape(1, -1, 4)
    with_ignored = multibox_loss(*[mx.nd.array(a) for a in (cls_pred, box_pred, marked, box_target)])
    without = multibox_loss(*[mx.nd.array(a[:, kept]) for a in (cls_pred, flat_boxes, cls_target, box_target)])
    full = multibox_loss(*[mx.nd.array(a) for a in (cls_pred, box_pred, cls_target, box_target)])
    for a, b in zip(with_ignored, without):
        assert float(a.asscalar()) == pytest.approx(float(b.asscalar()), rel=1e-6)
    assert float(with_ignored[0].asscalar()) != pytest.approx(float(full[0].asscalar()), rel=1e-3)


def small_ssd(name: str = SMALL_SSD, seed: int = 0):
    mx.random.seed(seed)
    net = build_ours(name, classes=list(SHAPE_CLASSES), pretrained_base=False)
    net.initialize()
    return net


def test_recipe_anchors_are_the_training_forwards_and_leave_batchnorm_alone() -> None:
    net = small_ssd()
    recipe = recipe_for(SMALL_SSD, net, data_shape=(SIZE, 96), seed=0)
    assert isinstance(recipe, SSDRecipe) and recipe.data_shape == (SIZE, 96)
    with mx.autograd.train_mode():
        _, _, anchors = net(mx.nd.zeros((1, 3, 96, SIZE)))
    np.testing.assert_array_equal(recipe.anchors, anchors.asnumpy().reshape(-1, 4))
    # building the recipe runs no training-mode forward: running statistics stay where they were
    fresh = small_ssd()
    fresh(mx.nd.zeros((1, 3, SIZE, SIZE)))  # materialise deferred parameters, in inference mode
    before = running_stats(fresh)
    recipe_for(SMALL_SSD, fresh, data_shape=(SIZE, SIZE))
    after = running_stats(fresh)
    assert before.keys() == after.keys()
    for key, value in before.items():
        np.testing.assert_array_equal(after[key], value)
    assert SSDRecipe(small_ssd()).data_shape == (300, 300)  # the configuration's own size


def shapes_samples(tmp_path, count: int, transform):
    root = write_shapes_voc(tmp_path, count=count, seed=1)
    dataset = VOCDetection(root, splits=[("shapes", "train")], classes=SHAPE_CLASSES)
    return TrainingSamples(dataset, len(SHAPE_CLASSES), transform)


def test_train_transform_pickles_and_gives_targets_for_the_anchors(tmp_path) -> None:
    recipe = SSDRecipe(small_ssd(), data_shape=(SIZE, SIZE), seed=3)
    transform = recipe.train_transform()
    copy = pickle.loads(pickle.dumps(transform))
    samples, copies = shapes_samples(tmp_path, 2, transform), shapes_samples(tmp_path, 2, copy)
    for k in range(2):
        ours, theirs = samples[k], copies[k]
        np.testing.assert_array_equal(ours[0].asnumpy(), theirs[0].asnumpy())
        np.testing.assert_array_equal(ours[1], theirs[1])
        np.testing.assert_array_equal(ours[2], theirs[2])
        assert ours[0].shape == (3, SIZE, SIZE)
        assert ours[1].shape == (len(recipe.anchors),) and ours[2].shape == (len(recipe.anchors), 4)
        assert (ours[1] > 0).any() and set(np.unique(ours[1])) <= {0.0, 1.0, 2.0}
    image, boxes = recipe.val_transform()(mx.nd.zeros((80, 96, 3), dtype="uint8"), [[0, 0, 48, 40, 1]])
    assert image.shape == (3, SIZE, SIZE) and boxes[0, :4].tolist() == [0, 0, 64, 64]


def test_a_small_ssd_learns_the_toy_shapes(tmp_path) -> None:
    # mobilenet1.0's configuration: its anchor steps follow the feature strides, so anchors
    # cover a 128 px input (the 0.25 configuration inherits GluonCV's steps of 8 on stride 16)
    random.seed(0)
    np.random.seed(0)
    net = small_ssd("ssd_512_mobilenet1.0_voc")
    recipe = SSDRecipe(net, data_shape=(SIZE, SIZE), seed=0)
    data = recipe.training_data(shapes_samples(tmp_path, 8, None))
    loader = mx.gluon.data.DataLoader(data, batch_size=4, shuffle=True, batchify_fn=recipe.batchify(),
                                      last_batch="discard")
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01, "momentum": 0.9})
    history = train_steps(recipe, loader, trainer, 30)
    assert np.isfinite(history).all()
    first, last = history[:5].sum(axis=1).mean(), history[-5:].sum(axis=1).mean()
    assert last < 0.7 * first, f"the loss went from {first:.3f} to only {last:.3f}"
