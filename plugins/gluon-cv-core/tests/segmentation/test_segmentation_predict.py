"""``gluon-hub predict`` with a semantic-segmentation model: class shares, the mask overlay, GluonCV's colours."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from cv_testlib.detection import randomize
from PIL import Image

import gluon_hub
from gluon_cv_core.segmentation.classes import VOC_CLASSES
from gluon_cv_core.segmentation.predict import ALPHA, class_shares, palette
from gluon_hub.cli import main as hub_main
from gluon_hub.compat import mx

import gluoncv  # noqa: F401  (test-only reference; after the compat shim)

MODEL = "fcn_resnet50_voc"


@pytest.fixture(scope="module")
def photo(tmp_path_factory) -> Path:
    """A real photograph shipped with matplotlib, made small so that a ResNet-50 runs it quickly."""
    import matplotlib

    source = Path(matplotlib.get_data_path()) / "sample_data" / "grace_hopper.jpg"
    path = tmp_path_factory.mktemp("photo") / "hopper.jpg"
    Image.open(source).convert("RGB").resize((75, 88), Image.BILINEAR).save(path, quality=95)
    return path


def test_cli_prints_class_shares_and_writes_the_overlay(photo, tmp_path) -> None:
    out = tmp_path / "overlay.png"
    done = subprocess.run([sys.executable, "-m", "gluon_hub", "predict", MODEL, str(photo), "--random-weights",
                           "-k", "21", "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "RANDOM" in done.stderr
    first, *rows = done.stdout.splitlines()
    assert first == str(photo) and rows
    shares = [(line.rsplit(None, 1)[0].strip(), float(line.rsplit(None, 1)[1])) for line in rows]
    assert all(label in VOC_CLASSES for label, _ in shares)
    assert sum(f for _, f in shares) == pytest.approx(1.0, abs=1e-3)  # -k 21: every class present
    assert [f for _, f in shares] == sorted((f for _, f in shares), reverse=True)

    drawn = np.asarray(Image.open(out).convert("RGB")).astype(np.float32)
    pixels = np.asarray(Image.open(photo).convert("RGB")).astype(np.float32)
    assert drawn.shape == pixels.shape
    # every pixel is the photo blended with the VOC colour of one of the printed classes
    colours = palette(gluon_hub.info(MODEL), 21).astype(np.float32)[[VOC_CLASSES.index(name) for name, _ in shares]]
    candidates = (1 - ALPHA) * pixels[:, :, None, :] + ALPHA * colours[None, None]
    assert (np.abs(candidates - drawn[:, :, None, :]).max(axis=-1) <= 1.0).any(axis=-1).all()


def test_mask_equals_gluoncvs_prediction_with_the_same_weights(photo, tmp_path, capsys) -> None:
    from gluoncv.data.transforms.presets.segmentation import test_transform

    reference = gluoncv.model_zoo.get_model(MODEL, pretrained=False, pretrained_base=False)
    with warnings.catch_warnings():  # GluonCV initialises its heads when it builds them
        warnings.simplefilter("ignore")
        reference.initialize()
    image = mx.image.imread(str(photo))
    x = test_transform(image, mx.cpu())
    reference.predict(x)
    randomize(reference, seed=3)
    params = tmp_path / "gluoncv.params"
    reference.save_parameters(str(params))
    expected_mask = reference.predict(x).argmax(axis=1)[0].asnumpy().astype(np.int64)

    assert hub_main(["predict", MODEL, str(photo), "--params", str(params), "--json", "-k", "21"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert (result["image"], result["width"], result["height"]) == (str(photo), 75, 88)
    expected = {s.label: s.fraction for s in class_shares(expected_mask, VOC_CLASSES)}
    got = {c["class"]: c["fraction"] for c in result["classes"]}
    assert len(expected) > 1  # the seeded weights spread the pixels over several classes
    assert got.keys() == expected.keys()
    for label, fraction in expected.items():
        assert got[label] == pytest.approx(fraction, abs=3 / (75 * 88))  # a few float-tie pixels at most


@pytest.mark.parametrize("labels, dataset, classes", [
    ("VOC_CLASSES", "pascal_voc", 21), ("ADE20K_CLASSES", "ade20k", 150), ("CITYSCAPES_CLASSES", "citys", 19)])
def test_palettes_are_gluoncvs(labels, dataset, classes) -> None:
    from gluoncv.utils.viz import get_color_pallete

    spec = next(s for s in map(gluon_hub.info, gluon_hub.list_models("*"))
                if s.task == "semantic-segmentation" and (s.input.labels or "").endswith(labels))
    mask = np.arange(classes, dtype=np.int32).reshape(1, -1)
    expected = np.asarray(get_color_pallete(mask.copy(), dataset).convert("RGB"))[0]
    np.testing.assert_array_equal(palette(spec, classes), expected)


def test_errors_are_one_line(photo, tmp_path, capsys) -> None:
    two = [str(photo), str(photo)]
    assert hub_main(["predict", MODEL, *two, "--random-weights", "--out", str(tmp_path / "x.png")]) == 1
    assert "--out draws one image" in capsys.readouterr().err
    assert hub_main(["predict", MODEL, str(tmp_path / "missing.jpg"), "--random-weights"]) == 1
    assert "missing.jpg' does not exist" in capsys.readouterr().err
    assert hub_main(["predict", MODEL, str(photo), "--random-weights", "--classes", "3"]) == 1
    assert "--classes is for classifiers" in capsys.readouterr().err
