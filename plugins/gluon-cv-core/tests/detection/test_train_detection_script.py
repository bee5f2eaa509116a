"""The detection training and evaluation scripts, end to end on a tiny VOC-layout dataset."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest
from detection_testlib import SHAPE_CLASSES, write_shapes_voc

from gluon_cv_core.detection_training.recipe import pad_images_and_labels
from gluon_cv_core.scripts import eval_detection, train_detection
from gluon_hub.compat import mx

MODEL = "center_net_resnet18_v1b_voc"  # the cheapest detector to train on a CPU


def data_args(root) -> list[str]:
    return ["--voc-root", str(root), "--classes", ",".join(SHAPE_CLASSES), "--val-segment", "shapes/val",
            "--data-shape", "64", "--batch-size", "2", "-j", "0"]


def test_train_then_evaluate_the_saved_weights(tmp_path) -> None:
    root = write_shapes_voc(tmp_path / "data", count=6, size=(80, 64))
    save = tmp_path / "params"
    args = train_detection.build_parser().parse_args(
        ["--model", MODEL, *data_args(root), "--train-segment", "shapes/train", "--no-pretrained-base",
         "--num-epochs", "2", "--steps-per-epoch", "2", "--lr", "1e-4", "--save-dir", str(save),
         "--log-interval", "0"])
    history = train_detection.train(args)
    assert [r["epoch"] for r in history] == [1, 2]
    from gluon_cv_core.detection_training.center_net import CenterNetRecipe

    for record in history:
        assert all(math.isfinite(record[name]) and record[name] > 0 for name in CenterNetRecipe.loss_names)
        assert 0.0 <= record["val_mAP"] <= 1.0
    assert args.optimizer == "adam" and args.wd == CenterNetRecipe.defaults["wd"]  # the recipe's schedule
    assert sorted(p.name for p in save.iterdir()) == [f"{MODEL}-0002.params", f"{MODEL}-best.params"]

    # the evaluation script scores the saved weights exactly as training's last validation did
    out = subprocess.run([sys.executable, "-m", "gluon_cv_core.scripts.eval_detection", "--model", MODEL,
                          "--params", str(save / f"{MODEL}-0002.params"), *data_args(root), "--json"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["images"] == 6
    assert result["mAP"] == pytest.approx(history[-1]["val_mAP"], abs=1e-6)
    assert set(result) >= {"AP/square", "AP/bar"}


def test_bad_arguments_say_what_to_do(tmp_path) -> None:
    root = write_shapes_voc(tmp_path, count=2)
    parse = eval_detection.build_parser().parse_args
    with pytest.raises(ValueError, match="need --classes"):
        eval_detection.run(parse(["--model", MODEL, "--voc-root", str(root), "--val-segment", "shapes/val",
                                  "--params", "x.params"]))
    with pytest.raises(ValueError, match=r"write FOLDER/IMAGESET, e.g. VOC2007/val"):
        eval_detection.run(parse(["--model", MODEL, *data_args(root)[:4], "--val-segment", "val",
                                  "--params", "x.params"]))
    with pytest.raises(ValueError, match="'resnet18_v1' is not a trainable detector"):
        eval_detection.run(parse(["--model", "resnet18_v1", *data_args(root), "--params", "x.params"]))
    train_parse = train_detection.build_parser().parse_args
    with pytest.raises(ValueError, match="do not fill one batch of 4"):
        train_detection.train(train_parse(["--model", MODEL, *data_args(root), "--train-segment", "shapes/train",
                                           "--no-pretrained-base", "--batch-size", "4"]))
    with pytest.raises(ValueError, match=r"does not take the option\(s\) mixup"):
        train_detection.train(train_parse(["--model", MODEL, *data_args(root), "--train-segment", "shapes/train",
                                           "--no-pretrained-base", "--mixup"]))


def test_validation_batches_pad_images_and_labels() -> None:
    samples = [(mx.nd.ones((3, 4, 6)), np.array([[0, 0, 2, 2, 1, 0]]), mx.nd.array([2.0])),
               (mx.nd.ones((3, 5, 3)) * 2, np.zeros((0, 6)), mx.nd.array([0.5]))]
    images, labels, scales = pad_images_and_labels(samples)
    assert images.shape == (2, 3, 5, 6) and labels.shape == (2, 1, 6) and scales.shape == (2, 1)
    np.testing.assert_array_equal(images[0, :, 4].asnumpy(), 0)  # padded bottom row
    np.testing.assert_array_equal(images[1, :, :, 3:].asnumpy(), 0)  # padded right columns
    np.testing.assert_array_equal(images[1, :, :, :3].asnumpy(), 2)
    np.testing.assert_array_equal(labels[1].asnumpy(), -1)
    np.testing.assert_array_equal(scales.asnumpy().ravel(), [2.0, 0.5])
