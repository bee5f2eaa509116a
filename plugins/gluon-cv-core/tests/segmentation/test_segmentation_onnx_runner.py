"""The ONNX runner of semantic segmentation (``gluon_hub.runtime.load``) against the MXNet path of
``gluon-hub predict``: the same class map at image size (FCN's scores at the image's size; HRNet's
at a quarter, resized as MXNet's ``BilinearResize2D``), the same colour picture, and the same
``--json`` through the real CLI, without importing MXNet."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from cv_testlib.cli import hub_json
from cv_testlib.exported import exported_models, identity_onnx
from matplotlib import cbook
from PIL import Image

import gluon_hub
import gluon_hub.runtime
from gluon_cv_core.segmentation.onnx_runner import resize_scores
from gluon_cv_core.segmentation.predict import draw_mask, palette, predict_masks
from gluon_hub.compat import mx

pytestmark = pytest.mark.portability

PHOTO = Path(cbook.get_sample_data("grace_hopper.jpg", asfileobj=False))  # 600 x 512
MODELS = ("fcn_resnet50_voc", "hrnet_w18_small_v1_s")


@pytest.fixture(scope="module")
def images(tmp_path_factory) -> list[str]:
    """Two small crops of the photograph, of different sizes (the models take the whole image)."""
    folder = tmp_path_factory.mktemp("images")
    photo = np.asarray(Image.open(PHOTO).convert("RGB"))
    Image.fromarray(photo[60:156, 120:248]).save(folder / "face.png")
    Image.fromarray(photo[300:380, 0:112]).save(folder / "desk.png")
    return [str(folder / "face.png"), str(folder / "desk.png")]


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> dict[str, tuple[object, Path, Path]]:
    """Each model with seeded random weights: the network, its .params and its ONNX file (batch
    and spatial axes free), exported from the same weights."""
    return exported_models({name: (64, 64) for name in MODELS}, tmp_path_factory.mktemp("onnx"))


def test_resize_scores_is_mxnets_bilinear_resize():
    scores = np.random.default_rng(0).standard_normal((3, 13, 17)).astype(np.float32)
    for height, width in [(52, 68), (50, 70), (7, 9)]:
        want = mx.nd.contrib.BilinearResize2D(mx.nd.array(scores[None]), height=height, width=width)
        np.testing.assert_allclose(resize_scores(scores, height, width), want.asnumpy()[0], atol=1e-6)


@pytest.mark.parametrize("name", MODELS)
def test_runner_class_maps_and_picture_are_mxnets(exported, images, name, tmp_path):
    net, _, onnx_file = exported[name]
    runner = gluon_hub.runtime.load(name, onnx_file)
    assert type(runner).__name__ == "Segmenter" and runner.session.provider == "CPUExecutionProvider"
    spec = gluon_hub.info(name)
    want = list(predict_masks(net, spec, images))
    got = runner.segment(images)
    for (image, w, classes), (picture, g, count) in zip(want, got):
        np.testing.assert_array_equal(picture, image.asnumpy())
        assert g.shape == w.shape == picture.shape[:2] and count == classes
        assert len(np.unique(w)) > 1  # spread weights: more than one class
        np.testing.assert_array_equal(g, w)
    draw_mask(want[0][0], want[0][1], palette(spec, want[0][2]), str(tmp_path / "mxnet.png"))
    runner.draw(got[0][0], got[0][1], got[0][2], str(tmp_path / "onnx.png"))
    drawn = [np.asarray(Image.open(tmp_path / f"{which}.png")) for which in ("mxnet", "onnx")]
    np.testing.assert_array_equal(drawn[0], drawn[1])


def test_cli_json_and_picture_are_the_same_for_both_runtimes(exported, images, tmp_path):
    name = "fcn_resnet50_voc"
    _, params, onnx_file = exported[name]
    pictures = {which: tmp_path / f"{which}.png" for which in ("mxnet", "onnx")}
    want = hub_json("predict", name, images[0], "--params", str(params), "--json", "-k", "21",
                "--out", str(pictures["mxnet"]))
    got = hub_json("predict", name, images[0], "--runtime", "onnx", "--model-file", str(onnx_file), "--json",
               "-k", "21", "--out", str(pictures["onnx"]), check_no_mxnet=True)
    assert got == want and len(want[0]["classes"]) > 1
    assert set(got[0]) == {"image", "width", "height", "classes"}
    drawn = [np.asarray(Image.open(p)) for p in pictures.values()]
    np.testing.assert_array_equal(drawn[0], drawn[1])
    both = hub_json("predict", name, *images, "--runtime", "onnx", "--model-file", str(onnx_file), "--json",
                check_no_mxnet=True)
    assert [line["image"] for line in both] == images and both[0] == {**want[0], "classes": want[0]["classes"][:5]}


def test_a_file_that_does_not_take_images_is_refused(tmp_path):
    """A segmentation graph takes any image size but three channels, and one input."""
    for shape in (("batch", 1, "height", "width"), ("batch", 3, 64)):
        other = identity_onnx(tmp_path / "other.onnx", shape)
        with pytest.raises(ValueError, match=r"but 'cv/fcn_resnet50_voc' feeds \(batch, 3, any, any\): the file was "
                           r"exported from another model"):
            gluon_hub.runtime.load("fcn_resnet50_voc", other)
    assert gluon_hub.runtime.load("fcn_resnet50_voc", identity_onnx(tmp_path / "any.onnx", ("b", 3, 7, 9))).spec.name \
        == "fcn_resnet50_voc"
