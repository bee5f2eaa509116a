"""Publishing weights: hash-named files, the index a plugin ships, mirrors and bundles.

:func:`publish` turns a trained network (or a ``.params`` file) into a file named by its
hash plus an entry in a weights index, ``weights.json``, in one output folder, ready to
upload to any static HTTP host or object store. A plugin ships the index in its package
and builds its specs from it with :func:`weights_from_index`; the hub then fetches the
file by hash from any mirror. :func:`serve` runs such a mirror on this machine, and
:func:`bundle` / :func:`import_bundle` carry weights to machines without a network.

This module imports nothing heavy: plugin modules call :func:`weights_from_index` while
the hub lists models, where mxnet must not be imported; a network passed to
:func:`publish` brings mxnet with it.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from ..errors import HubError, IndexFormatError
from ..specs import FileRef, Metric, WeightVariant, _check_name, _from_jsonable, _to_jsonable

if TYPE_CHECKING:
    from ._bundle import BundleFile
    from ._mirror_server import MirrorServer

__all__ = [
    "BundleError",
    "INDEX_FILENAME",
    "SCHEMA",
    "ReplacedWeightsWarning",
    "bundle",
    "import_bundle",
    "parse_metric",
    "publish",
    "serve",
    "weights_from_index",
]

#: Schema tag of a weights index; a new major version means a format readers must refuse.
SCHEMA = "gluon-hub-weights/1"
#: Name of the weights index ``publish`` writes in its output folder.
INDEX_FILENAME = "weights.json"

_HASH_PREFIX = 12
_METRIC_RE = re.compile(r"^(?P<name>[^=@]+)=(?P<value>[^@]+)@(?P<dataset>[^:@]+)(?::(?P<split>[^:@]+))?$")


class BundleError(HubError, ValueError):
    """A bundle is unsafe, damaged or does not match its manifest; nothing was imported."""


class ReplacedWeightsWarning(UserWarning):
    """``publish`` replaced the entry of a model's tag that the index already had."""


def parse_metric(text: str, source: str = "") -> Metric:
    """Parse ``"NAME=VALUE@DATASET[:SPLIT]"``, the form ``gluon-hub publish --metric`` takes.

    Examples
    --------
    >>> parse_metric("top-1=0.93@imdb:test")
    Metric(name='top-1', value=0.93, dataset='imdb', split='test', source='')
    """
    match = _METRIC_RE.match(text.strip()) if isinstance(text, str) else None
    if match is None:
        raise ValueError(
            f"metric {text!r} must be written NAME=VALUE@DATASET[:SPLIT], "
            "for example 'top-1=0.93@imdb:test'"
        )
    try:
        value = float(match["value"])
    except ValueError:
        raise ValueError(f"metric {text!r}: value {match['value']!r} is not a number") from None
    return _checked_metric(
        Metric(match["name"].strip(), value, match["dataset"].strip(),
               (match["split"] or "").strip(), source)
    )


def _checked_metric(metric: Metric) -> Metric:
    if not isinstance(metric, Metric):
        raise TypeError(f"metrics must be Metric objects or 'NAME=VALUE@DATASET:SPLIT' strings, got {metric!r}")
    if isinstance(metric.value, bool) or not isinstance(metric.value, (int, float)) or not math.isfinite(metric.value):
        raise ValueError(f"metric {metric.name!r}: value must be a finite number, got {metric.value!r}")
    if not metric.name or not metric.dataset:
        raise ValueError(f"metric {metric!r}: give a name and the dataset it was measured on")
    return metric


def _sha256_and_size(path: Path) -> tuple[str, int]:
    from .._cache._hashing import hash_file_sized

    hashes, size = hash_file_sized(path, ["sha256"])
    return hashes["sha256"].partition(":")[2], size


def _check_params_file(path: Path) -> None:
    """Refuse anything but a well-formed MXNet NDArray file (a pickle could run code).

    The cache's structural check reads only the headers, so mxnet is not imported.
    """
    from ..cache import check_params_file

    check_params_file(path)


