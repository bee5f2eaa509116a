"""The detection tests import their shared helpers (``detection_testlib``) from this folder.

pytest runs in importlib mode, which does not put a test's folder on ``sys.path``.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = str(Path(__file__).parent)
if HERE not in sys.path:
    sys.path.insert(0, HERE)
