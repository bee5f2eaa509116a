"""The shared box machinery equals GluonCV's and runs as symbols (so detectors hybridize)."""

from __future__ import annotations

import numpy as np
import pytest

from gluon_cv_core.common import boxes
from gluon_hub.compat import mx

from gluoncv.model_zoo.ssd.anchor import LiteAnchorGenerator, SSDAnchorGenerator as GluonCVAnchors
from gluoncv.nn.coder import MultiPerClassDecoder, NormalizedBoxCenterDecoder


@pytest.mark.parametrize("index, sizes, ratios, step", [
    (0, (30, 60), [1, 2, 0.5], 8),
    (1, (51.2, 102.4), [1, 2, 0.5, 3, 1.0 / 3], 16),
    (5, (264, 315), [1, 2, 0.5], 300),
])
@pytest.mark.parametrize("lite", [False, True])
def test_ssd_anchors_equal_gluoncv(index, sizes, ratios, step, lite) -> None:
    reference_class = LiteAnchorGenerator if lite else GluonCVAnchors
    reference = reference_class(index, (300, 300), sizes, ratios, step, (7, 5))
    ours = boxes.SSDAnchorGenerator(index, sizes, ratios, step, (7, 5), lite=lite)
    reference.initialize()
    ours.initialize()
    assert ours.num_depth == reference.num_depth
    np.testing.assert_array_equal(ours.anchors.data().asnumpy(), reference.anchors.data().asnumpy())
    feature = mx.nd.zeros((1, 8, 3, 4))
    np.testing.assert_array_equal(ours(feature).asnumpy(), reference(feature).asnumpy())
    assert ours(feature).shape == (1, 3 * 4 * ours.num_depth, 4)


def _random_inputs(batch=2, anchors=50, classes=4, seed=0):
    rng = np.random.RandomState(seed)
    logits = rng.normal(0, 2, (batch, anchors, classes + 1))
    probs = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    offsets = rng.normal(0, 0.5, (batch, anchors, 4))
    centers = np.concatenate([rng.uniform(0, 100, (1, anchors, 2)), rng.uniform(5, 40, (1, anchors, 2))], -1)
    return mx.nd.array(probs), mx.nd.array(offsets), mx.nd.array(centers)


def test_box_decoding_equals_gluoncv() -> None:
    _, offsets, anchors = _random_inputs()
    expected = NormalizedBoxCenterDecoder(minimal_opset=True)(offsets, anchors)  # plain formula
    actual = boxes.decode_center_boxes(mx.nd, offsets, anchors, (0.1, 0.1, 0.2, 0.2))
    np.testing.assert_allclose(actual.asnumpy(), expected.asnumpy(), rtol=1e-5, atol=1e-4)


def test_per_class_rows_equal_gluoncv_decoder_per_class_loop() -> None:
    probs, offsets, anchors = _random_inputs()
    bboxes = boxes.decode_center_boxes(mx.nd, offsets, anchors, (0.1, 0.1, 0.2, 0.2))
    ids, scores = MultiPerClassDecoder(5, thresh=0.2)(probs)
    expected = mx.nd.concat(*[mx.nd.concat(ids[:, :, i:i + 1], scores[:, :, i:i + 1], bboxes, dim=-1)
                              for i in range(4)], dim=1)
    actual = boxes.per_class_detections(mx.nd, probs[:, :, 1:], bboxes, 4, 0.2)
    np.testing.assert_array_equal(actual.asnumpy(), expected.asnumpy())
    assert (actual[:, :, 0] == -1).sum() > 0  # the threshold removed something


def test_the_pipeline_runs_as_a_symbol_with_the_same_result() -> None:
    probs, offsets, anchors = _random_inputs()

    def pipeline(F, p, o, a):
        rows = boxes.per_class_detections(F, p.slice_axis(axis=-1, begin=1, end=None),
                                          boxes.decode_center_boxes(F, o, a, (0.1, 0.1, 0.2, 0.2)), 4, 0.01)
        return boxes.nms_split(F, rows, 0.45, 400, 20)

    eager = pipeline(mx.nd, probs, offsets, anchors)
    names = ("p", "o", "a")
    graph = mx.sym.Group(list(pipeline(mx.sym, *[mx.sym.var(n) for n in names])))
    executed = graph.eval(ctx=mx.cpu(), p=probs, o=offsets, a=anchors)
    for a, e in zip(executed, eager):
        np.testing.assert_array_equal(a.asnumpy(), e.asnumpy())
    ids, scores, bboxes = eager
    assert ids.shape == scores.shape == (2, 20, 1) and bboxes.shape == (2, 20, 4)
    # per image, the kept detections come sorted by score
    for image in range(2):
        valid = ids[image, :, 0].asnumpy() >= 0
        kept = scores[image, :, 0].asnumpy()[valid]
        assert kept.size and np.all(np.diff(kept) <= 0)


def test_nms_off_keeps_every_row() -> None:
    rows = mx.nd.array(np.random.RandomState(0).uniform(0, 1, (1, 30, 6)))
    ids, scores, bboxes = boxes.nms_split(mx.nd, rows, 0, 400, 10)
    assert ids.shape == (1, 30, 1)
    np.testing.assert_array_equal(bboxes.asnumpy(), rows[:, :, 2:].asnumpy())


def test_class_index_map_accepts_gluoncv_forms_and_names_bad_input() -> None:
    old, new = ["cat", "dog", "person"], ["person", "unicorn", "dog"]
    assert boxes.class_index_map({"person": "person", 2: 1}, old, new) == {0: 2, 2: 1}
    assert boxes.class_index_map(["dog", "person"], old, new) == {2: 1, 0: 2}
    assert boxes.class_index_map(None, old, new) == {}
    with pytest.raises(ValueError, match="'horse' is not one of the old classes"):
        boxes.class_index_map({"dog": "horse"}, old, new)
    with pytest.raises(ValueError, match="out of range for the 3 new classes"):
        boxes.class_index_map({7: 0}, old, new)
    with pytest.raises(ValueError, match=r"\['unicorn'\]"):
        boxes.class_index_map(["unicorn"], old, new)
    with pytest.raises(TypeError, match="dict or a list"):
        boxes.class_index_map("dog", old, new)
