"""A plain ``import mxnet`` works in the environment under test (issue 13.4).

CI runs this file in its Python 3.10, 3.11 and 3.12 environments (numpy 1.24 at the
declared floor, and 1.26 where Python 3.12 leaves no older numpy): each starts a fresh
interpreter, as a user's script would, with nothing of the hub imported first.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def python(code: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    # run outside the checkout, so that nothing is found through the current directory
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, cwd=Path(sys.prefix), timeout=120)


def test_plain_import_mxnet_works_on_this_python_and_numpy():
    result = python("import mxnet, numpy; print(mxnet.__version__, numpy.__version__)")
    assert result.returncode == 0, result.stderr[-2000:]
    mxnet_version, numpy_version = result.stdout.split()
    assert mxnet_version == "1.9.1"
    assert numpy_version.startswith("1.")


def test_importing_the_hub_first_changes_nothing():
    result = python("import gluon_hub, mxnet; print(mxnet.nd.ones(2).sum().asscalar())")
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "2.0"


def test_the_pth_hook_imports_nothing_at_interpreter_start():
    code = ("import sys; print('numpy' in sys.modules, 'gluon_hub' in sys.modules, "
            "[getattr(f, '__name__', '') for f in sys.meta_path][:1])")
    result = python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False False ['_RestoreAliasesBeforeMXNet']"
    # and it removes itself once mxnet has been imported
    after = python("import mxnet, sys; print([getattr(f, '__name__', '') for f in sys.meta_path])")
    assert "_RestoreAliasesBeforeMXNet" not in after.stdout


@pytest.mark.parametrize("code, expected", [
    ("import numpy; print(hasattr(numpy, 'bool'))", "False"),  # numpy untouched without mxnet
    ("import mxnet, numpy; print(numpy.bool is bool)", "True"),
])
def test_the_aliases_appear_only_with_mxnet(code, expected):
    result = python(code)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == expected
