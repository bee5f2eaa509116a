"""The pose tests reuse the detection tests' helpers (``detection_testlib``): random
parameters, strict loading, comparisons; and their own generated COCO keypoints files
(``pose_testlib``).

pytest runs in importlib mode, which does not put a test's folder on ``sys.path``.
"""

from __future__ import annotations

import sys
from pathlib import Path

DETECTION = str(Path(__file__).parent.parent / "detection")
HERE = str(Path(__file__).parent)
for folder in (DETECTION, HERE):
    if folder not in sys.path:
        sys.path.insert(0, folder)
