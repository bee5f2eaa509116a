"""Declarative specs that plugins return from their hooks.

A spec says everything the hub needs to list, search and document a model, dataset,
loss or batchify function *without importing it*: the factory is a ``"module:attr"``
string imported on first use. Specs are frozen so that a plugin cannot change them after
registration, and they round-trip through JSON for ``registry.json``.

This module imports nothing heavy (no mxnet, no numpy): entry-point modules import it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Mapping

__all__ = [
    "HASH_LENGTHS",
    "import_object",
    "FileRef",
    "Metric",
    "WeightVariant",
    "InputSpec",
    "OnnxPortability",
    "ModelSpec",
    "ExportGraph",
    "DatasetSpec",
    "EmbeddingSpec",
    "VocabularySpec",
    "LossSpec",
    "BatchifySpec",
    "CommandSpec",
    "PluginInfo",
    "SPEC_KINDS",
    "FILE_KINDS",
]

#: Hex digest length of each accepted hash algorithm. sha1 is accepted only because
#: GluonCV and GluonNLP published sha1 hashes; new files should use sha256.
HASH_LENGTHS = {"sha256": 64, "sha1": 40}

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
_FACTORY_RE = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


def _freeze(spec: Any, field_name: str) -> None:
    """Store a sequence field as a tuple, so that a spec can be neither changed nor shared
    mutably; most plugins already pass tuples, which are kept as they are (listing cost)."""
    value = getattr(spec, field_name)
    if type(value) is not tuple:
        object.__setattr__(spec, field_name, tuple(value))


def _check_name(kind: str, name: str) -> None:
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise ValueError(
            f"invalid {kind} name {name!r}: use letters, digits, '_', '.', '-' "
            "(no '/', which separates a plugin from a name)"
        )


def _check_factory(owner: str, factory: str) -> None:
    if not isinstance(factory, str) or not _FACTORY_RE.match(factory):
        raise ValueError(
            f"{owner}: factory must be a 'package.module:attribute' string, got {factory!r}"
        )


@dataclass(frozen=True)
class FileRef:
    """A file known by its hash, fetchable from absolute URLs or from any mirror.

    ``hash`` is ``"<algorithm>:<full hex digest>"`` of the file the caller gets;
    ``filename`` is resolved against the ordered mirror list. When the published file is
    a zip (GluonCV publishes ``{name}-{sha1[:8]}.zip`` holding a ``.params``, and its sha1
    is that of the ``.params``), ``extract`` names the member to keep: ``hash`` and
    ``size`` then describe that member, and ``archive_hash`` the zip, where known. A bare
    member name also finds the one file of that name inside a folder of the zip.
    """

    hash: str
    size: int | None = None
    filename: str | None = None
    urls: tuple[str, ...] = ()
    extract: str | None = None
    archive_hash: str | None = None

    def __post_init__(self) -> None:
        _check_hash(self.hash)
        if self.archive_hash is not None:
            _check_hash(self.archive_hash)
        if self.size is not None and (not isinstance(self.size, int) or self.size < 0):
            raise ValueError(f"file size must be a non-negative int, got {self.size!r}")
        if not self.filename and not self.urls:
            raise ValueError(f"file {self.hash}: give a filename (for mirrors) or urls")
        if self.filename and (self.filename.startswith("/") or ".." in self.filename.split("/")):
            raise ValueError(f"filename {self.filename!r} must be a relative path inside a mirror")
        _freeze(self, "urls")
        for url in self.urls:
            if not isinstance(url, str) or url_scheme(url) not in URL_SCHEMES:
                found = url_scheme(url) if isinstance(url, str) else ""
                scheme = f"scheme {found!r}" if found else "no scheme"
                raise ValueError(
                    f"file {self.hash}: url {url!r} is not an http://, https:// or file:// URL "
                    f"({scheme}; the supported schemes are {', '.join(URL_SCHEMES)}, and a bare "
                    "path belongs in a mirror list)"
                )

    @property
    def algorithm(self) -> str:
        return self.hash.split(":", 1)[0]

    @property
    def digest(self) -> str:
        return self.hash.split(":", 1)[1]


#: The URL schemes the cache fetches from; a ``FileRef`` or a mirror with another is refused.
URL_SCHEMES = ("http", "https", "file")


def url_scheme(value: str) -> str:
    """The scheme of a URL, lowercased; "" for a plain path (a drive letter is no scheme)."""
    match = re.match(r"([A-Za-z][A-Za-z0-9+.\-]*):", value)
    return match.group(1).lower() if match and len(match.group(1)) > 1 else ""


def _check_hash(value: str) -> None:
    algorithm, sep, digest = value.partition(":") if isinstance(value, str) else ("", "", "")
    if not sep or algorithm not in HASH_LENGTHS:
        raise ValueError(
            f"hash {value!r} must be written '<algorithm>:<hex digest>' with algorithm "
            f"one of {sorted(HASH_LENGTHS)}"
        )
    if len(digest) != HASH_LENGTHS[algorithm] or not re.fullmatch(r"[0-9a-f]+", digest):
        raise ValueError(
            f"hash {value!r}: a {algorithm} digest is {HASH_LENGTHS[algorithm]} lowercase hex "
            "characters; prefixes are never accepted"
        )


@dataclass(frozen=True)
class Metric:
    """A reported result, with where it was measured and who reported it."""

    name: str
    value: float
    dataset: str
    split: str
    source: str = ""


@dataclass(frozen=True)
class WeightVariant:
    """One set of published weights for a model, selected by ``tag``.

    ``kwargs`` are factory arguments these weights need on top of the model's own (a
    cased BERT has a larger vocabulary than the uncased default, say), so that
    ``load(name, pretrained=tag)`` builds the architecture the file was saved from.
    """

    tag: str
    file: FileRef
    metrics: tuple[Metric, ...] = ()
    description: str = ""
    kwargs: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _check_name("weight tag", self.tag)
        _freeze(self, "metrics")


@dataclass(frozen=True)
class InputSpec:
    """What a model expects: shape without the batch axis, layout, and preprocessing.

    ``labels`` is a ``"module:attr"`` path to the sequence of class names, imported
    only when labels are needed (for example by ``gluon-hub predict``).
    """

    shape: tuple[int | None, ...] | None = None
    layout: str = ""
    dtype: str = "float32"
    mean: tuple[float, ...] | None = None
    std: tuple[float, ...] | None = None
    resize: int | None = None
    crop: int | None = None
    num_classes: int | None = None
    labels: str | None = None

    def __post_init__(self) -> None:
        for name in ("shape", "mean", "std"):
            if getattr(self, name) is not None:
                _freeze(self, name)

    @classmethod
    def of(cls, model: ModelSpec | InputSpec) -> InputSpec:
        """The input spec of a model's spec, or ``model`` itself: what preprocessing code
        accepts, so that users may pass whichever they hold. A model *name* is looked up by
        :func:`gluon_hub.input_spec`: specs are contracts and never ask the hub."""
        if isinstance(model, InputSpec):
            return model
        if isinstance(model, str):
            raise TypeError(f"InputSpec.of takes a ModelSpec or an InputSpec; for the model named "
                            f"{model!r} use gluon_hub.input_spec({model!r})")
        if not isinstance(model, ModelSpec):
            raise TypeError(f"expected a ModelSpec or InputSpec, got {type(model).__name__}")
        if model.input is None:
            raise ValueError(f"model {model.qualified_name!r} declares no input spec, so its preprocessing is "
                             "unknown; pass an InputSpec(crop=..., mean=..., std=...) instead")
        return model.input


@dataclass(frozen=True)
class _Spec:
    name: str
    factory: str
    description: str = ""
    #: Qualifying plugin name; filled in by the hub at registration, never by the plugin.
    plugin: str = ""

    def __post_init__(self) -> None:
        _check_name(self.noun, self.name)
        _check_factory(f"{self.noun} {self.name!r}", self.factory)

    #: The spec's kind, one word everywhere: the key in ``registry.json`` and
    #: :data:`SPEC_KINDS`, the ``kind=`` of ``search`` and ``--kind`` of the CLI.
    kind = "specs"
    #: What one spec is called in messages.
    noun = "spec"

    @property
    def qualified_name(self) -> str:
        return f"{self.plugin}/{self.name}" if self.plugin else self.name

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict; the inverse of :meth:`from_dict`."""
        return _to_jsonable(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]):
        return _from_jsonable(cls, data)


