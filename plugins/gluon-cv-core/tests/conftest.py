"""Shared helpers of gluon-cv-core's tests: mxnet through the hub's compat shim."""

from __future__ import annotations

import gluon_hub.compat  # noqa: F401  (restores numpy aliases before mxnet/gluoncv load)
