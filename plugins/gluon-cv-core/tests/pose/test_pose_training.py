"""The pose training recipe against GluonCV 0.10 (crops, heatmap targets, flip-back, OKS evaluation)
and the training script end to end on a generated COCO keypoints file."""

from __future__ import annotations

import random
import warnings
from pathlib import Path

import numpy as np
import pytest
from cv_testlib.pose import SPLIT, person_keypoints, write_keypoints, write_people

from gluon_cv_core.datasets.coco_keypoints import COCOKeyPoints
from gluon_cv_core.pose import train as train_pose
from gluon_cv_core.pose.recipe import (
    HeatmapTargets,
    PoseTrainTransform,
    PoseValTransform,
    box_to_center_scale,
    crop_matrix,
    evaluate_pose,
    flip_heatmaps,
    heatmap_loss,
)
from gluon_hub.compat import mx

from gluoncv.data import COCOKeyPoints as GluonKeyPoints
from gluoncv.data.transforms.pose import flip_heatmap, get_final_preds
from gluoncv.data.transforms.presets.simple_pose import SimplePoseDefaultTrainTransform, SimplePoseDefaultValTransform
from gluoncv.utils.metrics.coco_keypoints import COCOKeyPointsMetric as GluonMetric

pytestmark = [pytest.mark.parity, pytest.mark.training]

SIZE = (64, 48)  # crop (height, width): heatmaps 16 x 12


def _quiet(make):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pycocotools' and the datasets' notes
        return make()


@pytest.fixture(scope="module")
def people(tmp_path_factory) -> Path:
    """Six people in three images, plus one whose right ankle lies far outside its box."""
    root = tmp_path_factory.mktemp("keypoints")
    rng = np.random.RandomState(5)
    rows = []
    for image in (1, 2, 3):
        for k, box in enumerate(([4.0, 6.0, 30.0, 60.0], [50.0, 10.0, 36.0, 62.0])):
            rows.append((10 * image + k, image, box, person_keypoints(rng, box, unlabelled=(k + image,),
                                                                        occluded=(5,)), 0))
    stray = person_keypoints(rng, [10.0, 8.0, 20.0, 30.0])
    stray[16 * 3:16 * 3 + 2] = [90.0, 70.0]  # visible, but nowhere near the crop
    rows.append((40, 3, [10.0, 8.0, 20.0, 30.0], stray, 0))
    write_keypoints(root, rows, images=[(i, (96, 80)) for i in (1, 2, 3)])
    return root


def test_train_crops_and_targets_equal_gluoncv(people) -> None:
    ours, reference = COCOKeyPoints(people, SPLIT), _quiet(lambda: GluonKeyPoints(str(people), (SPLIT,)))
    assert len(ours) == len(reference) == 7
    flips = set()
    for seed in range(14):
        index = seed % len(ours)
        mine = PoseTrainTransform(SIZE, sigma=2, scale_factor=0.3, rotation_factor=40, seed=seed)(*ours[index])
        theirs = SimplePoseDefaultTrainTransform(17, reference.joint_pairs, SIZE, (16, 12), sigma=2,
                                                 scale_factor=0.3, rotation_factor=40)
        random.seed(seed)
        np.random.seed(seed)
        expected = theirs(*reference[index])
        np.testing.assert_array_equal(mine[0].asnumpy(), expected[0].asnumpy())
        np.testing.assert_array_equal(mine[1], expected[1])
        np.testing.assert_array_equal(mine[2], expected[2])
        assert mine[1].shape == (17, 16, 12) and mine[2].shape == (17, 1, 1) and mine[3] == ours.image_ids[index]
        draws = random.Random(seed)
        draws.random()  # rotate or not
        flipped = draws.random() > 0.5
        flips.add(flipped)
        unlabelled = ours.label(index)["joints"][:, 2] == 0
        if flipped:  # left and right joints trade places
            unlabelled = unlabelled[[0] + [j + 1 if j % 2 else j - 1 for j in range(1, 17)]]
        assert not mine[2][unlabelled].any() and not mine[1][unlabelled].any()
    assert flips == {True, False}  # both the mirrored and the plain crop were compared
    # the stray ankle is labelled but falls outside every crop: weight 0, no Gaussian
    stray = PoseTrainTransform(SIZE, scale_factor=0, rotation_factor=0, flip=False)(*ours[6])
    assert stray[2][16, 0, 0] == 0 and not stray[1][16].any() and stray[2][:16].all()