#: The values of :attr:`OnnxPortability.status`.
ONNX_STATUSES = ("exportable", "blocked")


@dataclass(frozen=True)
class OnnxPortability:
    """Whether a model's graph leaves MXNet as ONNX, as last measured on this spec.

    Measured, not declared: ``gluon-hub portability --write`` (gluon-hub-deploy) exports
    the model with random weights, runs it in onnxruntime at two input sizes and writes
    one row per model into its plugin's ``portability.json``; the hub attaches the row
    to the spec. ``fingerprint`` names the spec fields the measurement depended on, so a
    changed spec shows that its row is out of date.
    """

    status: str
    fingerprint: str
    opset: int | None = None
    #: The exported inputs' shapes, ``None`` where an axis is dynamic.
    input_shapes: tuple[tuple[int | None, ...], ...] = ()
    #: The largest ``max|onnx - mxnet| / max|mxnet|`` over the outputs and both sizes.
    max_rel_diff: float | None = None
    #: For a blocked model: the operator and why it cannot be exported.
    blocker: str | None = None

    def __post_init__(self) -> None:
        if self.status not in ONNX_STATUSES:
            raise ValueError(f"ONNX status must be one of {ONNX_STATUSES}, got {self.status!r}")
        if self.status == "blocked" and not self.blocker:
            raise ValueError("a blocked ONNX row must name its blocker")
        object.__setattr__(self, "input_shapes", tuple(tuple(s) for s in self.input_shapes))


