"""The errors and warnings of publishing; each subclasses the builtin a caller would catch."""

from __future__ import annotations

from ..errors import HubError


class BundleError(HubError, ValueError):
    """A bundle is unsafe, damaged or does not match its manifest; nothing was imported."""


class ReplacedWeightsWarning(UserWarning):
    """``publish`` replaced the entry of a model's tag that the index already had."""