def test_heatmap_targets_by_hand() -> None:
    targets = HeatmapTargets((64, 48), (16, 12), sigma=2)
    joints = np.zeros((3, 3), np.float32)
    joints[0] = (21.0, 30.5, 1)  # heatmap (5.25, 7.6): nearest pixel (5, 8)
    joints[1] = (21.0, 30.5, 0)  # unlabelled
    joints[2] = (-40.0, 10.0, 1)  # heatmap x -10: the Gaussian (3 sigma = 6 pixels) misses the heatmap
    target, weight = targets(joints)
    assert weight.ravel().tolist() == [1.0, 0.0, 0.0]
    assert target[0, 8, 5] == 1.0 and target[0].argmax() == 8 * 12 + 5
    assert target[0, 8, 6] == pytest.approx(np.exp(-1 / 8)) and target[0, 10, 7] == pytest.approx(np.exp(-8 / 8))
    assert target[0, 8, 11] == pytest.approx(np.exp(-36 / 8)) and target[0, 15, 5] == 0  # cut off beyond 6 pixels
    assert not target[1:].any()


def test_loss_ignores_weighted_out_joints() -> None:
    rng = np.random.RandomState(0)
    pred = mx.nd.array(rng.uniform(-1, 1, (2, 3, 4, 4)))
    target = mx.nd.array(rng.uniform(0, 1, (2, 3, 4, 4)))
    weight = mx.nd.array([[1, 0, 1], [0, 1, 1]]).reshape((2, 3, 1, 1))
    pred.attach_grad()
    with mx.autograd.record():
        loss = heatmap_loss(pred, target, weight)
    loss.backward()
    expected = 0.5 * ((pred - target) ** 2 * weight).asnumpy().reshape(2, -1).mean(axis=1)
    np.testing.assert_allclose(loss.asnumpy(), expected, rtol=1e-6)
    grad = pred.grad.asnumpy()
    assert not grad[0, 1].any() and not grad[1, 0].any() and np.abs(grad[0, 0]).min() > 0


def test_flip_back_equals_gluoncv() -> None:
    heatmaps = np.random.RandomState(1).uniform(0, 1, (2, 17, 8, 6)).astype(np.float32)
    pairs = [[1, 2], [3, 4], [5, 6], [7, 8], [9, 10], [11, 12], [13, 14], [15, 16]]  # GluonCV's COCO joint_pairs
    expected = flip_heatmap(heatmaps.copy(), pairs, shift=True)
    np.testing.assert_array_equal(flip_heatmaps(mx.nd.array(heatmaps)).asnumpy(), expected)


def _oracle_heatmaps(dataset: COCOKeyPoints) -> np.ndarray:
    """Each person's ideal heatmaps in its evaluation crop: Gaussians at the true joints."""
    targets = HeatmapTargets(SIZE, (16, 12), sigma=2)
    maps = []
    for index in range(len(dataset)):
        label = dataset.label(index)
        center, scale = box_to_center_scale(label["bbox"], SIZE[1] / SIZE[0])
        matrix = crop_matrix(center, scale[0], 0, SIZE[1], SIZE[0])
        joints = label["joints"].copy()
        joints[:, :2] = np.concatenate([joints[:, :2], np.ones((17, 1))], axis=1) @ matrix.T
        maps.append(targets(joints)[0])
    return np.stack(maps)


