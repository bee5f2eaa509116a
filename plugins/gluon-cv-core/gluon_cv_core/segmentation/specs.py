"""The plugin's segmentation models, built from the ``segmentation/*_zoo.json`` files.

Semantic (FCN, PSPNet, DeepLab, DANet, ICNet, Fast-SCNN) and instance (Mask R-CNN)
segmentation share one row format; a family's ``task`` says which it is. Like
:mod:`._detection_specs`, this imports only the stdlib and ``gluon_hub.specs``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from gluon_hub.specs import InputSpec, Metric, ModelSpec, WeightVariant

from ..common.zoo import IMAGENET_MEAN, IMAGENET_STD, published_params, zoo_rows

_SEMANTIC_LABELS = "gluon_cv_core.segmentation.classes"
#: a row's ``classes`` -> (number of classes, labels path, dataset name in metrics)
_CLASSES = {
    "semantic-segmentation": {
        "voc": (21, f"{_SEMANTIC_LABELS}:VOC_CLASSES", "PASCAL VOC 2012"),
        "coco": (21, f"{_SEMANTIC_LABELS}:VOC_CLASSES", "COCO (VOC classes)"),
        "ade": (150, f"{_SEMANTIC_LABELS}:ADE20K_CLASSES", "ADE20K"),
        "citys": (19, f"{_SEMANTIC_LABELS}:CITYSCAPES_CLASSES", "Cityscapes"),
        "mhpv1": (19, f"{_SEMANTIC_LABELS}:MHPV1_CLASSES", "MHP v1"),
    },
    "instance-segmentation": {
        "coco": (80, "gluon_cv_core.detection.classes:COCO_CLASSES", "COCO 2017"),
    },
}
#: task -> the ONNX runner of its models
_RUNNERS = {"semantic-segmentation": "gluon_cv_core.segmentation.onnx_runner:Segmenter",
            "instance-segmentation": "gluon_cv_core.detection.onnx_runner:InstanceSegmenter"}
#: instances returned per image by Mask R-CNN (GluonCV's default ``rcnn_max_dets``)
_INSTANCES = 1000


def _metrics(row: dict[str, Any], dataset: str, source: str) -> tuple[Metric, ...]:
    """GluonCV's reported results: pixAcc/mIoU (semantic) or box/mask AP (instance)."""
    split = row.get("split", "val")
    metrics = [Metric(name, row[key], dataset, split, source)
               for key, name in (("pixacc", "pixAcc"), ("miou", "mIoU")) if key in row]
    for kind, values in row.get("coco_ap", {}).items():  # kind: "box" or "mask"
        for name, value in zip((f"{kind} AP", f"{kind} AP50", f"{kind} AP75"), values):
            metrics.append(Metric(name, value, dataset, split, source))
    return tuple(metrics)


def _spec(row: dict[str, Any], families: dict[str, Any], source: str) -> ModelSpec:
    family = families[row["family"]]
    task = family["task"]
    num_classes, labels, dataset = _CLASSES[task].get(row["classes"], (None, None, None))
    height, width = (row["size"], row["size"]) if isinstance(row["size"], int) else row["size"]
    weights: tuple[WeightVariant, ...] = ()
    if row.get("sha1"):
        weights = (WeightVariant(tag=row["classes"], file=published_params(row),
                                 metrics=_metrics(row, dataset, source)),)
    stride = row.get("output_stride", 1)  # HRNet's scores stay at a quarter of the input
    output = ((num_classes, -(-height // stride), -(-width // stride)) if task == "semantic-segmentation"
              else (_INSTANCES, 1))
    return ModelSpec(
        name=row["name"],
        factory=family["factory"],
        description=family["description"].format(**row),
        task=task,
        kwargs=row["kwargs"],
        input=InputSpec(shape=(3, height, width), layout="NCHW", mean=IMAGENET_MEAN, std=IMAGENET_STD,
                        num_classes=num_classes, labels=labels),
        output_shape=output,
        weights=weights,
        num_params=row["num_params"],
        license="Apache-2.0",
        paper=family["paper"],
        tags=(row["family"], row["backbone"], row["classes"] or "custom"),
        runner=_RUNNERS[task],
    )


@lru_cache(maxsize=1)
def _specs() -> tuple[ModelSpec, ...]:
    """Rows of every ``*_zoo.json`` of the segmentation package: one file a group of families."""
    return tuple(_spec(row, families, source) for row, families, source in zoo_rows("segmentation"))


def segmentation_specs() -> list[ModelSpec]:
    """Every semantic- and instance-segmentation model of gluon-cv-core, in GluonCV's names."""
    return list(_specs())
