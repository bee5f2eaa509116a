"""The conformance kit finds what is wrong with a plugin, and passes a correct one."""

from __future__ import annotations

import hashlib
import http.server
import json
import threading
from functools import partial

import pytest

from gluon_hub import FileRef, InputSpec, LossSpec, Metric, ModelSpec, WeightVariant
from gluon_hub.cli import main as hub_main
from gluon_hub.errors import PluginError
from gluon_hub.testing import ERROR, WARNING, assert_plugin_conforms, check_plugin

SHA256 = "ab" * 32


def good_spec(name: str = "kit_dense", **changes) -> ModelSpec:
    fields = dict(
        name=name, factory="plugin_kit_models:dense_net", task="demo",
        description="a dense layer", kwargs={"classes": 3},
        input=InputSpec(shape=(4,), layout="NC"), output_shape=(3,), num_params=15,
        license="MIT", paper="https://arxiv.org/abs/0000.00000",
    )
    fields.update(changes)
    return ModelSpec(**fields)


def _by_check(report):
    return {(f.severity, f.check) for f in report.findings}


def test_a_correct_plugin_conforms(fake_plugin):
    fake_plugin("kitgood", models=[good_spec()],
                losses=[LossSpec(name="kit_l2", factory="plugin_kit_models:dense_net",
                                 description="a loss")])
    report = assert_plugin_conforms("kitgood")
    assert report.checked == {"models": 1, "losses": 1, "built": 1}
    assert report.findings == [] and report.ok and "conforms" in str(report)


def test_missing_metadata_is_reported_without_building(fake_plugin):
    fake_plugin("kitbare", models=[ModelSpec(name="kit_bare", factory="plugin_kit_models:dense_net")])
    report = check_plugin("kitbare", build_models=False)
    messages = "\n".join(str(f) for f in report.errors)
    for attr in ("description", "task", "license", "paper", "input=InputSpec"):
        assert attr in messages
    assert (WARNING, "metadata") in _by_check(report)  # no output_shape, no num_params
    assert "built" not in report.checked and not report.ok


def test_wrong_output_shape_and_parameter_count_are_errors(fake_plugin):
    fake_plugin("kitwrong", models=[good_spec(output_shape=(5,), num_params=99)])
    report = check_plugin("kitwrong")
    assert _by_check(report) == {(ERROR, "output-shape"), (ERROR, "num-params")}
    assert "(3,)" in str(report) and "15 parameters" in str(report)


def test_every_declared_input_is_fed(fake_plugin):
    two = dict(factory="plugin_kit_models:two_input_net",
               input=InputSpec(shape=(4,), layout="NC"))
    fake_plugin("kitmulti", models=[
        good_spec("kit_two", **two, extra_inputs=(InputSpec(shape=(), dtype="int32"),)),
        good_spec("kit_one_missing", **two),  # the second input is not declared
        good_spec("kit_no_shape", **two, extra_inputs=(InputSpec(dtype="int32"),)),
    ])
    report = check_plugin("kitmulti")
    failing = {f.subject.split("/")[1].rstrip("'"): (f.check, f.message) for f in report.errors}
    assert set(failing) == {"kit_one_missing", "kit_no_shape"}
    assert failing["kit_one_missing"][0] == "forward"
    assert failing["kit_no_shape"] == ("metadata", failing["kit_no_shape"][1])
    assert "extra input 2 has no shape" in failing["kit_no_shape"][1]


def test_the_batch_axis_goes_where_the_layout_puts_it(fake_plugin):
    time_major = dict(factory="plugin_kit_models:time_major_net", num_params=55,
                      input=InputSpec(shape=(None,), layout="TN", dtype="int32"))
    fake_plugin("kittime", models=[
        good_spec("kit_tn", **time_major, output_shape=(None, 3)),
        good_spec("kit_tn_wrong", **time_major, output_shape=(None, 4)),
    ])
    report = check_plugin("kittime", batch_size=2, free_dim=5)
    [error] = report.errors
    assert "kit_tn_wrong" in error.subject and error.check == "output-shape"
    assert "(5, 3)" in error.message  # time kept, the batch of 2 at axis 1 taken out


def test_free_axes_and_batch_size_are_honoured(fake_plugin):
    fake_plugin("kitfree", models=[good_spec(input=InputSpec(shape=(None,), layout="NC"),
                                            output_shape=(None,))])
    assert check_plugin("kitfree", free_dim=4, batch_size=3).ok
    report = check_plugin("kitfree", free_dim=5)  # Dense(in_units=4) refuses 5 features
    assert _by_check(report) == {(ERROR, "forward")}


def test_factories_that_are_missing_or_fail_are_errors(fake_plugin):
    fake_plugin("kitbroken", models=[
        good_spec("kit_missing", factory="plugin_kit_nowhere:net"),
        good_spec("kit_typo", factory="plugin_kit_models:dense_nett"),
        good_spec("kit_raises", factory="plugin_kit_models:broken_net"),
        good_spec("kit_kwargs", kwargs={"units": 3}),
    ])
    metadata_only = check_plugin("kitbroken", build_models=False)
    assert [f.subject for f in metadata_only.errors] == ["model 'kitbroken/kit_missing'"]
    report = check_plugin("kitbroken")
    failing = {f.subject.split("/")[1].rstrip("'"): f.check for f in report.errors}
    assert failing["kit_missing"] == failing["kit_typo"] == failing["kit_kwargs"] == "factory"
    assert failing["kit_raises"] == "build"
    assert "broken on purpose" in str(report)


