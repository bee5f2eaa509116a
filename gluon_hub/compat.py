"""Import MXNet 1.9.1 on a modern numpy.

MXNet 1.9.1 still uses numpy aliases removed in numpy 1.24 (``np.bool``, ``np.int`` ...).
Restoring them before ``import mxnet`` lets the hub run on numpy 1.24–1.26, which is what
opens Python 3.12. Model modules import MXNet through here::

    from gluon_hub.compat import mx
"""

from __future__ import annotations

import numpy as _np

_REMOVED_ALIASES = {
    "bool": bool,
    "int": int,
    "float": float,
    "complex": complex,
    "object": object,
    "str": str,
    "long": int,
    "unicode": str,
}


def restore_numpy_aliases() -> None:
    """Put back the builtin-type aliases numpy removed in 1.24, where they are missing."""
    for name, value in _REMOVED_ALIASES.items():
        if name not in _np.__dict__:
            setattr(_np, name, value)


restore_numpy_aliases()

import mxnet as mx  # noqa: E402  (must follow the alias restoration)

__all__ = ["mx", "restore_numpy_aliases"]
