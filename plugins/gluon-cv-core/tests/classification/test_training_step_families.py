"""One SGD step of every classification family, on the CPU's own oneDNN kernels.

On AVX-512 CPUs oneDNN keeps activations in 16-channel blocks, and some of MXNet 1.9.1's
backward passes cannot handle them (NASNet's concatenations failed with "could not construct
a sub-memory"). This test runs where the suite runs, with no ``DNNL_MAX_CPU_ISA`` cap, so a
family whose training step breaks on these kernels fails here. Parametrized from the registry:
one model per family (the smallest), and one per ResNet-V1b stem variant (b, c, d, e, s).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import gluon_hub
from gluon_hub.compat import mx

# A training step of some 40 models: minutes of MXNet arithmetic that does not depend on the
# Python version, so .ci/run's 3.10 and 3.12 legs leave it to the 3.11 run.
pytestmark = pytest.mark.training

#: Families whose final pool or dense layer fixes the input size; the others take 64 pixels
#: (or their own size when smaller, the 32-pixel CIFAR models).
SIZES = {
    "densenet": 224,  # 7x7 final pool
    "squeezenet": 224,  # 13x13 final pool
    "googlenet": 224,  # 7x7 final pool
    "residual_attention": 224,  # masks upsample to fixed sizes
    "inception": 299,  # 8x8 final pool
}


def _models() -> list[str]:
    """The smallest float32 model of each family tag (ResNet-V1b: of each stem variant)."""
    chosen: dict[str, gluon_hub.ModelSpec] = {}
    for name in gluon_hub.list_models(task="image-classification"):
        spec = gluon_hub.info(name)
        if "int8" in spec.tags:
            continue
        variant = re.search(r"_(v1[a-z])$", name) if spec.tags[0] == "resnet_v1b" else None
        key = spec.tags[0] + (variant.group(1) if variant else "")
        if key not in chosen or spec.num_params < chosen[key].num_params:
            chosen[key] = spec
    return sorted(spec.name for spec in chosen.values())


def _parameters(net) -> dict[str, np.ndarray]:
    return {k: p.data().asnumpy() for k, p in net.collect_params().items() if p.grad_req != "null"}


@pytest.mark.parametrize("hybridized", [True, False], ids=["hybridized", "imperative"])
@pytest.mark.parametrize("name", _models())
def test_one_sgd_step_runs_and_moves_every_layer(name: str, hybridized: bool) -> None:
    """An inference call first (it settles deferred shapes and, hybridized, traces the graph
    the way an evaluation before training would), then a recorded step with a cross-entropy
    loss and an SGD update: gradients and new parameters are finite, and both the first and
    the last trainable parameter moved, so the backward pass reached the input layer."""
    spec = gluon_hub.info(name)
    size = SIZES.get(spec.tags[0], min(64, spec.input.shape[-1]))
    net = gluon_hub.load(name)
    net.initialize(mx.init.MSRAPrelu(), force_reinit=True)  # what train.py starts from
    if hybridized:
        net.hybridize(static_alloc=True, static_shape=True)  # as train.py --hybridize does
    mx.random.seed(0)
    x = mx.nd.random.uniform(-1.0, 1.0, (2, 3, size, size))
    label = mx.nd.array([0, spec.input.num_classes - 1])
    net(x).wait_to_read()
    before = _parameters(net)
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    with mx.autograd.record():
        loss = mx.gluon.loss.SoftmaxCrossEntropyLoss()(net(x), label)
    loss.backward()
    trainer.step(2)
    after = _parameters(net)
    for key, value in after.items():
        assert np.isfinite(value).all(), f"{name}: {key} is not finite after one step"
    first, last = next(iter(before)), next(reversed(before))
    for key in (first, last):
        assert not np.array_equal(after[key], before[key]), f"{name}: one SGD step left {key} unchanged"
