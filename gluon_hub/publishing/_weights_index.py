"""The weights index a plugin ships (``weights.json``): reading it, checking it, and the
merge :func:`~gluon_hub.publishing.publish` writes into it.

Reading imports nothing heavy: plugin modules call :func:`weights_from_index` while the hub
lists models.
"""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
import warnings
from pathlib import Path
from typing import Any, Mapping

from ..errors import IndexFormatError
from ..specs import FileRef, Metric, WeightVariant, _check_name, _from_jsonable, _to_jsonable
from .errors import ReplacedWeightsWarning

#: Schema tag of a weights index; a new major version means a format readers must refuse.
SCHEMA = "gluon-hub-weights/1"
#: Name of the weights index ``publish`` writes in its output folder.
INDEX_FILENAME = "weights.json"

_METRIC_RE = re.compile(r"^(?P<name>[^=@]+)=(?P<value>[^@]+)@(?P<dataset>[^:@]+)(?::(?P<split>[^:@]+))?$")


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


def update_index(path: Path, name: str, variant: WeightVariant, *, quiet: bool = False) -> None:
    """Merge one entry into the index, under a lock, replacing the file atomically;
    ``quiet`` replaces an entry without a warning."""
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
                if change and not quiet:
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