def _is_block(obj: Any) -> bool:
    return not isinstance(obj, (str, os.PathLike)) and callable(getattr(obj, "save_parameters", None))


def publish(
    net_or_params: Any,
    name: str,
    out_dir: str | os.PathLike[str],
    tag: str = "default",
    metrics: Iterable[Metric | str] = (),
    description: str = "",
    *,
    base_url: str | None = None,
) -> WeightVariant:
    """Write a model's weights as ``<name>-<sha256[:12]>.params`` and record them in the index.

    Parameters
    ----------
    net_or_params : a trained Gluon ``Block`` (saved with ``save_parameters``) or the path
        of a ``.params`` file, which is checked to be an MXNet NDArray file first.
    name : the model name the weights are for, as the plugin's ``ModelSpec`` names it.
    out_dir : folder to upload as-is; created if missing. Its ``weights.json`` is created
        or updated: an existing entry with the same ``tag`` is replaced, with a
        :class:`ReplacedWeightsWarning`; other entries are kept.
    tag : the weight tag, selected by ``load(name, pretrained=tag)``; the first tag listed
        for a model is the one ``pretrained=True`` loads.
    metrics : results the author reports, as :class:`~gluon_hub.Metric` objects or
        ``"NAME=VALUE@DATASET[:SPLIT]"`` strings.
    description : a line on how the weights were trained.
    base_url : where the folder will be uploaded; when given, the entry also carries the
        file's absolute URL, so it can be fetched without a configured mirror.

    Returns
    -------
    WeightVariant
        The entry written to the index; ``variant.file`` names the file by its full sha256.

    Examples
    --------
    >>> import gluon_hub, tempfile
    >>> from gluon_hub.compat import mx
    >>> net = mx.gluon.nn.Dense(2, in_units=3)
    >>> net.initialize()
    >>> out = tempfile.mkdtemp()
    >>> variant = gluon_hub.publish(net, "tiny", out, metrics=["acc=0.5@toy:test"])
    >>> variant.file.filename == f"tiny-{variant.file.digest[:12]}.params"
    True
    """
    _check_name("model", name)
    variant_metrics = tuple(
        parse_metric(m) if isinstance(m, str) else _checked_metric(m) for m in metrics
    )
    _check_name("weight tag", tag)
    if base_url is not None and not re.match(r"^https?://", base_url):
        raise ValueError(f"base_url must be an http(s) URL, got {base_url!r}")
    out = Path(out_dir)
    if (out / INDEX_FILENAME).exists():
        weights_from_index(out / INDEX_FILENAME)  # a broken index fails before any write
    out.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{name}-", suffix=".params.tmp", dir=out)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        if _is_block(net_or_params):
            net_or_params.save_parameters(str(tmp))
        else:
            source = Path(net_or_params)
            if not source.is_file():
                raise FileNotFoundError(f"no params file at {source}")
            _check_params_file(source)
            shutil.copyfile(source, tmp)
        tmp.chmod(0o644)  # mkstemp makes it private; the file is meant to be served
        digest, size = _sha256_and_size(tmp)
        filename = f"{name}-{digest[:_HASH_PREFIX]}.params"
        tmp.replace(out / filename)
    finally:
        tmp.unlink(missing_ok=True)
    urls = (f"{base_url.rstrip('/')}/{filename}",) if base_url else ()
    variant = WeightVariant(
        tag=tag,
        file=FileRef(hash=f"sha256:{digest}", size=size, filename=filename, urls=urls),
        metrics=variant_metrics,
        description=description,
    )
    _update_index(out / INDEX_FILENAME, name, variant)
    return variant


