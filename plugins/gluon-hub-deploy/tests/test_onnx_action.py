"""Action recognition models exported to ONNX against MXNet: TSN (2-D, ReduceMean over
segments), I3D, P3D, R(2+1)D, SlowFast (Reshape codes) and C3D (fully connected, fixed shape).
Small clips keep it fast; the heavier ones are marked slow."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.portability  # whole models against MXNet: the 3.11 leg (pyproject.toml)


def test_tsn_exports(onnx_matches_mxnet):
    print("resnet18_v1b_kinetics400", onnx_matches_mxnet("resnet18_v1b_kinetics400", [(1, 3, 64, 64), (2, 3, 96, 80)]))


def test_i3d_exports(onnx_matches_mxnet):
    # frames are dynamic too: the clip length changes between the two runs
    print("i3d_inceptionv1_kinetics400",
          onnx_matches_mxnet("i3d_inceptionv1_kinetics400", [(1, 3, 8, 64, 64), (2, 3, 12, 96, 80)]))


@pytest.mark.slow
@pytest.mark.parametrize("name, shapes", [
    ("p3d_resnet50_kinetics400", [(1, 3, 16, 64, 64), (1, 3, 16, 96, 96)]),
    ("r2plus1d_resnet18_kinetics400", [(1, 3, 8, 64, 64), (1, 3, 8, 96, 96)]),
    ("slowfast_4x16_resnet50_kinetics400", [(1, 3, 36, 64, 64), (1, 3, 36, 96, 96)]),
    ("i3d_resnet50_v1_kinetics400", [(1, 3, 8, 64, 64), (1, 3, 8, 96, 96)]),
])
def test_3d_cnns_export(onnx_matches_mxnet, name, shapes):
    print(name, onnx_matches_mxnet(name, shapes))


@pytest.mark.slow
def test_c3d_exports_at_its_fixed_shape(onnx_matches_mxnet):
    # its fully connected layers fix the clip at 16 x 112 x 112: the second run is batch 2
    print("c3d_kinetics400", onnx_matches_mxnet("c3d_kinetics400", [(1, 3, 16, 112, 112), (2, 3, 16, 112, 112)],
                                                dynamic=False))
