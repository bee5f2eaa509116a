"""Let a plain ``import mxnet`` work on numpy 1.24–1.26.

MXNet 1.9.1 still uses the numpy aliases that numpy 1.24 removed (``np.bool``, ``np.int``
...), and numpy 1.26 is the only numpy < 2 with wheels for Python 3.12. The file
``gluon_hub_mxnet_aliases.pth``, installed with gluon-hub, calls :func:`install` at every
interpreter start. That only puts a finder on ``sys.meta_path`` and imports nothing (not
numpy, not the hub): when ``mxnet`` is first looked up, the finder removes itself and
restores the aliases (``gluon_hub/_numpy_aliases.py``, loaded by path so that importing
mxnet does not import the hub), before any of mxnet's code runs.
"""

from __future__ import annotations

import sys
from typing import Any


class _RestoreAliasesBeforeMXNet:
    """A meta-path finder that finds nothing: it only acts when ``mxnet`` is looked up."""

    @classmethod
    def find_spec(cls, fullname: str, path: Any = None, target: Any = None) -> None:
        if fullname == "mxnet":
            uninstall()
            _restore()
        return None


def _restore() -> None:
    import importlib.util
    from pathlib import Path

    source = Path(__file__).resolve().parent / "gluon_hub" / "_numpy_aliases.py"
    spec = importlib.util.spec_from_file_location("_gluon_hub_numpy_aliases", source)
    if spec is None or spec.loader is None:
        return  # gluon_hub is gone: nothing to restore with
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    try:
        module.restore_numpy_aliases()
    except ImportError:
        pass  # no numpy: mxnet's own import reports it


def install() -> None:
    """Restore the aliases when mxnet is imported (called by the ``.pth`` file)."""
    if "mxnet" not in sys.modules and _RestoreAliasesBeforeMXNet not in sys.meta_path:
        sys.meta_path.insert(0, _RestoreAliasesBeforeMXNet)  # type: ignore[arg-type]


def uninstall() -> None:
    """Take the finder off ``sys.meta_path``; its work is done once mxnet is looked up."""
    while _RestoreAliasesBeforeMXNet in sys.meta_path:
        sys.meta_path.remove(_RestoreAliasesBeforeMXNet)  # type: ignore[arg-type]
