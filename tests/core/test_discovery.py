"""Plugin discovery through entry points, isolation of broken plugins, name resolution."""

from __future__ import annotations

import hashlib
import json
import sys
import types

import numpy as np
import pytest

import gluon_hub
from gluon_hub import (
    AmbiguousNameError,
    ModelSpec,
    PluginError,
    PluginNotInstalledError,
    UnknownNameError,
    hookimpl,
)


def statuses() -> dict[str, gluon_hub.PluginInfo]:
    return {p.name: p for p in gluon_hub.plugins()}


def test_entry_point_plugin_is_listed_and_its_model_loads(fake_dist, only_fakes):
    fake_dist("alpha", models=[("alpha_net", "demo")])
    info = statuses()["alpha"]
    assert (info.status, info.distribution, info.version) == ("loaded", "fake-alpha", "1.2.3")
    assert gluon_hub.list_models() == ["alpha_net"]
    net = gluon_hub.load("alpha_net", units=5)
    out = net(gluon_hub.compat.mx.nd.ones((2, 7)))
    assert out.shape == (2, 3)
    assert net[0].weight.shape == (5, 7)


def test_plugin_that_raises_on_import_is_isolated(fake_dist, only_fakes):
    fake_dist("good")
    fake_dist("broken", body="raise RuntimeError('boom at import')\n")
    infos = statuses()
    assert infos["broken"].status == "failed"
    assert "RuntimeError: boom at import" in infos["broken"].error
    assert infos["good"].status == "loaded"
    assert gluon_hub.list_models() == ["good_net"]


def test_failed_plugin_names_raise_only_when_asked(fake_dist, only_fakes, tmp_path):
    fake_dist("good")
    fake_dist("broken", body="raise RuntimeError('boom at import')\n", distribution="fake-broken")
    index = {
        "schema": "gluon-hub-registry/1",
        "hub_api": "1.0",
        "plugins": [{"name": "broken", "distribution": "fake-broken", "version": "1.2.3"}],
        "models": [{"name": "broken_net", "factory": "x.y:z", "plugin": "broken"}],
    }
    path = tmp_path / "index.json"
    path.write_text(json.dumps(index))
    gluon_hub.set_index(str(path))
    assert isinstance(gluon_hub.load("good_net"), gluon_hub.compat.mx.gluon.Block)
    with pytest.raises(PluginError, match="boom at import"):
        gluon_hub.load("broken_net")


def test_hook_that_raises_marks_only_its_plugin_failed(fake_dist, only_fakes):
    fake_dist("good")
    fake_dist("hookfail", body="""
        from gluon_hub import hookimpl
        GLUON_HUB_API = ">=1"
        @hookimpl
        def gluon_hub_models():
            raise ValueError("bad metadata file")
    """)
    infos = statuses()
    assert infos["hookfail"].status == "failed"
    assert "ValueError: bad metadata file" in infos["hookfail"].error
    assert gluon_hub.list_models() == ["good_net"]


def test_hook_returning_wrong_type_is_reported(fake_dist, only_fakes):
    fake_dist("wrongtype", body="""
        from gluon_hub import hookimpl
        GLUON_HUB_API = ">=1"
        @hookimpl
        def gluon_hub_models():
            return [{"name": "dict_is_not_a_spec"}]
    """)
    assert "expected ModelSpec" in statuses()["wrongtype"].error


def test_incompatible_api_declared_by_the_module(fake_dist, only_fakes):
    fake_dist("future", api=">=2,<3")
    info = statuses()["future"]
    assert info.status == "incompatible"
    assert "supports hub API >=2,<3" in info.error
    with pytest.raises(PluginError, match="incompatible"):
        gluon_hub.load("future/future_net")


def test_missing_api_declaration_is_incompatible(fake_dist, only_fakes):
    fake_dist("undeclared", body="x = 1\n")
    info = statuses()["undeclared"]
    assert info.status == "incompatible" and "GLUON_HUB_API" in info.error


def test_incompatible_core_requirement_is_caught_before_import(fake_dist, only_fakes):
    module = fake_dist("old", requires=["gluon-hub>=7"])
    info = statuses()["old"]
    assert info.status == "incompatible"
    assert "requires gluon-hub>=7" in info.error
    assert module not in sys.modules, "an incompatible plugin must not be imported"


def test_bare_name_from_two_plugins_is_ambiguous(fake_dist, only_fakes):
    fake_dist("one", models=[("shared_net", "demo"), ("only_one", "demo")])
    fake_dist("two", models=[("shared_net", "demo")])
    with pytest.raises(AmbiguousNameError) as excinfo:
        gluon_hub.info("shared_net")
    assert "one/shared_net" in str(excinfo.value) and "two/shared_net" in str(excinfo.value)
    assert gluon_hub.info("two/shared_net").plugin == "two"
    assert gluon_hub.info("ONE/Shared_Net").plugin == "one"  # names are case-insensitive
    assert gluon_hub.list_models() == ["only_one", "one/shared_net", "two/shared_net"]


