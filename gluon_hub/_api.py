"""The public functions: load, list and describe anything any plugin registers."""

from __future__ import annotations

import contextlib
import os
from typing import Any, Iterator, Sequence

from . import _heads, _index, _lock, _tools, _weightfile
from ._cache._errors import OfflineMissError
from ._factory import call_with_checked_kwargs, check_kwargs, import_object
from ._hub import get_hub
from ._portability import is_portable
from .errors import ModelBuildError
from .specs import DatasetSpec, EmbeddingSpec, InputSpec, LossSpec, ModelSpec, PluginInfo, VocabularySpec


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
    portable: bool | None = None,
) -> list[str]:
    """Names of the installed models, filtered; never imports model code or mxnet.

    ``portable=True`` keeps the models whose ONNX export was measured to match MXNet on
    their current spec (``gluon-hub info NAME`` shows the row), ``False`` the others.

    Examples
    --------
    >>> import gluon_hub
    >>> "resnet50_v1d" in gluon_hub.list_models("resnet*", pretrained=True)
    True
    """
    specs = get_hub().catalog("models").select(pattern, plugin, task=task)
    if pretrained is not None:
        specs = [s for s in specs if s.pretrained == pretrained]
    if portable is not None:
        specs = [s for s in specs if is_portable(s) == portable]
    return _names(specs, "models")


def info(name: str) -> ModelSpec:
    """The spec of a model, with its metadata, weight variants and reported metrics."""
    return get_hub().lookup("models", name)


def input_spec(model: str | ModelSpec | InputSpec) -> InputSpec:
    """What a model expects as input, from its name, its spec or an ``InputSpec`` itself.

    The name-taking form of :meth:`InputSpec.of`, which preprocessing code calls so that
    users may pass whichever they hold.

    Examples
    --------
    >>> import gluon_hub
    >>> gluon_hub.input_spec("resnet18_v1").crop
    224
    """
    return InputSpec.of(info(model) if isinstance(model, str) else model)


def _contexts(ctx: Any) -> Any:
    from .compat import mx

    if ctx is None:
        return mx.cpu()
    return ctx


