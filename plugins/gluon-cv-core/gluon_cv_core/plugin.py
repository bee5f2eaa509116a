"""Entry point of the gluon-cv-core plugin: declares specs, imports no model code or mxnet."""

from __future__ import annotations

from gluon_hub import CommandSpec, hookimpl

GLUON_HUB_API = ">=1,<2"


@hookimpl
def gluon_hub_models():
    from .action.specs import action_specs
    from .classification.specs import model_specs
    from .common.int8_specs import int8_specs
    from .depth.specs import depth_specs
    from .detection.specs import detection_specs
    from .pose.specs import pose_specs
    from .segmentation.specs import segmentation_specs
    from .tracking.specs import tracking_specs

    return (model_specs() + detection_specs() + segmentation_specs() + pose_specs() + action_specs()
            + depth_specs() + tracking_specs() + int8_specs())


@hookimpl
def gluon_hub_datasets():
    from .datasets.specs import dataset_specs

    return dataset_specs()


@hookimpl
def gluon_hub_commands():
    return [
        CommandSpec(
            name="predict",
            factory="gluon_cv_core.predict:main",
            description="classify images, find objects, segment, estimate poses or depth; recognise actions "
            "and track objects in videos: gluon-hub predict MODEL FILE...",
        )
    ]
