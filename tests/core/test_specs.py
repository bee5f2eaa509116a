"""Spec dataclasses: validation and JSON round trip."""

from __future__ import annotations

import json
import types

import pytest

import gluon_hub
from gluon_hub import FileRef, InputSpec, Metric, ModelSpec, WeightVariant

SHA1 = "a" * 40
SHA256 = "0123456789abcdef" * 4


def full_spec() -> ModelSpec:
    return ModelSpec(
        name="resnet_demo",
        factory="pkg.models:resnet_demo",
        task="image-classification",
        kwargs={"classes": 10},
        input=InputSpec(shape=(3, 32, 32), layout="NCHW", mean=(0.5, 0.5, 0.5),
                        std=(0.2, 0.2, 0.2), num_classes=10),
        output_shape=(10,),
        weights=(
            WeightVariant(
                tag="cifar10",
                file=FileRef(hash=f"sha1:{SHA1}", filename="models/demo.zip",
                             extract="demo.params"),
                metrics=(Metric("top-1", 91.5, "CIFAR-10", "test", "https://example.org"),),
            ),
        ),
        num_params=1234,
        license="Apache-2.0",
        paper="https://arxiv.org/abs/1512.03385",
        tags=("resnet",),
    )


def test_json_round_trip_is_lossless():
    spec = full_spec()
    data = json.loads(json.dumps(spec.to_dict()))
    assert ModelSpec.from_dict(data) == spec


@pytest.mark.parametrize(
    "bad_hash, fragment",
    [
        (SHA1[:8], "must be written"),
        (f"md5:{'a' * 32}", "algorithm"),
        (f"sha1:{SHA1[:39]}", "prefixes are never accepted"),
        (f"sha256:{SHA1}", "64"),
        (f"sha256:{SHA256.upper()}", "lowercase"),
    ],
)
def test_hashes_must_be_full_and_name_their_algorithm(bad_hash, fragment):
    with pytest.raises(ValueError, match=fragment):
        FileRef(hash=bad_hash, filename="x.params")


def test_file_needs_a_location_inside_the_mirror():
    with pytest.raises(ValueError, match="filename"):
        FileRef(hash=f"sha256:{SHA256}")
    with pytest.raises(ValueError, match="relative path"):
        FileRef(hash=f"sha256:{SHA256}", filename="../etc/passwd")


@pytest.mark.parametrize("name", ["", "cv/resnet", "has space", "-lead"])
def test_names_that_would_break_qualification_are_refused(name):
    with pytest.raises(ValueError, match="invalid model name"):
        ModelSpec(name=name, factory="a.b:c")


def test_factory_must_be_a_module_attribute_string():
    with pytest.raises(ValueError, match="'package.module:attribute'"):
        ModelSpec(name="x", factory="a.b.c")


def test_weight_selection_by_tag():
    spec = full_spec()
    assert spec.weight(True).tag == "cifar10"
    assert spec.weight("cifar10").tag == "cifar10"
    with pytest.raises(KeyError, match="available tags: cifar10"):
        spec.weight("imagenet")
    with pytest.raises(ValueError, match="no published weights"):
        ModelSpec(name="x", factory="a:b").weight(True)


def test_repeated_weight_tags_are_refused():
    variant = full_spec().weights[0]
    with pytest.raises(ValueError, match="tags repeat"):
        ModelSpec(name="x", factory="a:b", weights=(variant, variant))


def test_input_spec_by_name_spec_or_input_spec():
    """Names are looked up by gluon_hub.input_spec; InputSpec.of takes only specs and says so."""
    plugin = types.SimpleNamespace(GLUON_HUB_API=">=1", gluon_hub_models=gluon_hub.hookimpl(lambda: [full_spec()]))
    gluon_hub.register_plugin(plugin, "inputs")
    expected = full_spec().input
    assert gluon_hub.input_spec("resnet_demo") == expected
    assert gluon_hub.input_spec(full_spec()) == expected
    assert gluon_hub.input_spec(expected) is expected
    assert InputSpec.of(full_spec()) == expected
    with pytest.raises(TypeError, match=r"gluon_hub.input_spec\('resnet_demo'\)"):
        InputSpec.of("resnet_demo")
    with pytest.raises(gluon_hub.UnknownNameError, match="no model named 'resnet_dem'"):
        gluon_hub.input_spec("resnet_dem")
    bare = ModelSpec(name="bare", factory="pkg.models:bare")
    with pytest.raises(ValueError, match="declares no input spec"):
        gluon_hub.input_spec(bare)
