"""The ONNX runner of SSD, YOLOv3 and CenterNet (``gluon_hub.runtime.load``) against the MXNet path of
``gluon-hub predict``: the same network input to the bit, the same detections (class, box
within 1e-3 pixel per 1000, score within 1e-5: the network's float differences), the same
picture, and the same ``--json`` through the real CLI, without importing MXNet."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from cv_testlib.cli import hub_json
from cv_testlib.exported import exported_models
from matplotlib import cbook
from PIL import Image

import gluon_hub
import gluon_hub.runtime
from gluon_cv_core.common.images import read_image
from gluon_cv_core.detection.predict import detect, draw_detections, to_input

pytestmark = pytest.mark.portability

PHOTO = Path(cbook.get_sample_data("grace_hopper.jpg", asfileobj=False))  # 600 x 512
MODELS = {"ssd_300_mobilenet0.25_voc": 300, "yolo3_mobilenet0.25_voc": 416, "center_net_mobilenetv3_small_duc_voc": 512}


@pytest.fixture(scope="module")
def images(tmp_path_factory) -> list[str]:
    """The photograph, a crop of it, and a small image that the preprocessing enlarges."""
    folder = tmp_path_factory.mktemp("images")
    photo = np.asarray(Image.open(PHOTO).convert("RGB"))
    Image.fromarray(photo[100:340, 80:400]).save(folder / "crop.png")
    Image.fromarray(photo[::4, ::4][:120, :100]).save(folder / "small.png")
    return [str(PHOTO), str(folder / "crop.png"), str(folder / "small.png")]


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> dict[str, tuple[object, Path, Path]]:
    """Each detector with seeded random weights: the network, its .params and its ONNX file
    (batch and spatial axes free), exported from the same weights. The SSD extras' BatchNorm
    keeps MXNet's fix_gamma, so their random stored gammas check the export ignores them too."""
    return exported_models({name: (size, size) for name, size in MODELS.items()}, tmp_path_factory.mktemp("onnx"))


def _same_detections(want: list, got: list, scale: float) -> None:
    """The same detections, each matched by class, box and score; order may differ among ties."""
    assert len(got) == len(want)
    unused = list(got)
    for w in want:
        match = [g for g in unused if g.label == w.label and abs(g.score - w.score) <= 1e-5
                 and np.abs(np.subtract(g.box, w.box)).max() <= 1e-6 * scale]
        assert match, f"no ONNX detection matches {w}"
        unused.remove(match[0])


@pytest.mark.parametrize("name", list(MODELS))
def test_runner_input_and_detections_are_mxnets(exported, images, name, tmp_path):
    net, _, onnx_file = exported[name]
    runner = gluon_hub.runtime.load(name, onnx_file)
    assert type(runner).__name__ == "Detector" and runner.session.provider == "CPUExecutionProvider"
    spec = gluon_hub.info(name)
    for path in images:
        image = read_image(path)
        np.testing.assert_array_equal(runner.to_input(image.asnumpy()), to_input(image, spec)[0].asnumpy())
    want = detect(net, spec, images, threshold=0.0)
    got = runner.detect(images, threshold=0.0)
    for (image, w), (picture, g) in zip(want, got):
        np.testing.assert_array_equal(picture, image.asnumpy())
        assert len(w) == spec.output_shape[0] and len({round(d.score, 6) for d in w}) > 10  # spread weights
        _same_detections(w, g, max(picture.shape))
    # the drawn picture of the detections above 0.5 is MXNet's
    want_top = [d for d in want[0][1] if d.score >= 0.5]
    got_top = runner.detect(images[:1], threshold=0.5)[0][1]
    _same_detections(want_top, got_top, 600)
    draw_detections(want[0][0], want_top, net.classes, str(tmp_path / "mxnet.png"))
    runner.draw(got[0][0], got_top, str(tmp_path / "onnx.png"))
    drawn = [np.asarray(Image.open(tmp_path / f"{which}.png")) for which in ("mxnet", "onnx")]
    np.testing.assert_array_equal(drawn[0], drawn[1])


def test_runner_runs_images_of_one_size_as_a_batch(exported, images):
    net, _, onnx_file = exported["yolo3_mobilenet0.25_voc"]
    runner = gluon_hub.runtime.load("yolo3_mobilenet0.25_voc", onnx_file)
    one_by_one = runner.detect([images[1]] * 3, threshold=0.1)
    batched = runner.detect([images[1]] * 3, threshold=0.1, batch_size=3)
    for (_, a), (_, b) in zip(one_by_one, batched):
        _same_detections(a, b, 320)


def test_cli_json_and_picture_are_the_same_for_both_runtimes(exported, images, tmp_path):
    name = "yolo3_mobilenet0.25_voc"
    _, params, onnx_file = exported[name]
    pictures = {which: tmp_path / f"{which}.png" for which in ("mxnet", "onnx")}
    by_mxnet = hub_json("predict", name, images[0], "--params", str(params), "--json", "--threshold", "0.3",
                    "--out", str(pictures["mxnet"]))
    by_onnx = hub_json("predict", name, images[0], "--runtime", "onnx", "--model-file", str(onnx_file), "--json",
                   "--threshold", "0.3", "--out", str(pictures["onnx"]), check_no_mxnet=True)
    (want,), (got,) = by_mxnet, by_onnx
    assert set(got) == set(want) == {"image", "width", "height", "detections"}
    assert [got[k] for k in ("image", "width", "height")] == [want[k] for k in ("image", "width", "height")]
    assert want["detections"] and all(set(d) == {"class", "score", "box"} for d in got["detections"])
    assert len(got["detections"]) == len(want["detections"])
    for w, g in zip(want["detections"], got["detections"]):  # random weights, yet no ties at this threshold
        assert g["class"] == w["class"]
        np.testing.assert_allclose(g["score"], w["score"], atol=1e-5)
        np.testing.assert_allclose(g["box"], w["box"], atol=1e-3)
    drawn = [np.asarray(Image.open(p)) for p in pictures.values()]
    np.testing.assert_array_equal(drawn[0], drawn[1])
