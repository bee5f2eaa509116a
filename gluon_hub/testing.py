"""The conformance kit: check a plugin before publishing it.

A plugin conforms when it loads, its specs are valid and complete (a model says its task,
description, license, paper and input), every model builds and produces the output shape
its spec declares, its declared parameter count is right, and its weight entries are
well formed and, on request, downloadable with the declared size and hash.

From a test suite::

    from gluon_hub.testing import assert_plugin_conforms

    def test_conforms():
        assert_plugin_conforms("my_plugin")

From the shell: ``gluon-hub check-plugin my-plugin-dist``. Findings are collected, never
raised one at a time, so that one run shows everything there is to fix.
"""

from __future__ import annotations

import fnmatch
import importlib.util
import inspect
import re
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any, Iterable, Sequence

from ._factory import import_object
from ._hub import get_hub
from ._manager import LOADED
from .errors import HubError, PluginError
from .specs import SPEC_KINDS, DatasetSpec, FileRef, InputSpec, ModelSpec, WeightVariant

__all__ = [
    "ERROR",
    "WARNING",
    "Finding",
    "Report",
    "check_specs",
    "check_model",
    "check_weight_files",
    "check_plugin",
    "assert_plugin_conforms",
    "count_parameters",
]

ERROR, WARNING = "error", "warning"

_URL_RE = re.compile(r"^https?://[^\s/]+")


@dataclass(frozen=True)
class Finding:
    """One problem: how bad (``"error"`` or ``"warning"``), where, which check, and what to do."""

    severity: str
    subject: str
    check: str
    message: str

    def __str__(self) -> str:
        return f"{self.severity.upper():7} {self.subject} [{self.check}]: {self.message}"


@dataclass
class Report:
    """What :func:`check_plugin` found; ``ok`` when there is no error (warnings allowed)."""

    plugin: str
    distribution: str | None = None
    findings: list[Finding] = field(default_factory=list)
    #: How many entries each step looked at: ``models``, ``built``, ``weights`` ...
    checked: dict[str, int] = field(default_factory=dict)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == ERROR]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == WARNING]

    @property
    def ok(self) -> bool:
        return not self.errors

    def __str__(self) -> str:
        source = f" (distribution {self.distribution})" if self.distribution else ""
        counts = ", ".join(_counted(n, k) for k, n in self.checked.items()) or "nothing"
        lines = [f"plugin {self.plugin!r}{source}: checked {counts}"]
        lines += [f"  {f}" for f in self.findings]
        verdict = "conforms" if self.ok else "does NOT conform"
        errors, warnings = len(self.errors), len(self.warnings)
        lines.append(f"{verdict}: {errors} error{'' if errors == 1 else 's'}, "
                     f"{warnings} warning{'' if warnings == 1 else 's'}")
        return "\n".join(lines)


# -- metadata ------------------------------------------------------------------------


def _subject(spec: Any) -> str:
    return f"{spec.noun} {spec.qualified_name!r}"


def _require(findings: list[Finding], spec: Any, attrs: Sequence[str], severity: str = ERROR) -> None:
    for attr in attrs:
        if not getattr(spec, attr):
            findings.append(Finding(severity, _subject(spec), "metadata",
                                    f"{attr} is empty; set {attr}=... in the spec"))


def _check_file(findings: list[Finding], subject: str, file: FileRef, what: str) -> None:
    for url in file.urls:
        if not _URL_RE.match(url):
            findings.append(Finding(ERROR, subject, "weights",
                                    f"{what}: url {url!r} is not an absolute http(s) URL"))
    if file.size is None:
        findings.append(Finding(WARNING, subject, "weights",
                                f"{what}: size is not given; the cache cannot check it before "
                                "hashing or show download progress"))
    if file.algorithm != "sha256" and file.archive_hash is None and file.extract is None:
        findings.append(Finding(WARNING, subject, "weights",
                                f"{what}: {file.algorithm} hash; publish new files with sha256"))


def _check_variant(findings: list[Finding], spec: ModelSpec, variant: WeightVariant) -> None:
    subject = _subject(spec)
    what = f"weights {variant.tag!r}"
    _check_file(findings, subject, variant.file, what)
    for metric in variant.metrics:
        if not (metric.name and metric.dataset and metric.split):
            findings.append(Finding(ERROR, subject, "weights",
                                    f"{what}: a metric needs a name, a dataset and a split, "
                                    f"got {metric!r}"))
        if not metric.source:
            findings.append(Finding(WARNING, subject, "weights",
                                    f"{what}: metric {metric.name!r} has no source; say where "
                                    "it was measured or reported"))


