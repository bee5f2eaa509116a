"""Every registered Monodepth2 model has GluonCV 0.10's parameters, loads its files and matches its outputs.

Parametrized from the registry. GluonCV (test-only reference) builds each model with
``pretrained_base=False``; structure is compared symbolically (no weights allocated), and the
depth and pose networks run forward on random weights that GluonCV saved and ours loaded strictly.
"""

from __future__ import annotations

import numpy as np
import pytest
from cv_testlib.detection import (
    assert_gluoncv_file,
    assert_same,
    assert_same_training_state,
    build_ours,
    random_params_files,
    running_stats,
    strictly_loaded,
)

import gluon_hub
from gluon_hub.compat import mx

import gluoncv  # noqa: E402  (test-only reference; after the compat shim)

pytestmark = pytest.mark.parity

MODELS = gluon_hub.list_models(plugin="cv", task="depth-estimation")
SOURCE = "https://cv.gluon.ai/model_zoo/depth.html"


def _reference(name: str, **kwargs):
    return gluoncv.model_zoo.get_model(name, pretrained=False, pretrained_base=False, **kwargs)


def _channels(name: str) -> int:
    return 6 if "posenet" in name else 3


def _structure(net, shape: tuple[int, ...]) -> tuple[dict[str, tuple[int, ...]], list[tuple[int, ...]]]:
    """Structural parameter name -> shape, and the output shapes, by symbolic shape inference."""
    out = mx.sym.Group(list(net(mx.sym.var("data"))))
    args, outputs, aux = out.infer_shape(data=shape)
    shapes = {**dict(zip(out.list_arguments(), args)), **dict(zip(out.list_auxiliary_states(), aux))}
    # the unused classifier is not in the graph; its shape is fully declared
    return ({k: tuple(shapes.get(p.name, p.shape)) for k, p in net._collect_params_with_prefix().items()},
            [tuple(o) for o in outputs])


def _input(name: str, size: tuple[int, int], batch: int = 1, seed: int = 1):
    return mx.nd.array(np.random.RandomState(seed).uniform(0, 1, (batch, _channels(name), *size)))


def test_the_zoo_has_every_gluoncv_depth_model() -> None:
    reference = {n for n in gluoncv.model_zoo.get_model_list() if n.startswith("monodepth2_")}
    assert set(MODELS) == reference
    assert len(MODELS) == 5


@pytest.mark.parametrize("name", MODELS)
def test_parameter_names_shapes_and_count_match_gluoncv(name: str) -> None:
    spec = gluon_hub.info(name)
    assert spec.input.shape == (_channels(name), 192, 640)
    ours = build_ours(name)
    expected, expected_out = _structure(_reference(name), (1, *spec.input.shape))
    actual, actual_out = _structure(ours, (1, *spec.input.shape))
    assert sorted(actual) == sorted(expected)
    assert actual == expected
    assert actual_out == expected_out
    assert actual_out[0] == (1, *spec.output_shape)
    learnable = sum(int(np.prod(shape)) for shape in {p.name: actual[k] for k, p in
                                                      ours._collect_params_with_prefix().items()
                                                      if p.grad_req != "null"}.values())
    assert learnable == spec.num_params


@pytest.mark.parametrize("backbone", ["resnet34"])
def test_other_encoders_match_gluoncv_too(backbone: str) -> None:
    from gluon_cv_core.depth.models.monodepth2 import monodepth2

    from gluoncv.model_zoo.monodepthv2 import get_monodepth2

    expected, expected_out = _structure(get_monodepth2(backbone=backbone, pretrained_base=False), (1, 3, 64, 96))
    actual, actual_out = _structure(monodepth2(backbone), (1, 3, 64, 96))
    assert actual == expected and actual_out == expected_out


@pytest.mark.parametrize("name", MODELS)
def test_weights_name_the_file_gluoncv_publishes(name: str) -> None:
    from gluoncv.model_zoo import model_store

    spec = gluon_hub.info(name)
    assert_gluoncv_file(spec, name, model_store._model_sha1[name], "kitti")
    variant = spec.weight()
    assert variant.metrics and all(m.source == SOURCE for m in variant.metrics)


