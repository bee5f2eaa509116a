"""The ONNX runners of Faster R-CNN (``Detector``) and Mask R-CNN (``InstanceSegmenter``) against
``gluon-hub predict``'s MXNet path, with the heads scaled as trained ones are
(``scale_rcnn_heads``: random He weights saturate the scores, so a comparison would measure
float32 rounding among ties).

The models are the zoo's ``faster_rcnn_resnet50_v1b_voc`` and ``mask_rcnn_resnet18_v1b_coco``
at a short side of 256 with 16 proposals, registered by a plugin of the test's own
(``cv_testlib.small_rcnn``). The MXNet path's own functions (``detect``, ``segment_instances``)
and the runners on the same exported weights give the same network input to the bit, the same
detections and instances (class; score within 1e-5; box within 1e-5 of the image's side; pasted
masks equal but for pixels whose mask value is within float rounding of the 0.5 threshold) and
the same pictures; ``gluon-hub predict --json`` prints the same for both runtimes in fresh
processes, the ONNX one without importing MXNet.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cv_testlib import small_rcnn
from cv_testlib.cli import hub_json
from cv_testlib.detection import randomize
from matplotlib import cbook
from PIL import Image

import gluon_hub
import gluon_hub.runtime
from gluon_cv_core.common.images import read_image
from gluon_cv_core.detection.instance_predict import draw_instances, rcnn_max_size, segment_instances
from gluon_cv_core.detection.onnx_runner import Detector, InstanceSegmenter
from gluon_cv_core.detection.predict import MAX_SIZE, detect, draw_detections, to_input
from gluon_hub.compat import mx
from gluon_hub.runtime import open_session

pytestmark = pytest.mark.portability

PHOTO = Path(cbook.get_sample_data("grace_hopper.jpg", asfileobj=False))  # 600 x 512
FASTER, MASK = (f"{small_rcnn.PLUGIN}/{name}" for name in small_rcnn.ZOO)
#: run before ``gluon-hub`` in the CLI's processes: the small models registered
PRELUDE = (f"sys.path.insert(0, {str(Path(__file__).parents[1])!r})\n"
           "from cv_testlib import small_rcnn\nsmall_rcnn.register()")


@pytest.fixture(scope="module", autouse=True)
def registered():
    """The small R-CNNs registered in this process for the module's tests."""
    small_rcnn.register()
    yield
    gluon_hub.unregister_plugin(small_rcnn.PLUGIN)


@pytest.fixture(scope="module")
def images(tmp_path_factory) -> list[str]:
    """The photograph and a crop of it of another aspect ratio."""
    folder = tmp_path_factory.mktemp("images")
    Image.fromarray(np.asarray(Image.open(PHOTO).convert("RGB"))[100:340, 80:400]).save(folder / "crop.png")
    return [str(PHOTO), str(folder / "crop.png")]


def _trained_like(spec: Any, image: str, folder: Path) -> tuple[Any, Any, Path, Path]:
    """``spec``, its network with seeded random weights, the heads scaled on ``image`` as
    ``predict`` feeds it, saved as .params and exported with free batch and spatial axes."""
    net = gluon_hub.load(spec.qualified_name)  # initialised
    x = to_input(read_image(image), spec, net.max_size if spec.task == "instance-segmentation" else MAX_SIZE)
    net(x)
    randomize(net, seed=0)
    from gluon_cv_core.detection.models.faster_rcnn import scale_rcnn_heads

    scale_rcnn_heads(net, x)
    net.hybridize()
    params, onnx_file = folder / f"{spec.name}.params", folder / f"{spec.name}.onnx"
    net.save_parameters(str(params))
    gluon_hub.export(net, onnx_file, format="onnx", input_shape=x.shape, dynamic_batch=True, dynamic_spatial=True)
    return spec, net, params, onnx_file


@pytest.fixture(scope="module")
def faster(images, tmp_path_factory) -> tuple[Any, Any, Path, Path]:
    """The small Faster R-CNN's spec, network, .params and ONNX file."""
    return _trained_like(gluon_hub.info(FASTER), images[0], tmp_path_factory.mktemp("faster"))


@pytest.fixture(scope="module")
def mask(images, tmp_path_factory) -> tuple[Any, Any, Path, Path]:
    """The small Mask R-CNN's spec, network, .params and ONNX file."""
    return _trained_like(gluon_hub.info(MASK), images[0], tmp_path_factory.mktemp("mask"))


