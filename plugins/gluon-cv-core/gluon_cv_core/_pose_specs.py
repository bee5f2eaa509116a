"""The plugin's pose estimators, built from ``models/pose/pose_zoo.json``.

Like :mod:`._detection_specs`, this imports only the stdlib and ``gluon_hub.specs``: the data
file sits beside the pose models but is read as a resource, so listing imports neither
mxnet nor model code.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

from gluon_hub.specs import FileRef, InputSpec, Metric, ModelSpec, WeightVariant

_IMAGENET_MEAN = (0.485, 0.456, 0.406)
_IMAGENET_STD = (0.229, 0.224, 0.225)
_KEYPOINTS = "gluon_cv_core.models.pose.keypoints:COCO_KEYPOINTS"
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
    stem = f"{row['name']}-{row['sha1'][:8]}"
    file = FileRef(hash=f"sha1:{row['sha1']}", filename=f"gluon/models/{stem}.zip", extract=f"{stem}.params")
    return ModelSpec(
        name=row["name"],
        factory=family["factory"],
        description=family["description"].format(**row),
        task="pose-estimation",
        kwargs=row["kwargs"],
        input=InputSpec(shape=(3, height, width), layout="NCHW", mean=_IMAGENET_MEAN, std=_IMAGENET_STD,
                        num_classes=_NUM_KEYPOINTS, labels=_KEYPOINTS),
        output_shape=(_NUM_KEYPOINTS, height // _STRIDE, width // _STRIDE),
        weights=(WeightVariant(tag="coco", file=file, metrics=_metrics(row, source)),),
        num_params=row["num_params"],
        license="Apache-2.0",
        paper=family["paper"],
        tags=(row["family"], row["backbone"], "coco"),
    )


@lru_cache(maxsize=1)
def _specs() -> tuple[ModelSpec, ...]:
    folder = resources.files(__package__).joinpath("models").joinpath("pose")
    data = json.loads(folder.joinpath("pose_zoo.json").read_text(encoding="utf-8"))
    return tuple(_spec(row, data["families"], data["metrics_source"]) for row in data["models"])


def pose_specs() -> list[ModelSpec]:
    """Every pose-estimation model of gluon-cv-core, in GluonCV's names."""
    return list(_specs())
