"""CenterNet's training recipe: targets and losses equal GluonCV 0.10's, and it learns.

GluonCV (test-only reference) supplies ``CenterNetTargetGenerator``, ``HeatmapFocalLoss`` and
``MaskedL1Loss``; the targets must be equal array for array, the losses within 1e-5.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest
from cv_testlib.detection import SHAPE_CLASSES, build_ours, train_steps, write_shapes_voc

from gluon_cv_core.datasets.voc import VOCDetection
from gluon_cv_core.detection.training import TrainingSamples, recipe_for
from gluon_cv_core.detection.training.center_net import (
    CenterNetRecipe,
    center_net_targets,
    heatmap_focal_loss,
    masked_l1_loss,
)
from gluon_hub.compat import mx

from gluoncv.loss import HeatmapFocalLoss, MaskedL1Loss  # test-only reference
from gluoncv.model_zoo.center_net.target_generator import CenterNetTargetGenerator

pytestmark = [pytest.mark.parity, pytest.mark.training]

SIZE = 128  # training input side of the small network; its heatmap is SIZE / 4


def _random_boxes(rng: np.random.RandomState, count: int, width: int, height: int, num_classes: int,
                  padding: int) -> tuple[np.ndarray, np.ndarray]:
    """``count`` boxes of mixed sizes inside a ``width`` x ``height`` heatmap (some at its
    border, one repeating another's centre cell), then ``padding`` rows of -1."""
    x0, y0 = rng.uniform(0, width - 1, count), rng.uniform(0, height - 1, count)
    x1 = np.minimum(x0 + rng.exponential(8, count), width - 1)
    y1 = np.minimum(y0 + rng.exponential(8, count), height - 1)
    boxes = np.stack([x0, y0, x1, y1], axis=1).astype(np.float32)
    ids = rng.randint(0, num_classes, count).astype(np.float32)
    if count > 2:  # same centre cell, another size: the later box's size and offset win
        boxes[-1] = boxes[0] + np.float32([0.1, 0.1, -0.1, 0.3])
    if count > 3:
        boxes[1, :2] = 0  # Gaussians cut by the border
    boxes = np.concatenate([boxes, -np.ones((padding, 4), np.float32)])
    return boxes, np.concatenate([ids, -np.ones(padding, np.float32)])


def _small_net(ctx: mx.Context = mx.cpu()) -> mx.gluon.HybridBlock:  # noqa: B008  (a context is immutable)
    mx.random.seed(7)
    net = build_ours("center_net_resnet18_v1b_voc", classes=SHAPE_CLASSES, pretrained_base=False)
    net.initialize(ctx=ctx)
    return net


@pytest.mark.parametrize("seed", range(6))
def test_targets_equal_gluoncv_target_generator(seed: int) -> None:
    rng = np.random.RandomState(seed)
    width, height, classes = 40, 32, 3
    # several images with different box counts (none, one, many) and padding rows
    for count, padding in ((0, 2), (1, 0), (rng.randint(2, 6), 1), (rng.randint(6, 25), 3)):
        boxes, ids = _random_boxes(rng, count, width, height, classes, padding)
        expected = CenterNetTargetGenerator(classes, width, height)(boxes, ids[:, None])
        actual = center_net_targets(boxes, ids, classes, width, height)
        for name, ours, theirs in zip(("heatmap", "wh", "wh_mask", "offset", "offset_mask"), actual, expected):
            assert ours.dtype == np.float32, name
            np.testing.assert_array_equal(ours, theirs.asnumpy(), err_msg=name)
        if count:
            assert actual[0].max() == 1.0  # every centre cell is a positive of the focal loss


def test_train_transform_targets_follow_the_preset_boxes_and_equal_gluoncv(tmp_path: Path) -> None:
    dataset = VOCDetection(write_shapes_voc(tmp_path, count=3), splits=[("shapes", "train")], classes=SHAPE_CLASSES)
    recipe = CenterNetRecipe(_small_net(), data_shape=(SIZE, SIZE), seed=3)
    transform = recipe.train_transform()
    image, label = dataset[0]
    sample = transform(image, label)
    assert sample[0].shape == (3, SIZE, SIZE)
    # the same preset draws, without targets: the boxes the targets were made from
    from gluon_cv_core.detection.presets import CenterNetTrainTransform

    _, boxes = CenterNetTrainTransform(SIZE, SIZE, scale_factor=4, seed=3)(image, label)
    expected = CenterNetTargetGenerator(len(SHAPE_CLASSES), SIZE // 4, SIZE // 4)(boxes[:, :4], boxes[:, 4:5])
    for ours, theirs in zip(sample[1:], expected):
        np.testing.assert_array_equal(ours, theirs.asnumpy())


def test_train_transform_pickles_with_its_random_state(tmp_path: Path) -> None:
    dataset = VOCDetection(write_shapes_voc(tmp_path, count=2), splits=[("shapes", "train")], classes=SHAPE_CLASSES)
    transform = CenterNetRecipe(_small_net(), data_shape=(SIZE, SIZE), seed=11).train_transform()
    copy = pickle.loads(pickle.dumps(transform))
    for k in range(2):  # the copy continues the same random sequence
        image, label = dataset[k]
        for ours, theirs in zip(transform(image, label), copy(image, label)):
            ours = ours.asnumpy() if hasattr(ours, "asnumpy") else ours
            theirs = theirs.asnumpy() if hasattr(theirs, "asnumpy") else theirs
            np.testing.assert_array_equal(ours, theirs)


def _loss_inputs(seed: int) -> tuple[mx.nd.NDArray, ...]:
    rng = np.random.RandomState(seed)
    width = height = 24
    targets = [center_net_targets(*_random_boxes(rng, count, width, height, 3, 2), 3, width, height)
               for count in (1, 5, 9)]
    heatmap, wh, wh_mask, offset, offset_mask = [mx.nd.array(np.stack(t)) for t in zip(*targets)]
    pred_heatmap = mx.nd.array(rng.uniform(1e-4, 1 - 1e-4, heatmap.shape))
    pred_wh = mx.nd.array(rng.normal(5, 4, wh.shape))
    pred_offset = mx.nd.array(rng.uniform(-0.2, 1.2, offset.shape))
    return heatmap, wh, wh_mask, offset, offset_mask, pred_heatmap, pred_wh, pred_offset


@pytest.mark.parametrize("seed", range(3))
def test_losses_equal_gluoncv_losses(seed: int) -> None:
    heatmap, wh, wh_mask, offset, offset_mask, pred_heatmap, pred_wh, pred_offset = _loss_inputs(seed)
    pairs = [
        (heatmap_focal_loss(pred_heatmap, heatmap), HeatmapFocalLoss(from_logits=True)(pred_heatmap, heatmap)),
        (masked_l1_loss(pred_wh, wh, wh_mask, 0.1), MaskedL1Loss(weight=0.1)(pred_wh, wh, wh_mask)),
        (masked_l1_loss(pred_offset, offset, offset_mask), MaskedL1Loss(weight=1.0)(pred_offset, offset, offset_mask)),
    ]
    for ours, theirs in pairs:
        np.testing.assert_allclose(ours.asnumpy(), theirs.asnumpy(), rtol=1e-5)
    # no positives: the focal loss is normalised by one, not divided by zero
    empty = mx.nd.zeros(heatmap.shape)
    np.testing.assert_allclose(heatmap_focal_loss(pred_heatmap, empty).asnumpy(),
                               HeatmapFocalLoss(from_logits=True)(pred_heatmap, empty).asnumpy(), rtol=1e-5)


def test_recipe_losses_weigh_the_network_outputs_as_gluoncv_script_does() -> None:
    net = _small_net()
    recipe = recipe_for("center_net_resnet18_v1b_voc", net, data_shape=(64, 64))
    assert isinstance(recipe, CenterNetRecipe)
    rng = np.random.RandomState(0)
    targets = [center_net_targets(*_random_boxes(rng, count, 16, 16, 2, 1), 2, 16, 16) for count in (2, 4)]
    batch = [mx.nd.array(rng.uniform(-1, 1, (2, 3, 64, 64)))] + [mx.nd.array(np.stack(t)) for t in zip(*targets)]
    with mx.autograd.record():
        losses = recipe.losses(batch)
        pred_heatmap, pred_wh, pred_offset = net(batch[0])
    expected = [HeatmapFocalLoss(from_logits=True)(pred_heatmap, batch[1]),
                MaskedL1Loss(weight=0.1)(pred_wh, batch[2], batch[3]),
                MaskedL1Loss(weight=1.0)(pred_offset, batch[4], batch[5])]
    assert len(losses) == len(recipe.loss_names) == 3
    for ours, theirs in zip(losses, expected):
        assert ours.shape == (1,)
        np.testing.assert_allclose(ours.asnumpy(), theirs.asnumpy(), rtol=1e-5)


def test_defaults_and_prepare_follow_gluoncv_script() -> None:
    net = _small_net()
    recipe = recipe_for("center_net_resnet18_v1b_voc", net)
    assert recipe.data_shape == (512, 512)
    assert {k: recipe.defaults[k] for k in ("optimizer", "lr", "wd", "epochs", "lr_decay_epoch")} == {
        "optimizer": "adam", "lr": 1.25e-4, "wd": 1e-4, "epochs": 140, "lr_decay_epoch": (90, 120)}
    recipe.prepare()
    params = net.collect_params()
    assert all(p.wd_mult == 0.0 for name, p in params.items() if name.endswith("bias"))
    assert all(p.wd_mult == 1.0 for name, p in params.items() if name.endswith("weight"))


def test_bad_input_gives_clear_errors() -> None:
    boxes = np.array([[1, 1, 5, 5]], np.float32)
    with pytest.raises(ValueError, match="outside the heatmap's 2 classes"):
        center_net_targets(boxes, np.array([2]), 2, 16, 16)
    with pytest.raises(ValueError, match="heatmap's frame"):
        center_net_targets(boxes * 8, np.array([0]), 2, 16, 16)
    with pytest.raises(ValueError, match="multiple of the network's stride 4"):
        CenterNetRecipe(_small_net(), data_shape=(130, 128))
    with pytest.raises(ValueError, match="does not take the option"):
        CenterNetRecipe(_small_net(), mixup=True)


def test_loss_goes_down_on_shapes(tmp_path: Path) -> None:
    dataset = VOCDetection(write_shapes_voc(tmp_path, count=8), splits=[("shapes", "train")], classes=SHAPE_CLASSES)
    net = _small_net()
    recipe = CenterNetRecipe(net, data_shape=(SIZE, SIZE), seed=0)
    samples = TrainingSamples(dataset, len(SHAPE_CLASSES), recipe.train_transform())
    np.random.seed(0)  # the loader's shuffling
    loader = mx.gluon.data.DataLoader(samples, batch_size=4, shuffle=True, last_batch="discard",
                                      batchify_fn=recipe.batchify())
    net.hybridize()
    recipe.prepare()
    # From a random backbone the focal loss's first gradients are huge; unclipped, plain SGD
    # pushes every heatmap cell under the network's 1e-4 clip, where no gradient flows, and
    # the heatmap loss stalls at -log(1e-4) (GluonCV trains with Adam, which scales steps).
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd",
                               {"learning_rate": 0.01, "momentum": 0.9, "wd": 1e-4, "clip_gradient": 0.1})
    history = train_steps(recipe, loader, trainer, 36)
    shown = history.round(3).tolist()
    assert np.isfinite(history).all(), shown
    first, last = history[:5].mean(axis=0), history[-5:].mean(axis=0)
    assert last.sum() < 0.5 * first.sum(), shown
    # past the first steps' drop (every cell pushed down), the centres are being learnt
    assert last[0] < 0.8 * history[3:8, 0].mean(), shown
    assert last[2] < 0.8 * first[2], shown  # centre offsets
