"""gluon_hub: load any MXNet Gluon model, dataset or loss by name, from any plugin.

Importing the hub is cheap: plugins are discovered on first use, and model code (and
mxnet) is imported only when a model is built.
"""

from __future__ import annotations

from ._api import (
    dataset_info,
    get_batchify,
    get_loss,
    info,
    list_batchify,
    list_datasets,
    list_losses,
    list_models,
    load,
    load_dataset,
    plugins,
    register_plugin,
    search,
    unregister_plugin,
)
from ._hub import reset_hub
from ._version import HUB_API_VERSION, __version__
from .errors import (
    AmbiguousNameError,
    HubError,
    IndexFormatError,
    PluginError,
    PluginNotInstalledError,
    UnknownNameError,
)
from .hookspecs import hookimpl
from .specs import (
    BatchifySpec,
    CommandSpec,
    DatasetSpec,
    FileRef,
    InputSpec,
    LossSpec,
    Metric,
    ModelSpec,
    PluginInfo,
    WeightVariant,
)


def set_index(location: str | None) -> None:
    """Use another ``registry.json`` (a path or an http(s) URL) for hints and search."""
    from ._hub import get_hub

    get_hub().set_index(location)


__all__ = [
    "AmbiguousNameError",
    "BatchifySpec",
    "CommandSpec",
    "DatasetSpec",
    "FileRef",
    "HUB_API_VERSION",
    "HubError",
    "IndexFormatError",
    "InputSpec",
    "LossSpec",
    "Metric",
    "ModelSpec",
    "PluginError",
    "PluginInfo",
    "PluginNotInstalledError",
    "UnknownNameError",
    "WeightVariant",
    "__version__",
    "dataset_info",
    "get_batchify",
    "get_loss",
    "hookimpl",
    "info",
    "list_batchify",
    "list_datasets",
    "list_losses",
    "list_models",
    "load",
    "load_dataset",
    "plugins",
    "register_plugin",
    "reset_hub",
    "search",
    "set_index",
    "unregister_plugin",
]