def test_pattern_and_limit_select_what_is_checked(fake_plugin):
    fake_plugin("kitmany", models=[good_spec(f"kit_net{i}") for i in range(4)]
                + [good_spec("kit_other", output_shape=(9,))])
    assert check_plugin("kitmany", pattern="kit_net*").checked == {"models": 4, "built": 4}
    assert check_plugin("kitmany", limit=2).checked == {"models": 5, "built": 2}
    assert not check_plugin("kitmany").ok


def test_weight_entries_are_checked_for_form(fake_plugin):
    variant = WeightVariant(
        # a local file:// URL is a valid FileRef, but no use to the plugin's users
        tag="demo", file=FileRef(hash=f"sha1:{'a' * 40}", urls=("file:///srv/w.params",)),
        metrics=(Metric("top-1", 50.0, "demo", "test"),))
    fake_plugin("kitweights", models=[good_spec(weights=(variant,))])
    report = check_plugin("kitweights", build_models=False)
    text = str(report)
    assert "'file:///srv/w.params' is not an absolute http(s) URL" in text
    assert "size is not given" in text and "sha256" in text
    assert "has no source" in text
    assert [f.check for f in report.errors] == ["weights"]


def test_duplicate_names_in_one_plugin_are_errors(fake_plugin):
    fake_plugin("kitdup", models=[good_spec("kit_same"), good_spec("KIT_SAME")])
    report = check_plugin("kitdup", build_models=False)
    assert any("more than once" in f.message for f in report.errors)


@pytest.fixture
def weight_server(tmp_path):
    """A real HTTP server on 127.0.0.1 serving tmp_path."""
    handler = partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", tmp_path
    server.shutdown()
    server.server_close()


def test_weights_are_fetched_verified_and_loaded(fake_plugin, weight_server, tmp_path_factory):
    from plugin_kit_models import dense_net

    base, folder = weight_server
    net = dense_net()
    net.initialize()
    net.save_parameters(str(folder / "good.params"))
    data = (folder / "good.params").read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    (folder / "wide.params").write_bytes(data)

    data_size = len(data)

    def variant(tag, filename, hash_=digest, size=data_size):
        return WeightVariant(tag=tag, file=FileRef(hash=f"sha256:{hash_}", size=size,
                                                   urls=(f"{base}/{filename}",)))

    wide = dense_net(classes=5)
    wide.initialize()
    wide.save_parameters(str(folder / "wide.params"))
    wide_data = (folder / "wide.params").read_bytes()
    fake_plugin("kitfetch", models=[
        good_spec("kit_ok", weights=(variant("ok", "good.params"),)),
        good_spec("kit_badhash", weights=(variant("x", "good.params", hash_=SHA256),)),
        # another hash: the cache is content-addressed, so good.params' hash would be a hit
        good_spec("kit_gone", weights=(variant("x", "missing.params",
                                               hashlib.sha256(b"never served").hexdigest()),)),
        good_spec("kit_misfit", weights=(variant("x", "wide.params", hashlib.sha256(wide_data).hexdigest(),
                                                 len(wide_data)),)),
        # the same file, with the factory argument it needs: loads into a model built with it
        good_spec("kit_wide", weights=(WeightVariant(
            tag="wide", kwargs={"classes": 5},
            file=FileRef(hash=f"sha256:{hashlib.sha256(wide_data).hexdigest()}",
                         size=len(wide_data), urls=(f"{base}/wide.params",))),)),
    ])
    root = str(tmp_path_factory.mktemp("cache"))
    assert check_plugin("kitfetch", check_weights=False).ok
    report = check_plugin("kitfetch", check_weights=True, root=root)
    failing = {f.subject.split("/")[1].rstrip("'"): f.check for f in report.errors}
    assert failing == {"kit_badhash": "weights-fetch", "kit_gone": "weights-fetch",
                       "kit_misfit": "weights-load"}
    assert report.checked["weights"] == 5


def test_unknown_plugins_name_the_known_ones(fake_plugin):
    fake_plugin("kitknown", models=[good_spec()])
    with pytest.raises(PluginError, match="kitknown"):
        check_plugin("no-such-plugin")
    with pytest.raises(AssertionError, match="cannot be checked"):
        assert_plugin_conforms("no-such-plugin")


def test_assert_plugin_conforms_lists_every_error(fake_plugin):
    fake_plugin("kitfail", models=[good_spec(num_params=1), good_spec("kit_b", license="")])
    with pytest.raises(AssertionError) as raised:
        assert_plugin_conforms("kitfail")
    assert "num-params" in str(raised.value) and "license is empty" in str(raised.value)


def test_check_plugin_command(fake_plugin, capsys):
    assert hub_main(["check-plugin", "gluon-contrib", "--no-build"]) == 0
    assert "conforms" in capsys.readouterr().out
    fake_plugin("kitcli", models=[good_spec(output_shape=(4,))])
    assert hub_main(["check-plugin", "kitcli", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] is False and data["findings"][0]["check"] == "output-shape"
    fake_plugin("kitwarn", models=[good_spec("kit_w", num_params=None)])
    assert hub_main(["check-plugin", "kitwarn"]) == 0
    assert hub_main(["check-plugin", "kitwarn", "--strict"]) == 1
