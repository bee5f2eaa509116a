"""Every registered model loads GluonCV 0.10's parameters unchanged and computes the same outputs.

Parametrized from the registry, so a model added to a ``*_zoo.json`` file is tested here with
no new test. GluonCV is a test-only reference: its model is built with random parameters
(batch-norm statistics included, so that every parameter matters), saved with
``save_parameters`` and loaded strictly into ours; then both run on the same inputs at two
sizes (see ``INPUT_SIZES``), imperatively and hybridized. One model per family also takes a
training-mode step, where gradients and batch-norm running statistics must agree too.
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

import gluon_hub
from gluon_hub.compat import mx

import gluoncv  # noqa: E402  (test-only reference; after the compat shim)

pytestmark = pytest.mark.parity

#: int8 entries are built from their fp32 model by quantization; their agreement with it is
#: the quantization tests' concern, and GluonCV has no Gluon block to compare them with.
MODELS = [name for name in gluon_hub.list_models(plugin="cv", task="image-classification")
          if "int8" not in gluon_hub.info(name).tags]

#: families whose GluonCV reference cannot be hybridized: GluonCV's GroupNorm reads
#: ``x.shape`` and ``x.context`` in ``hybrid_forward``, so it runs imperatively only.
IMPERATIVE_REFERENCE = {"resnet_v1b_gn"}
#: GluonCV arguments that build the registry's model: NASNet without the training-only
#: auxiliary head, which makes GluonCV's network return a pair and adds parameters
REFERENCE_KWARGS: dict[str, dict] = {"nasnet": {"use_aux": False}}

#: Input sizes per family tag (``spec.tags[0]``): ``(first, second)``, both run on one build.
#: The second gives odd feature maps at several stages, so padding, ceil-mode pools and
#: stride-2 shortcuts are compared where rounding matters. Families with a fixed-size final
#: pool or a Dense layer whose input size is inferred at the first call keep both sizes in
#: the range that gives the same final map. A family not listed uses DEFAULT_SIZES.
#: Adding a family: one line here.
INPUT_SIZES: dict[str, tuple[int, int]] = {
    "alexnet": (63, 67),  # three unpadded pools; Dense in_units fixed by the first call
    "densenet": (224, 265),  # 7x7 final pool: 265 -> 133, 67, 33, 16, 8
    "squeezenet": (224, 235),  # 13x13 final pool, stride 13: 235 -> 14x14 for 1.0 and 1.1
    "inception": (299, 331),  # 8x8 final pool: 331 -> 165, 163, 81, 79, 39, 19, 9
    "googlenet": (224, 235),  # 7x7 final pool, Dense in_units 1024: 235 -> 118, 59, 29, 14, 7
    # GluonCV's masks upsample to fixed sizes: 221 to 224 pixels (221 -> 111, 56) and 32 only
    "residual_attention": (224, 221),
    "cifar_residual_attention": (32, 32),
    "vgg": (32, 63),  # Dense in_units fixed by the first call: 63 -> 31, 15, 7, 3, 1
    "cifar_resnet_v1": (32, 25),  # 25 -> 25, 13, 7
    "cifar_resnet_v2": (32, 25),
    "cifar_wide_resnet": (32, 25),
    "hrnet": (32, 64),  # nearest upsampling by exact powers of two: multiples of 32 only
    "dla": (32, 63),  # a tree's pooled shortcut must match its strided conv: 63 -> 32, 16, 8, 4, 2
}
#: stride-32 networks: 32 -> 16, 8, 4, 2, 1 and 33 -> 17, 9, 5, 3, 2
DEFAULT_SIZES = (32, 33)


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


def _assert_same(actual: np.ndarray, expected: np.ndarray, what: str, tolerance: float = 1e-5,
                 scale: float = 0.0) -> None:
    """Equal within float32 summation-order noise: rtol and atol (of the output scale, or of
    ``scale`` where larger) 1e-5."""
    scale = max(1.0, float(np.abs(expected).max()), scale)
    np.testing.assert_allclose(actual, expected, rtol=tolerance, atol=tolerance * scale, err_msg=what)


def _gradient_tolerance(name: str) -> float:
    """MobileNetV3's hard sigmoid is one MXNet operator here, ``clip(x / 6 + 0.5, 0, 1)``, and
    three in GluonCV, ``clip(x + 3, 0, 6) / 6``: the same function, rounded differently, and
    the first layers' gradients gather that rounding from every layer above them."""
    return 1e-4 if name.startswith("mobilenetv3") else 1e-5


