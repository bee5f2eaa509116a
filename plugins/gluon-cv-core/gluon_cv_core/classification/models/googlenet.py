"""GoogLeNet ("Going Deeper with Convolutions", arXiv:1409.4842) with batch normalization after
every convolution, in GluonCV 0.10's parameter layout (no auxiliary classifiers).

GluonCV ends with a 7x7 average pool, so 224-pixel inputs (a 7x7 last feature map) are the
ones it classifies; the same pool is kept here so that other sizes behave as in GluonCV.
"""

from __future__ import annotations

from typing import Any, Callable

from gluon_hub import head_argument

from ...common.blocks import BatchNorm, HybridBlock, check_gluoncv_structure, conv_norm, mx, nn

__all__ = ["GoogLeNet", "googlenet"]

#: inception module -> channels of (1x1, 3x3 reduce, 3x3, second reduce, its 3x3, pool projection);
#: GluonCV uses a 3x3 where the paper has a 5x5
_MODULES = {
    "3a": (64, 96, 128, 16, 32, 32),
    "3b": (128, 128, 192, 32, 96, 64),
    "4a": (192, 96, 208, 16, 48, 64),
    "4b": (160, 112, 224, 24, 64, 64),
    "4c": (128, 128, 256, 24, 64, 64),
    "4d": (112, 144, 288, 32, 64, 64),
    "4e": (256, 160, 320, 32, 128, 128),
    "5a": (256, 160, 320, 32, 128, 128),
    "5b": (384, 192, 384, 48, 128, 128),
}


def _branch(norm: dict, *convs: tuple[int, int], pool: bool = False) -> Any:
    """Optional 3x3/1 max-pool, then conv-norm-relu units given as (channels, kernel)."""
    out = nn.HybridSequential(prefix="")
    if pool:
        out.add(nn.MaxPool2D(pool_size=3, strides=1, padding=1))
    for channels, kernel in convs:
        out.add(conv_norm(channels, kernel, padding=kernel // 2, **norm))
    return out


def _inception(name: str, norm: dict) -> Any:
    """Four concatenated branches: 1x1; 1x1 then 3x3; 1x1 then 3x3; max-pool then 1x1."""
    c1, r3, c3, r5, c5, proj = _MODULES[name]
    out = mx.gluon.contrib.nn.HybridConcurrent(axis=1, prefix=f"Mixed_{name}_")
    with out.name_scope():
        out.add(_branch(norm, (c1, 1)), _branch(norm, (r3, 1), (c3, 3)),
                _branch(norm, (r5, 1), (c5, 3)), _branch(norm, (proj, 1), pool=True))
    return out


class GoogLeNet(HybridBlock):
    """7x7 stem, 1x1 and 3x3 convs, nine inception modules between max-pools, 7x7 pool, classifier."""

    def __init__(self, classes: int = 1000, dropout_ratio: float = 0.4,
                 norm_layer: Callable[..., HybridBlock] = BatchNorm, norm_kwargs: dict | None = None,
                 partial_bn: bool = False) -> None:
        super().__init__()
        norm = {"norm_layer": norm_layer, "norm_kwargs": norm_kwargs, "norm_options": {"epsilon": 0.001}}
        with self.name_scope():
            self.conv1 = conv_norm(64, 7, strides=2, padding=3, **norm)
            if partial_bn:  # every norm after the first keeps its running statistics
                norm = {**norm, "norm_kwargs": {**(norm_kwargs or {}), "use_global_stats": True}}
            self.maxpool1 = nn.MaxPool2D(pool_size=3, strides=2, ceil_mode=True)
            self.conv2 = conv_norm(64, 1, **norm)
            self.conv3 = conv_norm(192, 3, padding=1, **norm)
            self.maxpool2 = nn.MaxPool2D(pool_size=3, strides=2, ceil_mode=True)
            self.inception3a = _inception("3a", norm)
            self.inception3b = _inception("3b", norm)
            self.maxpool3 = nn.MaxPool2D(pool_size=3, strides=2, ceil_mode=True)
            self.inception4a = _inception("4a", norm)
            self.inception4b = _inception("4b", norm)
            self.inception4c = _inception("4c", norm)
            self.inception4d = _inception("4d", norm)
            self.inception4e = _inception("4e", norm)
            self.maxpool4 = nn.MaxPool2D(pool_size=2, strides=2)
            self.inception5a = _inception("5a", norm)
            self.inception5b = _inception("5b", norm)
            # GluonCV's file names the classifier twice, as ``output`` and as ``head.2``
            self.output = nn.Dense(classes, in_units=1024)
            self.head = nn.HybridSequential(prefix="")
            self.head.add(nn.AvgPool2D(pool_size=7), nn.Dropout(dropout_ratio), self.output)

    def hybrid_forward(self, F, x):
        x = self.maxpool1(self.conv1(x))
        x = self.maxpool2(self.conv3(self.conv2(x)))
        x = self.maxpool3(self.inception3b(self.inception3a(x)))
        for stage in (self.inception4a, self.inception4b, self.inception4c, self.inception4d,
                      self.inception4e):
            x = stage(x)
        x = self.inception5b(self.inception5a(self.maxpool4(x)))
        return self.head(x)


@head_argument("classes")
def googlenet(classes: int = 1000, dropout_ratio: float = 0.4,
              norm_layer: Callable[..., HybridBlock] = BatchNorm, norm_kwargs: dict | None = None,
              partial_bn: bool = False, pretrained_base: bool = True, aux_logits: bool | None = None) -> GoogLeNet:
    """GoogLeNet with batch normalization, for 224x224 inputs.

    ``partial_bn`` freezes the running statistics of every norm but the first (GluonCV's, for
    fine-tuning with small batches). ``pretrained_base`` is accepted for GluonCV's call pattern
    and ignored: GluonCV's GoogLeNet takes it and never reads it (use ``pretrained``).
    ``aux_logits`` is accepted as False only: the hub's GoogLeNet has no auxiliary classifiers.
    """
    check_gluoncv_structure("googlenet", {"aux_logits": aux_logits}, {"aux_logits": False})
    return GoogLeNet(classes, dropout_ratio, norm_layer, norm_kwargs, partial_bn)
