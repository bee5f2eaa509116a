"""The plugin passes gluon_hub's conformance kit, as every published plugin should."""

from __future__ import annotations

from gluon_hub.testing import assert_plugin_conforms


def test_every_spec_is_valid_and_its_metadata_complete():
    assert_plugin_conforms("nlp", build_models=False)


def test_models_build_and_give_their_declared_output_shape():
    # Building every model is the parity suite's job; two here exercise the kit's path.
    for pattern in ("standard_lstm_lm_200", "awd_lstm_lm_600"):
        report = assert_plugin_conforms("nlp", pattern=pattern)
        assert report.checked.get("built") == 1, f"pattern {pattern!r}: {report}"