def _check_location(findings: list[Finding], spec: Any, check: str, path: str) -> None:
    """Check that the module of a ``"module:attr"`` path exists, without importing it (or mxnet)."""
    module = path.partition(":")[0]
    try:
        found = importlib.util.find_spec(module)
    except (ImportError, ValueError) as exc:
        found, reason = None, f"{type(exc).__name__}: {exc}"
    else:
        reason = "no such module"
    if found is None:
        findings.append(Finding(ERROR, _subject(spec), check,
                                f"{check} module {module!r} (of {path!r}) cannot be found ({reason})"))


def check_specs(specs: Iterable[Any], import_factories: bool = False) -> list[Finding]:
    """Findings on the metadata of specs of any kind; imports no model code.

    Parameters
    ----------
    specs : specs as a plugin's hooks return them (their ``plugin`` may be empty).
    import_factories : also import every factory and check that its signature accepts
        the spec's ``kwargs``, and import every model's ``labels`` (this imports model
        code, and so mxnet); otherwise only their modules are looked for.
    """
    findings: list[Finding] = []
    seen: dict[tuple[str, str], int] = {}
    for spec in specs:
        key = (spec.kind, spec.name.lower())
        seen[key] = seen.get(key, 0) + 1
        if seen[key] == 2:
            findings.append(Finding(ERROR, _subject(spec), "metadata",
                                    f"the {spec.noun} name {spec.name!r} is registered more than "
                                    "once (names are case-insensitive)"))
        _require(findings, spec, ("description",))
        if isinstance(spec, ModelSpec):
            _check_model_metadata(findings, spec)
            _check_labels(findings, spec, import_factories)
            for field in _IMPORTED_ON_USE:
                _check_imported_on_use(findings, spec, field, import_factories)
        elif isinstance(spec, DatasetSpec):
            _require(findings, spec, ("task", "license"))
            for file in spec.files:
                _check_file(findings, _subject(spec), file, f"file {file.filename or file.urls[0]!r}")
        if import_factories:
            _check_factory_signature(findings, spec)
        else:
            _check_location(findings, spec, "factory", spec.factory)
    return findings


def _check_model_metadata(findings: list[Finding], spec: ModelSpec) -> None:
    subject = _subject(spec)
    _require(findings, spec, ("task", "license", "paper"))
    if spec.paper and not _URL_RE.match(spec.paper):
        findings.append(Finding(WARNING, subject, "metadata",
                                f"paper {spec.paper!r} is not a URL (link the arXiv or DOI page)"))
    if spec.input is None or spec.input.shape is None:
        findings.append(Finding(ERROR, subject, "metadata",
                                "input=InputSpec(shape=...) is missing: users and the kit "
                                "need the input shape (without the batch axis)"))
    elif spec.input.shape and not spec.input.layout:
        findings.append(Finding(WARNING, subject, "metadata",
                                "input.layout is empty; say 'NCHW', 'NT' ..."))
    for position, extra in enumerate(spec.extra_inputs, start=2):
        if extra.shape is None:
            findings.append(Finding(ERROR, subject, "metadata",
                                    f"extra input {position} has no shape: the kit cannot feed "
                                    "the model (give () for a scalar per sample)"))
    if spec.output_shape is None:
        findings.append(Finding(WARNING, subject, "metadata",
                                "output_shape is not declared, so the output cannot be checked"))
    if spec.num_params is None:
        findings.append(Finding(WARNING, subject, "metadata", "num_params is not declared"))
    for variant in spec.weights:
        _check_variant(findings, spec, variant)


#: Spec fields naming a function imported only on use, and what that function must be: a
#: moved module would otherwise surface only at export, or on a machine without MXNet.
_IMPORTED_ON_USE = {"export_graphs": "a function (model, input_shape) -> graphs",
                    "runner": "a callable (session, spec) -> runner"}


def _check_imported_on_use(findings: list[Finding], spec: ModelSpec, field: str, import_them: bool) -> None:
    """The ``module:object`` a spec field names exists (and, importing, is callable)."""
    path = getattr(spec, field)
    if path is None:
        return
    if not import_them:
        _check_location(findings, spec, field, path)
        return
    try:
        target = import_object(path, f"{field} {path!r}")
    except PluginError as exc:
        findings.append(Finding(ERROR, _subject(spec), field, str(exc)))
        return
    if not callable(target):
        findings.append(Finding(ERROR, _subject(spec), field,
                                f"{field} {path!r} is a {type(target).__name__}, not {_IMPORTED_ON_USE[field]}"))


