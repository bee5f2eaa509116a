"""gluon_hub.runtime.load: the task-neutral runner. The graph from a file or through the cache,
onnxruntime's execution providers chosen and reported, the runner the spec names; and the
bicubic resize the detectors' preprocessing uses, against MXNet's (OpenCV's) to the bit."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from matplotlib import cbook
from PIL import Image

import gluon_hub
from gluon_hub import runtime
from gluon_hub.compat import mx

MODEL = "cifar_resnet20_v1"
PHOTO = Path(cbook.get_sample_data("grace_hopper.jpg", asfileobj=False))  # 600 x 512


@pytest.fixture(scope="module")
def graph(tmp_path_factory) -> Path:
    """The CIFAR ResNet-20, random weights of a fixed seed, as ONNX with a free batch axis."""
    mx.random.seed(0)
    net = gluon_hub.load(MODEL)
    net.initialize(force_reinit=True)
    path = tmp_path_factory.mktemp("onnx") / "r20.onnx"
    gluon_hub.export(net, path, format="onnx", input_shape=(1, 3, 32, 32), dynamic_batch=True)
    return path


@pytest.mark.parametrize("size", [(300, 256), (351, 300), (487, 416), (1000, 853), (259, 700), (37, 5)])
def test_resize_cubic_is_mxnets_interp_2_to_the_bit(size):
    image = runtime.read_image(PHOTO)
    height, width = size
    want = mx.image.imresize(mx.nd.array(image, dtype="uint8"), width, height, interp=2).asnumpy()
    np.testing.assert_array_equal(runtime.resize_cubic(image, height, width), want)


def test_load_returns_the_runner_the_spec_names_on_the_cpu(graph):
    runner = gluon_hub.runtime.load(MODEL, graph)
    spec = gluon_hub.info(MODEL)
    assert spec.runner == "gluon_cv_core.classification.onnx_runner:Classifier"
    assert type(runner).__name__ == "Classifier" and runner.spec == spec
    assert runner.session.provider == "CPUExecutionProvider"
    assert runner.session.providers == ["CPUExecutionProvider"]
    with_options = gluon_hub.runtime.load(MODEL, graph, providers=[("CPUExecutionProvider", {})], threads=1)
    batch = np.random.default_rng(0).standard_normal((2, 3, 32, 32)).astype(np.float32)
    np.testing.assert_array_equal(with_options(batch), runner(batch))


def test_a_provider_this_onnxruntime_lacks_is_refused_naming_those_it_has(graph):
    with pytest.raises(ValueError, match=r"execution provider 'CUDAExecutionProvider' is not available in this "
                       r"onnxruntime .*; it has .*CPUExecutionProvider.* install onnxruntime-gpu in place of "
                       r"onnxruntime"):
        gluon_hub.runtime.load(MODEL, graph, providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
    with pytest.raises(ValueError, match=r"execution provider 'NoSuchExecutionProvider' is not available"):
        gluon_hub.runtime.load(MODEL, graph, providers=[("NoSuchExecutionProvider", {"device_id": 0})])
    with pytest.raises(ValueError, match="threads must be at least 1, got 0"):
        gluon_hub.runtime.load(MODEL, graph, threads=0)


def test_a_model_without_a_runner_is_refused():
    with pytest.raises(ValueError, match=r"model 'contrib/textcnn_rand' \(text-classification\) names no "
                       "ONNX runner"):
        gluon_hub.runtime.load("textcnn_rand", "any.onnx")


def test_without_a_file_the_converted_graph_comes_through_the_cache(graph, tmp_path, monkeypatch):
    monkeypatch.setenv("GLUON_HUB_HOME", str(tmp_path / "cache"))
    # the commands to run, with the tag that converting the published weights records
    tag = gluon_hub.info(MODEL).weights[0].tag
    with pytest.raises(KeyError, match=rf"no onnx file is known for model 'cv/cifar_resnet20_v1'.*gluon-hub convert "
                       rf"cv/cifar_resnet20_v1 --pretrained -o DIR\), then bundle it \(gluon-hub bundle "
                       rf"cv/cifar_resnet20_v1:{tag}\.onnx --from-dir DIR"):
        gluon_hub.runtime.load(MODEL)
    out = tmp_path / "converted"
    gluon_hub.publish(graph, MODEL, out, tag="default.onnx")
    runner = gluon_hub.runtime.load(MODEL, index=out)
    assert runner.session.path.read_bytes() == graph.read_bytes()
    assert str(runner.session.path).startswith(str(tmp_path / "cache"))  # verified into the cache
    image = np.asarray(Image.open(PHOTO).convert("RGB"))
    assert runner.classify([image], topk=3) == gluon_hub.runtime.load(MODEL, graph).classify([image], topk=3)
