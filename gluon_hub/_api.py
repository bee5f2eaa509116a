"""The public functions: load, list and describe anything any plugin registers."""

from __future__ import annotations

from typing import Any, Sequence

from ._factory import call_with_checked_kwargs, import_object
from ._hub import get_hub
from .specs import DatasetSpec, LossSpec, ModelSpec, PluginInfo


def _names(specs: Sequence[Any], kind: str) -> list[str]:
    """Bare names, qualified where several plugins share the bare name."""
    counts: dict[str, int] = {}
    for spec in get_hub().catalog(kind):
        counts[spec.name.lower()] = counts.get(spec.name.lower(), 0) + 1
    return [s.qualified_name if counts[s.name.lower()] > 1 else s.name for s in specs]


def list_models(
    pattern: str | None = None,
    *,
    task: str | None = None,
    plugin: str | None = None,
    pretrained: bool | None = None,
) -> list[str]:
    """Names of the installed models, filtered; never imports model code or mxnet.

    Examples
    --------
    >>> import gluon_hub
    >>> "resnet50_v1d" in gluon_hub.list_models("resnet*", pretrained=True)
    True
    """
    specs = get_hub().catalog("models").select(pattern, plugin, task=task)
    if pretrained is not None:
        specs = [s for s in specs if s.pretrained == pretrained]
    return _names(specs, "models")


def info(name: str) -> ModelSpec:
    """The spec of a model, with its metadata, weight variants and reported metrics."""
    return get_hub().catalog("models").get(name)


def _contexts(ctx: Any) -> Any:
    from .compat import mx

    if ctx is None:
        return mx.cpu()
    return ctx


def load(
    name: str,
    pretrained: bool | str = False,
    ctx: Any = None,
    root: str | None = None,
    **kwargs: Any,
) -> Any:
    """Build a model by name and return its Gluon ``Block``, ready to run.

    Parameters
    ----------
    name : a model name, or ``plugin/name`` where several plugins provide it.
    pretrained : ``False`` for random initialisation, ``True`` for the default published
        weights, or a weight tag (see ``info(name).weights``). Weights come through the
        hash-verified cache; the factory arguments a variant needs (its ``kwargs``) are
        applied before yours.
    ctx : an ``mxnet.Context`` or a list of them; default ``mx.cpu()``.
    root : cache directory to use instead of the default (``GLUON_HUB_HOME``).
    **kwargs : passed to the model's factory; unknown ones are refused with the list of
        accepted ones.
    """
    spec = info(name)
    if not isinstance(pretrained, (bool, str)):
        raise TypeError(f"pretrained must be True, False or a weight tag, got {pretrained!r}")
    variant = spec.weight(pretrained) if pretrained is not False else None
    owner = f"model {spec.qualified_name!r}"
    contexts = _contexts(ctx)
    factory = import_object(spec.factory, owner)
    defaults = spec.kwargs if variant is None else {**spec.kwargs, **variant.kwargs}
    net = call_with_checked_kwargs(factory, owner, defaults, kwargs)
    if variant is None:
        net.initialize(ctx=contexts)
    else:
        from ._cache import fetch_params

        net.load_parameters(str(fetch_params(variant.file, root=root)), ctx=contexts)
    return net


def plugins() -> list[PluginInfo]:
    """Name, version, distribution, status and error of every plugin the hub has seen."""
    return get_hub().plugins()


def register_plugin(plugin: Any, name: str | None = None, **meta: Any) -> PluginInfo:
    """Register a plugin object in this process (a notebook, a test); returns its status."""
    return get_hub().register(plugin, name, **meta)


def unregister_plugin(name: str) -> None:
    """Remove a plugin registered in this process or found through entry points."""
    get_hub().unregister(name)


def list_datasets(
    pattern: str | None = None, *, task: str | None = None, plugin: str | None = None
) -> list[str]:
    """Names of the installed datasets."""
    return _names(get_hub().catalog("datasets").select(pattern, plugin, task=task), "datasets")


def dataset_info(name: str) -> DatasetSpec:
    """The spec of a dataset."""
    return get_hub().catalog("datasets").get(name)


def load_dataset(name: str, segment: str | None = None, root: str | None = None, **kwargs: Any) -> Any:
    """Build a dataset by name, for example ``load_dataset("squad", segment="train", version="1.1")``.

    Its files come through the cache, or from ``root`` where the user already has them.
    """
    spec = dataset_info(name)
    if segment is not None and spec.segments and segment not in spec.segments:
        raise ValueError(
            f"dataset {spec.qualified_name!r} has no segment {segment!r}; "
            f"segments: {', '.join(spec.segments)}"
        )
    if segment is not None:
        kwargs["segment"] = segment
    if root is not None:
        kwargs["root"] = root
    owner = f"dataset {spec.qualified_name!r}"
    return call_with_checked_kwargs(import_object(spec.factory, owner), owner, {}, kwargs)


def list_losses(pattern: str | None = None, *, plugin: str | None = None) -> list[str]:
    """Names of the available losses."""
    return _names(get_hub().catalog("losses").select(pattern, plugin), "losses")


def get_loss(name: str, **kwargs: Any) -> Any:
    """Build a loss block by name, for example ``get_loss("label_smoothing_ce", epsilon=0.1)``."""
    spec: LossSpec = get_hub().catalog("losses").get(name)
    owner = f"loss {spec.qualified_name!r}"
    return call_with_checked_kwargs(import_object(spec.factory, owner), owner, {}, kwargs)


def list_batchify(pattern: str | None = None, *, plugin: str | None = None) -> list[str]:
    """Names of the registered batchify functions."""
    return _names(get_hub().catalog("batchify").select(pattern, plugin), "batchify")


def get_batchify(name: str, **kwargs: Any) -> Any:
    """Build a registered batchify function by name."""
    spec = get_hub().catalog("batchify").get(name)
    owner = f"batchify {spec.qualified_name!r}"
    return call_with_checked_kwargs(import_object(spec.factory, owner), owner, {}, kwargs)


def search(query: str, kind: str = "models") -> list[dict[str, Any]]:
    """Entries of the installed plugins and of the registry index matching ``query``.

    Each row says whether the entry is installed and, if not, which distribution to
    ``pip install``; ``status`` says why an entry of an installed plugin is not usable
    (its plugin is disabled, failed or incompatible). Every word of the query must appear
    in the name, task, description, tags or plugin name.
    """
    hub = get_hub()
    words = query.lower().split()
    rows: dict[str, dict[str, Any]] = {}

    def matches(entry: dict[str, Any]) -> bool:
        haystack = " ".join(
            str(entry.get(k, "")) for k in ("name", "task", "description", "plugin", "paper")
        ) + " " + " ".join(entry.get("tags", []))
        return all(w in haystack.lower() for w in words)

    for spec in hub.catalog(kind):
        entry = spec.to_dict()
        if matches(entry):
            info_ = hub.manager.info(spec.plugin)
            rows[spec.qualified_name] = {
                **entry,
                "distribution": info_.distribution if info_ else None,
                "installed": True,
                "status": "loaded",
            }
    index = hub.index()
    for entry in index.entries(kind):
        qualified = f"{entry['plugin']}/{entry['name']}"
        if qualified not in rows and matches(entry):
            info_ = hub.manager.info(entry["plugin"])
            rows[qualified] = {
                **entry,
                "distribution": index.distribution(entry["plugin"]),
                "installed": info_ is not None,
                "status": info_.status if info_ else "not installed",
            }
    return [rows[k] for k in sorted(rows, key=str.lower)]
