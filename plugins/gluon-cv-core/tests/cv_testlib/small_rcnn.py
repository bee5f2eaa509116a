"""Faster and Mask R-CNN made small enough for ``gluon-hub predict`` in a test: each zoo model's
spec with a short side of 256 and 16 proposals, registered in-process by a plugin of its own, as
a third party would register its models (the task's ``predict`` and ONNX runner are the zoo
model's). Imports no MXNet, so the ONNX runtime's CLI process can register it too."""

from __future__ import annotations

import dataclasses
import types
from typing import Any

import gluon_hub
from gluon_hub import hookimpl

#: registered name -> the zoo model it shrinks
ZOO = {"small_faster_rcnn": "faster_rcnn_resnet50_v1b_voc", "small_mask_rcnn": "mask_rcnn_resnet18_v1b_coco"}
PLUGIN = "small_rcnn"
SIDE, PROPOSALS = 256, 16


def small_spec(name: str) -> Any:
    """The spec of ``name`` (a key of :data:`ZOO`), not yet registered."""
    spec = gluon_hub.info(ZOO[name])
    return dataclasses.replace(spec, name=name, plugin="", weights=(),
                               kwargs={**spec.kwargs, "rpn_test_post_nms": PROPOSALS},
                               input=dataclasses.replace(spec.input, shape=(3, SIDE, SIDE)))


def register() -> None:
    """Register the small models in this process, as ``small_rcnn/<name>``."""
    specs = [small_spec(name) for name in ZOO]
    gluon_hub.register_plugin(types.SimpleNamespace(GLUON_HUB_API=">=1", gluon_hub_models=hookimpl(lambda: specs)),
                              PLUGIN)
