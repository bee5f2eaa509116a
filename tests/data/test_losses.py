"""The core's losses against hand-computed numpy values, hybridized or not, and by name."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gluon_hub
from gluon_hub.compat import mx
from gluon_hub.losses import FocalLoss, LabelSmoothingCELoss, MaskedSoftmaxCELoss, SoftTargetCELoss

RNG = np.random.RandomState(0)
PRED = RNG.randn(4, 5)
LABEL = np.array([0, 3, 4, 1])


def log_softmax(x: np.ndarray) -> np.ndarray:
    shifted = x - x.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def run(loss: Any, hybridize: bool, *arrays: np.ndarray) -> np.ndarray:
    if hybridize:
        loss.hybridize()
    return loss(*(mx.nd.array(a) for a in arrays)).asnumpy()


@pytest.fixture(params=[False, True], ids=["imperative", "hybridized"])
def hybridize(request: pytest.FixtureRequest) -> bool:
    return request.param


def test_label_smoothing_ce(hybridize: bool) -> None:
    logp = log_softmax(PRED)
    target = np.full((4, 5), 0.1 / 5)
    target[np.arange(4), LABEL] += 0.9
    expected = -(target * logp).sum(axis=-1)
    got = run(gluon_hub.get_loss("label_smoothing_ce", epsilon=0.1), hybridize, PRED, LABEL)
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    plain = run(LabelSmoothingCELoss(epsilon=0.0, weight=2.0), hybridize, PRED, LABEL)
    np.testing.assert_allclose(plain, -2 * logp[np.arange(4), LABEL], rtol=1e-5)


def test_soft_target_ce_for_mixup(hybridize: bool) -> None:
    # mixup of two one-hot labels with lambda = 0.7
    other = np.array([2, 2, 0, 1])
    target = 0.7 * np.eye(5)[LABEL] + 0.3 * np.eye(5)[other]
    logp = log_softmax(PRED)
    expected = -(0.7 * logp[np.arange(4), LABEL] + 0.3 * logp[np.arange(4), other])
    got = run(SoftTargetCELoss(), hybridize, PRED, target)
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    from_logits = run(gluon_hub.get_loss("soft_target_ce", from_logits=True), hybridize, logp, target)
    np.testing.assert_allclose(from_logits, expected, rtol=1e-5)


def test_focal_loss(hybridize: bool) -> None:
    p = np.exp(log_softmax(PRED))[np.arange(4), LABEL]
    expected = -0.25 * (1 - p) ** 2 * np.log(p)
    got = run(gluon_hub.get_loss("focal", gamma=2.0, alpha=0.25), hybridize, PRED, LABEL)
    np.testing.assert_allclose(got, expected, rtol=1e-4)
    as_ce = run(FocalLoss(gamma=0.0), hybridize, PRED, LABEL)
    np.testing.assert_allclose(as_ce, -np.log(p), rtol=1e-5)


def test_masked_softmax_ce_ignores_padding(hybridize: bool) -> None:
    pred = RNG.randn(3, 6, 5)
    label = RNG.randint(0, 5, size=(3, 6))
    valid = np.array([6, 2, 0])
    token = -np.take_along_axis(log_softmax(pred), label[..., None], axis=-1)[..., 0]
    expected = np.array([token[0].sum(), token[1, :2].sum(), 0.0]) / 6
    got = run(gluon_hub.get_loss("masked_softmax_ce"), hybridize, pred, label, valid)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-7)
    noisy = pred.copy()
    noisy[1, 2:] = 1e3  # what lies past the valid length does not matter
    got = run(MaskedSoftmaxCELoss(), hybridize, noisy, label, valid)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-7)


def test_sample_weight_scales_each_sample() -> None:
    weights = np.array([[1.0], [0.0], [2.0], [0.5]])
    plain = run(LabelSmoothingCELoss(), False, PRED, LABEL)
    weighted = LabelSmoothingCELoss()(mx.nd.array(PRED), mx.nd.array(LABEL), mx.nd.array(weights)).asnumpy()
    np.testing.assert_allclose(weighted, plain * weights[:, 0], rtol=1e-6)


def test_losses_are_registered_by_name() -> None:
    names = {"label_smoothing_ce", "soft_target_ce", "focal", "masked_softmax_ce"}
    assert names <= set(gluon_hub.list_losses())
    assert isinstance(gluon_hub.get_loss("focal"), mx.gluon.loss.Loss)
    with pytest.raises(TypeError, match="accepted: .*epsilon"):
        gluon_hub.get_loss("label_smoothing_ce", smoothing=0.1)


@pytest.mark.parametrize(
    "factory, kwargs, error",
    [(LabelSmoothingCELoss, dict(epsilon=1.0), ValueError), (FocalLoss, dict(gamma=-1), ValueError),
     (SoftTargetCELoss, dict(weight="2"), TypeError)],
)
def test_bad_arguments_are_refused(factory: Any, kwargs: dict, error: type) -> None:
    with pytest.raises(error):
        factory(**kwargs)