def load(
    name: str,
    pretrained: bool | str | os.PathLike[str] = False,
    ctx: Any = None,
    root: str | None = None,
    optimize: bool = False,
    lock: str | os.PathLike[str] | None = None,
    **kwargs: Any,
) -> Any:
    """Build a model by name and return its Gluon ``Block``, ready to run.

    Parameters
    ----------
    name : a model name, or ``plugin/name`` where several plugins provide it.
    pretrained : ``False`` for random initialisation, ``True`` for the default published
        weights, or a weight tag (see ``info(name).weights``). Weights come through the
        hash-verified cache; the factory arguments a variant needs (its ``kwargs``) are
        applied before yours. A path (a ``pathlib.Path``, or a string with a ``/``) loads
        that ``.params`` or ``.safetensors`` file, with the same checks.
    ctx : an ``mxnet.Context`` or a list of them; default ``mx.cpu()``.
    root : cache directory to use instead of the default (``GLUON_HUB_HOME``).
    optimize : compile the model for inference on this machine with
        :func:`gluon_hub.optimize` (oneDNN fusion on a CPU), for a batch-1 input of the
        spec's shape; the model can then no longer be trained and runs fastest at that
        shape. Needs a spec with a fixed input shape.
    lock : a lock file written by ``gluon-hub lock`` (default ``GLUON_HUB_LOCK``): the weights
        are its pinned tag, and a spec that no longer matches it raises
        :class:`~gluon_hub.errors.LockDriftError` before any download (``docs/lock.md``).
    **kwargs : passed to the model's factory; unknown ones are refused with the list of
        accepted ones. With ``pretrained``, another value of the factory's class-count
        argument (``classes``, ``nclass``, ``num_joints`` ..., see :func:`head_argument`)
        loads every published parameter but the class-dependent head, which starts from its
        initializer; a :class:`NewHeadWarning` and ``net.gluon_hub_new_head`` (a
        :class:`NewHead`) say which parameters were left out.
    """
    spec = info(name)
    local = _weightfile.local_path(pretrained)  # a file given by path, not through the cache
    if local is None and not isinstance(pretrained, (bool, str)):
        raise TypeError(f"pretrained must be True, False, a weight tag or a file path, got {pretrained!r}")
    variant = _lock.weight_variant(spec, pretrained, lock) if pretrained is not False and local is None else None
    if variant is not None:
        _weightfile.refuse_other_formats(variant.file.filename, f"the {variant.tag!r} file of {name!r}")
    loading = variant is not None or local is not None
    owner = _owner(spec)
    contexts = _contexts(ctx)
    examples = tools = None
    if optimize:  # before the build, so that a spec without fixed shapes fails fast
        tools = _tools.deploy_package(f"load({name!r}, optimize=True)")
        examples = tools.example_inputs(spec, contexts[0] if isinstance(contexts, (list, tuple)) else contexts)
    factory = _tools.import_factory(spec.factory, owner)  # the install hint where a distribution is missing
    defaults = spec.kwargs if variant is None else {**spec.kwargs, **variant.kwargs}
    check_kwargs(factory, owner, kwargs)
    # another class count than the published weights': every parameter but the head is loaded
    new_head = _heads.change(factory, defaults, kwargs) if loading else None
    build = {**defaults, **kwargs}
    try:
        net = factory(**(build if new_head is None else _heads.build_kwargs(new_head, build)))
        if not loading or new_head is not None:
            _initialize_fresh(net, contexts)
    except Exception as exc:  # the plugin's code: say whose it is, keep the original
        raise ModelBuildError(f"building {owner} failed: {type(exc).__name__}: {exc}") from exc
    if loading:
        from .cache import fetch_params, prefetch_command

        try:
            path = local or fetch_params(variant.file, root=root)  # type: ignore[union-attr]
        except OfflineMissError as miss:  # the cache knows the file; the name is known here
            raise miss.with_command(prefetch_command(spec, variant.tag)) from None  # type: ignore[union-attr]
        with _weightfile.as_params(path) as params:  # a safetensors file's arrays as .params
            try:
                if new_head is None:
                    net.load_parameters(str(params), ctx=contexts)
                else:
                    net = _heads.fit(net, params, contexts, new_head)
            except Exception as exc:
                detail = _weight_mismatch(net, params) if new_head is None else None
                raise ModelBuildError(
                    f"loading the {f'{variant.tag!r} weights' if variant else 'weights file'} {path} "
                    f"into {owner} failed: {detail or f'{type(exc).__name__}: {exc}'.replace(str(params), str(path))}"
                ) from exc
    if tools is not None:
        net = tools.optimize(net, examples)
    return net


def _initialize_fresh(net: Any, ctx: Any) -> None:
    """Initialise every parameter that has no value yet.

    Factories that copy an ImageNet backbone in at build time (``pretrained_base``) hand
    back parameters that already hold values; ``Block.initialize`` would warn once for each
    of them ("already initialized") and keep them anyway. A model that is no Gluon ``Block``
    but has its own ``initialize`` (gluon-hub-deploy's int8 models quantize there) gets that.
    """
    from .compat import mx

    if not isinstance(net, mx.gluon.Block) and callable(getattr(net, "initialize", None)):
        net.initialize(ctx=ctx)
        return
    for param in net.collect_params().values():
        if param._data is None:  # MXNet has no public "has a value" test
            param.initialize(None, ctx, mx.init.Uniform())


def _owner(spec: Any) -> str:
    """A spec named with its plugin and distribution, for errors a plugin must fix."""
    plugin = get_hub().manager.info(spec.plugin)
    dist = f"{plugin.distribution} {plugin.version or ''}".rstrip() if plugin and plugin.distribution else None
    origin = f"plugin {spec.plugin!r}" + (f" from {dist}" if dist else "")
    return f"{spec.noun} {spec.qualified_name!r} ({origin})"


