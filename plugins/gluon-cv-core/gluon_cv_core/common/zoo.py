"""What the plugin's spec modules share: reading the ``<task>/*_zoo.json`` files and
naming the files GluonCV publishes.

Only the stdlib and ``gluon_hub.specs``: listing models imports neither mxnet nor model code.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any, Iterator

from gluon_hub.specs import FileRef

#: the normalisation every GluonCV vision model was trained with
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


def zoo_rows(task: str) -> Iterator[tuple[dict[str, Any], dict[str, Any], str]]:
    """``(row, families, metrics source)`` for every model row of ``<task>/*_zoo.json``,
    files in name order (one file holds a group of families)."""
    folder = resources.files("gluon_cv_core").joinpath(task)
    for path in sorted((f for f in folder.iterdir() if f.name.endswith("_zoo.json")), key=lambda f: f.name):
        data = json.loads(path.read_text(encoding="utf-8"))
        for row in data["models"]:
            yield row, data["families"], data["metrics_source"]


def published_params(row: dict[str, Any]) -> FileRef:
    """GluonCV's ``.params`` of a zoo row with a ``sha1``, zipped on the mirrors; ``file`` names
    it where GluonCV publishes it under another name (its hrnet_*_c models load hrnet_*_cls)."""
    sha1 = row["sha1"]
    stem = f"{row.get('file', row['name'])}-{sha1[:8]}"
    return FileRef(hash=f"sha1:{sha1}", filename=f"gluon/models/{stem}.zip", extract=f"{stem}.params")
