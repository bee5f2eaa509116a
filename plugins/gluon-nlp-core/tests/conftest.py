"""The GluonNLP 0.10 parity reference, as a fixture rather than a module-level import.

GluonNLP imports MXNet, which has no wheel for Python 3.13: the tokenizer and vocabulary tests
that compare with it take this fixture and carry the ``mxnet`` marker, so the MXNet-free CI leg
runs the rest of those files with ``-m "not mxnet"``.
"""

from __future__ import annotations

from types import ModuleType

import pytest


@pytest.fixture(scope="session")
def gluonnlp() -> ModuleType:
    import gluon_hub.compat  # noqa: F401  (numpy aliases for mxnet, before gluonnlp)

    import gluonnlp

    return gluonnlp