def _matched(want: list, got: list, side: float, masks: bool = False) -> None:
    """The same detections or instances, each matched by class, score and box (order may differ
    among equal scores); instances' pasted masks equal but for a few pixels on the threshold."""
    assert len(got) == len(want)
    unused = list(got)
    for w in want:
        match = [g for g in unused if g.label == w.label and abs(g.score - w.score) <= 1e-5
                 and np.abs(np.subtract(g.box, w.box)).max() <= 1e-5 * side]
        assert match, f"no ONNX result matches {w}"
        if masks:
            assert match[0].mask.shape == w.mask.shape
            assert (match[0].mask != w.mask).sum() <= max(2, 1e-3 * w.mask.sum()), w
        unused.remove(match[0])


def test_faster_rcnn_runner_input_detections_and_picture_are_mxnets(faster, images, tmp_path):
    spec, net, _, onnx_file = faster
    runner = gluon_hub.runtime.load(FASTER, onnx_file)
    assert type(runner) is Detector
    for path in images:
        image = read_image(path)
        np.testing.assert_array_equal(runner.to_input(image.asnumpy()), to_input(image, spec)[0].asnumpy())
    want = detect(net, spec, images, threshold=0.0)
    got = runner.detect(images, threshold=0.0)
    for (image, w), (picture, g) in zip(want, got):
        np.testing.assert_array_equal(picture, image.asnumpy())
        assert len(w) >= 15 and len({round(d.score, 4) for d in w}) >= 10  # spread, unsaturated scores
        _matched(w, g, max(picture.shape))
    top = [[d for d in found if d.score >= 0.3] for _, found in (want[0], got[0])]
    assert top[0], "no detection above 0.3 to draw"
    draw_detections(want[0][0], top[0], net.classes, str(tmp_path / "mxnet.png"))
    runner.draw(got[0][0], top[1], str(tmp_path / "onnx.png"))
    drawn = [np.asarray(Image.open(tmp_path / f"{which}.png")) for which in ("mxnet", "onnx")]
    np.testing.assert_array_equal(drawn[0], drawn[1])


def test_mask_rcnn_runner_input_instances_masks_and_picture_are_mxnets(mask, images, tmp_path):
    spec, net, _, onnx_file = mask
    runner = gluon_hub.runtime.load(MASK, onnx_file)
    assert type(runner) is InstanceSegmenter
    assert runner.max_size == net.max_size == 1333
    for path in images:
        image = read_image(path)
        np.testing.assert_array_equal(runner.to_input(image.asnumpy()),
                                      to_input(image, spec, net.max_size)[0].asnumpy())
    want = segment_instances(net, spec, images, threshold=0.0)
    got = runner.segment(images, threshold=0.0)
    for (image, w), (picture, g) in zip(want, got):
        np.testing.assert_array_equal(picture, image.asnumpy())
        assert len(w) == 16 and sum(int(i.mask.sum()) > 0 for i in w) >= 8
        _matched(w, g, max(picture.shape), masks=True)
    top = [[i for i in found if i.score >= 0.3] for _, found in (want[0], got[0])]
    assert top[0], "no instance above 0.3 to draw"
    draw_instances(want[0][0], top[0], net.classes, str(tmp_path / "mxnet.png"))
    runner.draw(got[0][0], top[1], str(tmp_path / "onnx.png"))
    drawn = [np.asarray(Image.open(tmp_path / f"{which}.png")).astype(int) for which in ("mxnet", "onnx")]
    assert (drawn[0] != drawn[1]).any(axis=-1).mean() <= 1e-3  # pixels on a mask's edge at most


def test_mask_rcnn_runner_caps_the_longer_side_as_each_network_does():
    """``rcnn_max_size`` is each Mask R-CNN configuration's ``max_size`` (the networks' defaults
    included), but where the anchors cover less (custom_mask_rcnn_fpn: 128 cells at stride 4),
    so the runner resizes as ``segment_instances`` does."""
    import inspect

    from gluon_cv_core.detection.models.faster_rcnn import FasterRCNN
    from gluon_cv_core.detection.models.mask_rcnn import CONFIGS

    default = inspect.signature(FasterRCNN.__init__).parameters["max_size"].default
    names = gluon_hub.list_models(task="instance-segmentation")
    assert len(names) >= 9
    for name in names:
        spec = gluon_hub.info(name)
        configured = CONFIGS[spec.kwargs["config"]]["options"].get("max_size", default)
        assert rcnn_max_size(spec) == (512 if name == "custom_mask_rcnn_fpn" else configured), name