def _update_index(path: Path, name: str, variant: WeightVariant) -> None:
    """Merge one entry into the index, under a lock, replacing the file atomically."""
    from filelock import FileLock

    # The lock lives outside the folder, which is uploaded as it is.
    from .._cache._hashing import hash_bytes

    key = hash_bytes(str(path.resolve()).encode()).partition(":")[2][:16]
    with FileLock(os.path.join(tempfile.gettempdir(), f"gluon-hub-publish-{key}.lock")):
        models = weights_from_index(path) if path.exists() else {}
        variants = list(models.get(name, ()))
        for i, old in enumerate(variants):
            if old.tag == variant.tag:
                if old.file.hash != variant.file.hash:
                    change = (f"{old.file.hash} with {variant.file.hash}; the old file "
                              f"{old.file.filename} is left in place")
                elif old != variant:
                    change = "its metrics or description (same file)"
                else:
                    change = ""
                if change:
                    warnings.warn(
                        f"{path}: replaced the {name!r} weights tagged {variant.tag!r}: {change}",
                        ReplacedWeightsWarning,
                        stacklevel=3,
                    )
                variants[i] = variant
                break
        else:
            variants.append(variant)
        models[name] = tuple(variants)
        document = {
            "schema": SCHEMA,
            "models": {n: [_to_jsonable(v) for v in models[n]] for n in sorted(models)},
        }
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
        tmp.replace(path)


def _read_text(source: Any) -> tuple[str, str]:
    """Text of an index given as a path or an ``importlib.resources`` resource, and its name."""
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        try:
            return path.read_text(encoding="utf-8"), str(path)
        except OSError as exc:
            raise IndexFormatError(f"cannot read weights index {path}: {exc.strerror or exc}") from exc
    if callable(getattr(source, "read_text", None)):  # importlib.resources.abc.Traversable
        try:
            return source.read_text(encoding="utf-8"), str(source)
        except OSError as exc:
            raise IndexFormatError(f"cannot read weights index {source}: {exc}") from exc
    raise TypeError(
        "a weights index is a path or a package resource such as "
        f"importlib.resources.files('my_plugin') / 'weights.json', got {type(source).__name__}"
    )


def _parse_index(document: Any, where: str) -> dict[str, tuple[WeightVariant, ...]]:
    def bad(message: str) -> IndexFormatError:
        return IndexFormatError(f"weights index {where}: {message}")

    if not isinstance(document, Mapping):
        raise bad(f"expected a JSON object with 'schema' and 'models', got {type(document).__name__}")
    if document.get("schema") != SCHEMA:
        raise bad(f"schema is {document.get('schema')!r}, this hub reads {SCHEMA!r}")
    unknown = set(document) - {"schema", "models"}
    if unknown:
        raise bad(f"unknown keys {sorted(unknown)}")
    models = document.get("models")
    if not isinstance(models, Mapping):
        raise bad("'models' must be an object mapping model names to lists of weight entries")
    result: dict[str, tuple[WeightVariant, ...]] = {}
    for name, entries in models.items():
        try:
            _check_name("model", name)
        except ValueError as exc:
            raise bad(str(exc)) from None
        if not isinstance(entries, list) or not entries:
            raise bad(f"model {name!r}: expected a non-empty list of weight entries")
        variants = []
        for i, entry in enumerate(entries):
            try:
                variant = _from_jsonable(WeightVariant, entry)
                if not isinstance(variant.file, FileRef):
                    raise ValueError("entry has no 'file'")
                for metric in variant.metrics:
                    _checked_metric(metric)
            except (TypeError, ValueError) as exc:
                raise bad(f"model {name!r}, entry {i}: {exc}") from None
            variants.append(variant)
        tags = [v.tag for v in variants]
        if len(set(tags)) != len(tags):
            raise bad(f"model {name!r}: weight tags repeat: {tags}")
        result[name] = tuple(variants)
    return result


def weights_from_index(source: Any) -> dict[str, tuple[WeightVariant, ...]]:
    """The weight variants of each model in a weights index that a plugin ships.

    A plugin's ``gluon_hub_models`` hook builds its specs from it, so that publishing new
    weights means shipping a new ``weights.json``, not editing code.

    Parameters
    ----------
    source : the path of a ``weights.json``, or a package resource such as
        ``importlib.resources.files("my_plugin") / "weights.json"``.

    Returns
    -------
    dict
        Model name to its :class:`~gluon_hub.WeightVariant` tuple, in index order (the
        first is what ``pretrained=True`` loads).

    Raises
    ------
    IndexFormatError
        The file is unreadable, not JSON, or not a valid index; the message names it.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> entry = {"tag": "default", "file": {"hash": "sha256:" + "ab" * 32,
    ...          "filename": "tiny-abababababab.params"}}
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "weights.json"
    >>> _ = path.write_text(json.dumps({"schema": SCHEMA, "models": {"tiny": [entry]}}))
    >>> weights_from_index(path)["tiny"][0].file.filename
    'tiny-abababababab.params'
    """
    text, where = _read_text(source)
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise IndexFormatError(f"weights index {where} is not valid JSON: {exc}") from None
    return _parse_index(document, where)


