"""What the registry-wide parity tests (``test_semantic_models.py``) cannot show for
Fast-SCNN, ICNet and DeepLabV3+ (v3b): that they run at sizes GluonCV's fixed resizes
refuse, and that asking for an ImageNet backbone that was never published says so.
"""

from __future__ import annotations

import importlib

import pytest
from cv_testlib.detection import random_input

from gluon_hub.compat import mx

pytestmark = pytest.mark.slow


def _factory(path: str):
    module, _, function = path.partition(":")
    return getattr(importlib.import_module(f"gluon_cv_core.segmentation.models.{module}"), function)


@pytest.mark.parametrize("factory, sizes", [
    ("fastscnn:fastscnn", [(67, 75), (67, 75)]),  # the prediction and the auxiliary head's
    # ICNet's cascade: the prediction, the 1/4 scores (GluonCV's height // 4), the fused 1/8
    # and 1/16 branches' scores (their feature maps round up)
    ("icnet:icnet", [(67, 75), (16, 18), (9, 10), (5, 5)]),
])
def test_runs_at_a_size_gluoncv_cannot(factory: str, sizes: list[tuple[int, int]]) -> None:
    # 67 x 75: GluonCV's Fast-SCNN needs sides of 32k (+1, +2), its ICNet multiples of 16
    net = _factory(factory)()
    net.initialize()
    net.hybridize()
    outputs = net(random_input(1, (67, 75)))
    assert [o.shape for o in outputs] == [(1, 19, *size) for size in sizes]
    for output in outputs:
        assert mx.nd.contrib.isfinite(output).asnumpy().all()


@pytest.mark.parametrize("factory, message", [
    ("fastscnn:fastscnn", "trained from scratch"),
    ("deeplab_plus:deeplab_v3b_plus", "no ImageNet weights of Wide ResNet-38"),
])
def test_an_unpublished_pretrained_base_is_refused(factory: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        _factory(factory)(pretrained_base=True)


def test_deeplab_v3b_plus_names_its_only_backbone() -> None:
    from gluon_cv_core.segmentation.models.deeplab_plus import deeplab_v3b_plus

    with pytest.raises(ValueError, match="wideresnet"):
        deeplab_v3b_plus("resnet50")
