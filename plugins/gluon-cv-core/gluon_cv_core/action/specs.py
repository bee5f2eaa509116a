"""The plugin's video action recognisers, built from the ``action/*_zoo.json`` files.

Two kinds of network share one row format. 2D (TSN-style) models take ``(batch x segments,
3, H, W)`` frames and average the segments' scores inside the network; 3D models (I3D,
SlowFast, R(2+1)D, P3D, C3D) take ``(batch, 3, frames, H, W)`` clips. A row's ``input`` is
the shape of one sample in the family's ``layout`` ("NCHW" for 2D, "NCTHW" for 3D). Like
:mod:`._detection_specs`, this imports only the stdlib and ``gluon_hub.specs``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from gluon_hub.specs import InputSpec, Metric, ModelSpec, WeightVariant

from ..common.zoo import IMAGENET_MEAN, IMAGENET_STD, published_params, zoo_rows

_LABELS = "gluon_cv_core.action.classes"
#: a row's ``dataset`` -> (number of classes, labels path, dataset name in metrics)
_DATASETS = {
    "kinetics400": (400, f"{_LABELS}:KINETICS400_CLASSES", "Kinetics-400"),
    "kinetics700": (700, f"{_LABELS}:KINETICS700_CLASSES", "Kinetics-700"),
    "ucf101": (101, f"{_LABELS}:UCF101_CLASSES", "UCF101 (split 1)"),
    "hmdb51": (51, f"{_LABELS}:HMDB51_CLASSES", "HMDB51 (split 1)"),
    "sthsthv2": (174, f"{_LABELS}:STHSTHV2_CLASSES", "Something-Something-v2"),
}


def _metrics(row: dict[str, Any], dataset: str, source: str) -> tuple[Metric, ...]:
    """GluonCV's reported clip accuracy (top-1, top-5) on the dataset's validation split."""
    return tuple(Metric(name, row[key], dataset, row.get("split", "val"), source)
                 for key, name in (("top1", "top-1"), ("top5", "top-5")) if key in row)


def _spec(row: dict[str, Any], families: dict[str, Any], source: str) -> ModelSpec:
    family = families[row["family"]]
    num_classes, labels, dataset = _DATASETS.get(row["dataset"] or "", (row["kwargs"].get("nclass"), None, None))
    weights: tuple[WeightVariant, ...] = ()
    if row.get("sha1"):
        weights = (WeightVariant(tag=row["dataset"], file=published_params(row),
                                 metrics=_metrics(row, dataset, source)),)
    return ModelSpec(
        name=row["name"],
        factory=family["factory"],
        description=family["description"].format(**row),
        task="action-recognition",
        kwargs=row["kwargs"],
        input=InputSpec(shape=tuple(row["input"]), layout=family["layout"], mean=IMAGENET_MEAN,
                        std=IMAGENET_STD, num_classes=num_classes, labels=labels),
        output_shape=(num_classes,),
        weights=weights,
        num_params=row["num_params"],
        license="Apache-2.0",
        paper=family["paper"],
        tags=(row["family"], row["backbone"], row["dataset"] or "custom"),
        # every family's portability row (measured on its smallest model) is exportable
        runner="gluon_cv_core.action.onnx_runner:ActionRecognizer",
    )


@lru_cache(maxsize=1)
def _specs() -> tuple[ModelSpec, ...]:
    """Rows of every ``*_zoo.json`` of the action package: one file a group of families."""
    return tuple(_spec(row, families, source) for row, families, source in zoo_rows("action"))


def action_specs() -> list[ModelSpec]:
    """Every video action-recognition model of gluon-cv-core, in GluonCV's names."""
    return list(_specs())