def serve(
    directory: str | os.PathLike[str],
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    verbose: bool = False,
) -> MirrorServer:
    """Serve a folder as a read-only mirror, in a background thread, and return the server.

    The server answers GET and HEAD, byte ranges (206, so downloads resume) and
    ETag/Last-Modified validators; it never lists folders and refuses any path that leads
    outside ``directory``. ``gluon-hub serve`` runs the same server in the foreground.

    Parameters
    ----------
    directory : the mirror folder, for example the output folder of :func:`publish`.
    host : address to listen on; the default loopback address is reachable only from this
        machine. Give a LAN address (or ``0.0.0.0``) to serve other machines.
    port : TCP port; 0 picks a free one (read it from ``server.url``).
    verbose : log each request to stderr.

    Returns
    -------
    MirrorServer
        Already serving; point ``GLUON_HUB_MIRRORS`` at ``server.url`` and call
        ``server.shutdown()`` when done, or use it in a ``with`` block.

    Examples
    --------
    >>> import tempfile, urllib.request
    >>> folder = tempfile.mkdtemp()
    >>> _ = open(f"{folder}/hello.txt", "w").write("hi")
    >>> with serve(folder) as server:
    ...     urllib.request.urlopen(server.url + "hello.txt").read()
    b'hi'
    """
    from ._mirror_server import MirrorServer

    return MirrorServer(directory, host, port, verbose).start()


def bundle(
    models: Sequence[str],
    output: str | os.PathLike[str],
    *,
    from_dir: str | os.PathLike[str] | None = None,
    root: str | os.PathLike[str] | None = None,
    all_tags: bool = False,
) -> list[BundleFile]:
    """Write the weights of some models, with a checked manifest, into one tar file.

    Carry the file to a machine without network access and :func:`import_bundle` it there;
    ``load(name, pretrained=True)`` then works offline.

    Parameters
    ----------
    models : model names, each ``NAME`` (its default weights) or ``NAME:TAG``.
    output : the tar file to write (``.tar.gz`` or ``.tgz`` compresses it); written to a
        temp file first, so a failed run leaves no half bundle.
    from_dir : take the files from this folder (for example ``publish``'s output, whose
        ``weights.json`` also names models no installed plugin provides) instead of
        fetching them through the cache.
    root : the cache to fetch through (default ``GLUON_HUB_HOME``).
    all_tags : bundle every weight tag of the models named without a tag.

    Returns
    -------
    list of BundleFile
        What the bundle holds: member path, sha256, size, FileRef and ``model:tag`` users.
    """
    from ._bundle import write_bundle

    return write_bundle(models, output, from_dir=from_dir, root=root, all_tags=all_tags)


def import_bundle(
    archive: str | os.PathLike[str], root: str | os.PathLike[str] | None = None
) -> list[tuple[BundleFile, Path]]:
    """Verify a bundle completely, then add its files to the cache.

    Links, absolute paths, ``..``, undeclared members, wrong sizes and wrong hashes are
    all refused with a :class:`BundleError` naming the file, before
    anything enters the cache: a damaged bundle leaves the cache as it was.

    Parameters
    ----------
    archive : a file written by :func:`bundle` (``gluon-hub bundle``).
    root : the cache to fill (default ``GLUON_HUB_HOME``).

    Returns
    -------
    list of (BundleFile, Path)
        Each imported file and where it now lies in the cache.
    """
    from ._bundle import read_bundle

    return read_bundle(archive, root=root)
