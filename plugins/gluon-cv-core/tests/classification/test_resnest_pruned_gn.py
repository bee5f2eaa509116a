"""What the registry-wide parity tests cannot see in ResNeSt, the pruned ResNets and group norm.

- ResNeSt's DropBlock (training only, in ResNeSt-26 and deeper) and its dilated layouts (the
  segmentation and detection backbones) against GluonCV.
- The pruned ResNets' published files use MXNet's older format, keyed by full parameter names;
  GluonCV reads them with its own loader, ours with ``load_parameters``.
- Group norm: GluonCV's layer cannot be hybridized and runs in float32 only, where a deep
  network's gradients depend on rounding (ReLUs and max-pool ties), so ours is checked against
  numpy and, in float64, against the same network with a group norm of plain operators.
"""

from __future__ import annotations

import numpy as np
import pytest

from gluon_cv_core.classification.models.cifar_resnext import cifar_resnext
from gluon_cv_core.classification.models.resnest import resnest
from gluon_cv_core.classification.models.resnet_pruned import resnet_v1b_pruned
from gluon_cv_core.common.backbones.resnetv1b import resnet_v1b_gn
from gluon_cv_core.common.norm import GroupNorm
from gluon_hub.compat import mx

import gluoncv  # noqa: E402  (test-only reference; after the compat shim)


def _random_reference(net, x) -> None:
    """Random parameters for a GluonCV model, norm scales and variances kept positive."""
    net.initialize(mx.init.Normal(0.05))
    net(x)
    for name, param in net.collect_params().items():
        if name.endswith(("gamma", "running_var")):
            param.set_data(mx.nd.random.uniform(0.5, 1.5, param.shape))
        elif name.endswith(("beta", "running_mean")):
            param.set_data(mx.nd.random.uniform(-0.2, 0.2, param.shape))


def _close(actual, expected) -> None:
    scale = max(1.0, float(np.abs(expected).max()))
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-5 * scale)


@pytest.mark.parametrize("hybridized", [False, True])
def test_resnest_dropblock_training_step_matches_gluoncv(hybridized: bool, tmp_path) -> None:
    """DropBlock masks have the size of the training input (here 96, the smallest whose last
    stage, 3x3, holds a 3x3 block): same draws, same output."""
    mx.random.seed(0)
    x = mx.nd.random.uniform(-1.0, 1.0, (2, 3, 96, 96))
    reference = gluoncv.model_zoo.get_model("resnest26", pretrained=False, input_size=96)
    _random_reference(reference, x)
    path = str(tmp_path / "resnest26.params")
    reference.save_parameters(path)
    ours = resnest(26, input_size=96)
    ours.load_parameters(path)
    outputs = []
    for net in (reference, ours):
        net.hybridize(hybridized)
        mx.random.seed(5)
        with mx.autograd.record(train_mode=True):
            outputs.append(net(x).asnumpy())
    _close(outputs[1], outputs[0])
    with mx.autograd.predict_mode():
        clean = ours(x).asnumpy()
    assert np.abs(clean - outputs[1]).max() > 1e-3  # the blocks were dropped in training


@pytest.mark.parametrize("layout", [{"dilated": True}, {"dilation": 2}, {"dilation": 3}])
def test_dilated_resnest_matches_gluoncv(layout: dict, tmp_path) -> None:
    mx.random.seed(0)
    x = mx.nd.random.uniform(-1.0, 1.0, (1, 3, 33, 33))
    reference = gluoncv.model_zoo.get_model("resnest14", pretrained=False, **layout)
    _random_reference(reference, x)
    path = str(tmp_path / "resnest14.params")
    reference.save_parameters(path)
    ours = resnest(14, **layout)
    ours.load_parameters(path)
    _close(ours(x).asnumpy(), reference(x).asnumpy())