def test_reported_results_are_gluoncvs() -> None:
    # GluonCV's model-zoo tables, docs/model_zoo/csv_tables/Depths/{KITTI,PoseNet}.csv
    def metric(name: str, metric_name: str) -> float:
        return next(m.value for m in gluon_hub.info(name).weight().metrics if m.name == metric_name)

    assert metric("monodepth2_resnet18_kitti_stereo_640x192", "abs_rel") == 0.114
    assert metric("monodepth2_resnet18_kitti_mono_640x192", "a1 (delta < 1.25)") == 0.858
    assert metric("monodepth2_resnet18_kitti_mono_stereo_640x192", "abs_rel") == 0.109
    assert metric("monodepth2_resnet18_posenet_kitti_mono_stereo_640x192", "ATE, sequence 10") == 0.016
    assert metric("monodepth2_resnet18_posenet_kitti_mono_640x192", "ATE std, sequence 09") == 0.012


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """``saved(name)``: a file of random parameters written by GluonCV's model, made once."""

    def warmed(name: str):
        reference = _reference(name)
        reference(_input(name, (64, 64)))
        return reference

    return random_params_files(tmp_path_factory, warmed)


def _pair(name: str, path: str):
    return strictly_loaded(_reference(name), path), strictly_loaded(build_ours(name), path)


def _assert_close(got, want) -> None:
    """Equal up to float rounding relative to each output's own scale (pose outputs are ~1e-3)."""
    want = want.asnumpy()
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))


#: one model per kind: the default input and a smaller one whose width is an odd multiple of 32
@pytest.mark.parametrize("name", ["monodepth2_resnet18_kitti_stereo_640x192",
                                  "monodepth2_resnet18_posenet_kitti_mono_640x192"])
def test_inference_matches_gluoncv_hybridized_and_not(name: str, saved) -> None:
    reference, ours = _pair(name, saved(name))
    sizes = [(192, 640), (64, 96)]
    expected = {size: reference(_input(name, size)) for size in sizes}
    for hybridize in (False, True):
        if hybridize:
            ours.hybridize()
        for size, want in expected.items():
            got = ours(_input(name, size))
            assert len(got) == len(want) == (2 if "posenet" in name else 4)
            for g, w in zip(got, want):
                assert g.shape == w.shape
                assert float(w.asnumpy().std()) > 1e-4  # random weights gave varied outputs to compare
                _assert_close(g, w)
    if "posenet" not in name:
        assert [o.shape for o in got] == [(1, 1, 64 // 2 ** s, 96 // 2 ** s) for s in (3, 2, 1, 0)]
    else:
        assert [o.shape for o in got] == [(1, 2, 1, 3), (1, 2, 1, 3)]


def _training_step(net, x):
    """Training-mode outputs and the backward pass of a loss over all of them (updates BatchNorm statistics)."""
    with mx.autograd.record():
        outputs = net(x)
        loss = sum(((o - 0.3) ** 2).mean() for o in outputs)
    loss.backward()
    return outputs


@pytest.mark.parametrize("name", ["monodepth2_resnet18_kitti_mono_640x192"])
def test_training_step_matches_gluoncv(name: str, saved) -> None:
    reference, ours = _pair(name, saved(name))
    x = _input(name, (64, 96), batch=2, seed=4)  # a batch of two, so batch statistics are real
    before = running_stats(reference)
    expected = _training_step(reference, x)
    actual = _training_step(ours, x)
    for got, want in zip(actual, expected):
        assert_same(got, want, rtol=1e-4)
    # the encoder's unused classifier has no gradient
    assert_same_training_state(reference, ours, before, grads_of=lambda key: ".fc." not in key)


def test_inputs_the_decoder_cannot_take_are_refused_with_their_shape() -> None:
    net = build_ours("monodepth2_resnet18_kitti_mono_640x192")
    net.initialize()
    with pytest.raises(ValueError, match=r"multiples of 32, got \(1, 3, 100, 100\)"):
        net(mx.nd.zeros((1, 3, 100, 100)))
    pose = build_ours("monodepth2_resnet18_posenet_kitti_mono_640x192")
    pose.initialize()
    with pytest.raises(ValueError, match=r"\(batch, 6, height, width\).*got \(1, 3, 64, 64\)"):
        pose(mx.nd.zeros((1, 3, 64, 64)))


def test_unknown_backbones_and_scales_are_named() -> None:
    from gluon_cv_core.depth.models.monodepth2 import monodepth2

    for backbone in ("resnet20", "resnet50"):  # GluonCV's resnet50 encoder does not fit its decoder
        with pytest.raises(ValueError, match=f"{backbone}.*known: resnet18, resnet34"):
            monodepth2(backbone)
    with pytest.raises(ValueError, match=r"scales must be among 0..4.*\[5\]"):
        monodepth2(scales=[5])
