"""``load(name, pretrained=True, <class count>=...)`` in the core, for any plugin's factory that
declares its count argument with ``gluon_hub.head_argument``; weights from a loopback mirror."""

from __future__ import annotations

import hashlib
import types
import warnings

import numpy as np
import pytest

import gluon_hub
from gluon_hub import FileRef, ModelSpec, WeightVariant, hookimpl
from gluon_hub.compat import mx
from gluon_hub.publishing import serve


@pytest.fixture
def published(tmp_path, monkeypatch):
    """``heads/marked`` and ``heads/unmarked`` with a published 5-class file; yields its arrays."""
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Dense(4, in_units=3, activation="relu"), mx.gluon.nn.Dense(5, in_units=4))
    net.initialize(mx.init.Normal(1.0))
    (tmp_path / "mirror").mkdir()
    path = tmp_path / "mirror" / "tiny-5.params"
    net.save_parameters(str(path))
    file = FileRef(hash=f"sha256:{hashlib.sha256(path.read_bytes()).hexdigest()}", filename=path.name)
    specs = [ModelSpec(name=name, factory=f"tests_core_heads:{name}", task="demo",
                       weights=(WeightVariant(tag="five", file=file),)) for name in ("marked", "unmarked")]
    plugin = types.SimpleNamespace(GLUON_HUB_API=">=1,<2", gluon_hub_models=hookimpl(lambda: specs))
    gluon_hub.register_plugin(plugin, "heads")
    with serve(tmp_path / "mirror") as server:
        monkeypatch.setenv("GLUON_HUB_MIRRORS", server.url)
        yield {k: v.asnumpy() for k, v in mx.nd.load(str(path)).items()}


def test_another_class_count_keeps_every_parameter_but_the_head(published):
    with pytest.warns(gluon_hub.NewHeadWarning, match=r"classes=2 differs from the published 5: .* 1\.weight, 1\.bias"):
        net = gluon_hub.load("heads/marked", pretrained=True, classes=2)
    report = net.gluon_hub_new_head
    assert report == gluon_hub.NewHead("classes", 5, 2, ("1.weight", "1.bias"))
    params = net._collect_params_with_prefix()
    for key in ("0.weight", "0.bias"):
        np.testing.assert_array_equal(params[key].data().asnumpy(), published[key])
    # the head is initialised at once, its input size taken from the file: the model saves unrun
    assert params["1.weight"].data().shape == (2, 4)
    assert not np.array_equal(params["1.weight"].data().asnumpy(), published["1.weight"][:2])
    assert net(mx.nd.ones((1, 3))).shape == (1, 2)


def test_the_published_count_or_no_count_loads_strictly(published):
    for kwargs in ({}, {"classes": 5}):
        net = gluon_hub.load("heads/marked", pretrained=True, **kwargs)
        assert not hasattr(net, "gluon_hub_new_head")
        np.testing.assert_array_equal(net[1].weight.data().asnumpy(), published["1.weight"])


@pytest.mark.parametrize("name, kwargs, message", [
    # another width changes the head's input too: not a difference in the class count alone
    ("marked", {"classes": 2, "width": 8}, r"'0.weight' expects shape \(8, 3\) .* \(not a difference in classes alone\)"),
    ("marked", {"width": 8}, r"'0.weight' expects shape \(8, 3\) but the file has \(4, 3\)"),
    # a factory that declares no count argument: a misfit stays the error it always was
    ("unmarked", {"classes": 2}, r"'1.weight' expects shape \(2, \?\) but the file has \(5, 4\)"),
])
def test_other_misfits_stay_errors(published, name, kwargs, message):
    with pytest.raises(gluon_hub.ModelBuildError, match=message):
        gluon_hub.load(f"heads/{name}", pretrained=True, **kwargs)


def test_load_initialises_only_what_the_factory_left_empty(tmp_path):
    """A factory that filled its stem (``pretrained_base``) keeps it, and MXNet warns of nothing."""
    spec = ModelSpec(name="prebuilt", factory="tests_core_heads:prebuilt_stem", task="demo")
    plugin = types.SimpleNamespace(GLUON_HUB_API=">=1,<2", gluon_hub_models=hookimpl(lambda: [spec]))
    gluon_hub.register_plugin(plugin, "prebuilt")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        net = gluon_hub.load("prebuilt/prebuilt")
    assert [str(w.message) for w in caught] == []
    np.testing.assert_array_equal(net[0].weight.data().asnumpy(), np.full((4, 3), 0.5, np.float32))
    assert net(mx.nd.ones((1, 3))).shape == (1, 5)  # the head, left empty, was initialised
