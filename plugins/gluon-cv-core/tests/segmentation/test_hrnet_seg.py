"""HRNet segmentation (``hrnet_*_s``) has GluonCV 0.10's parameters and matches its outputs,
in inference and in a training step.

GluonCV (test-only reference) builds these with ``get_model(name, pretrained=False)`` (its
``get_hrnet`` refuses ``pretrained_base``). Structure is compared symbolically for every
name; forward parity and the training step run on the smallest, ``hrnet_w18_small_v1_s``.
Its scores stay at stride 4, so a side of ``n`` gives ``ceil(n / 4)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from cv_testlib.detection import (
    assert_same,
    assert_same_training_state,
    build_ours,
    flat,
    random_input,
    random_params_files,
    running_stats,
    strictly_loaded,
    structure,
)

import gluon_hub
from gluon_hub.compat import mx

import gluoncv  # noqa: E402  (test-only reference; after the compat shim)

pytestmark = pytest.mark.parity

NAMES = ["hrnet_w18_small_v1_s", "hrnet_w18_small_v2_s", "hrnet_w48_s"]
SMALLEST = "hrnet_w18_small_v1_s"
#: a multiple of 32 and a size that is not (each stride-2 step rounds up)
SIZES = ((64, 64), (67, 75))


def _reference(name: str) -> Any:
    return gluoncv.model_zoo.get_model(name, pretrained=False)


def _stride4(size: tuple[int, int]) -> tuple[int, int]:
    return -(-size[0] // 4), -(-size[1] // 4)


def _output_shape(net: Any, size: tuple[int, int]) -> tuple[int, ...]:
    out = flat([net(mx.sym.var("data"))])[0]
    return tuple(out.infer_shape(data=(1, 3, *size))[1][0])


def test_the_zoo_has_gluoncv_hrnet_segmentation_names_without_weights() -> None:
    from gluoncv.model_zoo import model_store

    reference = {n for n in gluoncv.model_zoo.get_model_list() if n.startswith("hrnet_") and n.endswith("_s")}
    registered = {n for n in gluon_hub.list_models(plugin="cv", task="semantic-segmentation")
                  if gluon_hub.info(n).tags[0] == "hrnet_seg"}
    assert registered == reference == set(NAMES)
    for name in NAMES:
        spec = gluon_hub.info(name)
        assert not spec.pretrained and name not in model_store._model_sha1  # GluonCV publishes none
        assert spec.input.num_classes == 19 and spec.tags[2] == "citys"


@pytest.mark.parametrize("name", NAMES)
def test_parameter_names_shapes_count_and_output_match_gluoncv(name: str) -> None:
    ours, reference = build_ours(name), _reference(name)
    expected, actual = structure(reference, 64), structure(ours, 64)
    assert sorted(actual) == sorted(expected)
    assert actual == expected
    learnable = sum(int(np.prod(actual[k])) for k, p in ours._collect_params_with_prefix().items()
                    if p.grad_req != "null")
    assert learnable == gluon_hub.info(name).num_params
    assert ours.nclass == len(ours.classes) == 19 and ours.classes[0] == "road" and not ours.aux
    for size in SIZES:
        assert _output_shape(ours, size) == _output_shape(reference, size) == (1, 19, *_stride4(size))


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """``saved(name)``: a file of random parameters written by GluonCV's model, made once."""

    def warmed(name: str) -> Any:
        reference = _reference(name)
        reference.initialize(mx.init.Zero())  # cheap: every value is drawn again by randomize()
        reference(mx.nd.zeros((1, 3, *SIZES[0])))
        return reference

    return random_params_files(tmp_path_factory, warmed)


def test_inference_matches_gluoncv_hybridized_and_not(saved) -> None:
    path = saved(SMALLEST)
    reference = strictly_loaded(_reference(SMALLEST), path)
    ours = strictly_loaded(build_ours(SMALLEST), path)
    expected = {size: reference(random_input(1, size)) for size in SIZES}
    for hybridize in (False, True):
        if hybridize:
            ours.hybridize()
        for size, scores in expected.items():
            actual = flat(ours(random_input(1, size)))
            assert len(actual) == 1
            assert actual[0].shape == scores.shape == (1, 19, *_stride4(size))
            assert_same(actual[0], scores, rtol=1e-4)
    # evaluate() gives the same scores brought to the input's size
    x = random_input(1, SIZES[1])
    full = ours.evaluate(x)
    assert full.shape == (1, 19, *SIZES[1])
    assert_same(full, mx.nd.contrib.BilinearResize2D(expected[SIZES[1]], x, mode="like"), rtol=1e-4)


def _training_step(net: Any, x: Any) -> Any:
    """Training-mode scores after a backward pass of a simple loss (MXNet updates BatchNorm
    statistics in the backward pass)."""
    with mx.autograd.record():
        scores = flat([net(x)])[0]
        loss = (scores * scores).mean()
    loss.backward()
    return scores


def test_training_step_matches_gluoncv(saved) -> None:
    path = saved(SMALLEST)
    reference = strictly_loaded(_reference(SMALLEST), path)
    ours = strictly_loaded(build_ours(SMALLEST), path)
    x = random_input(2, (45, 51))  # a batch of two; the stride-32 branch is still 2 x 2
    before = running_stats(reference)
    assert before  # BatchNorm statistics to compare
    expected, actual = _training_step(reference, x), _training_step(ours, x)
    assert actual.shape == expected.shape == (2, 19, 12, 13)
    assert_same(actual, expected, rtol=1e-4)
    # GluonCV's momentum is 0.99 in the stem, transitions and head, 0.9 in the stages
    assert_same_training_state(reference, ours, before)


def test_a_pretrained_base_is_refused_and_a_bad_config_named() -> None:
    from gluon_cv_core.segmentation.models.hrnet_seg import hrnet_seg

    with pytest.raises(ValueError, match="pretrained_base"):
        hrnet_seg(pretrained_base=True)
    with pytest.raises(ValueError, match="w18_small_v1"):
        hrnet_seg("w17")
