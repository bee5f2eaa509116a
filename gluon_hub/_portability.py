"""The portability matrix as data: each plugin's ``portability.json`` beside its plugin module.

The rows are measured by ``gluon-hub portability`` (gluon-hub-deploy, which needs MXNet
and onnxruntime); reading them, attaching them to specs, telling a current row from an
out-of-date one and filtering on them needs neither, so it lives in the core.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from ._cache._hashing import hash_bytes
from .specs import ModelSpec, OnnxPortability, _from_jsonable, _to_jsonable

__all__ = ["PORTABILITY_FILE", "spec_fingerprint", "rows_file", "read_rows", "write_rows",
           "attach", "shapes_text", "is_current", "is_portable", "BLOCKER_CLASSES", "blocker_class",
           "SummaryRow", "summarize"]

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


# -- the matrix summed up: what README's table and `gluon-hub list --portability-summary` show ----

#: The classes of blocked rows, in the order the summary lists them: (key, label, what it
#: means, test on the blocker text). The texts are gluon-hub-deploy's (``_export.OnnxExportError``
#: and the measurement's comparisons); a text no class recognises counts as ``other``, so a new
#: kind of blocker shows up there instead of being misfiled.
BLOCKER_CLASSES: tuple[tuple[str, str, str, Callable[[str], bool]], ...] = (
    ("no_onnx_operator", "no ONNX operator",
     "an operator ONNX has no counterpart for (deformable convolution, DCN)",
     lambda text: re.search(r"\bno ONNX operator\b", text, re.IGNORECASE) is not None),
    ("int8", "int8 operators", "oneDNN's fused int8 operators, which have no ONNX converter",
     lambda text: any(re.search(r"quantiz|^_sg_(mkldnn|onednn)_|int8", op) for op in _missing_operators(text))),
    ("too_large", "over ONNX's 2 GiB", "parameters beyond ONNX's 2 GiB protobuf limit (mxnet.onnx writes no "
     "external data)", lambda text: "exceed ONNX's 2 GiB protobuf limit" in text),
    ("random_weights", "unreproducible with random weights",
     "MXNet itself moves by more than the tolerance when its input moves by 1e-7 (float32 rounding grown "
     "through a deep network with random weights), so the comparison cannot judge the converter",
     lambda text: text.startswith("not comparable with random weights")),
    ("beyond_tolerance", "beyond tolerance",
     "exported and run, but onnxruntime's outputs differ from MXNet's by more than the tolerance",
     lambda text: re.search(r"outputs differ from MXNet", text, re.IGNORECASE) is not None),
    ("other", "other", "anything else (a missing converter, a failed run: `gluon-hub info NAME` says which)",
     lambda text: True),
)


def _missing_operators(text: str) -> list[str]:
    """The operators an export found no converter for (``no converter for the MXNet
    operator(s) A, B; ...``), none when the text is of another kind."""
    found = re.search(r"no converter for the MXNet operator\(s\) ([^;]+)", text, re.IGNORECASE)
    return [op.strip() for op in found.group(1).split(",")] if found else []


def blocker_class(blocker: str) -> str:
    """The key of the first class of :data:`BLOCKER_CLASSES` that ``blocker`` belongs to."""
    return next(key for key, _, _, belongs in BLOCKER_CLASSES if belongs(blocker))


@dataclass
class SummaryRow:
    """One task's (or family's) models counted by their ONNX rows."""

    group: str
    tasks: tuple[str, ...] = ()
    models: int = 0
    exportable: int = 0
    #: Blocked models by the key of their :data:`BLOCKER_CLASSES` class.
    blocked: dict[str, int] = field(default_factory=dict)
    #: Models without a row, or whose row was measured on an older spec (``stale`` of them).
    not_measured: int = 0
    stale: int = 0
    #: The largest relative difference from MXNet among the exportable models.
    max_rel_diff: float | None = None

    def add(self, spec: ModelSpec) -> None:
        self.models += 1
        if spec.task not in self.tasks:
            self.tasks = tuple(sorted((*self.tasks, spec.task)))
        row = spec.onnx
        if row is None or not is_current(spec):
            self.not_measured += 1
            self.stale += row is not None
        elif row.status == "blocked":
            key = blocker_class(row.blocker or "")
            self.blocked[key] = self.blocked.get(key, 0) + 1
        else:
            self.exportable += 1
            if row.max_rel_diff is not None:
                self.max_rel_diff = max(self.max_rel_diff or 0.0, row.max_rel_diff)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, the blocked classes in :data:`BLOCKER_CLASSES`' order."""
        return {**asdict(self), "tasks": list(self.tasks),
                "blocked": {key: self.blocked[key] for key, *_ in BLOCKER_CLASSES if key in self.blocked}}


def summarize(specs: Iterable[ModelSpec], by: str = "task") -> list[SummaryRow]:
    """Count ``specs`` by their ONNX rows per task (``by="task"``) or per family (``"family"``:
    models sharing a factory, named by the factory's function, or in full where two factories
    share a function name), sorted by task and name; the last row, ``all``, counts every model.

    Reads only the stored rows and the specs, so it needs neither MXNet nor onnxruntime.
    """
    if by not in ("task", "family"):
        raise ValueError(f"a portability summary is by 'task' or 'family', not {by!r}")
    groups: dict[str, SummaryRow] = {}
    total = SummaryRow("all")
    for spec in specs:
        key = spec.task if by == "task" else spec.factory
        groups.setdefault(key, SummaryRow(key)).add(spec)
        total.add(spec)
    if by == "family":
        functions = [key.rpartition(":")[2] for key in groups]
        for key, row in groups.items():
            short = key.rpartition(":")[2]
            row.group = short if functions.count(short) == 1 else key
    return sorted(groups.values(), key=lambda row: (row.tasks, row.group)) + [total]
