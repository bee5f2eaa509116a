"""Class names of the action datasets, in the order of the published models' outputs.

The lists (up to 700 names) live in ``classes.json`` beside this module and are read on
first use, so listing the registry does not parse them.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources

#: attribute name -> key in classes.json
_DATASETS = {
    "KINETICS400_CLASSES": "kinetics400",
    "KINETICS700_CLASSES": "kinetics700",
    "UCF101_CLASSES": "ucf101",
    "HMDB51_CLASSES": "hmdb51",
    "STHSTHV2_CLASSES": "sthsthv2",
}


@lru_cache(maxsize=1)
def _all() -> dict[str, tuple[str, ...]]:
    text = resources.files(__package__).joinpath("classes.json").read_text(encoding="utf-8")
    return {key: tuple(names) for key, names in json.loads(text)["classes"].items()}


def classes_of(dataset: str) -> tuple[str, ...]:
    """The class names of ``dataset`` (``kinetics400``, ``kinetics700``, ``ucf101``, ``hmdb51``,
    ``sthsthv2``)."""
    try:
        return _all()[dataset]
    except KeyError:
        raise KeyError(f"no class names for action dataset {dataset!r}; known: {sorted(_all())}") from None


def __getattr__(name: str) -> tuple[str, ...]:
    if name in _DATASETS:
        return classes_of(_DATASETS[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
