"""The plugin's pose estimators, built from ``pose/pose_zoo.json``.

Like :mod:`._detection_specs`, this imports only the stdlib and ``gluon_hub.specs``: the data
file sits beside the pose models but is read as a resource, so listing imports neither
mxnet nor model code.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from gluon_hub.specs import InputSpec, Metric, ModelSpec, WeightVariant

from ..common.zoo import IMAGENET_MEAN, IMAGENET_STD, published_params, zoo_rows

_KEYPOINTS = "gluon_cv_core.pose.keypoints:COCO_KEYPOINTS"
_NUM_KEYPOINTS = 17
#: every family's heatmaps are a quarter of the crop's height and width
_STRIDE = 4


def _metrics(row: dict[str, Any], source: str) -> tuple[Metric, ...]:
    """GluonCV's COCO keypoint OKS AP, from the crop alone and averaged with its mirror image."""
    metrics: list[Metric] = []
    for key, suffix in (("oks_ap", ""), ("oks_ap_flip", ", flip test")):
        for name, value in zip(("OKS AP", "OKS AP50", "OKS AP75"), row.get(key, ())):
            metrics.append(Metric(f"{name}{suffix}", value, "COCO 2017 keypoints", "val", source))
    return tuple(metrics)


def _spec(row: dict[str, Any], families: dict[str, Any], source: str) -> ModelSpec:
    family = families[row["family"]]
    height, width = row["size"]
    return ModelSpec(
        name=row["name"],
        factory=family["factory"],
        description=family["description"].format(**row),
        task="pose-estimation",
        kwargs=row["kwargs"],
        input=InputSpec(shape=(3, height, width), layout="NCHW", mean=IMAGENET_MEAN, std=IMAGENET_STD,
                        num_classes=_NUM_KEYPOINTS, labels=_KEYPOINTS),
        output_shape=(_NUM_KEYPOINTS, height // _STRIDE, width // _STRIDE),
        weights=(WeightVariant(tag="coco", file=published_params(row), metrics=_metrics(row, source)),),
        num_params=row["num_params"],
        license="Apache-2.0",
        paper=family["paper"],
        tags=(row["family"], row["backbone"], "coco"),
        runner="gluon_cv_core.pose.onnx_runner:PoseEstimator",
    )


@lru_cache(maxsize=1)
def _specs() -> tuple[ModelSpec, ...]:
    return tuple(_spec(row, families, source) for row, families, source in zoo_rows("pose"))


def pose_specs() -> list[ModelSpec]:
    """Every pose-estimation model of gluon-cv-core, in GluonCV's names."""
    return list(_specs())
