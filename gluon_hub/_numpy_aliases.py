"""The numpy aliases MXNet 1.9.1 uses and numpy 1.24 removed (``np.bool``, ``np.int`` ...).

Used by :mod:`gluon_hub.compat` and, for a plain ``import mxnet``, by the top-level
``_gluon_hub_mxnet_aliases`` module, which loads this file without importing the hub;
so it imports nothing but numpy.
"""

from __future__ import annotations

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
    """Put back the builtin-type aliases numpy 1.24 removed, on numpy 1.x only."""
    import numpy

    if not numpy.__version__.startswith("1."):
        return  # MXNet 1.9.1 does not run on numpy 2; do not dress numpy 2 up as numpy 1
    for name, value in _REMOVED_ALIASES.items():
        if name not in numpy.__dict__:
            setattr(numpy, name, value)
