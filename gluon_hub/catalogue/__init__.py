"""A catalogue of everything the hub knows, as a static site: ``gluon-hub catalogue -o DIR``.

Every model, dataset and word embedding of the installed plugins and of the registry index,
with search and filters, and a page per entry (metadata, weights and where they come from, metrics and their
sources, the ONNX portability row, usage, and ``gluon-hub bench`` results where there are
any). ``DIR/index.html`` opens from disk; ``gluon-hub serve`` serves it at ``/catalogue/``.
Gathering the data (:mod:`._data`) is kept apart from writing HTML (:mod:`._site`); neither
imports MXNet.
"""

from __future__ import annotations

from ._data import bench_file, gather
from ._site import write

__all__ = ["bench_file", "gather", "write"]
