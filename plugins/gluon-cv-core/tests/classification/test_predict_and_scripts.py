"""``gluon-hub predict``, and the train / eval scripts run end to end on a tiny image folder."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

import gluon_hub
from gluon_cv_core.classification import evaluate as eval_script, train as train_script
from gluon_cv_core.classification.labels import CIFAR10_LABELS
from gluon_cv_core.classification.transforms import eval_transform
from gluon_cv_core.common.images import read_image
from gluon_cv_core.common.training import lr_schedule
from gluon_hub.cli import main as hub_main
from gluon_hub.compat import mx

MODEL = "cifar_resnet20_v1"


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """Two colour classes (reddish, bluish), 8 training and 4 validation images each."""
    root = tmp_path_factory.mktemp("colours")
    rng = np.random.default_rng(0)
    for segment, count in (("train", 8), ("val", 4)):
        for name, colour in (("blue", (40, 40, 200)), ("red", (200, 40, 40))):
            (root / segment / name).mkdir(parents=True)
            for i in range(count):
                pixels = np.array(colour) + rng.normal(0, 30, (32, 32, 3))
                Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8)).save(root / segment / name / f"{i}.png")
    return root


@pytest.fixture(scope="module")
def params_file(tmp_path_factory):
    net = gluon_hub.load(MODEL)
    mx.random.seed(0)
    net.initialize(mx.init.Xavier(rnd_type="gaussian", factor_type="in", magnitude=2), force_reinit=True)
    net(mx.nd.zeros((1, 3, 32, 32)))
    path = tmp_path_factory.mktemp("params") / "random.params"
    net.save_parameters(str(path))
    return path


def _expected_probs(path, params):
    net = gluon_hub.load(MODEL)
    net.load_parameters(str(params))
    return mx.nd.softmax(net(eval_transform(MODEL)(read_image(path)).expand_dims(0)))[0].asnumpy()


def _assert_top(top, probs, k, printed_decimals=None):
    """Each printed score is its label's probability (to the decimals printed), and together
    they are the k best.

    With random weights two classes can tie to within float noise, so batching and
    hybridization may swap their order; the check tolerates exactly that.
    """
    assert len(top) == k
    scores = np.array([score for _, score in top])
    assert np.all(np.diff(scores) <= 0), "scores must be printed best first"
    atol = 1e-6 if printed_decimals is None else 0.5 * 10.0 ** -printed_decimals + 1e-7
    for label, score in top:
        np.testing.assert_allclose(score, probs[CIFAR10_LABELS.index(label)], rtol=1e-4, atol=atol)
    assert scores.min() >= np.sort(probs)[-k] - 1e-5 - atol


def test_predict_prints_topk_labels_and_scores(folder, params_file, capsys):
    images = [str(p) for p in sorted((folder / "val").rglob("*.png"))[:3]]
    code = hub_main(["predict", MODEL, *images, "--params", str(params_file), "--topk", "3",
                     "--batch-size", "2", "--json"])
    assert code == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["image"] for r in rows] == images
    for row in rows:
        probs = _expected_probs(row["image"], params_file)
        _assert_top([(t["label"], t["score"]) for t in row["top"]], probs, 3)
    hub_main(["predict", MODEL, images[0], "--params", str(params_file), "-k", "2"])
    text = capsys.readouterr().out.splitlines()
    assert text[0] == images[0] and len(text) == 3
    printed = [line.split() for line in text[1:]]
    assert [p[0] for p in printed] == ["1.", "2."]
    top = [(" ".join(p[1:-1]), float(p[-1])) for p in printed]
    _assert_top(top, _expected_probs(images[0], params_file), 2, printed_decimals=4)


def test_predict_errors_are_one_line(folder, params_file, capsys):
    assert hub_main(["predict", MODEL, str(folder / "missing.jpg"), "--params", str(params_file)]) == 1
    assert "missing.jpg" in capsys.readouterr().err
    image = str(next((folder / "val").rglob("*.png")))
    assert hub_main(["predict", "se_resnet18_v1", image]) == 1  # a zoo model without weights
    assert "has no published weights; pass --params FILE" in capsys.readouterr().err
    assert hub_main(["predict", MODEL, image, "--topk", "0", "--params", str(params_file)]) == 1
    assert "--topk" in capsys.readouterr().err


def _train_args(folder, tmp_path, *extra):
    return train_script.build_parser().parse_args([
        "--model", MODEL, "--classes", "2", "--data-dir", str(folder), "--batch-size", "8", "-j", "0",
        "--lr", "0.1", "--log-interval", "0", "--save-dir", str(tmp_path), "--seed", "1", *extra,
    ])


def test_train_then_eval_end_to_end(folder, tmp_path, capsys):
    history = train_script.train(_train_args(folder, tmp_path, "--num-epochs", "6", "--no-wd",
                                             "--warmup-epochs", "1"))
    assert [r["epoch"] for r in history] == list(range(1, 7))
    assert history[-1]["loss"] < 0.5 * history[0]["loss"]
    assert history[-1]["train_top1"] >= 0.75
    params = tmp_path / f"{MODEL}-0006.params"
    assert params.is_file()
    code = eval_script.main(["--model", MODEL, "--classes", "2", "--data-dir", str(folder), "--params",
                             str(params), "-j", "0", "--batch-size", "4", "--json"])
    result = json.loads(capsys.readouterr().out)
    assert code == 0 and result["samples"] == 8
    assert result["top1"] == pytest.approx(history[-1]["val_top1"])
    image = str(next((folder / "val").rglob("*.png")))
    assert hub_main(["predict", MODEL, image, "--params", str(params), "--classes", "2", "--json"]) == 0
    top = json.loads(capsys.readouterr().out)["top"]
    assert sorted(t["label"] for t in top) == ["class 0", "class 1"]  # not CIFAR-10's names


def test_train_with_mixup_label_smoothing_and_step_schedule(folder, tmp_path):
    history = train_script.train(_train_args(
        folder, tmp_path, "--num-epochs", "5", "--mixup", "--mixup-off-epoch", "1", "--label-smoothing",
        "--lr", "0.02", "--lr-mode", "step", "--lr-decay-epoch", "4", "--no-hybridize"))
    assert history[-1]["loss"] < history[0]["loss"]
    assert history[-1]["lr"] == pytest.approx(0.002)  # decayed by 10 at epoch 4
    assert "train_top1" not in history[0]  # soft targets: no hard-label accuracy


def _descendants(block):
    yield block
    for child in block._children.values():
        yield from _descendants(child)


def test_no_wd_spares_exactly_the_biases_and_batch_norm_parameters():
    net = gluon_hub.load("cifar_resnet20_v1")
    train_script._no_bias_decay(net)
    nn = mx.gluon.nn
    expected = set()
    for block in _descendants(net):  # found by layer type, not by the names the script uses
        if isinstance(block, nn.BatchNorm):
            expected |= {block.gamma.name, block.beta.name}
        elif isinstance(block, (nn.Dense, nn.Conv2D)) and block.bias is not None:
            expected.add(block.bias.name)
    params = net.collect_params().values()
    assert {p.name for p in params if p.wd_mult == 0.0} == expected
    assert all(p.wd_mult == 1.0 for p in params if p.name not in expected)
    assert len(expected) == 2 * 21 + 1  # stem, 9 blocks x 2, 2 downsamples; the classifier bias


def test_cosine_schedule_with_warmup_follows_the_formula():
    args = train_script.build_parser().parse_args([
        "--model", MODEL, "--dataset", "cifar10", "--lr", "0.4", "--lr-mode", "cosine",
        "--num-epochs", "10", "--warmup-epochs", "2", "--warmup-lr", "0.01"])
    steps_per_epoch = 5
    schedule = lr_schedule(args, steps_per_epoch)
    warmup, total = 2 * 5, 10 * 5

    def expected(step):
        if step < warmup:  # linear from --warmup-lr to --lr
            return 0.01 + (0.4 - 0.01) * step / warmup
        progress = min(step - warmup, total - warmup) / (total - warmup)
        return 0.4 * (1 + math.cos(math.pi * progress)) / 2  # half a cosine down to 0

    for step, value in [(0, 0.01), (5, 0.205), (10, 0.4), (30, 0.2), (50, 0.0), (60, 0.0)]:
        assert expected(step) == pytest.approx(value, abs=1e-12)  # the formula, at its landmarks
    for step in (0, 1, 5, 9, 10, 11, 20, 30, 42, 49, 50, 60):
        assert schedule(step) == pytest.approx(expected(step), abs=1e-9), step


def test_train_refuses_bad_options(folder, tmp_path):
    with pytest.raises(ValueError, match="label-smoothing"):
        train_script.train(_train_args(folder, tmp_path, "--label-smoothing", "1.5"))
    with pytest.raises(ValueError, match="do not fill one batch"):
        train_script.train(_train_args(folder, tmp_path, "--batch-size", "64"))


def test_distributed_training_through_mxnets_launcher(folder, tmp_path):
    """Two workers and a parameter server on this machine, with the dist_sync kvstore."""
    command = [
        sys.executable, "-m", "gluon_cv_core.launch", "-n", "2", "-s", "1", "--launcher", "local",
        sys.executable, "-m", "gluon_cv_core.classification.train", "--kvstore", "dist_sync", "--model", MODEL,
        "--classes", "2", "--data-dir", str(folder), "--batch-size", "4", "-j", "0", "--num-epochs", "2",
        "--log-interval", "1", "--save-dir", str(tmp_path),
    ]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    # 16 images over 2 workers, 4 per step: each worker logs 2 steps per epoch.
    steps = [line for line in done.stderr.splitlines() if "step 2/2" in line]
    assert len(steps) == 4, done.stderr[-3000:]
    assert (tmp_path / f"{MODEL}-0002.params").is_file()
