"""``gluon-hub predict`` with a detector: boxes as JSON, the picture of them, GluonCV's preprocessing."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from cv_testlib.detection import build_ours, randomize
from PIL import Image

import gluon_hub
from gluon_cv_core.common.images import read_image
from gluon_cv_core.detection.classes import VOC_CLASSES
from gluon_cv_core.detection.predict import class_colour, detect, to_input
from gluon_hub.cli import main as hub_main
from gluon_hub.compat import mx

MODEL = "ssd_300_mobilenet0.25_voc"


def _gradient(path, width: int, height: int) -> np.ndarray:
    """A smooth image: no pixel in it has a drawn box's saturated colour."""
    y, x = np.mgrid[0:height, 0:width]
    pixels = np.stack([64 + x * 127 // width, 64 + y * 127 // height, np.full_like(x, 128)], -1).astype(np.uint8)
    Image.fromarray(pixels).save(path)
    return pixels


def test_cli_prints_boxes_as_json_and_draws_them(tmp_path, capsys) -> None:
    image, out, params = tmp_path / "street.png", tmp_path / "boxes.png", tmp_path / "random.params"
    pixels = _gradient(image, 200, 150)
    assert hub_main(["predict", MODEL, str(image), "--random-weights", "--threshold", "0.99"]) == 0
    assert "RANDOM" in capsys.readouterr().err
    # seeded random parameters with spread, so that boxes of many sizes and classes come out
    net = build_ours(MODEL)
    net.initialize()
    net(mx.nd.zeros((1, 3, 128, 128)))
    randomize(net, seed=0)
    net.save_parameters(str(params))
    done = subprocess.run([sys.executable, "-m", "gluon_hub", "predict", MODEL, str(image), "--params", str(params),
                           "--threshold", "0", "--out", str(out)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    (line,) = done.stdout.splitlines()
    result = json.loads(line)
    assert set(result) == {"image", "width", "height", "detections"}
    assert (result["image"], result["width"], result["height"]) == (str(image), 200, 150)
    found = result["detections"]
    assert found, "with --threshold 0 every kept box is printed"
    scores = [d["score"] for d in found]
    assert scores == sorted(scores, reverse=True) and all(0 <= s <= 1 for s in scores)
    for det in found:
        assert set(det) == {"class", "score", "box"} and det["class"] in VOC_CLASSES
        x1, y1, x2, y2 = det["box"]
        assert 0 <= x1 <= x2 <= 200 and 0 <= y1 <= y2 <= 150  # original pixels, clipped
    drawn = Image.open(out)
    assert drawn.format == "PNG" and drawn.size == (200, 150)
    drawn = np.asarray(drawn.convert("RGB"))
    assert (drawn != pixels).any(axis=-1).sum() > 100
    # the best box of some size is drawn last among the real boxes: its left edge has a class colour
    palette = {class_colour(VOC_CLASSES.index(d["class"])) for d in found}
    best = next(d for d in found if d["box"][2] - d["box"][0] >= 4 and d["box"][3] - d["box"][1] >= 30)
    x, y = int(best["box"][0]) + 1, int((best["box"][1] + best["box"][3]) / 2)
    assert tuple(drawn[y, min(x, 199)]) in palette


@pytest.mark.parametrize("size", [(201, 149), (40, 400)])  # odd sides; a long side capped at 1024
def test_preprocessing_and_boxes_follow_gluoncv_demo_transform(size, tmp_path) -> None:
    from gluoncv.data.transforms.presets.ssd import load_test

    path = tmp_path / "image.png"
    _gradient(path, *size)
    spec = gluon_hub.info(MODEL)
    expected, _ = load_test(str(path), short=300)
    x = to_input(read_image(path), spec)
    assert x.shape == expected.shape
    np.testing.assert_allclose(x.asnumpy(), expected.asnumpy(), rtol=0, atol=1e-6)
    net = gluon_hub.load(MODEL)  # random weights; both paths below run this same network
    net.hybridize()
    [(image, found)] = detect(net, spec, [str(path)], threshold=0.02)
    assert image.shape == (size[1], size[0], 3)
    ids, scores, boxes = (o.asnumpy()[0] for o in net(expected))
    keep = (ids[:, 0] >= 0) & (scores[:, 0] >= 0.02)
    assert keep.sum() == len(found) > 0
    scale = np.array([size[0] / expected.shape[3], size[1] / expected.shape[2]] * 2)
    want = np.clip(boxes[keep] * scale, 0, [size[0], size[1]] * 2)
    order = np.argsort(-scores[keep, 0], kind="stable")
    np.testing.assert_allclose([d.box for d in found], want[order], rtol=1e-5, atol=1e-3)
    assert [d.label for d in found] == [VOC_CLASSES[int(i)] for i in ids[keep, 0][order]]


def test_bad_images_and_options_are_one_line_errors(tmp_path, capsys) -> None:
    missing = tmp_path / "missing.jpg"
    assert hub_main(["predict", MODEL, str(missing), "--random-weights"]) == 1
    assert f"image {str(missing)!r} does not exist" in capsys.readouterr().err
    broken = tmp_path / "broken.png"
    broken.write_text("not an image")
    assert hub_main(["predict", MODEL, str(broken), "--random-weights"]) == 1
    err = capsys.readouterr().err
    assert "cannot decode image" in err and "broken.png" in err and "Traceback" not in err
    good = tmp_path / "good.png"
    _gradient(good, 32, 32)
    assert hub_main(["predict", MODEL, str(good), str(good), "--random-weights", "--out",
                     str(tmp_path / "x.png")]) == 1
    assert "--out draws one image" in capsys.readouterr().err
    assert hub_main(["predict", MODEL, str(good), "--random-weights", "--threshold", "1.5"]) == 1
    assert "--threshold must be between 0 and 1" in capsys.readouterr().err
