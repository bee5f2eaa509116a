"""gluon_hub: load any MXNet Gluon model, dataset, word embedding, vocabulary or loss by name, from any plugin.

Importing the hub is cheap: plugins are discovered on first use, and model code (and
mxnet) is imported only when a model is built.
"""

from __future__ import annotations

from ._api import (
    dataset_info,
    embedding_info,
    get_batchify,
    get_loss,
    info,
    input_spec,
    list_batchify,
    list_datasets,
    list_embeddings,
    list_losses,
    list_models,
    list_vocabularies,
    load,
    load_dataset,
    load_embedding,
    load_vocabulary,
    plugins,
    register_plugin,
    search,
    set_index,
    unregister_plugin,
    vocabulary_info,
)
from ._heads import NewHead, head_argument
from ._hub import reset_hub
from ._version import HUB_API_VERSION, __version__
from .errors import (
    AmbiguousNameError,
    HubError,
    IndexFormatError,
    MissingDistributionError,
    ModelBuildError,
    NewHeadWarning,
    OptimizeWarning,
    PluginError,
    PluginNotInstalledError,
    PluginWarning,
    UnknownNameError,
)
from .hookspecs import hookimpl
from .specs import (
    BatchifySpec,
    CommandSpec,
    DatasetSpec,
    EmbeddingSpec,
    FileRef,
    InputSpec,
    LossSpec,
    Metric,
    ModelSpec,
    PluginInfo,
    VocabularySpec,
    WeightVariant,
)

#: Public names whose modules are imported on first access: the cache and publishing
#: pull in requests, filelock and tqdm, which listing and lookups never need.
_LAZY = {
    "cache": ("gluon_hub.cache", None),
    "fetch": ("gluon_hub.cache", "fetch"),
    "publish": ("gluon_hub.publishing", "publish"),
}


def __getattr__(name: str):
    from ._tools import TOOLS, tool

    if name in TOOLS:  # export, optimize, quantize: from gluon-hub-deploy, or its install hint
        return tool(name)
    if name not in _LAZY:
        raise AttributeError(f"module 'gluon_hub' has no attribute {name!r}")
    import importlib

    module_name, attr = _LAZY[name]
    module = importlib.import_module(module_name)
    value = module if attr is None else getattr(module, attr)
    globals()[name] = value
    return value


__all__ = [
    "AmbiguousNameError",
    "BatchifySpec",
    "CommandSpec",
    "DatasetSpec",
    "EmbeddingSpec",
    "FileRef",
    "HUB_API_VERSION",
    "HubError",
    "IndexFormatError",
    "InputSpec",
    "LossSpec",
    "Metric",
    "MissingDistributionError",
    "ModelBuildError",
    "ModelSpec",
    "NewHead",
    "NewHeadWarning",
    "OptimizeWarning",
    "PluginError",
    "PluginInfo",
    "PluginNotInstalledError",
    "PluginWarning",
    "UnknownNameError",
    "VocabularySpec",
    "WeightVariant",
    "__version__",
    "cache",
    "dataset_info",
    "embedding_info",
    "export",
    "fetch",
    "get_batchify",
    "get_loss",
    "head_argument",
    "hookimpl",
    "info",
    "input_spec",
    "list_batchify",
    "list_datasets",
    "list_embeddings",
    "list_losses",
    "list_models",
    "list_vocabularies",
    "load",
    "load_dataset",
    "load_embedding",
    "load_vocabulary",
    "optimize",
    "plugins",
    "publish",
    "quantize",
    "register_plugin",
    "reset_hub",
    "search",
    "set_index",
    "unregister_plugin",
    "vocabulary_info",
]