def _check_labels(findings: list[Finding], spec: ModelSpec, import_them: bool) -> None:
    """Each input's ``labels`` path names as many class names as the input declares classes:
    ``predict`` falls back to ``class <i>`` otherwise, so a stale path would go unnoticed."""
    for input_spec in ([spec.input] if spec.input is not None else []) + list(spec.extra_inputs):
        path = input_spec.labels
        if path is None:
            continue
        if not import_them:
            _check_location(findings, spec, "labels", path)
            continue
        try:
            names = import_object(path, f"labels {path!r}")
        except PluginError as exc:
            findings.append(Finding(ERROR, _subject(spec), "labels", str(exc)))
            continue
        if isinstance(names, str) or not isinstance(names, Sequence):
            findings.append(Finding(ERROR, _subject(spec), "labels",
                                    f"labels {path!r} is a {type(names).__name__}, not a sequence of names"))
        elif input_spec.num_classes is not None and len(names) != input_spec.num_classes:
            findings.append(Finding(ERROR, _subject(spec), "labels",
                                    f"labels {path!r} has {len(names)} names but the input declares "
                                    f"num_classes={input_spec.num_classes}"))


def _check_factory_signature(findings: list[Finding], spec: Any) -> None:
    try:
        factory = import_object(spec.factory, f"factory {spec.factory!r}")
    except PluginError as exc:
        findings.append(Finding(ERROR, _subject(spec), "factory", str(exc)))
        return
    if not callable(factory):
        findings.append(Finding(ERROR, _subject(spec), "factory",
                                f"{spec.factory} is a {type(factory).__name__}, not a callable"))
        return
    kwargs = getattr(spec, "kwargs", None) or {}
    try:
        inspect.signature(factory).bind_partial(**kwargs)
    except TypeError as exc:
        findings.append(Finding(ERROR, _subject(spec), "factory",
                                f"{spec.factory} does not accept the spec's kwargs: {exc}"))
    except ValueError:  # no signature (builtins); nothing to check
        pass


# -- building ------------------------------------------------------------------------


def _batch_axis(input_spec: InputSpec) -> int:
    """Where the batch axis goes: where the layout puts ``N`` (``"TN"`` for time-major
    language models), else first."""
    layout, shape = input_spec.layout, input_spec.shape or ()
    if "N" in layout and len(layout) == len(shape) + 1:
        return layout.index("N")
    return 0


def _example_shape(input_spec: InputSpec, batch_size: int, free_dim: int) -> tuple[int, ...]:
    shape = [free_dim if d is None else d for d in input_spec.shape or ()]
    shape.insert(_batch_axis(input_spec), batch_size)
    return tuple(shape)


def _example_inputs(inputs: Sequence[InputSpec], batch_size: int, free_dim: int) -> list[Any]:
    """One array per declared input: random floats, and ones for integer inputs.

    Ones are valid token ids, token types, class indices and valid lengths alike, where
    zeros would be an empty valid length and random integers could leave a vocabulary.
    """
    from .compat import mx

    arrays = []
    for input_spec in inputs:
        shape = _example_shape(input_spec, batch_size, free_dim)
        dtype = input_spec.dtype or "float32"
        if "int" in dtype:
            arrays.append(mx.nd.ones(shape, dtype=dtype))
        else:
            arrays.append(mx.nd.random.uniform(-1, 1, shape=shape, dtype=dtype))
    return arrays


def _counted(n: int, key: str) -> str:
    """``1 command``, ``3 weight files``: a report's counts read as English."""
    if key == "built":
        return f"{n} built"
    singular = SPEC_KINDS[key].noun if key in SPEC_KINDS else "weight file"
    plural = key if key in SPEC_KINDS else "weight files"
    return f"{n} {singular if n == 1 else plural}"


def count_parameters(net: Any) -> int:
    """Parameters as papers count them: BatchNorm running statistics are state, not weights.

    MXNet marks such state non-differentiable; constants (a detector's anchor boxes) are
    not learned either. Frozen weights (``grad_req="null"``, such as textCNN's static
    embedding) still count.
    """
    from .compat import mx

    return sum(
        p.data().size for p in net.collect_params().values()
        if getattr(p, "_differentiable", True) and not isinstance(p, mx.gluon.Constant)
    )


