"""The plugin's object detectors, built from the ``detection/*_zoo.json`` files.

Like :mod:`._model_specs`, this imports only the stdlib and ``gluon_hub.specs``: the data
file sits beside the detection models but is read as a resource, so listing imports
neither mxnet nor model code.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from gluon_hub.specs import InputSpec, Metric, ModelSpec, WeightVariant

from ..common.zoo import IMAGENET_MEAN, IMAGENET_STD, published_params, zoo_rows

_CLASSES = {
    "voc": (20, "gluon_cv_core.detection.classes:VOC_CLASSES"),
    "coco": (80, "gluon_cv_core.detection.classes:COCO_CLASSES"),
}
#: detections returned per image (the factories' default ``post_nms``; a row's ``detections``
#: overrides it, as for Faster R-CNN's classes x proposals); the first output holds their class ids
_POST_NMS = 100
#: every family's exported graph ends in the boxes (decoding and NMS inside, the R-CNNs' too)
_RUNNER = "gluon_cv_core.detection.onnx_runner:Detector"


def _metrics(row: dict[str, Any], source: str) -> tuple[Metric, ...]:
    """GluonCV's reported results, one per input side it evaluated the weights at."""
    metrics: list[Metric] = []

    def size(side: str) -> str:  # a square side, or a resizing rule such as Faster R-CNN's
        return f"{side}x{side}" if side.isdigit() else side

    for side, value in row.get("voc07_map", {}).items():
        metrics.append(Metric(f"mAP ({size(side)} input)", value, "PASCAL VOC 2007", "test", source))
    for side, values in row.get("coco_ap", {}).items():
        for name, value in zip(("box AP", "box AP50", "box AP75"), values):
            metrics.append(Metric(f"{name} ({size(side)} input)", value, "COCO 2017", "val", source))
    return tuple(metrics)


def _weights(row: dict[str, Any], source: str) -> tuple[WeightVariant, ...]:
    if row.get("sha1") is None:
        return ()
    return (WeightVariant(tag=row["classes"], file=published_params(row), metrics=_metrics(row, source)),)


def _spec(row: dict[str, Any], families: dict[str, Any], source: str) -> ModelSpec:
    family = families[row["family"]]
    num_classes, labels = _CLASSES.get(row["classes"], (None, None))
    size = row["size"]
    description = family["description"].format(**row)
    if row["classes"] is None:
        description += "; pass classes=[...] (and transfer='voc' or 'coco' to start from trained weights)"
    return ModelSpec(
        name=row["name"],
        factory=family["factory"],
        description=description,
        task="object-detection",
        kwargs=row["kwargs"],
        input=InputSpec(shape=(3, size, size), layout="NCHW", mean=IMAGENET_MEAN, std=IMAGENET_STD,
                        num_classes=num_classes, labels=labels),
        output_shape=(row.get("detections", _POST_NMS), 1),
        weights=_weights(row, source),
        num_params=row["num_params"],
        license="Apache-2.0",
        paper=family["paper"],
        tags=(row["family"], row["backbone"], row["classes"] or "custom"),
        runner=_RUNNER,
    )


@lru_cache(maxsize=1)
def _specs() -> tuple[ModelSpec, ...]:
    """Rows of every ``*_zoo.json`` of the detection package: one file a group of families."""
    return tuple(_spec(row, families, source) for row, families, source in zoo_rows("detection"))


def detection_specs() -> list[ModelSpec]:
    """Every object-detection model of gluon-cv-core, in GluonCV's names."""
    return list(_specs())
