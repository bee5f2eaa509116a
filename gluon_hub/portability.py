"""The portability matrix for the tools that measure it.

Each plugin keeps its models' ONNX rows in a ``portability.json`` beside its plugin module;
``gluon-hub portability`` (gluon-hub-deploy) measures them. What such a tool needs from the
core is here, public, so that it never reaches into the core's private modules: the
fingerprint a row is measured on, whether a spec's row is current, the shapes' text, and
storing a row where the registry and ``gluon-hub info`` read it. Imports no mxnet.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ._portability import is_current, is_portable, read_rows, rows_file, shapes_text, spec_fingerprint, write_rows
from .specs import ModelSpec, OnnxPortability

__all__ = ["is_current", "is_portable", "shapes_text", "spec_fingerprint", "store"]


def store(spec: ModelSpec, row: OnnxPortability) -> Path | None:
    """Add ``row`` to the ``portability.json`` of the plugin that registers ``spec`` (read
    again each time, so rows that other runs stored stay); returns the file, or None with a
    warning for a plugin registered from an object without a module file."""
    from ._api import plugins

    plugin = next(p for p in plugins() if p.name == spec.plugin)
    path = rows_file(plugin.module) if plugin.module else None
    if path is None:
        print(f"gluon-hub: warning: plugin {spec.plugin!r} has no module file to keep rows beside; "
              f"{spec.name}'s row is not stored", file=sys.stderr)
        return None
    rows = read_rows(path)
    rows[spec.name] = row
    write_rows(path, rows)
    return path