def _gradient_scale(key: str, grads: dict) -> float:
    """The scale a gradient is compared at beyond its own: a norm layer's beta at its gamma's.

    Where a linear layer and a training-mode norm follow (Xception's separable convolutions),
    beta's gradient cancels to zero and only summation rounding is left, 1e-6 of gamma's;
    AVX-512 kernels round it differently from AVX2 ones, so its own scale says nothing.
    """
    gamma = grads.get(key[: -len("beta")] + "gamma") if key.endswith(".beta") else None
    return float(np.abs(gamma).max()) if gamma is not None else 0.0


@contextlib.contextmanager
def _plain_layout_concat(family: str):
    """GluonCV's NASNet with the plain-layout copy after each concatenation that ours makes
    while recording: on AVX-512, MXNet 1.9.1 cannot run its backward otherwise ("could not
    construct a sub-memory"). The copy changes no value."""
    if family != "nasnet":
        yield
        return
    originals = {module: module.concat for module in (mx.nd, mx.sym)}

    def wrap(concat):
        return lambda *parts, **kwargs: concat(*parts, **kwargs).transpose(axes=(0, 1, 2, 3))

    try:
        for module, concat in originals.items():
            module.concat = wrap(concat)
        yield
    finally:
        for module, concat in originals.items():
            module.concat = concat


def _sizes(name: str) -> tuple[int, int]:
    """The model's family's two input sizes (see ``INPUT_SIZES``)."""
    return INPUT_SIZES.get(gluon_hub.info(name).tags[0], DEFAULT_SIZES)


def _reference_and_ours(name: str, size: int, directory) -> tuple:
    """GluonCV's model with random parameters, and ours loaded strictly from its saved file.

    ``size`` is the input size at which GluonCV's deferred shapes (Dense ``in_units``) settle.
    """
    family = gluon_hub.info(name).tags[0]
    reference = gluoncv.model_zoo.get_model(name, pretrained=False, **REFERENCE_KWARGS.get(family, {}))
    reference.initialize(mx.init.Zero())  # cheap: every value is replaced below
    # deferred shapes settle by graph inference, not layer by layer
    reference.hybridize(family not in IMPERATIVE_REFERENCE)
    reference(mx.nd.zeros((1, 3, size, size)))
    _randomize(reference)
    path = str(directory / f"{name}.params")
    reference.save_parameters(path)
    ours = gluon_hub.load(name)
    ours.load_parameters(path)  # strict: no missing, no extra names, same shapes
    return reference, ours


@pytest.mark.parametrize("name", MODELS)
def test_loads_gluoncv_parameters_and_matches_outputs_at_two_sizes(name: str, tmp_path) -> None:
    """One build per model (building and randomizing dominate the time), both sizes run on it.

    Each mode of ours is compared with the same mode of GluonCV's: MXNet rounds differently
    imperatively and hybridized, and the deepest random-weight networks (Residual Attention
    128 and up) amplify that last-bit noise beyond any tolerance.
    """
    sizes = _sizes(name)
    mx.random.seed(0)
    inputs = [mx.nd.random.uniform(-1.0, 1.0, (1, 3, s, s)) for s in sizes]
    reference, ours = _reference_and_ours(name, sizes[0], tmp_path)
    imperative_only = gluon_hub.info(name).tags[0] in IMPERATIVE_REFERENCE
    for hybridized in (False, True):
        reference.hybridize(hybridized and not imperative_only)
        ours.hybridize(hybridized)
        for x in inputs:
            want = reference(x).asnumpy()
            what = f"{name} at {x.shape[-1]}x{x.shape[-1]}, hybridized={hybridized}"
            _assert_same(ours(x).asnumpy(), want, what)