@dataclass(frozen=True)
class ModelSpec(_Spec):
    """A model: its factory, default factory arguments and all its metadata.

    ``input`` describes the first positional input; models that take several (token ids,
    token types and valid lengths for BERT) describe the others in ``extra_inputs``, in
    call order, so that tools such as the conformance kit can feed them.
    """

    task: str = ""
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    input: InputSpec | None = None
    extra_inputs: tuple[InputSpec, ...] = ()
    output_shape: tuple[int | None, ...] | None = None
    weights: tuple[WeightVariant, ...] = ()
    #: Parameters as papers count them: BatchNorm running statistics excluded
    #: (see :func:`gluon_hub.testing.count_parameters`).
    num_params: int | None = None
    license: str = ""
    paper: str = ""
    tags: tuple[str, ...] = ()
    #: ``"module:attr"`` of a function ``(model, input_shape) -> list[ExportGraph]`` for a
    #: model whose forward is no single exportable graph (recurrent states, a key/value
    #: cache, an encoder and a decoder step): ``gluon_hub.export`` writes these graphs instead.
    export_graphs: str | None = None
    #: ``"module:attr"`` of the ONNX runner of the model's task, imported on use by
    #: :func:`gluon_hub.runtime.load` and called as ``runner(session, spec)`` with a
    #: :class:`gluon_hub.runtime.Session`: the task's pre- and post-processing in numpy (and
    #: Pillow), never MXNet. ``None``: the model has no runner. A runner whose ``graphs``
    #: attribute names several graphs gets a ``{graph: Session}`` dict in place of the session.
    runner: str | None = None
    #: Filled in by the hub from the plugin's ``portability.json``; plugins leave it unset.
    onnx: OnnxPortability | None = None

    kind, noun = "models", "model"

    def __post_init__(self) -> None:
        super().__post_init__()
        _freeze(self, "weights")
        _freeze(self, "tags")
        _freeze(self, "extra_inputs")
        if self.output_shape is not None:
            _freeze(self, "output_shape")
        tags = [w.tag for w in self.weights]
        if len(set(tags)) != len(tags):
            raise ValueError(f"model {self.name!r}: weight tags repeat: {tags}")

    @property
    def pretrained(self) -> bool:
        return bool(self.weights)

    def weight(self, tag: bool | str = True) -> WeightVariant:
        """The weight variant for ``pretrained=tag`` (``True`` means the first listed)."""
        if not self.weights:
            raise ValueError(
                f"model {self.qualified_name!r} has no published weights; "
                "load it with pretrained=False"
            )
        if tag is True:
            return self.weights[0]
        for variant in self.weights:
            if variant.tag == tag:
                return variant
        raise KeyError(
            f"model {self.qualified_name!r} has no weights tagged {tag!r}; "
            f"available tags: {', '.join(w.tag for w in self.weights)}"
        )

    def class_names(self, num_classes: int) -> list[str]:
        """The names behind ``input.labels`` when there are exactly ``num_classes`` of them,
        else ``class <i>``: what printouts and label files show for each output."""
        path = self.input.labels if self.input is not None else None
        if path:
            from ._factory import import_object

            names = [str(n) for n in import_object(path, f"the labels of model {self.qualified_name!r}")]
            if len(names) == num_classes:
                return names
        return [f"class {i}" for i in range(num_classes)]


