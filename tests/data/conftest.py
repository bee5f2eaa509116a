"""Shared fixtures of the data tests; gluonnlp is the test-only reference implementation."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

import gluon_hub.compat  # noqa: F401  (restores the numpy aliases gluonnlp's mxnet import needs)


@pytest.fixture(scope="session")
def nlp() -> Any:
    """GluonNLP 0.10's ``data`` package, imported once, without its deprecation chatter."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import gluonnlp.data

    return gluonnlp.data
