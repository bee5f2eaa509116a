"""The plugin's single-object trackers, built from ``tracking/tracking_zoo.json``.

Like the other spec modules, this imports only the stdlib and ``gluon_hub.specs``: listing
imports neither mxnet nor model code. A tracker's network takes two inputs, the template crop
(``input``) and the search crop (``extra_inputs``), both raw 0-255 pixel values in BGR order
(no normalisation: GluonCV's tracker feeds OpenCV frames as they are); its first output is the
anchors' class logits over the search grid.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from gluon_hub.specs import InputSpec, Metric, ModelSpec, WeightVariant

from ..common.zoo import published_params, zoo_rows

#: the tracker's anchor grid is one position per 8 search-crop pixels
_STRIDE = 8


def _metrics(row: dict[str, Any], source: str) -> tuple[Metric, ...]:
    """OTB2015 success (IoU AUC) and precision (20 px), where GluonCV reports them."""
    return tuple(Metric(name, row[key], row["dataset"], "test", source)
                 for name, key in (("success AUC", "success"), ("precision@20px", "precision")) if key in row)


def _spec(row: dict[str, Any], families: dict[str, Any], source: str) -> ModelSpec:
    family = families[row["family"]]
    template, search = row["template"], row["search"]
    grid = (search - template) // _STRIDE + 1
    return ModelSpec(
        name=row["name"],
        factory=family["factory"],
        description=family["description"].format(**row),
        task="object-tracking",
        kwargs=row["kwargs"],
        input=InputSpec(shape=(3, template, template), layout="NCHW"),
        extra_inputs=(InputSpec(shape=(3, search, search), layout="NCHW"),),
        output_shape=(2 * row["anchors"], grid, grid),
        weights=(WeightVariant(tag=row["dataset"].lower(), file=published_params(row),
                               metrics=_metrics(row, source)),),
        num_params=row["num_params"],
        license="Apache-2.0",
        paper=family["paper"],
        tags=(row["family"], row["backbone"].lower(), row["dataset"].lower()),
        runner="gluon_cv_core.tracking.onnx_runner:ObjectTracker",  # SiamRPN's portability row is exportable
        export_graphs="gluon_cv_core.tracking.export_graphs:siamrpn_graphs",  # the template once per object
    )


@lru_cache(maxsize=1)
def _specs() -> tuple[ModelSpec, ...]:
    return tuple(_spec(row, families, source) for row, families, source in zoo_rows("tracking"))


def tracking_specs() -> list[ModelSpec]:
    """Every object-tracking model of gluon-cv-core, in GluonCV's names."""
    return list(_specs())
