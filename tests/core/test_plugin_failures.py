"""A broken plugin is never fatal and never silent; building errors say whose code failed.

Plugins here are real installed distributions: ``*.dist-info`` folders with entry points
on a temporary ``sys.path`` (the ``fake_dist`` fixture), and the CLI runs in a subprocess.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
import warnings
from pathlib import Path

import pytest

import gluon_hub
from gluon_hub import (
    AmbiguousNameError,
    ModelBuildError,
    PluginWarning,
    UnknownNameError,
)

HELPERS = Path(__file__).parent / "helpers"


def statuses() -> dict[str, gluon_hub.PluginInfo]:
    return {p.name: p for p in gluon_hub.plugins()}


def cli(*args: str, site: Path, **env: str) -> subprocess.CompletedProcess:
    """``gluon-hub ARGS`` in a fresh process that sees the fake distributions in ``site``."""
    path = os.pathsep.join([str(site), str(HELPERS), os.environ.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, "-m", "gluon_hub.cli", *args], capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": path, **env}, timeout=120,
    )


EXITS_AT_IMPORT = "import sys\nsys.exit('plugin gave up')\n"
RAISES_BASE_EXCEPTION = "class Stop(BaseException):\n    pass\nraise Stop('not an Exception')\n"


# -- item 9: sys.exit() and other BaseExceptions at import -------------------------------------
def test_plugin_calling_sys_exit_or_raising_base_exception_is_recorded_as_failed(
    fake_dist, only_fakes
):
    fake_dist("quitter", body=EXITS_AT_IMPORT)
    fake_dist("stopper", body=RAISES_BASE_EXCEPTION)
    fake_dist("good")
    infos = statuses()
    assert infos["quitter"].status == "failed"
    assert "SystemExit: plugin gave up" in infos["quitter"].error
    assert infos["stopper"].status == "failed" and "Stop: not an Exception" in infos["stopper"].error
    assert gluon_hub.list_models() == ["good_net"]


def test_hook_calling_sys_exit_marks_only_its_plugin_failed(fake_dist, only_fakes):
    fake_dist("hookexit", body="""
        import sys
        from gluon_hub import hookimpl
        GLUON_HUB_API = ">=1"
        @hookimpl
        def gluon_hub_models():
            sys.exit(2)
    """)
    fake_dist("good")
    assert gluon_hub.list_models() == ["good_net"]
    assert "SystemExit: 2" in statuses()["hookexit"].error


def test_cli_list_and_plugins_work_with_a_plugin_that_exits(fake_dist, tmp_path):
    fake_dist("quitter", body=EXITS_AT_IMPORT, distribution="fake-quitter")
    fake_dist("good")
    site = tmp_path / "site"
    listed = cli("list", "good*", site=site)
    assert listed.returncode == 0, listed.stderr
    assert "good/good_net" in listed.stdout
    # never silent, even in a listing: the warning names the plugin, its distribution,
    # the reason and how to skip it
    assert "gluon-hub: warning: plugin 'quitter' (distribution fake-quitter 1.2.3) is failed" in listed.stderr
    assert "SystemExit: plugin gave up" in listed.stderr
    assert "GLUON_HUB_DISABLE_PLUGINS=quitter" in listed.stderr
    shown = cli("plugins", "--json", site=site)
    assert shown.returncode == 0, shown.stderr
    infos = {p["name"]: p for p in json.loads(shown.stdout)}
    assert infos["quitter"]["status"] == "failed" and infos["good"]["status"] == "loaded"
    assert infos["cv"]["status"] == "loaded"  # the first-party plugins are unharmed


def test_listing_with_a_broken_plugin_stays_free_of_mxnet(fake_dist, tmp_path):
    fake_dist("broken", body="raise RuntimeError('boom')\n")
    code = ("import sys, gluon_hub; gluon_hub.list_models(); "
            "assert 'mxnet' not in sys.modules, 'listing imported mxnet'")
    path = os.pathsep.join([str(tmp_path / "site"), os.environ.get("PYTHONPATH", "")])
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": path}, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("PluginWarning") == 1  # points at the caller's line, once
    assert result.stderr.startswith("<string>:1: PluginWarning: plugin 'broken'")


# -- item 10: one warning per unusable plugin, and unknown names mention them ------------------
def test_first_lookup_warns_once_per_unusable_plugin(fake_dist, monkeypatch):
    fake_dist("broken", body="raise RuntimeError('boom at import')\n", distribution="fake-broken")
    fake_dist("future", api=">=2,<3")
    fake_dist("skipped")
    fake_dist("good")
    monkeypatch.setenv("GLUON_HUB_DISABLE_PLUGINS", "hub,cv,nlp,contrib,skipped")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert gluon_hub.list_models() == ["good_net"]
        gluon_hub.list_models()
        gluon_hub.info("good_net")
    messages = [str(w.message) for w in caught if issubclass(w.category, PluginWarning)]
    by_plugin = {m.split("'")[1]: m for m in messages}
    assert len(messages) == len(by_plugin) == 7  # broken, future, skipped and the four disabled
    assert by_plugin["broken"].startswith("plugin 'broken' (distribution fake-broken 1.2.3) is failed")
    assert "RuntimeError: boom at import" in by_plugin["broken"]
    assert "GLUON_HUB_DISABLE_PLUGINS=broken" in by_plugin["broken"]
    assert "is incompatible: supports hub API >=2,<3" in by_plugin["future"]
    assert "is disabled by GLUON_HUB_DISABLE_PLUGINS" in by_plugin["skipped"]
    assert all(w.filename == __file__ for w in caught)  # the user's line, not the hub's


def test_a_hook_failing_later_is_warned_about_too(fake_dist, only_fakes):
    fake_dist("lossfail", body="""
        from gluon_hub import hookimpl
        GLUON_HUB_API = ">=1"
        @hookimpl
        def gluon_hub_losses():
            raise ValueError("bad loss table")
    """)
    gluon_hub.list_models()
    with pytest.warns(PluginWarning, match="plugin 'lossfail' .* is failed: gluon_hub_losses failed"):
        gluon_hub.list_losses()


def test_unknown_name_mentions_plugins_that_could_not_load(fake_dist, only_fakes):
    fake_dist("broken", body="raise RuntimeError('boom')\n")
    fake_dist("good")
    with pytest.raises(UnknownNameError) as excinfo:
        gluon_hub.load("broken_net")
    message = str(excinfo.value)
    assert "plugins that could not be loaded might provide it: broken (failed)" in message
    assert "gluon-hub plugins says why" in message


# -- item 11: unknown hooks and hookimpls with arguments the spec lacks ----------------------
def test_misspelled_hook_rejects_the_plugin_naming_the_hook(fake_dist, only_fakes):
    fake_dist("typo", body="""
        from gluon_hub import hookimpl, ModelSpec
        GLUON_HUB_API = ">=1"
        @hookimpl
        def gluon_hub_modelz():
            return [ModelSpec(name="typo_net", factory="tests_core_models:dense_net")]
        @hookimpl
        def gluon_hub_batchify():
            return []
    """)
    info = statuses()["typo"]
    assert info.status == "failed"
    assert "unknown hook(s) gluon_hub_modelz" in info.error
    assert gluon_hub.list_batchify() == [] and gluon_hub.list_models() == []


def test_hookimpl_with_arguments_the_spec_lacks_is_rejected_whole(fake_dist, only_fakes):
    fake_dist("extra", body="""
        from gluon_hub import hookimpl, BatchifySpec, ModelSpec
        GLUON_HUB_API = ">=1"
        @hookimpl
        def gluon_hub_batchify():
            return [BatchifySpec(name="extra_pad", factory="gluon_hub.data:Pad")]
        @hookimpl
        def gluon_hub_models(config):
            return []
    """)
    info = statuses()["extra"]
    assert info.status == "failed"
    assert "for hook 'gluon_hub_models'" in info.error and "'config'" in info.error
    # pluggy releases before 1.6 kept the hooks registered before the bad one: none may stay
    assert gluon_hub.list_batchify() == []


def test_optional_hook_of_a_newer_api_is_allowed(fake_dist, only_fakes):
    fake_dist("newer", body="""
        from gluon_hub import hookimpl, ModelSpec
        GLUON_HUB_API = ">=1"
        @hookimpl(optionalhook=True)
        def gluon_hub_tokenizers():
            return []
        @hookimpl
        def gluon_hub_models():
            return [ModelSpec(name="newer_net", factory="tests_core_models:dense_net")]
    """)
    assert gluon_hub.list_models() == ["newer_net"]


# -- item 12: errors while building a model name whose code failed ---------------------------
def test_factory_error_names_model_plugin_and_distribution(fake_dist, only_fakes):
    fake_dist("boom", distribution="fake-boom", body="""
        from gluon_hub import hookimpl, ModelSpec
        GLUON_HUB_API = ">=1"
        @hookimpl
        def gluon_hub_models():
            return [ModelSpec(name="boom_net", factory="tests_core_models:dense_net",
                              kwargs={"units": "four"})]
    """)
    with pytest.raises(ModelBuildError) as excinfo:
        gluon_hub.load("boom_net")
    message = str(excinfo.value)
    assert message.startswith(
        "building model 'boom/boom_net' (plugin 'boom' from fake-boom 1.2.3) failed: "
    )
    assert excinfo.value.__cause__ is not None
    assert type(excinfo.value.__cause__).__name__ in message
    with pytest.raises(TypeError, match="accepted: units, classes"):  # the user's mistake stays one
        gluon_hub.load("boom_net", unit=3)


def test_weights_that_do_not_fit_name_parameter_shapes_and_file(fake_dist, only_fakes, tmp_path,
                                                                  monkeypatch):
    mx = gluon_hub.compat.mx
    wide = mx.gluon.nn.HybridSequential()
    wide.add(mx.gluon.nn.Dense(7, activation="relu"), mx.gluon.nn.Dense(3))
    wide.initialize()
    wide(mx.nd.ones((1, 6)))
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    wide.save_parameters(str(mirror / "wide.params"))
    digest = hashlib.sha256((mirror / "wide.params").read_bytes()).hexdigest()
    monkeypatch.setenv("GLUON_HUB_MIRRORS", str(mirror))
    fake_dist("narrow", distribution="fake-narrow", body=f"""
        from gluon_hub import hookimpl, ModelSpec, WeightVariant, FileRef
        GLUON_HUB_API = ">=1"
        @hookimpl
        def gluon_hub_models():
            return [ModelSpec(name="narrow_net", factory="tests_core_models:dense_net",
                              weights=(WeightVariant(tag="wide", file=FileRef(
                                  hash="sha256:{digest}", filename="wide.params")),))]
    """)
    with pytest.raises(ModelBuildError) as excinfo:
        gluon_hub.load("narrow_net", pretrained=True, root=str(tmp_path / "cache"))
    message = str(excinfo.value)
    assert "model 'narrow/narrow_net' (plugin 'narrow' from fake-narrow 1.2.3)" in message
    assert "parameter '0.weight' expects shape (4, ?) but the file has (7, 6)" in message
    assert "parameter '0.bias' expects shape (4,) but the file has (7,)" in message
    assert str(tmp_path / "cache") in message and "wide.params" in message  # the weight file
    assert isinstance(excinfo.value.__cause__, Exception)


# -- issue 13 item 13: a documented preference for bare names --------------------------------
def test_preferred_plugin_wins_a_clash_by_variable_or_config(fake_dist, only_fakes, monkeypatch,
                                                            tmp_path):
    fake_dist("first", models=[("shared_net", "demo")])
    fake_dist("third", models=[("shared_net", "demo")])
    config = tmp_path / "config.json"
    monkeypatch.setenv("GLUON_HUB_CONFIG", str(config))
    with pytest.raises(AmbiguousNameError) as excinfo:
        gluon_hub.info("shared_net")
    message = str(excinfo.value)
    assert "first/shared_net, third/shared_net" in message
    assert "GLUON_HUB_PREFER_PLUGINS=first" in message
    assert f'"prefer_plugins": ["first"] in {config}' in message

    monkeypatch.setenv("GLUON_HUB_PREFER_PLUGINS", "absent,third")
    assert gluon_hub.info("shared_net").plugin == "third"
    assert gluon_hub.info("first/shared_net").plugin == "first"  # qualified names still work
    monkeypatch.delenv("GLUON_HUB_PREFER_PLUGINS")
    config.write_text(json.dumps({"prefer_plugins": ["first"]}))
    assert gluon_hub.info("SHARED_NET").plugin == "first"


# -- issue 13 tidy-ups ------------------------------------------------------------------------
def test_concurrent_first_use_discovers_once(fake_dist, only_fakes):
    fake_dist("slow", body="""
        import time
        time.sleep(0.3)  # a slow import widens the window two threads could share
        from gluon_hub import hookimpl, ModelSpec
        GLUON_HUB_API = ">=1"
        @hookimpl
        def gluon_hub_models():
            return [ModelSpec(name="slow_net", factory="tests_core_models:dense_net")]
    """)
    gluon_hub._hub._default = None  # as at the start of a process
    barrier = threading.Barrier(8)
    hubs, results, errors = [], [], []

    def first_use() -> None:
        try:
            barrier.wait()
            hubs.append(gluon_hub._hub.get_hub())
            results.append(gluon_hub.list_models())
        except BaseException as exc:  # surfaced by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=first_use) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors
    assert len({id(h) for h in hubs}) == 1
    assert results == [["slow_net"]] * 8
    assert [i.status for i in gluon_hub.plugins() if i.name.startswith("slow")] == ["loaded"]


def test_kind_is_one_word_everywhere():
    for kind, spec_type in gluon_hub.specs.SPEC_KINDS.items():
        assert spec_type.kind == kind
    assert gluon_hub.ModelSpec.kind == "models" and gluon_hub.ModelSpec.noun == "model"
    assert gluon_hub.search("resnet50_v1d", kind="models")
    with pytest.raises(ValueError, match="unknown kind 'model'; kinds: models, datasets"):
        gluon_hub.search("resnet50_v1d", kind="model")


def test_count_parameters_is_public_in_testing():
    import gluon_hub.testing

    assert "count_parameters" in gluon_hub.testing.__all__
