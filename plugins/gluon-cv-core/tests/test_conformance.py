"""The plugin passes gluon_hub's conformance kit, as every published plugin should."""

from __future__ import annotations

from gluon_hub.testing import assert_plugin_conforms


def test_every_spec_is_valid_and_its_metadata_complete():
    assert_plugin_conforms("cv", build_models=False)


def test_models_build_and_give_their_declared_output_shape():
    # Building every model is the parity suite's job; two here exercise the kit's path.
    for pattern in ("resnet50_v1d", "mobilenet0.25"):
        report = assert_plugin_conforms("cv", pattern=pattern)
        assert report.checked.get("built") == 1, f"pattern {pattern!r}: {report}"
