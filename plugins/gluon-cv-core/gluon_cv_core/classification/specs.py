"""The plugin's classification models, built from ``classification/*_zoo.json``.

Hashes and metrics live in data, one file per group of families, so a new family is a new
file (its families, rows, and where its metrics come from).

Imports only the stdlib and ``gluon_hub.specs``: the hub lists models through here, so
listing never imports mxnet or model code.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from gluon_hub.specs import InputSpec, Metric, ModelSpec, WeightVariant

from ..common.zoo import IMAGENET_MEAN, IMAGENET_STD, published_params, zoo_rows

#: input preset -> (weight tag, InputSpec). Resize is crop / 0.875, rounded up, as GluonCV.
_INPUTS = {
    "imagenet": ("imagenet", InputSpec(
        shape=(3, 224, 224), layout="NCHW", mean=IMAGENET_MEAN, std=IMAGENET_STD, resize=256,
        crop=224, num_classes=1000, labels="gluon_cv_core.classification.labels:IMAGENET1K_LABELS")),
    "inception": ("imagenet", InputSpec(
        shape=(3, 299, 299), layout="NCHW", mean=IMAGENET_MEAN, std=IMAGENET_STD, resize=342,
        crop=299, num_classes=1000, labels="gluon_cv_core.classification.labels:IMAGENET1K_LABELS")),
    # ResNeSt-101/200/269 are trained and evaluated at larger crops (arXiv:2004.08955), as is
    # NASNet-A Large at 331 (arXiv:1707.07012)
    **{f"imagenet{crop}": ("imagenet", InputSpec(
        shape=(3, crop, crop), layout="NCHW", mean=IMAGENET_MEAN, std=IMAGENET_STD,
        resize=-(-crop * 8 // 7), crop=crop, num_classes=1000,
        labels="gluon_cv_core.classification.labels:IMAGENET1K_LABELS")) for crop in (256, 320, 331, 416)},
    "cifar10": ("cifar10", InputSpec(
        shape=(3, 32, 32), layout="NCHW", mean=(0.4914, 0.4822, 0.4465), std=(0.2023, 0.1994, 0.2010),
        num_classes=10, labels="gluon_cv_core.classification.labels:CIFAR10_LABELS")),
}

_CIFAR_NOTE = ("GluonCV reports this architecture's CIFAR-10 accuracy for standard and for mixup "
               "training without saying which of the two the published file is.")


def _metrics(row: dict[str, Any], source: str) -> list[Metric]:
    if "top1" in row:
        return [Metric("top-1", row["top1"], "ImageNet-1k", "val", source),
                Metric("top-5", row["top5"], "ImageNet-1k", "val", source)]
    if "accuracy" in row:
        return [Metric("accuracy (standard training)", row["accuracy"], "CIFAR-10", "test", source),
                Metric("accuracy (mixup training)", row["accuracy_mixup"], "CIFAR-10", "test", source)]
    return []


def _weights(row: dict[str, Any], tag: str, source: str) -> tuple[WeightVariant, ...]:
    if row.get("sha1") is None:
        return ()
    note = _CIFAR_NOTE if tag == "cifar10" else ""
    return (WeightVariant(tag=tag, file=published_params(row), metrics=tuple(_metrics(row, source)),
                          description=note),)


def _spec(row: dict[str, Any], families: dict[str, Any], source: str) -> ModelSpec:
    family = families[row["family"]]
    kwargs = row["kwargs"]
    tag, input_spec = _INPUTS[row["input"]]
    return ModelSpec(
        name=row["name"],
        factory=family["factory"],
        description=family["description"].format(**kwargs),
        task="image-classification",
        kwargs=kwargs,
        input=input_spec,
        output_shape=(input_spec.num_classes,),
        weights=_weights(row, tag, source),
        num_params=row["num_params"],
        license="Apache-2.0",
        paper=family["paper"],
        tags=(row["family"], row["input"]),
        runner="gluon_cv_core.classification.onnx_runner:Classifier",
    )


@lru_cache(maxsize=1)
def _specs() -> tuple[ModelSpec, ...]:
    return tuple(_spec(row, families, source) for row, families, source in zoo_rows("classification"))


def model_specs() -> list[ModelSpec]:
    """Every image-classification model of gluon-cv-core, in GluonCV's names."""
    return list(_specs())
