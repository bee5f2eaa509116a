"""Exceptions of the hub. Each subclasses the builtin a caller would catch and says the fix."""

from __future__ import annotations

__all__ = [
    "HubError",
    "UnknownNameError",
    "AmbiguousNameError",
    "PluginNotInstalledError",
    "MissingDistributionError",
    "PluginError",
    "IndexFormatError",
    "ModelBuildError",
    "LockError",
    "LockFileError",
    "LockDriftError",
    "NewHeadWarning",
    "OptimizeWarning",
    "PluginWarning",
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


class MissingDistributionError(HubError, ImportError):
    """What was asked for lives in a first-party distribution that is not installed
    (``gluon_hub.export`` in gluon-hub-deploy ...); the message is the command that installs it."""


class PluginError(HubError, RuntimeError):
    """A plugin failed to load, is incompatible, is disabled, or registered badly."""


class IndexFormatError(HubError, ValueError):
    """A registry index is not valid JSON or does not follow the schema."""


class ModelBuildError(PluginError):
    """Building a model failed (its factory raised, or its weights do not fit it).

    The message names the model, its plugin and distribution; the original exception is
    chained as ``__cause__``.
    """


class LockError(HubError, ValueError):
    """A load under a lock file asked for what the lock does not pin (another name or tag)."""


class LockFileError(LockError):
    """A lock file does not follow its format; the message gives the file and line."""


class LockDriftError(LockError):
    """An installed plugin's spec no longer matches the lock file: raised before any
    download, naming each difference."""


class PluginWarning(UserWarning):
    """A plugin is installed but unusable (failed, incompatible or disabled).

    Emitted once per plugin on the first lookup; silence it with
    ``warnings.filterwarnings("ignore", category=gluon_hub.PluginWarning)``.
    """


class OptimizeWarning(UserWarning):
    """``optimize`` could not fuse the block and fell back to a plain static hybridize;
    the message says why."""


class NewHeadWarning(UserWarning):
    """``load`` fitted published weights to another class count: the message lists the
    parameters left at their initialisation (also in ``net.gluon_hub_new_head``)."""