def test_duplicate_inside_one_plugin_breaks_only_that_name(fake_dist, only_fakes):
    fake_dist("dup", models=[("twice", "demo"), ("twice", "demo"), ("fine", "demo")])
    with pytest.raises(PluginError, match="more than once"):
        gluon_hub.info("twice")
    assert gluon_hub.info("fine").plugin == "dup"
    assert gluon_hub.list_models() == ["fine"]  # not listed as if it were usable
    info = statuses()["dup"]
    assert info.status == "loaded"
    assert "registers the model 'twice' more than once" in info.error


def test_strict_mode_refuses_a_duplicate_name(fake_dist, only_fakes, monkeypatch):
    fake_dist("dup", models=[("twice", "demo"), ("twice", "demo")])
    monkeypatch.setenv("GLUON_HUB_STRICT_PLUGINS", "1")
    with pytest.raises(PluginError, match="more than once"):
        gluon_hub.list_models()


def test_two_distributions_claiming_one_plugin_name(fake_dist, only_fakes):
    fake_dist("same", distribution="fake-first")
    fake_dist("same", distribution="fake-second")
    infos = gluon_hub.plugins()
    loaded = [i for i in infos if i.status == "loaded"]
    failed = [i for i in infos if i.status == "failed"]
    assert len(loaded) == 1 and len(failed) == 1
    assert "already used by distribution" in failed[0].error


def test_disable_named_plugins(fake_dist, monkeypatch):
    fake_dist("keep")
    fake_dist("skip")
    monkeypatch.setenv("GLUON_HUB_DISABLE_PLUGINS", "hub,cv,nlp,contrib,skip")
    infos = statuses()
    assert infos["skip"].status == "disabled"
    assert gluon_hub.list_models() == ["keep_net"]


def test_autoload_off_and_in_process_registration(fake_dist, monkeypatch):
    fake_dist("ignored")
    monkeypatch.setenv("GLUON_HUB_DISABLE_PLUGIN_AUTOLOAD", "1")
    assert gluon_hub.plugins() == []

    plugin = types.SimpleNamespace(
        GLUON_HUB_API=">=1",
        gluon_hub_models=hookimpl(lambda: [ModelSpec(name="nb_net", factory="tests_core_models:dense_net")]),
    )
    info = gluon_hub.register_plugin(plugin, "notebook")
    assert info.status == "loaded"
    assert gluon_hub.list_models() == ["nb_net"]
    with pytest.raises(PluginError, match="already registered"):
        gluon_hub.register_plugin(plugin, "notebook")
    gluon_hub.unregister_plugin("notebook")
    assert gluon_hub.list_models() == []


def test_strict_mode_reraises(fake_dist, only_fakes, monkeypatch):
    fake_dist("broken", body="raise RuntimeError('boom')\n")
    monkeypatch.setenv("GLUON_HUB_STRICT_PLUGINS", "1")
    with pytest.raises(PluginError, match="boom"):
        gluon_hub.plugins()


def test_strict_mode_failure_leaves_no_half_discovered_hub(fake_dist, only_fakes, monkeypatch):
    fake_dist("broken", body="raise RuntimeError('boom')\n")
    fake_dist("good")
    monkeypatch.setenv("GLUON_HUB_STRICT_PLUGINS", "1")
    with pytest.raises(PluginError, match="boom"):
        gluon_hub.list_models()
    with pytest.raises(PluginError, match="boom"):  # not a quiet, partial answer
        gluon_hub.list_models()
    monkeypatch.delenv("GLUON_HUB_STRICT_PLUGINS")
    assert gluon_hub.list_models() == ["good_net"]
    assert statuses()["broken"].status == "failed"


def test_unknown_name_suggests_close_matches(fake_dist, only_fakes):
    fake_dist("alpha", models=[("zebranet50_v1d", "demo"), ("zebranet18_v1", "demo")])
    with pytest.raises(UnknownNameError, match="did you mean: zebranet50_v1d"):
        gluon_hub.load("zebranet50_v1")
    with pytest.raises(KeyError):  # UnknownNameError is a KeyError
        gluon_hub.info("zzz")


def use_geo_index(folder) -> None:
    """Point the hub at an index naming a plugin ``geo`` (distribution gluon-geo)."""
    index = {
        "schema": "gluon-hub-registry/1",
        "hub_api": "1.0",
        "plugins": [{"name": "geo", "distribution": "gluon-geo", "version": "0.3.0"}],
        "models": [{"name": "satnet", "factory": "gluon_geo.m:satnet", "plugin": "geo",
                    "task": "segmentation"}],
    }
    path = folder / "index.json"
    path.write_text(json.dumps(index))
    gluon_hub.set_index(str(path))


