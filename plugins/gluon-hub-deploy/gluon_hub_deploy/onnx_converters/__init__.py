"""The hub's own ONNX converters, registered into ``mxnet.onnx``'s converter registry.

MXNet 1.9.1's exporter lacks converters for some operators the zoo uses and gets others
wrong for the opset it declares; each module here fixes one group of operators and
registers its converters when imported. Nothing edits MXNet's installed files.
"""

from __future__ import annotations

import importlib
import pkgutil

__all__ = ["register_converters"]

_registered = False


def register_converters() -> None:
    """Import every converter module once, so its converters replace or add to MXNet's."""
    global _registered
    if _registered:
        return
    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")
    _registered = True
