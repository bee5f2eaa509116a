"""MXNet's distributed launcher, ``tools/launch.py`` from the mxnet wheel, on Python 3.9+.

The launcher's tracker (``dmlc_tracker``) still calls ``Thread.isAlive``, which Python
3.9 removed: it starts the scheduler and then dies before starting any worker. This
module puts the old name back and runs the launcher unchanged, with the same arguments::

    python -m gluon_cv_core.launch -n 2 -s 2 -H hosts --launcher ssh \\
        python -m gluon_cv_core.classification.train --kvstore dist_sync ...
"""

from __future__ import annotations

import importlib.util
import runpy
import sys
import threading
from pathlib import Path
from typing import Sequence


def launcher_path() -> Path:
    """Where the installed mxnet keeps ``tools/launch.py``."""
    spec = importlib.util.find_spec("mxnet")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("mxnet is not installed: pip install mxnet==1.9.1")
    path = Path(list(spec.submodule_search_locations)[0]) / "tools" / "launch.py"
    if not path.is_file():
        raise FileNotFoundError(f"this mxnet install has no launcher at {path}")
    return path


def main(argv: Sequence[str] | None = None) -> int:
    """Run MXNet's launcher with ``argv``; returns its exit code."""
    if not hasattr(threading.Thread, "isAlive"):
        threading.Thread.isAlive = threading.Thread.is_alive  # type: ignore[attr-defined]
    path = launcher_path()
    sys.argv = [str(path), *(sys.argv[1:] if argv is None else argv)]
    try:
        runpy.run_path(str(path), run_name="__main__")
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
