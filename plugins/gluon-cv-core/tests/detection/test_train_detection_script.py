"""The detection training and evaluation scripts, end to end on a tiny VOC-layout dataset."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest
from cv_testlib.detection import SHAPE_CLASSES, write_shapes_voc

from gluon_cv_core.detection import evaluate as eval_detection, train as train_detection
from gluon_cv_core.detection.training.recipe import pad_images_and_labels
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
    from gluon_cv_core.detection.training.center_net import CenterNetRecipe

    for record in history:
        assert all(math.isfinite(record[name]) and record[name] > 0 for name in CenterNetRecipe.loss_names)
        assert 0.0 <= record["val_mAP"] <= 1.0
    assert args.optimizer == "adam" and args.wd == CenterNetRecipe.defaults["wd"]  # the recipe's schedule
    assert sorted(p.name for p in save.iterdir()) == [f"{MODEL}-0002.params", f"{MODEL}-best.params"]

    # the evaluation script scores the saved weights exactly as training's last validation did
    out = subprocess.run([sys.executable, "-m", "gluon_cv_core.detection.evaluate", "--model", MODEL,
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


def sync_norm_layers(block) -> list:
    """The SyncBatchNorm blocks under ``block``."""
    found = [block] if isinstance(block, mx.gluon.contrib.nn.SyncBatchNorm) else []
    for child in block._children.values():
        found += sync_norm_layers(child)
    return found


def test_syncbn_builds_synchronised_batchnorm_that_loads_batchnorm_files_and_trains(tmp_path) -> None:
    import gluon_hub

    root = write_shapes_voc(tmp_path / "data", count=6, size=(80, 64))
    yolo = "yolo3_mobilenet0.25_voc"
    args = train_detection.build_parser().parse_args(
        ["--model", yolo, *data_args(root), "--train-segment", "shapes/train", "--no-pretrained-base", "--syncbn",
         "--no-random-shape", "--num-epochs", "1", "--steps-per-epoch", "1", "--log-interval", "0",
         "--save-dir", str(tmp_path / "params")])
    net = train_detection._build(args, SHAPE_CLASSES, [mx.cpu()])
    layers = sync_norm_layers(net)
    assert layers and not [b for b in net.collect_params().values() if "syncbatchnorm" in b.name]
    assert {layer._kwargs["ndev"] for layer in layers} == {1}  # one per --ctx device

    history = train_detection.train(args)  # one step through the script
    assert all(math.isfinite(history[0][name]) for name in ("objectness", "box_center", "box_scale", "class"))
    plain = gluon_hub.load(yolo, classes=list(SHAPE_CLASSES), pretrained_base=False)  # BatchNorm: the published layout
    plain.load_parameters(str(tmp_path / "params" / f"{yolo}-0001.params"), allow_missing=False, ignore_extra=False)

    # SSD's backbone becomes a traced symbol named after its layers: a BatchNorm file still loads strictly
    ssd = "ssd_300_mobilenet0.25_voc"
    bn = gluon_hub.load(ssd, classes=list(SHAPE_CLASSES), pretrained_base=False)
    bn.initialize()
    bn(mx.nd.zeros((1, 3, 128, 128)))
    bn.save_parameters(str(tmp_path / "ssd.params"))
    sync = train_detection._build(train_detection.build_parser().parse_args(
        ["--model", ssd, *data_args(root), "--no-pretrained-base", "--syncbn"]), SHAPE_CLASSES, [mx.cpu(0), mx.cpu(1)])
    assert "_contrib_SyncBatchNorm" in sync.features._cached_graph[1].tojson()
    assert '"ndev": "2"' in sync.features._cached_graph[1].tojson()
    sync.load_parameters(str(tmp_path / "ssd.params"), allow_missing=False, ignore_extra=False)

    with pytest.raises(ValueError, match="applies to SSD and YOLOv3"):
        train_detection._norm_options(MODEL, True, 1)
    with pytest.raises(ValueError, match="VGG16-atrous network has no BatchNorm layer"):
        train_detection._norm_options("ssd_300_vgg16_atrous_voc", True, 2)
    with pytest.raises(ValueError, match="train a faster_rcnn_fpn_syncbn_\\* model"):
        train_detection._norm_options("faster_rcnn_resnet50_v1b_voc", True, 1)
    assert train_detection._norm_options("faster_rcnn_fpn_syncbn_resnet50_v1b_voc", False, 4) == {"num_devices": 4}
