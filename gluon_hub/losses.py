"""The core's losses, registered by name: ``gluon_hub.get_loss("label_smoothing_ce")``.

The loss blocks are ``mxnet.gluon.loss.Loss`` subclasses (hybridizable) defined in
``gluon_hub._losses``; this module names them without importing mxnet, so that listing
stays light, and imports them on first attribute access::

    from gluon_hub.losses import FocalLoss
"""

from __future__ import annotations

import importlib
from typing import Any

from .specs import LossSpec

_BLOCKS = {
    "label_smoothing_ce": (
        "LabelSmoothingCELoss",
        "Softmax cross-entropy against integer labels smoothed by epsilon.",
    ),
    "soft_target_ce": (
        "SoftTargetCELoss",
        "Softmax cross-entropy against probability targets (mixup, cutmix, distillation).",
    ),
    "focal": (
        "FocalLoss",
        "Softmax focal loss, down-weighting well-classified examples (Lin et al., 2017).",
    ),
    "masked_softmax_ce": (
        "MaskedSoftmaxCELoss",
        "Softmax cross-entropy over padded sequences, ignoring steps past each valid length.",
    ),
}

__all__ = sorted(name for name, _ in _BLOCKS.values()) + ["loss_specs"]


def loss_specs() -> list[LossSpec]:
    """Specs of the core losses; their factories are the classes of this module."""
    return [
        LossSpec(name=name, factory=f"{__name__}:{attr}", description=text)
        for name, (attr, text) in _BLOCKS.items()
    ]


def __getattr__(name: str) -> Any:
    if name not in {attr for attr, _ in _BLOCKS.values()}:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module("gluon_hub._losses"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
