"""The plugin's datasets, read from ``datasets.json`` (hashes live in data, not code).

Imports only the stdlib and ``gluon_hub.specs``: the hub lists datasets through here.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources

from gluon_hub.specs import DatasetSpec, FileRef


@lru_cache(maxsize=1)
def _specs() -> tuple[DatasetSpec, ...]:
    text = resources.files(__package__).joinpath("datasets.json").read_text(encoding="utf-8")
    return tuple(DatasetSpec.from_dict(entry) for entry in json.loads(text))


def dataset_specs() -> list[DatasetSpec]:
    """Every dataset of gluon-cv-core: classification, detection and segmentation (see datasets.json)."""
    return list(_specs())


def archive(name: str) -> FileRef:
    """The one file a dataset of this plugin is read from."""
    for spec in _specs():
        if spec.name == name and spec.files:
            return spec.files[0]
    raise KeyError(f"gluon-cv-core has no downloadable dataset {name!r}")