def test_indexed_name_of_a_missing_plugin_gives_the_pip_command(only_fakes, tmp_path):
    use_geo_index(tmp_path)
    with pytest.raises(PluginNotInstalledError, match="pip install gluon-geo"):
        gluon_hub.load("satnet")
    rows = gluon_hub.search("satnet")
    assert [(r["name"], r["installed"], r["distribution"]) for r in rows] == [
        ("satnet", False, "gluon-geo")
    ]


def test_unknown_name_with_a_broken_index_says_why_there_is_no_hint(only_fakes, monkeypatch, tmp_path):
    path = tmp_path / "index.json"
    path.write_text("{broken")
    monkeypatch.setenv("GLUON_HUB_INDEX", str(path))
    with pytest.raises(UnknownNameError, match="no model named 'satnet'.*index could not be read.*JSON"):
        gluon_hub.load("satnet")


def test_search_says_when_an_installed_plugin_is_disabled(fake_dist, monkeypatch, tmp_path):
    fake_dist("geo", models=[("satnet", "segmentation")], distribution="gluon-geo")
    monkeypatch.setenv("GLUON_HUB_DISABLE_PLUGINS", "hub,cv,nlp,contrib,geo")
    use_geo_index(tmp_path)
    [row] = gluon_hub.search("satnet")
    assert (row["installed"], row["status"]) == (True, "disabled")


def test_unknown_keyword_arguments_name_the_accepted_ones(fake_dist, only_fakes):
    fake_dist("alpha")
    with pytest.raises(TypeError, match="'unit'.*accepted: units, classes"):
        gluon_hub.load("alpha_net", unit=3)


def test_pretrained_must_name_an_existing_variant(fake_dist, only_fakes):
    fake_dist("alpha")
    with pytest.raises(ValueError, match="no published weights"):
        gluon_hub.load("alpha_net", pretrained=True)


def test_a_weight_variant_brings_the_factory_arguments_it_needs(only_fakes, tmp_path, monkeypatch):
    """Weights saved from a wider model load by tag with no extra argument from the user."""
    mx = gluon_hub.compat.mx
    wide = mx.gluon.nn.HybridSequential()
    wide.add(mx.gluon.nn.Dense(7, activation="relu"), mx.gluon.nn.Dense(3))
    wide.initialize()
    x = mx.nd.ones((1, 6))
    expected = wide(x).asnumpy()
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    wide.save_parameters(str(mirror / "wide.params"))
    monkeypatch.setenv("GLUON_HUB_MIRRORS", str(mirror))
    digest = hashlib.sha256((mirror / "wide.params").read_bytes()).hexdigest()
    variant = gluon_hub.WeightVariant(tag="wide", kwargs={"units": 7},
                                      file=gluon_hub.FileRef(hash=f"sha256:{digest}",
                                                             filename="wide.params"))
    plugin = types.SimpleNamespace(
        GLUON_HUB_API=">=1",
        gluon_hub_models=hookimpl(lambda: [ModelSpec(
            name="var_net", factory="tests_core_models:dense_net", weights=(variant,))]),
    )
    gluon_hub.register_plugin(plugin, "variants")
    net = gluon_hub.load("var_net", pretrained="wide", root=str(tmp_path / "cache"))
    np.testing.assert_allclose(net(x).asnumpy(), expected, rtol=1e-6)
    assert gluon_hub.load("var_net").collect_params()  # the model's own default still builds
    with pytest.raises(Exception, match="shape"):  # the user's argument wins, and must fit
        gluon_hub.load("var_net", pretrained="wide", units=5, root=str(tmp_path / "cache"))


def test_list_filters(fake_dist, only_fakes):
    fake_dist("vision", models=[("resnet_a", "image-classification"), ("segnet", "segmentation")])
    fake_dist("text", models=[("resnet_text", "text-classification")])
    assert gluon_hub.list_models("resnet*") == ["resnet_a", "resnet_text"]
    assert gluon_hub.list_models(task="segmentation") == ["segnet"]
    assert gluon_hub.list_models(plugin="text") == ["resnet_text"]
    assert gluon_hub.list_models("vision/*") == ["resnet_a", "segnet"]
    assert gluon_hub.list_models(pretrained=True) == []
    assert len(gluon_hub.list_models(pretrained=False)) == 3


def test_loaded_model_runs_deterministically_from_saved_parameters(fake_dist, only_fakes, tmp_path):
    fake_dist("alpha")
    mx = gluon_hub.compat.mx
    net = gluon_hub.load("alpha_net")
    x = mx.nd.array(np.random.RandomState(0).rand(2, 6))
    expected = net(x).asnumpy()
    net.save_parameters(str(tmp_path / "p.params"))
    again = gluon_hub.load("alpha_net")
    again.load_parameters(str(tmp_path / "p.params"))
    np.testing.assert_allclose(again(x).asnumpy(), expected, rtol=1e-6)
