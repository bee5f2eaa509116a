"""The video tests reuse the detection tests' helpers (``detection_testlib``): random
parameters, strict loading, comparisons; and their own (``video_testlib``).

pytest runs in importlib mode, which does not put a test's folder on ``sys.path``.
"""

from __future__ import annotations

import sys
from pathlib import Path

for folder in (Path(__file__).parent.parent / "detection", Path(__file__).parent):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
