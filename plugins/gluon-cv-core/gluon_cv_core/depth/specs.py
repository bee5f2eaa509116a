"""The plugin's depth-estimation models (Monodepth2 and its pose network), built from
``depth/depth_zoo.json``.

Like :mod:`._pose_specs`, this imports only the stdlib and ``gluon_hub.specs``: listing
imports neither mxnet nor model code.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from gluon_hub.specs import InputSpec, Metric, ModelSpec, WeightVariant

from ..common.zoo import published_params, zoo_rows

#: Models trained with stereo pairs learnt a nominal 0.1-unit camera baseline; KITTI's rig has
#: 0.54 m, so their depths times 5.4 are metres (GluonCV's demo and evaluation use this factor).
STEREO_SCALE_FACTOR = 5.4
_DATASET = "KITTI"


def _metrics(row: dict[str, Any], source: str) -> tuple[Metric, ...]:
    """GluonCV's published errors: Eigen-split depth errors, or the pose network's trajectory error."""
    metrics = [Metric(name, row[key], _DATASET, "eigen test", source)
               for key, name in (("abs_rel", "abs_rel"), ("a1", "a1 (delta < 1.25)")) if key in row]
    for sequence, (mean, std) in sorted(row.get("ate", {}).items()):
        metrics.append(Metric(f"ATE, sequence {sequence}", mean, "KITTI odometry", sequence, source))
        metrics.append(Metric(f"ATE std, sequence {sequence}", std, "KITTI odometry", sequence, source))
    return tuple(metrics)


def _spec(row: dict[str, Any], families: dict[str, Any], source: str) -> ModelSpec:
    family = families[row["family"]]
    height, width = row["size"]
    channels = family["channels"]
    return ModelSpec(
        name=row["name"],
        factory=family["factory"],
        description=family["description"].format(**row),
        task="depth-estimation",
        kwargs=row["kwargs"],
        # RGB scaled to [0, 1]; the network normalises inside (GluonCV's 0.45 / 0.225)
        input=InputSpec(shape=(channels, height, width), layout="NCHW", mean=(0.0,) * channels,
                        std=(1.0,) * channels),
        output_shape=tuple(family["output_shape"]),
        weights=(WeightVariant(tag="kitti", file=published_params(row), metrics=_metrics(row, source)),),
        num_params=row["num_params"],
        license="Apache-2.0",
        paper=family["paper"],
        tags=(row["family"], row["backbone"], "kitti", row["supervision"].replace("+", "-")),
        runner="gluon_cv_core.depth.onnx_runner:DepthEstimator",
    )


def metric_scale(spec: ModelSpec) -> float | None:
    """What turns a model's depths into metres: :data:`STEREO_SCALE_FACTOR` for models trained
    with stereo pairs, ``None`` for monocular ones (their scale is arbitrary)."""
    return STEREO_SCALE_FACTOR if {"stereo", "mono-stereo"} & set(spec.tags) else None


@lru_cache(maxsize=1)
def _specs() -> tuple[ModelSpec, ...]:
    return tuple(_spec(row, families, source) for row, families, source in zoo_rows("depth"))


def depth_specs() -> list[ModelSpec]:
    """Every depth-estimation model of gluon-cv-core, in GluonCV's names."""
    return list(_specs())
