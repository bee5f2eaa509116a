"""The portability matrix as data: each plugin's ``portability.json`` beside its plugin module.

The rows are measured by ``gluon-hub portability`` (gluon-hub-deploy, which needs MXNet
and onnxruntime); reading them, attaching them to specs, telling a current row from an
out-of-date one and filtering on them needs neither, so it lives in the core.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Iterable, Mapping

from ._cache._hashing import hash_bytes
from .specs import ModelSpec, OnnxPortability, _from_jsonable, _to_jsonable

__all__ = ["PORTABILITY_FILE", "spec_fingerprint", "rows_file", "read_rows", "write_rows",
           "attach", "shapes_text", "is_current", "is_portable"]

PORTABILITY_FILE = "portability.json"
_SCHEMA = "gluon-hub-portability/1"


def spec_fingerprint(spec: ModelSpec) -> str:
    """A short hash of the spec fields an export depends on (not the factory's import
    path, which moves when a plugin reorganises its files)."""
    measured = {
        "kwargs": _to_jsonable(spec.kwargs),
        "input": _to_jsonable(spec.input),
        "extra_inputs": _to_jsonable(spec.extra_inputs),
        "output_shape": _to_jsonable(spec.output_shape),
        "num_params": spec.num_params,
    }
    text = json.dumps(measured, sort_keys=True, separators=(",", ":"))
    return hash_bytes(text.encode("utf-8")).partition(":")[2][:16]


def rows_file(plugin_module: str) -> Path | None:
    """Where the plugin whose hook module is ``plugin_module`` keeps its rows (the file
    need not exist), or ``None`` for a plugin registered from an object without a file."""
    module = sys.modules.get(plugin_module)
    location = getattr(module, "__file__", None)
    return Path(location).parent / PORTABILITY_FILE if location else None


def read_rows(path: Path) -> dict[str, OnnxPortability]:
    """The rows of one ``portability.json`` by model name; none when there is no file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: not a readable portability file ({exc}); regenerate it with "
                         "'gluon-hub portability --write'") from exc
    if not isinstance(data, dict) or data.get("schema") != _SCHEMA:
        raise ValueError(f"{path}: expected schema {_SCHEMA!r}; regenerate it with "
                         "'gluon-hub portability --write'")
    return {name: _from_jsonable(OnnxPortability, row) for name, row in data["models"].items()}


def write_rows(path: Path, rows: Mapping[str, OnnxPortability]) -> None:
    """Write the rows sorted by name, one stable text for the same rows (diffs stay small);
    through a temporary file, so an interrupted write leaves the old file whole."""
    data = {"schema": _SCHEMA, "models": {name: _to_jsonable(rows[name]) for name in sorted(rows)}}
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(path)


def attach(specs: Iterable[Any], rows: Mapping[str, OnnxPortability]) -> None:
    """Set each model spec's ``onnx`` from ``rows`` (the hub's own copies, never the
    plugin's objects); a spec that declares its own row keeps it."""
    for spec in specs:
        row = rows.get(spec.name)
        if row is not None and spec.onnx is None:
            spec.__dict__["onnx"] = row


def is_current(spec: ModelSpec) -> bool:
    """Whether the spec has a row measured on the spec as it is now."""
    return spec.onnx is not None and spec.onnx.fingerprint == spec_fingerprint(spec)


def is_portable(spec: ModelSpec) -> bool:
    """Exported and checked against MXNet, on the current spec."""
    return is_current(spec) and spec.onnx is not None and spec.onnx.status == "exportable"


def shapes_text(row: OnnxPortability) -> str:
    """The exported inputs' shapes as ``?x3x?x?`` (``?`` a dynamic axis), space-separated."""
    return " ".join("x".join("?" if d is None else str(d) for d in s) for s in row.input_shapes)
