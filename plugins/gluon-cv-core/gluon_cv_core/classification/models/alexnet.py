"""AlexNet ("ImageNet Classification with Deep Convolutional Neural Networks", NeurIPS 2012,
arXiv:1404.5997 for the one-GPU variant used here), with GluonCV 0.10's parameter layout."""

from __future__ import annotations

from gluon_hub import head_argument

from ...common.blocks import HybridBlock, nn

__all__ = ["AlexNet", "alexnet"]


class AlexNet(HybridBlock):
    """Five convolutions with three max-pools, two 4096-wide dense layers, classifier."""

    def __init__(self, classes: int = 1000) -> None:
        super().__init__()
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            with self.features.name_scope():
                self.features.add(nn.Conv2D(64, 11, 4, 2, activation="relu"))
                self.features.add(nn.MaxPool2D(pool_size=3, strides=2))
                self.features.add(nn.Conv2D(192, 5, padding=2, activation="relu"))
                self.features.add(nn.MaxPool2D(pool_size=3, strides=2))
                for channels in (384, 256, 256):
                    self.features.add(nn.Conv2D(channels, 3, padding=1, activation="relu"))
                self.features.add(nn.MaxPool2D(pool_size=3, strides=2))
                self.features.add(nn.Flatten())
                for _ in range(2):
                    self.features.add(nn.Dense(4096, activation="relu"))
                    self.features.add(nn.Dropout(0.5))
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


@head_argument("classes")
def alexnet(classes: int = 1000) -> AlexNet:
    """AlexNet; expects at least 63x63 inputs (224x224 for the published weights)."""
    return AlexNet(classes)
