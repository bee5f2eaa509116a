"""CycleGAN's losses, history pool and learning-rate schedule."""

from __future__ import annotations

import pytest

import gluon_hub
from gluon_contrib.gan import ImagePool, linear_decay
from gluon_hub.compat import mx


def test_lsgan_loss_is_the_squared_distance_to_the_target():
    loss = gluon_hub.get_loss("lsgan")
    scores = mx.nd.array([[[[0.5, 1.0]]], [[[0.0, 2.0]]]])
    assert loss(scores, True).asnumpy().tolist() == pytest.approx([0.125, 1.0])
    assert loss(scores, False).asnumpy().tolist() == pytest.approx([0.625, 2.0])


def test_cycle_and_identity_losses_are_weighted_l1():
    a = mx.nd.zeros((1, 3, 2, 2))
    b = mx.nd.ones((1, 3, 2, 2)) * 0.5
    assert float(gluon_hub.get_loss("cycle_consistency")(b, a).asscalar()) == pytest.approx(5.0)
    assert float(gluon_hub.get_loss("identity_mapping")(b, a).asscalar()) == pytest.approx(2.5)
    assert float(gluon_hub.get_loss("cycle_consistency", weight=1.0)(b, a).asscalar()) == pytest.approx(0.5)


@pytest.mark.parametrize("name", ["lsgan", "cycle_consistency", "identity_mapping"])
def test_unknown_loss_keywords_get_the_hubs_message(name):
    """The factories' explicit signatures let the hub name the accepted keywords."""
    with pytest.raises(TypeError, match=r"'bogus'; accepted: weight$"):
        gluon_hub.get_loss(name, bogus=1)
    with pytest.raises(ValueError, match="non-negative"):
        gluon_hub.get_loss(name, weight=-1.0)


def _batch(value: float):
    return mx.nd.full((1, 3, 2, 2), value)


def test_pool_stores_until_full_then_mixes_old_and_new_images():
    pool = ImagePool(3, seed=0)
    for value in range(3):  # filling: every image comes straight back
        assert float(pool.query(_batch(value))[0, 0, 0, 0].asscalar()) == value
    returned = [float(pool.query(_batch(value))[0, 0, 0, 0].asscalar()) for value in range(3, 103)]
    old = [v for v, new in zip(returned, range(3, 103)) if v != new]
    assert 30 < len(old) < 70  # about half are swapped for a stored image
    assert all(v < new for v, new in zip(returned, range(3, 103)) if v != new)
    assert len(pool.images) == 3


def test_pool_of_size_zero_passes_images_through():
    images = _batch(7.0)
    assert ImagePool(0).query(images) is images
    with pytest.raises(ValueError):
        ImagePool(-1)


def test_learning_rate_is_constant_then_decays_linearly():
    factors = [linear_decay(epoch, 100, 100) for epoch in range(200)]
    assert factors[:100] == [1.0] * 100
    steps = {round(a - b, 9) for a, b in zip(factors[99:], factors[100:])}
    assert steps == {round(1 / 101, 9)}
    assert 0 < factors[-1] < 0.01