def _weight_mismatch(net: Any, path: Any) -> str | None:
    """Each parameter whose saved shape does not fit the model, or None when all fit.

    MXNet stops at the first misfit with its own internal name; this names every one as
    ``load_parameters`` keys them, with both shapes (``?`` for a size not yet inferred).
    """
    from .compat import mx

    try:
        saved = mx.nd.load(str(path))
    except Exception:  # not an NDArray file: MXNet's own message says more
        return None
    if not isinstance(saved, dict):
        return None
    structural = any("." in key for key in saved)  # else a legacy file keyed by full parameter names
    rows = [(key if structural else param.name, param, value)
            for key, param, value in _heads.file_entries(net, saved) if param is not None and param.shape]
    misfits = []
    for key, param, value in sorted(rows, key=lambda row: row[0]):
        expected, found = tuple(param.shape), tuple(value.shape)
        if not _heads.shape_fits(expected, found):
            sizes = ["?" if e in (0, -1) else str(e) for e in expected]
            shown = f"({', '.join(sizes)}{',' if len(sizes) == 1 else ''})"
            misfits.append(f"parameter {key!r} expects shape {shown} but the file has {found}")
    return "; ".join(misfits) or None


def set_index(location: str | None) -> None:
    """Use another ``registry.json`` (a path or an http(s) URL) for hints and search.

    The index is read and validated at once, so a bad one fails here and not at the
    first lookup; ``None`` goes back to ``GLUON_HUB_INDEX`` or the hub's own index.
    """
    get_hub().set_index(location)


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
    return get_hub().lookup("datasets", name)


def load_dataset(name: str, segment: str | None = None, root: str | None = None,
                 lock: str | os.PathLike[str] | None = None, **kwargs: Any) -> Any:
    """Build a dataset by name, for example ``load_dataset("squad", segment="train", version="1.1")``.

    Its files come through the cache, or from ``root`` where the user already has them.
    Under a lock file (``lock`` or ``GLUON_HUB_LOCK``) its files must be the pinned ones.
    """
    spec = dataset_info(name)
    _lock.check_files(spec, lock)
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
    with _prefetch_hint(spec):
        return call_with_checked_kwargs(import_object(spec.factory, owner), owner, {}, kwargs)


@contextlib.contextmanager
def _prefetch_hint(spec: Any) -> Iterator[None]:
    """An offline miss of one of ``spec``'s files names ``gluon-hub cache prefetch`` of the
    entry (which fetches that file) instead of the bare file's fetch."""
    try:
        yield
    except OfflineMissError as miss:
        if not any(f.hash == miss.file_hash for f in spec.files):
            raise
        from .cache import prefetch_command

        raise miss.with_command(prefetch_command(spec)) from None


def _load_files_entry(spec: Any, root: str | None, lock: str | os.PathLike[str] | None,
                      kwargs: dict[str, Any]) -> Any:
    """An embedding's or vocabulary's object: the lock checked before anything is fetched,
    then the plugin's ``factory(spec, **kwargs)``, unknown ``kwargs`` refused with the
    accepted ones."""
    _lock.check_files(spec, lock)
    owner = f"{spec.noun} {spec.qualified_name!r}"
    loader = import_object(spec.factory, owner)
    if root is not None:
        kwargs["root"] = root
    check_kwargs(loader, owner, kwargs)
    with _prefetch_hint(spec):
        return loader(spec, **kwargs)


def list_embeddings(pattern: str | None = None, *, plugin: str | None = None) -> list[str]:
    """Names of the installed pretrained word embeddings (``"glove*"``, ``"cc.de.*"`` ...).

    Examples
    --------
    >>> import gluon_hub
    >>> "glove.6B.50d" in gluon_hub.list_embeddings("glove.6B.*")
    True
    """
    return _names(get_hub().catalog("embeddings").select(pattern, plugin), "embeddings")


def embedding_info(name: str) -> EmbeddingSpec:
    """The spec of a word embedding: its family, vector length and file(s) with their hashes.

    A function of its own, as :func:`dataset_info` is, so that :func:`info` keeps returning
    a :class:`ModelSpec` whatever the name.
    """
    return get_hub().lookup("embeddings", name)


def load_embedding(name: str, root: str | None = None, lock: str | os.PathLike[str] | None = None,
                   **kwargs: Any) -> Any:
    """The plugin's embedding object for ``name`` (gluon-nlp-core: a ``WordEmbedding``).

    Its file comes through the hash-verified cache (``root`` instead of ``GLUON_HUB_HOME``);
    offline without it, the error names the ``gluon-hub cache prefetch`` command that fetches
    it. Under a lock file (``lock`` or ``GLUON_HUB_LOCK``) its files must be the pinned ones.
    ``kwargs`` go to the plugin's loader (``unknown_token=`` ...); unknown ones are refused
    with the accepted ones.
    """
    return _load_files_entry(embedding_info(name), root, lock, kwargs)