@dataclass(frozen=True)
class ExportGraph:
    """One graph a model is exported as, returned by the function ``ModelSpec.export_graphs``
    names: a ``HybridBlock`` sharing the model's parameters whose outputs equal the model's.

    ``input_shapes`` are the shapes to trace at (batch axis included); ``dynamic_shapes``
    repeat them with ``None`` on the axes the graph leaves free (batch, sequence, cache
    length), or are empty when every axis is fixed.
    """

    name: str
    block: Any
    input_shapes: tuple[tuple[int, ...], ...]
    dtypes: tuple[str, ...]
    dynamic_shapes: tuple[tuple[int | None, ...], ...] = ()

    def __post_init__(self) -> None:
        if len(self.dtypes) != len(self.input_shapes):
            raise ValueError(f"graph {self.name!r}: {len(self.dtypes)} dtypes for "
                             f"{len(self.input_shapes)} inputs")
        if self.dynamic_shapes and [len(s) for s in self.dynamic_shapes] != [
                len(s) for s in self.input_shapes]:
            raise ValueError(f"graph {self.name!r}: dynamic_shapes must have the rank of "
                             "input_shapes, input by input")


@dataclass(frozen=True)
class DatasetSpec(_Spec):
    """A dataset; ``files`` are fetched through the cache, ``segments`` name its splits."""

    task: str = ""
    segments: tuple[str, ...] = ()
    files: tuple[FileRef, ...] = ()
    license: str = ""
    paper: str = ""

    kind, noun = "datasets", "dataset"

    def __post_init__(self) -> None:
        super().__post_init__()
        _freeze(self, "segments")
        _freeze(self, "files")


@dataclass(frozen=True)
class _FilesEntry(_Spec):
    """What embeddings and vocabularies share: file(s) fetched through the cache like a
    dataset's ``files``, and ``factory(spec, **kwargs)`` building the plugin's object from
    them, so listing, prefetching, bundling and locking need no plugin code. ``family`` says
    what the file is; ``count`` names the subclass's positive-int size field."""

    family: str = ""
    files: tuple[FileRef, ...] = ()
    license: str = ""
    paper: str = ""
    tags: tuple[str, ...] = ()

    count: ClassVar[str]

    def __post_init__(self) -> None:
        super().__post_init__()
        _freeze(self, "files")
        _freeze(self, "tags")
        if not self.files:
            raise ValueError(f"{self.noun} {self.name!r}: give the file(s) it is loaded from")
        value = getattr(self, self.count)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise ValueError(f"{self.noun} {self.name!r}: {self.count} must be a positive int, got {value!r}")


@dataclass(frozen=True)
class EmbeddingSpec(_FilesEntry):
    """A pretrained word-embedding table (GloVe, fastText, word2vec ...); ``dim`` is the
    vector length where known."""

    dim: int | None = None

    kind, noun, count = "embeddings", "embedding", "dim"


