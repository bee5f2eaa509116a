"""The semantic-segmentation training and evaluation scripts, end to end on a tiny VOC-layout dataset,
and the pieces of GluonCV's recipe they reproduce (poly schedule, loss gradients)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from gluon_cv_core.common.training import seed_everything
from gluon_cv_core.datasets.voc import VOCSegmentation
from gluon_cv_core.segmentation import evaluate as eval_segmentation, train as train_segmentation
from gluon_cv_core.segmentation._script import PolySchedule, build_segmenter, output_weights, segmentation_loss
from gluon_cv_core.segmentation.classes import VOC_CLASSES
from gluon_cv_core.segmentation.transforms import SegmentationValTransform
from gluon_hub.compat import mx

import gluoncv  # noqa: F401  (test-only reference; after the compat shim)

MODEL = "fcn_resnet50_voc"
#: the classes the fixture draws (VOC ids): background, aeroplane, person
DRAWN = (0, 1, 15)


def _voc_palette() -> list[int]:
    """The PASCAL VOC colour map, as the dataset's palette PNGs carry it."""
    palette = []
    for index in range(256):
        r = g = b = 0
        value = index
        for bit in range(8):
            r |= ((value >> 0) & 1) << (7 - bit)
            g |= ((value >> 1) & 1) << (7 - bit)
            b |= ((value >> 2) & 1) << (7 - bit)
            value >>= 3
        palette += [r, g, b]
    return palette


