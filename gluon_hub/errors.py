"""Exceptions of the hub. Each subclasses the builtin a caller would catch and says the fix."""

from __future__ import annotations

__all__ = [
    "HubError",
    "UnknownNameError",
    "AmbiguousNameError",
    "PluginNotInstalledError",
    "PluginError",
    "IndexFormatError",
]


class HubError(Exception):
    """Base class of every error the hub raises on purpose."""


class UnknownNameError(HubError, KeyError):
    """No installed plugin provides this name."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


class AmbiguousNameError(UnknownNameError):
    """Several plugins provide this bare name; qualify it as ``plugin/name``."""


class PluginNotInstalledError(UnknownNameError):
    """The index knows the name, but the distribution that provides it is not installed."""


class PluginError(HubError, RuntimeError):
    """A plugin failed to load, is incompatible, is disabled, or registered badly."""


class IndexFormatError(HubError, ValueError):
    """A registry index is not valid JSON or does not follow the schema."""
