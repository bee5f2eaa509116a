"""The video tests reuse the detection tests' helpers (``detection_testlib``): random
parameters, strict loading, comparisons.

pytest runs in importlib mode, which does not put a test's folder on ``sys.path``.
"""

from __future__ import annotations

import sys
from pathlib import Path

DETECTION = str(Path(__file__).parent.parent / "detection")
if DETECTION not in sys.path:
    sys.path.insert(0, DETECTION)
