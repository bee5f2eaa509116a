"""Entry point of the gluon-contrib plugin: declares specs, imports no model code or mxnet.

gluon-contrib uses only gluon_hub's public API, so it is also the model a third-party
plugin can copy.
"""

from __future__ import annotations

from gluon_hub import CommandSpec, LossSpec, hookimpl

GLUON_HUB_API = ">=1,<2"


@hookimpl
def gluon_hub_models():
    from ._model_specs import model_specs

    return model_specs()


@hookimpl
def gluon_hub_losses():
    return [
        LossSpec(
            name="lsgan",
            factory="gluon_contrib.gan:LSGANLoss",
            description="least-squares GAN loss, loss(prediction, real: bool), as in CycleGAN",
        ),
        LossSpec(
            name="cycle_consistency",
            factory="gluon_contrib.gan:CycleConsistencyLoss",
            description="CycleGAN's weighted L1 between an image and its round trip (weight 10)",
        ),
        LossSpec(
            name="identity_mapping",
            factory="gluon_contrib.gan:IdentityLoss",
            description="CycleGAN's weighted L1 between a target-domain image and its "
                        "translation (weight 5)",
        ),
    ]


@hookimpl
def gluon_hub_commands():
    return [
        CommandSpec(
            name="translate",
            factory="gluon_contrib.translate:main",
            description="translate an image with a trained CycleGAN generator: "
                        "gluon-hub translate PARAMS INPUT OUTPUT",
        )
    ]