@pytest.mark.parametrize("name", ["resnet18_v1b_0.89", "resnet50_v1d_0.11"])
def test_pruned_resnets_read_gluoncvs_published_format(name: str, tmp_path) -> None:
    """A file in the published layout (full names under ``resnetv1d_``, what GluonCV's own
    pruned loader indexes) loads into ours and into GluonCV's with the same outputs."""
    from gluoncv.model_zoo.pruned_resnet import resnetv1b_pruned  # test-only reference

    mx.random.seed(0)
    x = mx.nd.random.uniform(-1.0, 1.0, (1, 3, 33, 33))
    source = gluoncv.model_zoo.get_model(name, pretrained=False)
    _random_reference(source, x)
    published = {param.name.replace(source.prefix, "resnetv1d_", 1): param.data()
                 for param in source.collect_params().values()}
    path = str(tmp_path / f"{name}.params")
    mx.nd.save(path, published)

    ours = resnet_v1b_pruned(name)
    ours.load_parameters(path)
    _close(ours(x).asnumpy(), source(x).asnumpy())

    # GluonCV's own loader takes the same file: the layout is the published one
    import json
    import os

    widths_file = {"resnet18_v1b_0.89": "resnet18_v1b_2.6x", "resnet50_v1d_0.11": "resnet50_v1d_8.8x"}[name]
    folder = os.path.dirname(resnetv1b_pruned.__file__)
    with open(os.path.join(folder, widths_file + ".json"), encoding="utf-8") as handle:
        shapes = json.load(handle)
    fresh = gluoncv.model_zoo.get_model(name, pretrained=False)
    resnetv1b_pruned.prune_gluon_block(fresh, fresh.name, shapes, params=mx.nd.load(path), pretrained=True)
    _close(ours(x).asnumpy(), fresh(x).asnumpy())


def test_pruned_resnet_names_a_file_in_neither_format(tmp_path) -> None:
    path = str(tmp_path / "other.params")
    mx.nd.save(path, {"resnetv1b_conv0_weight": mx.nd.zeros((8, 3, 7, 7))})
    with pytest.raises(ValueError, match="does not start with 'resnetv1d_'"):
        resnet_v1b_pruned("resnet18_v1b_0.89").load_parameters(path)


def _plain_group_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, groups: int) -> np.ndarray:
    n, c = x.shape[:2]
    g = x.reshape(n, groups, -1)
    y = ((g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-5)).reshape(x.shape)
    shape = (1, c) + (1,) * (x.ndim - 2)
    return y * gamma.reshape(shape) + beta.reshape(shape)


@pytest.mark.parametrize("hybridized", [False, True])
def test_group_norm_scales_each_channel_and_has_the_right_gradient(hybridized: bool) -> None:
    """Forward against numpy; the input gradient of ``sum(GN(a) * c)`` against central
    differences of the numpy formula, in float64."""
    rng = np.random.RandomState(0)
    a, c = rng.normal(0, 2, (2, 8, 3, 3)), rng.uniform(-1, 1, (2, 8, 3, 3))
    gamma, beta = rng.uniform(0.5, 1.5, 8), rng.uniform(-0.2, 0.2, 8)
    layer = GroupNorm(num_groups=4, in_channels=8)
    layer.initialize()
    layer.cast("float64")
    layer.gamma.set_data(mx.nd.array(gamma, dtype="float64"))
    layer.beta.set_data(mx.nd.array(beta, dtype="float64"))
    layer.hybridize(hybridized)
    data = mx.nd.array(a, dtype="float64")
    data.attach_grad()
    with mx.autograd.record():
        loss = (layer(data) * mx.nd.array(c, dtype="float64")).sum()
    loss.backward()
    np.testing.assert_allclose(layer(data).asnumpy(), _plain_group_norm(a, gamma, beta, 4), rtol=1e-6, atol=1e-6)
    numeric = np.zeros_like(a)
    for idx in np.ndindex(a.shape):
        step = np.zeros_like(a)
        step[idx] = 1e-6
        numeric[idx] = ((_plain_group_norm(a + step, gamma, beta, 4) * c).sum()
                        - (_plain_group_norm(a - step, gamma, beta, 4) * c).sum()) / 2e-6
    np.testing.assert_allclose(data.grad.asnumpy(), numeric, rtol=1e-4, atol=1e-6)