@dataclass(frozen=True)
class VocabularySpec(_FilesEntry):
    """A pretrained vocabulary or tokenizer file (a token list, a SentencePiece model, BPE
    merges ...); ``factory`` builds the plugin's vocabulary or tokenizer object, ``tokens``
    is how many ids it has where known."""

    tokens: int | None = None

    kind, noun, count = "vocabularies", "vocabulary", "tokens"


@dataclass(frozen=True)
class LossSpec(_Spec):
    """A loss block, built by ``gluon_hub.get_loss(name, **kwargs)``."""

    kind, noun = "losses", "loss"


@dataclass(frozen=True)
class BatchifySpec(_Spec):
    """A batchify function (or a class building one)."""

    kind, noun = "batchify", "batchify function"


@dataclass(frozen=True)
class CommandSpec(_Spec):
    """A ``gluon-hub`` subcommand a plugin adds; the factory is ``main(argv) -> int``."""

    kind, noun = "commands", "command"


@dataclass(frozen=True)
class PluginInfo:
    """What the hub knows of one plugin: where it came from and whether it loaded."""

    name: str
    status: str  # "loaded" | "failed" | "incompatible" | "disabled"
    distribution: str | None = None
    version: str | None = None
    module: str | None = None
    error: str | None = None


#: Spec kinds by the key they use in ``registry.json`` and the hook that yields them.
SPEC_KINDS: dict[str, type[_Spec]] = {
    "models": ModelSpec,
    "datasets": DatasetSpec,
    "embeddings": EmbeddingSpec,
    "vocabularies": VocabularySpec,
    "losses": LossSpec,
    "batchify": BatchifySpec,
    "commands": CommandSpec,
}

#: The kinds whose entries are files to fetch: models (their weights) and those whose spec
#: lists ``files`` (datasets, embeddings, vocabularies), in the order a bare name is looked up.
FILE_KINDS = ("models", *(k for k, c in SPEC_KINDS.items() if "files" in c.__dataclass_fields__))

_NESTED: dict[tuple[type, str], type] = {
    (ModelSpec, "input"): InputSpec,
    (ModelSpec, "extra_inputs"): InputSpec,
    (ModelSpec, "weights"): WeightVariant,
    (ModelSpec, "onnx"): OnnxPortability,
    (WeightVariant, "file"): FileRef,
    (WeightVariant, "metrics"): Metric,
    (DatasetSpec, "files"): FileRef,
    (EmbeddingSpec, "files"): FileRef,
    (VocabularySpec, "files"): FileRef,
}


def _to_jsonable(obj: Any) -> Any:
    if hasattr(obj, "__dataclass_fields__"):
        return {f.name: _to_jsonable(getattr(obj, f.name)) for f in fields(obj)}
    if isinstance(obj, (list, tuple)):
        return [_to_jsonable(v) for v in obj]
    if isinstance(obj, Mapping):
        return {str(k): _to_jsonable(v) for k, v in obj.items()}
    return obj


def _from_jsonable(cls: type, data: Mapping[str, Any]) -> Any:
    if not isinstance(data, Mapping):
        raise ValueError(f"expected an object for {cls.__name__}, got {type(data).__name__}")
    known = {f.name for f in fields(cls)}
    unknown = set(data) - known
    if unknown:
        raise ValueError(f"{cls.__name__}: unknown fields {sorted(unknown)}")
    values: dict[str, Any] = {}
    for key, value in data.items():
        nested = _NESTED.get((cls, key))
        if nested is not None and value is not None:
            if isinstance(value, list):
                value = tuple(_from_jsonable(nested, v) for v in value)
            else:
                value = _from_jsonable(nested, value)
        elif isinstance(value, list):
            value = tuple(value)
        values[key] = value
    return cls(**values)


def import_object(path: str, owner: str) -> Any:
    """The object a spec's ``"package.module:attr"`` string names (a factory, a runner, export
    graphs, a plugin's own hook), imported on use as the hub imports them; a failure is a
    :class:`~gluon_hub.errors.PluginError` that names ``owner`` (what pointed there)."""
    from ._factory import import_object as _import

    return _import(path, owner)