def write_voc_segmentation(root: Path, train: int = 6, val: int = 2, size: tuple[int, int] = (56, 44),
                           seed: int = 0) -> Path:
    """``root/VOC2012/{JPEGImages,SegmentationClass,ImageSets/Segmentation}``: JPEG photos of a red
    square (class 1) and a blue disc (class 15) on dark noise, palette PNG masks with VOC's 255 border
    around each object, and ``train.txt`` / ``val.txt``."""
    rng = np.random.RandomState(seed)
    folder = root / "VOC2012"
    for sub in ("JPEGImages", "SegmentationClass", "ImageSets/Segmentation"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    width, height = size
    yy, xx = np.mgrid[0:height, 0:width]
    names = []
    for k in range(train + val):
        pixels = rng.randint(0, 50, (height, width, 3)).astype(np.uint8)
        mask = np.zeros((height, width), np.uint8)
        side = rng.randint(10, 18)
        x, y = rng.randint(1, width // 2 - side), rng.randint(1, height - side - 1)
        pixels[y:y + side, x:x + side] = (220, 30, 30)
        mask[y - 1:y + side + 1, x - 1:x + side + 1] = 255
        mask[y:y + side, x:x + side] = 1
        cx, cy, r = rng.randint(width // 2 + 8, width - 8), rng.randint(8, height - 8), rng.randint(5, 8)
        disc = (xx - cx) ** 2 + (yy - cy) ** 2
        mask[disc <= (r + 1) ** 2] = 255
        pixels[disc <= r ** 2] = (30, 30, 220)
        mask[disc <= r ** 2] = 15
        name = f"2012_{k:06d}"
        Image.fromarray(pixels).save(folder / "JPEGImages" / f"{name}.jpg", quality=95)
        label = Image.fromarray(mask, mode="P")
        label.putpalette(_voc_palette())
        label.save(folder / "SegmentationClass" / f"{name}.png")
        names.append(name)
    (folder / "ImageSets/Segmentation/train.txt").write_text("".join(f"{n}\n" for n in names[:train]))
    (folder / "ImageSets/Segmentation/val.txt").write_text("".join(f"{n}\n" for n in names[train:]))
    return root


def data_args(root: Path) -> list[str]:
    return ["--dataset", "voc", "--data-root", str(root), "--base-size", "56", "--crop-size", "40",
            "--batch-size", "2", "-j", "0"]


def _fixed_batch_loss(net, root: Path) -> float:
    """The training loss (batch statistics) of ``net`` on every training image, centre-cropped to 40:
    the same batch before and after training, unlike the random crops training sees."""
    data = VOCSegmentation(root, "train", transform=SegmentationValTransform(40))
    x = mx.nd.stack(*[data[i][0] for i in range(len(data))])
    y = mx.nd.stack(*[data[i][1] for i in range(len(data))])
    with mx.autograd.train_mode():
        outputs = list(net(x))
    return float(segmentation_loss(outputs, y, output_weights(MODEL, len(outputs), 0.4)).asscalar())


def test_train_lowers_the_loss_and_eval_scores_the_saved_weights(tmp_path, capsys) -> None:
    root = write_voc_segmentation(tmp_path / "data")
    save = tmp_path / "params"
    args = train_segmentation.build_parser().parse_args(
        [*data_args(root), "--model", MODEL, "--no-pretrained-base", "--epochs", "3", "--steps-per-epoch", "3",
         "--lr", "0.01", "--aux-weight", "0.4", "--save-dir", str(save), "--log-interval", "0"])
    history = train_segmentation.train(args)
    assert [r["epoch"] for r in history] == [1, 2, 3]
    assert all(math.isfinite(r["loss"]) for r in history)
    assert history[-1]["loss"] < history[0]["loss"]
    assert history[-1]["lr"] == pytest.approx(0.0)  # the poly schedule ends at 0, as GluonCV's
    for record in history:
        assert 0.0 <= record["val_pixAcc"] <= 1.0 and 0.0 <= record["val_mIoU"] <= 1.0
    names = sorted(p.name for p in save.iterdir())
    assert names == [f"{MODEL}-{e:04d}.params" for e in (1, 2, 3)] + [f"{MODEL}-best.params"]

    # on one fixed batch, the loss falls epoch after epoch from the network training started with
    seed_everything(args.seed)  # what train() did before building it
    net = build_segmenter(args, VOC_CLASSES, [mx.cpu()])
    losses = [_fixed_batch_loss(net, root)]
    for epoch in (1, 2, 3):
        net.load_parameters(str(save / f"{MODEL}-{epoch:04d}.params"))
        losses.append(_fixed_batch_loss(net, root))
    assert losses == sorted(losses, reverse=True) and losses[-1] < 0.6 * losses[0], losses

    # the evaluation script, in a subprocess, scores the saved weights as training's last validation did
    weights = str(save / f"{MODEL}-0003.params")
    done = subprocess.run([sys.executable, "-m", "gluon_cv_core.segmentation.evaluate", "--model", MODEL,
                           "--params", weights, *data_args(root), "--mode", "val", "--json"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["images"] == 2
    assert result["pixAcc"] == pytest.approx(history[-1]["val_pixAcc"], abs=1e-6)
    assert result["mIoU"] == pytest.approx(history[-1]["val_mIoU"], abs=1e-6)

    # multi-scale (GluonCV's testval: whole images, flipped) prints pixAcc and mIoU as text
    capsys.readouterr()
    assert eval_segmentation.main(["--model", MODEL, "--params", weights, *data_args(root),
                                   "--scales", "0.75,1.25"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{MODEL}: pixAcc ") and ", mIoU " in out
    assert "(2 images; testval: scales 0.75,1.25 of 56, flipped, 40-pixel windows)" in out


def test_poly_schedule_equals_gluoncvs_warmup_and_poly() -> None:
    from gluoncv.utils import LRScheduler, LRSequential

    for warmup in (0, 2):
        steps, epochs, lr = 3, 5, 0.01
        reference = LRSequential([
            LRScheduler("linear", base_lr=0, target_lr=lr, nepochs=warmup, iters_per_epoch=steps),
            LRScheduler("poly", base_lr=lr, nepochs=epochs - warmup, iters_per_epoch=steps, power=0.9)])
        ours = PolySchedule(lr, epochs * steps, warmup * steps, 0.9)
        for update in range(epochs * steps + 3):
            assert ours(update) == pytest.approx(reference(update), abs=1e-12), (warmup, update)
    with pytest.raises(ValueError, match="lower --warmup-epochs"):
        PolySchedule(0.1, 4, 4)


def test_loss_gradient_equals_gluoncvs_mixed_softmax_loss() -> None:
    """GluonCV's loss gives (softmax - one-hot) / labelled pixels of the batch for both heads (its
    SoftmaxOutput ignores the auxiliary weight); ours does the same with weight 1, and applies another."""
    from gluoncv.loss import MixSoftmaxCrossEntropyLoss

    rng = np.random.RandomState(0)
    main, aux = (mx.nd.array(rng.normal(size=(2, 4, 5, 6))) for _ in range(2))
    label = mx.nd.array(rng.randint(-1, 4, (2, 5, 6)), dtype="int32")

    def grads(loss_fn):
        for x in (main, aux):
            x.attach_grad()
        with mx.autograd.record():
            loss = loss_fn()
        loss.backward()
        return main.grad.asnumpy().copy(), aux.grad.asnumpy().copy()

    reference = MixSoftmaxCrossEntropyLoss(aux=True, aux_weight=0.5)
    expected = grads(lambda: reference(main, aux, label.astype("float32")))
    for got, want in zip(grads(lambda: segmentation_loss([main, aux], label, (1.0, 1.0))), expected):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)
    weighted = grads(lambda: segmentation_loss([main, aux], label, (1.0, 0.5)))
    np.testing.assert_allclose(weighted[1], 0.5 * expected[1], rtol=1e-5, atol=1e-7)
    assert output_weights("fcn_resnet50_voc", 2, 0.4) == (1.0, 0.4)
    assert output_weights("icnet_resnet50_citys", 4, 0.4) == (1.0, 0.4, 0.4, 1.0)


def test_bad_settings_fail_with_a_message(tmp_path, capsys) -> None:
    root = write_voc_segmentation(tmp_path / "data", train=1, val=1)
    code = train_segmentation.main([*data_args(root), "--model", MODEL, "--no-pretrained-base"])
    assert code == 2 and "do not fill one batch of 2" in capsys.readouterr().err
    code = train_segmentation.main([*data_args(root), "--model", MODEL, "--start-epoch", "2"])
    assert code == 2 and "--resume FILE" in capsys.readouterr().err
    code = train_segmentation.main([*data_args(root), "--model", MODEL, "--ctx", "cpu0,cpu1", "--syncbn"])
    assert code == 2 and "--syncbn synchronises several GPUs" in capsys.readouterr().err
    code = eval_segmentation.main(["--model", MODEL, "--params", "x.params", *data_args(root), "--scales", "1,-2"])
    assert code == 2 and "--scales must be positive" in capsys.readouterr().err
    code = eval_segmentation.main(["--model", "resnet18_v1b", "--params", "x.params", *data_args(root)])
    assert code == 2 and "semantic-segmentation models" in capsys.readouterr().err
