"""``publish`` and ``weights_from_index``: hash-named files and the index a plugin ships."""

from __future__ import annotations

import hashlib
import importlib
import json
import pickle
import sys

import pytest
from tests_publishing_lib import outputs_of

import gluon_hub
from gluon_hub import IndexFormatError, Metric
from gluon_hub.cli import main
from gluon_hub.publishing import (
    SCHEMA,
    ReplacedWeightsWarning,
    parse_metric,
    publish,
    weights_from_index,
)


def test_publish_names_the_file_by_its_sha256_and_writes_the_entry(published):
    out, variant = published
    data = (out / variant.file.filename).read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    assert variant.file.hash == f"sha256:{digest}"
    assert variant.file.filename == f"tiny_pub-{digest[:12]}.params"
    assert variant.file.size == len(data)
    assert variant.metrics == (Metric("accuracy", 0.9, "toy", "test"),)
    assert weights_from_index(out / "weights.json") == {"tiny_pub": (variant,)}
    assert sorted(p.name for p in out.iterdir()) == sorted([variant.file.filename, "weights.json"])
    assert gluon_hub.publish is publish and "publish" in gluon_hub.__all__


def test_republishing_a_tag_replaces_it_and_other_tags_are_kept(published, trained_net, tmp_path):
    from gluon_hub.compat import mx

    out, first = published
    other = publish(trained_net, "other_net", out, tag="v1")
    for param in trained_net.collect_params().values():
        param.set_data(param.data() * 2)
    with pytest.warns(ReplacedWeightsWarning, match=r"'tiny_pub' weights tagged 'default'.*left in place"):
        second = publish(trained_net, "tiny_pub", out, metrics=[Metric("accuracy", 0.95, "toy", "test")])
    extra = publish(trained_net, "tiny_pub", out, tag="doubled")
    index = weights_from_index(out / "weights.json")
    assert index == {"tiny_pub": (second, extra), "other_net": (other,)}
    assert second.file.hash != first.file.hash
    assert (out / first.file.filename).exists()  # never deleted: others may still use it
    reloaded = importlib.import_module("tests_publishing_models").tiny_net()
    reloaded.load_parameters(str(out / second.file.filename), ctx=mx.cpu())
    inputs = tmp_path / "x.npy"
    import numpy as np

    np.save(inputs, np.ones((2, 5), "float32"))
    np.testing.assert_allclose(outputs_of(reloaded, inputs), outputs_of(trained_net, inputs))


def test_a_params_file_is_copied_and_a_pickle_is_refused(trained_net, tmp_path):
    params = tmp_path / "trained.params"
    trained_net.save_parameters(str(params))
    variant = publish(params, "tiny_pub", tmp_path / "out")
    assert (tmp_path / "out" / variant.file.filename).read_bytes() == params.read_bytes()

    evil = tmp_path / "evil.params"
    evil.write_bytes(pickle.dumps({"weight": [1.0, 2.0]}))
    with pytest.raises(ValueError, match="pickle"):
        publish(evil, "tiny_pub", tmp_path / "refused")
    assert not any((tmp_path / "refused").iterdir())


def test_bad_names_tags_and_metrics_are_refused_before_writing(trained_net, tmp_path):
    out = tmp_path / "out"
    with pytest.raises(ValueError, match="invalid model name"):
        publish(trained_net, "no/slash", out)
    with pytest.raises(ValueError, match="invalid weight tag"):
        publish(trained_net, "tiny_pub", out, tag="bad tag")
    with pytest.raises(ValueError, match="NAME=VALUE@DATASET"):
        publish(trained_net, "tiny_pub", out, metrics=["accuracy=0.9"])
    with pytest.raises(ValueError, match="finite"):
        publish(trained_net, "tiny_pub", out, metrics=[Metric("acc", float("nan"), "toy", "test")])
    assert not out.exists()


def test_parse_metric():
    assert parse_metric("top-1=0.93@imdb:test", source="author") == Metric(
        "top-1", 0.93, "imdb", "test", "author")
    assert parse_metric("bleu=27.1@wmt14") == Metric("bleu", 27.1, "wmt14", "")
    with pytest.raises(ValueError, match="not a number"):
        parse_metric("acc=high@imdb:test")