def test_custom_mask_rcnn_fpn_predicts_on_a_photograph_taller_than_its_anchors_cover(tmp_path):
    """The 600 x 512 photograph used to fail in MXNet (``slice_like``: 150 feature rows, 128 anchor
    rows) at the network's max_size of 1000; it is resized to 437 x 512 now. With random weights
    too: the pyramid levels P3-P6 that this model leaves unused get their shapes when it is built,
    so a fresh hybridized network runs and saves (they used to fail deferred initialisation)."""
    net = gluon_hub.load("custom_mask_rcnn_fpn")
    net.hybridize()
    with warnings.catch_warnings(record=True) as caught:  # the filters as they are
        net(mx.nd.zeros((1, 3, 256, 256)))
    assert not [w for w in caught if "is not used by any computation" in str(w.message)]  # MXNet's, expected here
    net.save_parameters(str(tmp_path / "custom.params"))
    for weights in (["--random-weights"], ["--params", str(tmp_path / "custom.params")]):
        (found,) = hub_json("predict", "custom_mask_rcnn_fpn", str(PHOTO), *weights, "--json", "--threshold", "0")
        assert (found["width"], found["height"]) == (512, 600)
        assert all(0 <= v <= 600 for item in found["instances"] for v in item["box"])


def test_runners_refuse_a_graph_of_another_kind(faster, mask):
    """Faster R-CNN's file given to the Mask R-CNN runner (and the reverse) fails with what to do."""
    with pytest.raises(ValueError, match=r"is not a graph of \(image\) -> \(class ids, scores, boxes, masks\) as "
                       f"'{MASK}' exports"):
        InstanceSegmenter(open_session(faster[3]), mask[0])
    with pytest.raises(ValueError, match=r"is not a graph of \(image\) -> \(class ids, scores, boxes\) as"):
        Detector(open_session(mask[3]), faster[0])
    with pytest.raises(ValueError, match="max_size must be a positive number of pixels, got 0"):
        gluon_hub.runtime.load(MASK, mask[3], max_size=0)


@pytest.mark.parametrize("which, key, threshold", [("faster", "detections", "0.3"), ("mask", "instances", "0.2")])
def test_cli_json_and_picture_are_the_same_for_both_runtimes(which, key, threshold, images, tmp_path, request):
    """``gluon-hub predict --json --out`` of both runtimes in fresh processes, the ONNX one
    without importing MXNet: the same structure, the same results as detections (mask areas
    within a few pixels on the threshold) and the same picture."""
    spec, _, params, onnx_file = request.getfixturevalue(which)
    pictures = {runtime: tmp_path / f"{runtime}.png" for runtime in ("mxnet", "onnx")}
    common = ("predict", spec.qualified_name, images[0], "--json", "--threshold", threshold)
    by_mxnet = hub_json(*common, "--params", str(params), "--out", str(pictures["mxnet"]), prelude=PRELUDE)
    by_onnx = hub_json(*common, "--runtime", "onnx", "--model-file", str(onnx_file), "--out", str(pictures["onnx"]),
                       check_no_mxnet=True, prelude=PRELUDE)
    assert len(by_mxnet) == len(by_onnx) == 1
    fields = {"class", "score", "box"} | ({"mask_area"} if key == "instances" else set())
    for want, got in zip(by_mxnet, by_onnx):
        assert set(got) == set(want) == {"image", "width", "height", key}
        assert [got[k] for k in ("image", "width", "height")] == [want[k] for k in ("image", "width", "height")]
        assert want[key] and all(set(item) == fields for item in got[key] + want[key])
        unused = list(got[key])
        for w in want[key]:
            match = [g for g in unused if g["class"] == w["class"] and abs(g["score"] - w["score"]) <= 1e-5
                     and np.abs(np.subtract(g["box"], w["box"])).max() <= 1e-5 * max(want["width"], want["height"])
                     and abs(g.get("mask_area", 0) - w.get("mask_area", 0)) <= max(2, 1e-3 * w.get("mask_area", 0))]
            assert match, f"no ONNX result matches {w}"
            unused.remove(match[0])
        assert not unused
    drawn = [np.asarray(Image.open(p)).astype(int) for p in pictures.values()]
    assert drawn[0].shape == drawn[1].shape and (drawn[0] != drawn[1]).any(axis=-1).mean() <= 1e-3