def _shape_matches(actual: tuple[int, ...], declared: tuple[int | None, ...]) -> bool:
    return len(actual) == len(declared) and all(d is None or a == d for a, d in zip(actual, declared))


def check_model(
    spec: ModelSpec, *, batch_size: int = 1, free_dim: int = 16
) -> tuple[list[Finding], Any]:
    """Build a model without weights, run a batch through it and check the output.

    Dimensions the input spec leaves free (``None``) get ``free_dim``; the batch axis goes
    where the input layout puts ``N`` (first when there is no layout), in the inputs and
    the output alike. Where the model returns several arrays, ``output_shape`` describes
    the first (of nested lists, the first of the first). Returns the findings and the network (``None`` when it could not be built).
    """
    from . import load

    subject = _subject(spec)
    findings: list[Finding] = []
    if batch_size < 1 or free_dim < 1:
        raise ValueError(f"batch_size and free_dim must be positive, got {batch_size}, {free_dim}")
    try:
        net = load(spec.qualified_name)
    except Exception as exc:  # the kit reports whatever the factory raises
        findings.append(Finding(ERROR, subject, "build", f"{type(exc).__name__}: {exc}"))
        return findings, None
    declared = () if spec.input is None else (spec.input, *spec.extra_inputs)
    if not declared or any(i.shape is None for i in declared):
        return findings, net  # the metadata check reports what is missing
    inputs = _example_inputs(declared, batch_size, free_dim)
    try:
        output = net(*inputs)
    except Exception as exc:
        shapes = ", ".join(str(tuple(x.shape)) for x in inputs)
        findings.append(Finding(ERROR, subject, "forward",
                                f"a batch of input shape(s) {shapes} failed: "
                                f"{type(exc).__name__}: {str(exc).splitlines()[0]}"))
        return findings, net
    while isinstance(output, (list, tuple)):  # the first array, however deeply nested
        output = output[0]
    actual = tuple(output.shape)
    axis = _batch_axis(declared[0])  # outputs keep the batch axis where the input has it
    if actual[axis:axis + 1] != (batch_size,):
        findings.append(Finding(ERROR, subject, "output-shape",
                                f"output {actual} does not keep the batch axis at position "
                                f"{axis}, as the input layout {declared[0].layout!r} has it "
                                f"(batch of {batch_size})"))
    elif spec.output_shape is not None and not _shape_matches(
            actual[:axis] + actual[axis + 1:], spec.output_shape):
        findings.append(Finding(ERROR, subject, "output-shape",
                                f"output shape {actual[:axis] + actual[axis + 1:]} (without the "
                                f"batch axis) differs from the declared output_shape "
                                f"{spec.output_shape}"))
    if spec.num_params is not None:
        count = count_parameters(net)
        if count != spec.num_params:
            findings.append(Finding(ERROR, subject, "num-params",
                                    f"the built model has {count:,} parameters, the spec "
                                    f"declares {spec.num_params:,}"))
    return findings, net


def check_weight_files(spec: ModelSpec, net: Any = None, root: str | None = None) -> list[Finding]:
    """Download every weight variant through the cache, which checks its size and hash.

    When ``net`` is given, each file is also loaded into the model, which checks that
    parameter names and shapes match the architecture: into ``net`` itself for variants
    that need no factory arguments of their own, into a model built with them otherwise.
    """
    return _weight_files(spec, net, root)[0]


def _weight_files(spec: ModelSpec, net: Any, root: str | None) -> tuple[list[Finding], set[str]]:
    """:func:`check_weight_files`' findings, and the hashes of the files it fetched and verified."""
    import gluon_hub

    subject = _subject(spec)
    findings: list[Finding] = []
    verified: set[str] = set()
    for variant in spec.weights:
        what = f"weights {variant.tag!r}"
        try:
            path = gluon_hub.cache.fetch_params(variant.file, root=root, progress=False)
        except Exception as exc:
            findings.append(Finding(ERROR, subject, "weights-fetch", f"{what}: {exc}"))
            continue
        verified.add(variant.file.hash)
        if net is None:
            continue
        try:
            target = gluon_hub.load(spec.qualified_name, **variant.kwargs) if variant.kwargs else net
            target.load_parameters(str(path))
        except Exception as exc:
            findings.append(Finding(ERROR, subject, "weights-load",
                                    f"{what}: does not load into the model built with the "
                                    f"spec's kwargs and the variant's {dict(variant.kwargs)}: "
                                    f"{str(exc).splitlines()[0]}"))
    return findings, verified


