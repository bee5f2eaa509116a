"""Inception V3 ("Rethinking the Inception Architecture", arXiv:1512.00567), with GluonCV
0.10's parameter layout (no auxiliary classifier).

The features end with GluonCV's fixed 8x8 average pool, not a global one: the two agree only
where the last feature map is exactly 8x8 (inputs of about 299 to 330 pixels); on a larger
map GluonCV averages the top-left 8x8 window, and so do we, so that the published weights
give the same answers at every input size.
"""

from __future__ import annotations

from typing import Any, Callable

from gluon_hub import head_argument

from ...common.blocks import BatchNorm, HybridBlock, conv_norm, mx, nn

__all__ = ["Inception3", "inception_v3"]

_Concurrent = mx.gluon.contrib.nn.HybridConcurrent


def _branch(pool: str | None, options: dict, *convs: tuple) -> Any:
    """Optional pool, then conv-norm-relu units given as (channels, kernel, strides, padding)."""
    out = nn.HybridSequential(prefix="")
    if pool == "avg":
        out.add(nn.AvgPool2D(pool_size=3, strides=1, padding=1))
    elif pool == "max":
        out.add(nn.MaxPool2D(pool_size=3, strides=2))
    for channels, kernel, strides, padding in convs:
        out.add(conv_norm(channels, kernel, strides=strides or 1, padding=padding or 0, **options))
    return out


def _mixed(prefix: str, *branches: Any) -> Any:
    out = _Concurrent(axis=1, prefix=prefix)
    out.add(*branches)
    return out


def _block_a(pool_features: int, prefix: str, o: dict) -> Any:
    return _mixed(prefix,
                  _branch(None, o, (64, 1, None, None)),
                  _branch(None, o, (48, 1, None, None), (64, 5, None, 2)),
                  _branch(None, o, (64, 1, None, None), (96, 3, None, 1), (96, 3, None, 1)),
                  _branch("avg", o, (pool_features, 1, None, None)))


def _block_b(prefix: str, o: dict) -> Any:
    return _mixed(prefix,
                  _branch(None, o, (384, 3, 2, None)),
                  _branch(None, o, (64, 1, None, None), (96, 3, None, 1), (96, 3, 2, None)),
                  _branch("max", o))


def _block_c(c7: int, prefix: str, o: dict) -> Any:
    return _mixed(prefix,
                  _branch(None, o, (192, 1, None, None)),
                  _branch(None, o, (c7, 1, None, None), (c7, (1, 7), None, (0, 3)),
                          (192, (7, 1), None, (3, 0))),
                  _branch(None, o, (c7, 1, None, None), (c7, (7, 1), None, (3, 0)),
                          (c7, (1, 7), None, (0, 3)), (c7, (7, 1), None, (3, 0)),
                          (192, (1, 7), None, (0, 3))),
                  _branch("avg", o, (192, 1, None, None)))


def _block_d(prefix: str, o: dict) -> Any:
    return _mixed(prefix,
                  _branch(None, o, (192, 1, None, None), (320, 3, 2, None)),
                  _branch(None, o, (192, 1, None, None), (192, (1, 7), None, (0, 3)),
                          (192, (7, 1), None, (3, 0)), (192, 3, 2, None)),
                  _branch("max", o))


def _split_3x3(o: dict, *stem: tuple) -> Any:
    """A branch whose end splits into parallel 1x3 and 3x1 convolutions."""
    out = nn.HybridSequential(prefix="")
    out.add(_branch(None, o, *stem))
    out.add(_mixed("", _branch(None, o, (384, (1, 3), None, (0, 1))),
                   _branch(None, o, (384, (3, 1), None, (1, 0)))))
    return out


def _block_e(prefix: str, o: dict) -> Any:
    return _mixed(prefix,
                  _branch(None, o, (320, 1, None, None)),
                  _split_3x3(o, (384, 1, None, None)),
                  _split_3x3(o, (448, 1, None, None), (384, 3, None, 1)),
                  _branch("avg", o, (192, 1, None, None)))


class Inception3(HybridBlock):
    """Inception V3 feature extractor (blocks A x3, B, C x4, D, E x2), pool, dropout, classifier."""

    def __init__(self, classes: int = 1000, norm_layer: Callable[..., HybridBlock] = BatchNorm,
                 norm_kwargs: dict | None = None, partial_bn: bool = False) -> None:
        super().__init__()
        o = {"norm_layer": norm_layer, "norm_kwargs": norm_kwargs, "norm_options": {"epsilon": 0.001}}
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            self.features.add(conv_norm(32, 3, strides=2, **o))
            if partial_bn:  # every norm after the first keeps its running statistics
                o = {**o, "norm_kwargs": {**(norm_kwargs or {}), "use_global_stats": True}}
            self.features.add(conv_norm(32, 3, **o),
                              conv_norm(64, 3, padding=1, **o), nn.MaxPool2D(pool_size=3, strides=2),
                              conv_norm(80, 1, **o), conv_norm(192, 3, **o),
                              nn.MaxPool2D(pool_size=3, strides=2))
            self.features.add(_block_a(32, "A1_", o), _block_a(64, "A2_", o), _block_a(64, "A3_", o))
            self.features.add(_block_b("B_", o))
            self.features.add(*(_block_c(c7, f"C{i}_", o) for i, c7 in enumerate((128, 160, 160, 192), 1)))
            self.features.add(_block_d("D_", o), _block_e("E1_", o), _block_e("E2_", o))
            self.features.add(nn.AvgPool2D(pool_size=8), nn.Dropout(0.5))
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


@head_argument("classes")
def inception_v3(classes: int = 1000, norm_layer: Callable[..., HybridBlock] = BatchNorm,
                 norm_kwargs: dict | None = None, partial_bn: bool = False) -> Inception3:
    """Inception V3 for 299x299 inputs; ``partial_bn`` freezes the running statistics of every
    norm but the first (GluonCV's, for fine-tuning with small batches)."""
    return Inception3(classes, norm_layer, norm_kwargs, partial_bn)