def test_evaluation_equals_gluoncvs_validation(people, tmp_path) -> None:
    dataset = _quiet(lambda: COCOKeyPoints(people, SPLIT))
    reference = _quiet(lambda: GluonKeyPoints(str(people), (SPLIT,)))
    heatmaps = _oracle_heatmaps(dataset)
    batches = iter(np.split(heatmaps, [3, 6]))  # batch size 3 over 7 people: 3, 3, 1

    def oracle(x):
        chunk = next(batches)
        assert x.shape == (len(chunk), 3, *SIZE)
        return mx.nd.array(chunk)

    scores = _quiet(lambda: evaluate_pose(oracle, dataset, [mx.cpu()], batch_size=3, image_size=SIZE))

    metric = GluonMetric(reference, str(tmp_path / "gluoncv"), use_time=False)
    transform = SimplePoseDefaultValTransform(17, reference.joint_pairs, SIZE)
    for index in range(len(reference)):
        _, scale, center, score, image_id = transform(*reference[index])
        mine = PoseValTransform(SIZE)(*dataset[index])
        np.testing.assert_array_equal(mine[0].asnumpy(), transform(*reference[index])[0].asnumpy())
        preds, maxvals = get_final_preds(mx.nd.array(heatmaps[index:index + 1]), center[None], scale[None])
        metric.update(preds, maxvals, mx.nd.array([score]), mx.nd.array([image_id]))
    expected, _ = _quiet(metric.get)
    np.testing.assert_allclose(list(scores.values()), list(expected.values()), rtol=0, atol=1e-12)
    assert scores["AP .5"] > 0.9  # perfect heatmaps decode back onto the joints


def _train_args(root: Path, save: Path, *extra: str) -> list[str]:
    return ["--model", "simple_pose_resnet18_v1b", "--data-root", str(root), "--train-split", SPLIT,
            "--val-split", SPLIT, "--input-size", "64,64", "--no-pretrained-base", "--batch-size", "8", "-j", "0",
            "--num-epochs", "6", "--steps-per-epoch", "1", "--log-interval", "0", "--save-dir", str(save), *extra]


def test_training_script_end_to_end(tmp_path) -> None:
    write_people(tmp_path / "coco", images=4, per_image=2)
    args = train_pose.build_parser().parse_args(_train_args(tmp_path / "coco", tmp_path / "runs"))
    history = _quiet(lambda: train_pose.train(args))
    assert [record["epoch"] for record in history] == list(range(1, 7))
    losses = [record["loss"] for record in history]
    assert all(np.isfinite(losses)) and losses[-1] < 0.9 * losses[0], losses
    assert all(0 <= record["val_AP"] <= 1 and "val_AR .5" in record for record in history)
    saved = tmp_path / "runs" / "simple_pose_resnet18_v1b-0006.params"
    assert saved.is_file() and (tmp_path / "runs" / "simple_pose_resnet18_v1b-best.params").is_file()
    # --eval-only scores the saved weights with the same OKS evaluation
    again = train_pose.build_parser().parse_args(_train_args(tmp_path / "coco", tmp_path / "runs", "--eval-only",
                                                             "--resume", str(saved)))
    evaluated = _quiet(lambda: train_pose.train(again))
    assert evaluated[0]["val_AP"] == pytest.approx(history[-1]["val_AP"], abs=1e-9)


@pytest.mark.parametrize("extra, message", [
    (["--model", "alpha_pose_resnet101_v1b_coco"], "trains the simple_pose and mobile_pose families"),
    (["--model", "resnet18_v1"], "is a image-classification model"),
    (["--input-size", "64,48"], "multiples of 32"),
    (["--eval-only"], "give --resume FILE or --pretrained"),
])
def test_training_script_refuses_bad_settings(tmp_path, capsys, extra, message) -> None:
    argv = _train_args(tmp_path, tmp_path / "runs") + extra
    assert train_pose.main(argv) == 2
    assert message in capsys.readouterr().err
