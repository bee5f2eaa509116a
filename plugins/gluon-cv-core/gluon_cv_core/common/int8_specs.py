"""The int8 models GluonCV lists (``resnet50_v1_int8``, ``ssd_*_int8``, ``fcn_resnet101_voc_int8``,
``simple_pose_*_int8``, ``*_kinetics400_int8`` ...), as gluon_hub builds them.

Each is its float32 model, loaded with the float32 weights GluonCV publishes and quantized
at load time by :func:`gluon_hub.quantize` (oneDNN, CPU only). Calibration is not redone
at load time: measuring ranges needs a few hundred real images (ImageNet's validation set,
VOC's, COCO's, video frames) that neither the hub nor the user's machine has, and ranges
measured on anything else (random or a handful of photographs) would clip real activations. So the output
range of every fused convolution is the one GluonCV calibrated on those images and
recorded in the int8 symbol files its package ships
(``gluoncv/model_zoo/quantized/<name>-symbol.json`` in gluoncv 0.10.5, or compressed in
that folder's ``quantized.py`` for segmentation, pose and video; their sha1 is kept for
provenance), under the names MXNet 1.9.1 gives the same layers. What stays float32 is what
GluonCV's files keep float32: the dense layers of classifiers and video models (so logits
keep their scale); pose heads' deconvolutions (with their BatchNorm and ReLU), which oneDNN
cannot quantize. Every convolution of a segmentation model is int8, both heads'. A video
entry averages the frames GluonCV's int8 graph does (``num_segments``: 3 for UCF101 and
Inception-v3 Kinetics-400, 7 for the ResNet Kinetics-400 ones), so its input is
``(videos * num_segments, 3, H, W)``.
Pass ``calib_data=[batches]`` to ``gluon_hub.load`` to calibrate on your own data instead
(fine-tuned weights need it); with random weights (``pretrained=False``) the ranges are
measured on one seeded uniform batch, since recorded ranges describe trained weights only.

Imports only the stdlib and ``gluon_hub.specs`` (and the sibling spec modules, which do the
same): listing stays free of mxnet.
"""

from __future__ import annotations

import json
from dataclasses import replace
from functools import lru_cache
from importlib import resources
from typing import Any

from gluon_hub.specs import ModelSpec


@lru_cache(maxsize=1)
def _recorded() -> dict[str, Any]:
    """int8 name -> {"symbol_sha1", "ranges"}, from ``common/int8_ranges.json``."""
    text = resources.files(__package__).joinpath("int8_ranges.json").read_text(encoding="utf-8")
    return json.loads(text)["models"]


_GLUONCV_FILES = "gluoncv 0.10.5, gluoncv/model_zoo/quantized/{name}-symbol.json"
_GLUONCV_COMPRESSED = "gluoncv 0.10.5, gluoncv/model_zoo/quantized/quantized.py, _compressed_int8_json[{name!r}]"
#: Tasks whose dense layers GluonCV's int8 files keep float32.
_FLOAT32_DENSE = ("image-classification", "action-recognition")


def recorded_ranges(fp32: str) -> dict[str, tuple[float, float]]:
    """The recorded ranges of the int8 model of ``fp32``, as ``gluon_hub.quantize(thresholds=...)``
    takes them (the int8 entries' factory calls this when it builds the model)."""
    recorded = _recorded()[f"{fp32}_int8"]["ranges"]
    return {f"sg_mkldnn_conv_{layer}_output": (low, high) for layer, (low, high) in recorded.items()}


def _int8_spec(name: str, fp32: ModelSpec) -> ModelSpec:
    recorded = _recorded()[name]
    source = (_GLUONCV_COMPRESSED if "compressed_in" in recorded else _GLUONCV_FILES).format(name=name)
    weights = tuple(replace(w, metrics=(), description=(
        f"the float32 weights of {fp32.name}, quantized at load with the output ranges GluonCV "
        f"recorded ({source}, symbol sha1 {recorded['symbol_sha1']})"
    )) for w in fp32.weights)
    segments = {"num_segments": recorded["num_segments"]} if "num_segments" in recorded else {}
    return replace(
        fp32,
        name=name,
        factory="gluon_hub_deploy._quantize:int8_model",
        description=f"{fp32.description}; int8 (oneDNN, CPU only, inference only), quantized at load",
        kwargs={
            **segments,
            "fp32": fp32.name,
            "input_shape": list(fp32.input.shape),
            "thresholds": "gluon_cv_core.common.int8_specs:recorded_ranges",
            "exclude_operators": ["FullyConnected"] if fp32.task in _FLOAT32_DENSE else [],
        },
        weights=weights,
        tags=(*fp32.tags, "int8"),
    )


@lru_cache(maxsize=1)
def _specs() -> tuple[ModelSpec, ...]:
    from ..action.specs import action_specs
    from ..classification.specs import model_specs
    from ..detection.specs import detection_specs
    from ..pose.specs import pose_specs
    from ..segmentation.specs import segmentation_specs

    fp32 = {spec.name: spec
            for spec in model_specs() + detection_specs() + segmentation_specs() + pose_specs() + action_specs()}
    return tuple(_int8_spec(name, fp32[name[: -len("_int8")]]) for name in _recorded())


def int8_specs() -> list[ModelSpec]:
    """GluonCV's int8 names (classification, SSD, segmentation, pose, video), each quantized
    from its float32 model."""
    return list(_specs())
