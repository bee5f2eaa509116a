"""Every registered model loads GluonCV 0.10's parameters unchanged and computes the same outputs.

Parametrized from the registry, so a model added to a ``*_zoo.json`` file is tested here with
no new test. GluonCV is a test-only reference: its model is built with random parameters
(batch-norm statistics included, so that every parameter matters), saved with
``save_parameters`` and loaded strictly into ours; then both run on the same input.
"""

from __future__ import annotations

import numpy as np
import pytest

import gluon_hub
from gluon_hub.compat import mx

import gluoncv  # noqa: E402  (test-only reference; after the compat shim)

MODELS = gluon_hub.list_models(plugin="cv", task="image-classification")

#: smallest input each family accepts in GluonCV: fixed-size final pools (DenseNet 7x7,
#: SqueezeNet 13x13, Inception 8x8) and AlexNet's three unpadded pools; 32 otherwise.
_MIN_SIZE = {"alexnet": 63, "densenet": 224, "squeezenet": 224, "inception": 299}


def _randomize(net) -> None:
    """Give every parameter random values, keeping norm scales and variances positive.

    Weights are windows of one shared normal buffer at distinct offsets (drawing tens of
    millions of fresh numbers per model would dominate the suite's time), scaled to
    variance ``1 / fan_in``; residual sums still grow with depth, hence the
    output-relative tolerance.
    """
    params = list(net.collect_params().items())
    largest = max(int(np.prod(p.shape)) for _, p in params)
    pool = mx.nd.random.normal(0.0, 1.0, (2 * largest,))
    for i, (name, param) in enumerate(params):
        shape = param.shape
        if name.endswith(("gamma", "running_var")):
            value = mx.nd.random.uniform(0.5, 1.5, shape)
        elif name.endswith(("beta", "running_mean", "bias")):
            value = mx.nd.random.uniform(-0.2, 0.2, shape)
        else:
            size = int(np.prod(shape))
            start = (i * 7919) % (largest + 1)
            value = pool[start:start + size].reshape(shape) * float(np.prod(shape[1:])) ** -0.5
        param.set_data(value)


def _assert_same(actual, expected) -> None:
    """Equal within float32 summation-order noise: rtol 1e-5, atol 1e-5 of the output scale."""
    scale = max(1.0, float(np.abs(expected).max()))
    np.testing.assert_allclose(actual.asnumpy(), expected, rtol=1e-5, atol=1e-5 * scale)


@pytest.mark.parametrize("name", MODELS)
def test_loads_gluoncv_parameters_and_matches_outputs(name: str, tmp_path) -> None:
    spec = gluon_hub.info(name)
    size = _MIN_SIZE.get(spec.tags[0], 32)
    mx.random.seed(0)
    x = mx.nd.random.uniform(-1.0, 1.0, (1, 3, size, size))

    reference = gluoncv.model_zoo.get_model(name, pretrained=False)
    reference.initialize(mx.init.Zero())  # cheap: every value is replaced below
    reference.hybridize()  # deferred shapes settle by graph inference, not layer by layer
    reference(x)
    _randomize(reference)
    expected = reference(x).asnumpy()
    path = str(tmp_path / f"{name}.params")
    reference.save_parameters(path)

    ours = gluon_hub.load(name)
    ours.load_parameters(path)  # strict: no missing, no extra names, same shapes
    _assert_same(ours(x), expected)
    ours.hybridize()
    _assert_same(ours(x), expected)