# -- plugins -------------------------------------------------------------------------


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _resolve(name: str) -> list[Any]:
    infos = get_hub().plugins()
    matches = [i for i in infos if i.name == name]
    if not matches:
        matches = [i for i in infos if i.distribution and _normalize(i.distribution) == _normalize(name)]
    if not matches:
        known = ", ".join(f"{i.name} ({i.distribution or 'registered in-process'})" for i in infos)
        raise PluginError(
            f"no plugin or distribution named {name!r} is installed; known plugins: "
            f"{known or 'none'}. Install it first (pip install -e <project>)"
        )
    return matches


def _check_distribution(findings: list[Finding], info: Any) -> None:
    if info.distribution is None or _normalize(info.distribution) == "gluon-hub":
        return  # in-process plugins have no metadata; the core's own plugin is the core
    try:
        requires = metadata.distribution(info.distribution).requires or []
    except metadata.PackageNotFoundError:
        return
    from packaging.requirements import Requirement

    ranges = [r for r in map(Requirement, requires)
              if _normalize(r.name) == "gluon-hub" and r.marker is None and r.specifier]
    if not ranges:
        findings.append(Finding(WARNING, f"distribution {info.distribution!r}", "packaging",
                                "does not depend on gluon-hub with a version range; add "
                                "'gluon-hub~=X.Y' to its dependencies so the hub can tell "
                                "whether it is compatible before importing it"))


def check_plugin(
    name: str,
    *,
    pattern: str | None = None,
    limit: int | None = None,
    build_models: bool = True,
    batch_size: int = 1,
    free_dim: int = 16,
    check_weights: bool = False,
    root: str | None = None,
) -> Report:
    """Check one installed (or in-process registered) plugin and return the findings.

    Parameters
    ----------
    name : the plugin's name (its entry-point name) or its distribution's name.
    pattern : only check entries whose name matches this shell-style pattern.
    limit : build at most this many models (metadata is still checked for all).
    build_models : ``False`` checks metadata only, without importing model code.
    batch_size, free_dim : the example batch; ``free_dim`` fills free (``None``) axes.
    check_weights : also download every weight file (through the cache, into ``root``)
        and load it into the model.

    Examples
    --------
    >>> from gluon_hub.testing import check_plugin
    >>> check_plugin("contrib", pattern="textcnn_rand").ok
    True
    """
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be >= 0, got {limit}")
    infos = _resolve(name)
    hub = get_hub()
    report = Report(plugin=", ".join(i.name for i in infos), distribution=infos[0].distribution)
    plugin_names = {i.name for i in infos}
    for info in infos:
        if info.status != LOADED:
            report.findings.append(Finding(ERROR, f"plugin {info.name!r}", "load",
                                           f"{info.status}: {info.error}"))
        if info.distribution:
            _check_distribution(report.findings, info)
    for (_hook, plugin), error in sorted(hub.manager.hook_errors.items()):
        if plugin in plugin_names:
            report.findings.append(Finding(ERROR, f"plugin {plugin!r}", "hook", error))
    specs = _plugin_specs(report, plugin_names, pattern)
    report.findings += check_specs(specs, import_factories=build_models)
    verified: set[str] = set()
    if build_models:
        # a model whose factory cannot be imported or called has already been reported
        unbuildable = {f.subject for f in report.findings if f.check == "factory"}
        models = [s for s in specs if isinstance(s, ModelSpec) and _subject(s) not in unbuildable]
        verified = _build_models(report, models, limit, batch_size, free_dim, check_weights, root)
    elif check_weights:
        for spec in specs:
            if isinstance(spec, ModelSpec) and spec.weights:
                verified |= _check_weights(report, spec, None, root)
    _check_against_index(report, specs, infos[0].distribution, verified)
    return report


def _check_weights(report: Report, spec: ModelSpec, net: Any, root: str | None) -> set[str]:
    findings, verified = _weight_files(spec, net, root)
    report.findings += findings
    report.checked["weights"] = report.checked.get("weights", 0) + len(spec.weights)
    return verified