def list_vocabularies(pattern: str | None = None, *, plugin: str | None = None) -> list[str]:
    """Names of the installed pretrained vocabularies and tokenizer files (``"*uncased*"`` ...)."""
    return _names(get_hub().catalog("vocabularies").select(pattern, plugin), "vocabularies")


def vocabulary_info(name: str) -> VocabularySpec:
    """The spec of a vocabulary or tokenizer file: its family, token count and file(s) with
    their hashes (a function of its own, as :func:`embedding_info` is).

    Examples
    --------
    >>> import gluon_hub
    >>> spec = gluon_hub.vocabulary_info("book_corpus_wiki_en_uncased")
    >>> spec.family, spec.tokens
    ('token-list', 30522)
    """
    return get_hub().lookup("vocabularies", name)


def load_vocabulary(name: str, root: str | None = None, lock: str | os.PathLike[str] | None = None,
                    **kwargs: Any) -> Any:
    """The plugin's vocabulary or tokenizer object for ``name`` (gluon-nlp-core: a ``Vocab``
    for a token list, a tokenizer for a SentencePiece model or BPE merges).

    As :func:`load_embedding`: its files come through the hash-verified cache (``root``
    instead of ``GLUON_HUB_HOME``), an offline miss names the ``gluon-hub cache prefetch``
    command that fetches them, a lock file (``lock`` or ``GLUON_HUB_LOCK``) must pin them,
    and ``kwargs`` go to the plugin's loader.
    """
    return _load_files_entry(vocabulary_info(name), root, lock, kwargs)


def list_losses(pattern: str | None = None, *, plugin: str | None = None) -> list[str]:
    """Names of the available losses."""
    return _names(get_hub().catalog("losses").select(pattern, plugin), "losses")


def get_loss(name: str, **kwargs: Any) -> Any:
    """Build a loss block by name, for example ``get_loss("label_smoothing_ce", epsilon=0.1)``."""
    spec: LossSpec = get_hub().lookup("losses", name)
    owner = f"loss {spec.qualified_name!r}"
    return call_with_checked_kwargs(import_object(spec.factory, owner), owner, {}, kwargs)


def list_batchify(pattern: str | None = None, *, plugin: str | None = None) -> list[str]:
    """Names of the registered batchify functions."""
    return _names(get_hub().catalog("batchify").select(pattern, plugin), "batchify")


def get_batchify(name: str, **kwargs: Any) -> Any:
    """Build a registered batchify function by name."""
    spec = get_hub().lookup("batchify", name)
    owner = f"batchify {spec.qualified_name!r}"
    return call_with_checked_kwargs(import_object(spec.factory, owner), owner, {}, kwargs)


def search(query: str, kind: str = "models") -> list[dict[str, Any]]:
    """Entries of the installed plugins and of the registry index matching ``query``.

    Each row says whether the entry is installed and, if not, which distribution provides
    it and the command that installs it here (``install``); ``status`` says why an entry
    of an installed plugin is not usable (its plugin is disabled, failed or incompatible,
    or its installed version lacks the entry). ``index`` names the registry index a row
    comes from (None for installed entries): what an index says never overrides what is
    installed. Every word of the query must appear in the name, task, description, tags
    or plugin name.
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
                "install": None,
                "index": None,
            }
    index = hub.index()
    for entry in index.entries(kind):
        qualified = f"{entry['plugin']}/{entry['name']}"
        if qualified not in rows and matches(entry):
            info_ = hub.manager.info(entry["plugin"])
            if info_ is None:
                distribution = index.distribution(entry["plugin"])
                status, install = "not installed", _index.install_command(distribution or "?")
            else:  # the installed plugin, not the index, says which distribution it is
                distribution, install = info_.distribution, None
                status = info_.status if info_.status != "loaded" else "not in installed version"
            rows[qualified] = {
                **entry,
                "distribution": distribution,
                "installed": info_ is not None,
                "status": status,
                "install": install,
                "index": index.source,
            }
    return [rows[k] for k in sorted(rows, key=str.lower)]