class _PlainGroupNorm(GroupNorm):
    """The same layer from elementary operators: mean, variance and scale by autograd."""

    def hybrid_forward(self, F, x, gamma, beta):
        groups = F.reshape(x, (0, self._num_groups, -1))
        centred = F.broadcast_sub(groups, F.mean(groups, axis=2, keepdims=True))
        scale = F.rsqrt(F.mean(centred * centred, axis=2, keepdims=True) + self._epsilon)
        flat = F.reshape(F.reshape_like(F.broadcast_mul(centred, scale), x), (0, 0, -1))
        out = F.broadcast_add(F.broadcast_mul(flat, F.reshape(gamma, (1, -1, 1))), F.reshape(beta, (1, -1, 1)))
        return F.reshape_like(out, x)


def test_resnet_v1b_gn_gradients_equal_those_of_plain_operators(tmp_path) -> None:
    """The whole network's training step, ours against the same weights in a group norm made of
    elementary operators, in float64. In float32 the early layers' gradients of any two group
    norm formulations (GluonCV's included) differ by about 1%: rounding flips ReLUs and max-pool
    choices that sit at a tie, so GluonCV's float32 layer (which cannot run in float64) is no
    reference for gradients."""
    from gluon_cv_core.common.backbones.resnetv1b import resnet_v1b

    mx.random.seed(0)
    x = mx.nd.random.uniform(-1.0, 1.0, (2, 3, 33, 33))
    ours = resnet_v1b_gn(50, classes=10)
    _random_reference(ours, x)
    path = str(tmp_path / "gn.params")
    ours.save_parameters(path)
    plain = resnet_v1b(50, "b", classes=10, norm_layer=_PlainGroupNorm, norm_kwargs={"num_groups": 32})
    plain.load_parameters(path)
    x = x.astype("float64")
    grads = []
    for net in (ours, plain):
        net.cast("float64")
        with mx.autograd.record(train_mode=True):
            loss = (net(x) * mx.nd.arange(10, dtype="float64").reshape((1, 10))).sum()
        loss.backward()
        grads.append({k: p.grad().asnumpy() for k, p in net._collect_params_with_prefix().items()})
    assert grads[0].keys() == grads[1].keys()
    for key, value in grads[1].items():
        np.testing.assert_allclose(grads[0][key], value, rtol=1e-7, atol=1e-9 * np.abs(value).max(), err_msg=key)


def test_group_norm_needs_its_width() -> None:
    with pytest.raises(ValueError, match="positive multiple of num_groups=32"):
        GroupNorm(32)
    with pytest.raises(ValueError, match="got in_channels=48"):
        GroupNorm(32, in_channels=48)


def test_resnet_v1b_gn_builds_hybridized_without_a_first_imperative_call() -> None:
    net = resnet_v1b_gn(50, classes=7)
    net.initialize()
    net.hybridize()
    assert net(mx.nd.zeros((1, 3, 32, 32))).shape == (1, 7)


def test_dropblock_refuses_to_train_on_a_map_smaller_than_a_block() -> None:
    net = resnest(26, input_size=64)  # last stage 2x2: fine for inference
    net.initialize()
    x = mx.nd.zeros((1, 3, 64, 64))
    assert net(x).shape == (1, 1000)
    with pytest.raises(ValueError, match="3x3 blocks on a 2x2 map: train at a larger input_size"):
        with mx.autograd.train_mode():
            net(x)


def test_factories_refuse_unknown_depths() -> None:
    with pytest.raises(ValueError, match="num_layers must be one of"):
        resnest(34)
    with pytest.raises(ValueError, match="dilation must be one of"):
        resnest(50, dilation=8)
    with pytest.raises(ValueError, match="config must be one of"):
        resnet_v1b_pruned("resnet50_v1d_0.5")
    with pytest.raises(ValueError, match="2 plus a positive multiple of 9"):
        cifar_resnext(30)