def _smallest_per_family() -> list[str]:
    """One representative per family tag: its model with the fewest parameters."""
    chosen: dict = {}
    for name in MODELS:
        spec = gluon_hub.info(name)
        if spec.tags[0] not in chosen or spec.num_params < chosen[spec.tags[0]].num_params:
            chosen[spec.tags[0]] = spec
    return sorted(spec.name for spec in chosen.values())


def _running_stats(net) -> dict:
    """Batch-norm running statistics by the structural names ``save_parameters`` writes."""
    params = net._collect_params_with_prefix()  # pylint: disable=protected-access
    return {k: p for k, p in params.items() if k.endswith(("running_mean", "running_var"))}


def _training_step(net, x, stats_before: dict) -> tuple[np.ndarray, dict, dict]:
    """A training-mode forward and the backward of ``sum(output * c)`` for a fixed random ``c``.

    Starts from ``stats_before`` (a step moves the running statistics; the weights only get
    gradients). Returns the output, every parameter's gradient and the running statistics
    after the step, keyed by the structural names that ``save_parameters`` writes (the same
    on both sides, since our model loads GluonCV's file strictly).
    """
    stats = _running_stats(net)
    for key, param in stats.items():
        param.set_data(stats_before[key])
    mx.random.seed(2)  # the same dropout masks on both sides, for the same mode
    with mx.autograd.record(train_mode=True):
        output = net(x)
        cotangent = np.random.RandomState(3).uniform(-1.0, 1.0, output.shape)
        loss = (output * mx.nd.array(cotangent)).sum()
    loss.backward()
    params = net._collect_params_with_prefix()  # pylint: disable=protected-access
    grads = {k: p.grad().asnumpy() for k, p in params.items() if p.grad_req != "null"}
    return output.asnumpy(), grads, {k: p.data().asnumpy() for k, p in stats.items()}


@pytest.mark.parametrize("name", _smallest_per_family())
def test_training_step_matches_gluoncv(name: str, tmp_path) -> None:
    """Outputs, gradients and batch-norm running statistics after one training-mode step.

    At the family's second size with a batch of two, so that no batch statistic is taken
    over a single value. Dropout draws the same masks on both sides only within one mode:
    MXNet consumes its random stream differently imperatively and hybridized, so each mode of
    ours is compared with the same mode of GluonCV's, both seeded alike before the forward
    pass, and both start each step from the same running statistics.
    """
    first, second = _sizes(name)
    reference, ours = _reference_and_ours(name, first, tmp_path)
    stats_before = {k: p.data().copy() for k, p in _running_stats(reference).items()}
    mx.random.seed(1)
    x = mx.nd.random.uniform(-1.0, 1.0, (2, 3, second, second))
    for hybridized in (False, True):
        reference.hybridize(hybridized and gluon_hub.info(name).tags[0] not in IMPERATIVE_REFERENCE)
        ours.hybridize(hybridized)
        with _plain_layout_concat(gluon_hub.info(name).tags[0]):
            want, want_grads, want_stats = _training_step(reference, x, stats_before)
        got, grads, stats = _training_step(ours, x, stats_before)
        where = f"{name} at {second}x{second}, hybridized={hybridized}"
        _assert_same(got, want, f"output of {where}")
        assert grads.keys() == want_grads.keys() and stats.keys() == want_stats.keys()
        for key, value in want_grads.items():
            _assert_same(grads[key], value, f"gradient of {key}, {where}", _gradient_tolerance(name),
                         _gradient_scale(key, want_grads))
        for key, value in want_stats.items():
            _assert_same(stats[key], value, f"{key} after the step, {where}")