def _index(tmp_path, document, name="weights.json"):
    path = tmp_path / name
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    return path


def test_weights_from_index_errors_name_the_file(tmp_path, published):
    _, variant = published
    entry = {"tag": "default", "file": {"hash": variant.file.hash, "filename": "a.params"}}
    cases = {
        "broken.json": ("{not json", "not valid JSON"),
        "schema.json": ({"schema": "gluon-hub-weights/9", "models": {}}, "gluon-hub-weights/1"),
        "models.json": ({"schema": SCHEMA, "models": []}, "'models' must be an object"),
        "hash.json": ({"schema": SCHEMA, "models": {"m": [{**entry, "file": {
            "hash": "sha256:abc", "filename": "a.params"}}]}}, "entry 0: hash"),
        "tags.json": ({"schema": SCHEMA, "models": {"m": [entry, entry]}}, "tags repeat"),
        "field.json": ({"schema": SCHEMA, "models": {"m": [{**entry, "sha": 1}]}}, "unknown fields"),
    }
    for name, (document, message) in cases.items():
        with pytest.raises(IndexFormatError, match=message) as info:
            weights_from_index(_index(tmp_path, document, name))
        assert name in str(info.value)
    with pytest.raises(IndexFormatError, match="cannot read"):
        weights_from_index(tmp_path / "missing.json")


def test_a_plugin_reads_its_index_as_a_package_resource(tmp_path, monkeypatch, published):
    out, variant = published
    package = tmp_path / "site" / "thirdparty_weights"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "weights.json").write_bytes((out / "weights.json").read_bytes())
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    resource = importlib.resources.files("thirdparty_weights") / "weights.json"
    assert weights_from_index(resource)["tiny_pub"] == (variant,)
    sys.modules.pop("thirdparty_weights", None)


def test_the_registered_plugin_lists_published_weights_without_importing_mxnet(published, tmp_path):
    """Listing reads weights.json only; a subprocess proves mxnet stays unimported."""
    import subprocess

    out, variant = published
    code = (
        "import sys, gluon_hub; from tests_publishing_models import PublishedWeightsPlugin as P; "
        f"gluon_hub.register_plugin(P({str(out / 'weights.json')!r}), name='thirdparty'); "
        "print(gluon_hub.list_models(pretrained=True), gluon_hub.info('tiny_pub').weights[0].file.hash, "
        "'mxnet' in sys.modules)"
    )
    env = {"PYTHONPATH": str(importlib.import_module("tests_publishing_lib").HELPERS),
           "GLUON_HUB_DISABLE_PLUGIN_AUTOLOAD": "1", "PATH": ""}
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert result.stdout.split() == ["['tiny_pub']", variant.file.hash, "False"], result.stderr


def test_cli_publish_prints_the_entry_and_refuses_a_pickle(trained_net, tmp_path, capsys):
    params = tmp_path / "trained.params"
    trained_net.save_parameters(str(params))
    out = tmp_path / "out"
    argv = ["publish", str(params), "--name", "tiny_pub", "--out", str(out),
            "--metric", "top-1=0.93@toy:test", "--source", "me", "--description", "tiny"]
    assert main(argv) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["name"] == "tiny_pub"
    assert printed["metrics"] == [{"name": "top-1", "value": 0.93, "dataset": "toy",
                                   "split": "test", "source": "me"}]
    assert weights_from_index(out / "weights.json")["tiny_pub"][0].file.hash == printed["file"]["hash"]

    assert main(argv[:-2] + ["--metric", "top-1=0.95@toy:test"]) == 0
    assert "replaced the 'tiny_pub' weights tagged 'default': its metrics" in capsys.readouterr().err

    evil = tmp_path / "model.pkl"
    evil.write_bytes(pickle.dumps([1, 2, 3]))
    assert main(["publish", str(evil), "--name", "tiny_pub", "--out", str(out)]) == 1
    assert "pickle" in capsys.readouterr().err


def test_a_broken_index_in_the_output_folder_stops_publish_before_any_write(trained_net, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "weights.json").write_text('{"schema": "something-else"}')
    with pytest.raises(IndexFormatError, match="weights.json"):
        publish(trained_net, "tiny_pub", out)
    assert [p.name for p in out.iterdir()] == ["weights.json"]