def _check_against_index(
    report: Report, specs: list[Any], distribution: str | None, verified: set[str],
) -> None:
    """Errors for names the registry index gives to another distribution, and for weight
    files that only the default public mirror could serve but that it does not hold.

    The default mirror holds GluonCV's and GluonNLP's published files, which the index lists
    by hash; any other file with a name and no URL would be looked for there in vain. A file
    that ``check_weights`` fetched and verified (from a mirror the author configured) is
    served somewhere, so it only gets a warning: users need that mirror too.
    """
    from . import _env
    from ._index import read
    from .cache import mirrors

    try:
        index = read(_env.index_location())
    except HubError as exc:
        report.findings.append(Finding(WARNING, f"plugin {report.plugin!r}", "index",
                                       f"names not checked against the registry index: {exc}"))
        return
    mine = _normalize(distribution) if distribution else None
    for spec in specs:
        owner = index.lookup(spec.kind, spec.name)
        if owner and mine and _normalize(owner["distribution"]) != mine:
            report.findings.append(Finding(
                ERROR, _subject(spec), "name",
                f"the registry index ({index.source}) gives the name {spec.name!r} to "
                f"{owner['distribution']} (plugin {owner['plugin']!r}); a bare name would then be "
                "ambiguous for everyone who has both installed: choose another name"))
    published = {w["file"]["hash"] for entry in index.entries("models") for w in entry.get("weights", [])}
    for spec in specs:
        for variant in getattr(spec, "weights", ()):
            ref = variant.file
            if not ref.filename or ref.urls or ref.hash in published:
                continue
            if ref.hash in verified:
                report.findings.append(Finding(
                    WARNING, _subject(spec), "weights",
                    f"weights {variant.tag!r}: file {ref.filename!r} has no URL; --check-weights "
                    "verified it from this cache or the mirrors configured here "
                    f"({', '.join(mirrors())}), and users will need such a mirror in "
                    "GLUON_HUB_MIRRORS; give urls=(...) or publish with 'gluon-hub publish "
                    "--base-url URL' to spare them that"))
            else:
                report.findings.append(Finding(
                    ERROR, _subject(spec), "weights",
                    f"weights {variant.tag!r}: file {ref.filename!r} has no URL, so it would be "
                    "looked for on the default public mirror, which does not have it; give "
                    "urls=(...), publish with 'gluon-hub publish --base-url URL', or check "
                    "it from your own mirror with --check-weights and GLUON_HUB_MIRRORS=URL"))


def _plugin_specs(report: Report, plugin_names: set[str], pattern: str | None) -> list[Any]:
    hub = get_hub()
    specs: list[Any] = []
    for kind in hub.manager.HOOK_KINDS:
        hub.catalog(kind)  # discovers plugins and calls the hooks
        others: dict[str, list[str]] = {}
        for spec in hub.manager.specs(kind):
            if spec.plugin not in plugin_names:
                others.setdefault(spec.name.lower(), []).append(spec.plugin)
        mine = [s for s in hub.manager.specs(kind) if s.plugin in plugin_names]
        if pattern:
            mine = [s for s in mine if fnmatch.fnmatch(s.name.lower(), pattern.lower())]
        for spec in mine:
            if spec.name.lower() in others:
                report.findings.append(Finding(
                    WARNING, _subject(spec), "name",
                    f"also provided by plugin(s) {', '.join(sorted(others[spec.name.lower()]))}; "
                    f"users must write {spec.qualified_name!r}"))
        if mine:
            report.checked[kind] = len(mine)
        specs += mine
    if not specs:
        where = f" matching {pattern!r}" if pattern else ""
        report.findings.append(Finding(WARNING, f"plugin {report.plugin!r}", "specs",
                                       f"provides no models, datasets, losses or commands{where}"))
    return specs


def _build_models(
    report: Report, models: list[ModelSpec], limit: int | None, batch_size: int, free_dim: int,
    check_weights: bool, root: str | None,
) -> set[str]:
    chosen = models if limit is None else models[:limit]
    built = 0
    verified: set[str] = set()
    for spec in chosen:
        findings, net = check_model(spec, batch_size=batch_size, free_dim=free_dim)
        report.findings += findings
        built += net is not None
        if check_weights and spec.weights:
            verified |= _check_weights(report, spec, net, root)
    report.checked["built"] = built
    return verified


def assert_plugin_conforms(name: str, **options: Any) -> Report:
    """Run :func:`check_plugin` and raise ``AssertionError`` listing every error.

    Meant for a plugin's own test suite; returns the report (warnings included) when the
    plugin conforms. ``options`` are those of :func:`check_plugin`.
    """
    try:
        report = check_plugin(name, **options)
    except HubError as exc:
        raise AssertionError(f"plugin {name!r} cannot be checked: {exc}") from exc
    if not report.ok:
        raise AssertionError(str(report))
    return report
