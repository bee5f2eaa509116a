"""gluon-contrib passes the hub's conformance kit; listing it imports no mxnet."""

from __future__ import annotations

import subprocess
import sys

from gluon_hub.testing import assert_plugin_conforms


def test_contrib_conforms():
    report = assert_plugin_conforms("contrib")
    assert report.checked["built"] == report.checked["models"] == 7
    assert report.checked["losses"] == 3 and report.checked["commands"] == 1
    assert not report.warnings, str(report)


def test_listing_contrib_imports_no_model_code():
    code = (
        "import sys, gluon_hub\n"
        "names = gluon_hub.list_models(plugin='contrib') + gluon_hub.list_losses(plugin='contrib')\n"
        "assert 'textcnn_multichannel' in names and 'lsgan' in names, names\n"
        "heavy = [m for m in ('mxnet', 'gluon_contrib.textcnn', 'gluon_contrib.cyclegan') "
        "if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
