"""SqueezeNet 1.0 and 1.1 ("SqueezeNet", arXiv:1602.07360), with GluonCV 0.10's parameter layout.

The classifier ends with GluonCV's fixed 13x13 average pool (stride 13), not a global one:
the two agree only where the last feature map is exactly 13x13 (inputs of 213 to 228 pixels
for 1.0, 209 to 224 for 1.1); elsewhere GluonCV averages the 13x13 windows at stride 13
from the top-left corner, and so do we, so that the published weights give the same answers
at every input size.
"""

from __future__ import annotations

from gluon_hub import head_argument

from ...common.blocks import HybridBlock, check_choice, mx, nn

__all__ = ["SqueezeNet", "squeezenet"]


def _conv_relu(channels: int, kernel_size: int, padding: int = 0):
    out = nn.HybridSequential(prefix="")
    out.add(nn.Conv2D(channels, kernel_size, padding=padding))
    out.add(nn.Activation("relu"))
    return out


def _fire(squeeze: int, expand1x1: int, expand3x3: int):
    """Fire module: 1x1 squeeze, then 1x1 and 3x3 expansions concatenated."""
    out = nn.HybridSequential(prefix="")
    out.add(_conv_relu(squeeze, 1))
    paths = mx.gluon.contrib.nn.HybridConcurrent(axis=1, prefix="")
    paths.add(_conv_relu(expand1x1, 1))
    paths.add(_conv_relu(expand3x3, 3, 1))
    out.add(paths)
    return out


def _pool():
    return nn.MaxPool2D(pool_size=3, strides=2, ceil_mode=True)


class SqueezeNet(HybridBlock):
    """Conv stem, fire modules and max-pools, dropout, 1x1-conv classifier, 13x13 average pool."""

    def __init__(self, version: str = "1.0", classes: int = 1000) -> None:
        super().__init__()
        check_choice("version", version, {"1.0", "1.1"})
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            if version == "1.0":
                self.features.add(nn.Conv2D(96, kernel_size=7, strides=2), nn.Activation("relu"), _pool())
                layers = [_fire(16, 64, 64), _fire(16, 64, 64), _fire(32, 128, 128), _pool(),
                          _fire(32, 128, 128), _fire(48, 192, 192), _fire(48, 192, 192),
                          _fire(64, 256, 256), _pool(), _fire(64, 256, 256)]
            else:
                self.features.add(nn.Conv2D(64, kernel_size=3, strides=2), nn.Activation("relu"), _pool())
                layers = [_fire(16, 64, 64), _fire(16, 64, 64), _pool(), _fire(32, 128, 128),
                          _fire(32, 128, 128), _pool(), _fire(48, 192, 192), _fire(48, 192, 192),
                          _fire(64, 256, 256), _fire(64, 256, 256)]
            self.features.add(*layers)
            self.features.add(nn.Dropout(0.5))
            self.output = nn.HybridSequential(prefix="")
            self.output.add(nn.Conv2D(classes, kernel_size=1), nn.Activation("relu"),
                            nn.AvgPool2D(13), nn.Flatten())

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


@head_argument("classes")
def squeezenet(version: str = "1.0", classes: int = 1000) -> SqueezeNet:
    """SqueezeNet ``"1.0"`` or ``"1.1"`` (1.1 needs 2.4x less computation for the same accuracy)."""
    return SqueezeNet(version, classes)
