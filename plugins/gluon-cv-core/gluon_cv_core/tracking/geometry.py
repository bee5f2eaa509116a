"""SiamRPN's backbone geometry, without MXNet: the network builds its layers from it, and the
ONNX runner checks exported files against it."""

from __future__ import annotations

__all__ = ["ALEXNET_LAYERS", "FEATURES", "feature_size"]

#: (out channels, kernel, stride-2 max pool after it?, relu?) of each backbone convolution
ALEXNET_LAYERS = ((96, 11, True, True), (256, 5, True, True), (384, 3, False, True),
                  (384, 3, False, True), (256, 3, False, False))
#: channels of the backbone's features
FEATURES = ALEXNET_LAYERS[-1][0]


def feature_size(size: int) -> int:
    """Side of the backbone's output for a ``size`` x ``size`` input (no padding anywhere)."""
    for _, kernel, pool, _ in ALEXNET_LAYERS:
        size = (size - kernel) // 2 + 1 if kernel == 11 else size - kernel + 1  # the first has stride 2
        if pool:
            size = (size - 3) // 2 + 1
    return size
