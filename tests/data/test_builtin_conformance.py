"""The hub's own plugin (losses, batchify) passes the conformance kit like any other."""

from __future__ import annotations

from gluon_hub.testing import assert_plugin_conforms


def test_builtin_plugin_conforms():
    report = assert_plugin_conforms("hub")
    assert report.checked["losses"] == 4 and report.checked["batchify"] == 6, str(report)
