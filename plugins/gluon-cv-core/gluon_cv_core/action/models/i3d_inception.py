"""I3D on Inception V1 (GoogLeNet) and Inception V3 ("Quo Vadis, Action Recognition?",
arXiv:1705.07750), with GluonCV 0.10's parameter layout.

Every 2D convolution and pooling of the ImageNet network becomes 3D: a k x k kernel becomes
k x k x k (Inception V3's 1x7 and 7x1 factorised kernels become 7x1x7 and 7x7x1), so the
clip shrinks in time where the image shrank in space. Each mixed block is a concatenation of
branches; a branch is an optional pooling then conv-norm-relu units.
"""

from __future__ import annotations

from typing import Any, Callable

from gluon_hub import head_argument
from gluon_hub.compat import mx

from ...common.blocks import HybridBlock, nn
from ...common.norm import BatchNorm3D
from .layers3d import ClipClassifier, conv3d_unit, inflate_from_2d

__all__ = ["I3DInception", "i3d_inception", "inflate_base", "VERSIONS"]

HybridConcurrent = mx.gluon.contrib.nn.HybridConcurrent

#: Inception V1's mixed blocks: name -> (in channels, 1x1, (3x3 reduce, 3x3), (3x3 reduce, 3x3), pool proj)
_V1_MIXED = {
    "Mixed_3a": (192, 64, (96, 128), (16, 32), 32),
    "Mixed_3b": (256, 128, (128, 192), (32, 96), 64),
    "Mixed_4a": (480, 192, (96, 208), (16, 48), 64),
    "Mixed_4b": (512, 160, (112, 224), (24, 64), 64),
    "Mixed_4c": (512, 128, (128, 256), (24, 64), 64),
    "Mixed_4d": (512, 112, (144, 288), (32, 64), 64),
    "Mixed_4e": (528, 256, (160, 320), (32, 128), 128),
    "Mixed_5a": (832, 256, (160, 320), (32, 128), 128),
    "Mixed_5b": (832, 384, (192, 384), (48, 128), 128),
}


class _Builder:
    """Conv units and branches with one norm layer and its kwargs; ``freeze()`` turns on
    frozen statistics for every unit built after it (GluonCV's ``partial_bn``)."""

    def __init__(self, norm_layer: Callable[..., HybridBlock], norm_kwargs: dict | None) -> None:
        self.norm_layer = norm_layer
        self.norm_kwargs = norm_kwargs

    def freeze(self) -> None:
        self.norm_kwargs = {**(self.norm_kwargs or {}), "use_global_stats": True}

    def unit(self, cin: int, cout: int, kernel: Any, strides: Any = None, padding: Any = None) -> Any:
        """A conv-norm-relu unit; ``None`` keeps Conv3D's default stride or padding."""
        conv = {"kernel_size": kernel}
        if strides is not None:
            conv["strides"] = strides
        if padding is not None:
            conv["padding"] = padding
        return conv3d_unit(cin, cout, self.norm_layer, self.norm_kwargs, **conv)

    def branch(self, pool: Any, *units: tuple) -> Any:
        """An optional pooling, then a unit per ``(in, out, kernel[, strides, padding])``."""
        seq = nn.HybridSequential(prefix="")
        if pool is not None:
            seq.add(pool)
        for unit in units:
            seq.add(self.unit(*unit))
        return seq

    @staticmethod
    def concat(prefix: str = "") -> Any:
        return HybridConcurrent(axis=1, prefix=prefix)


def _v1_mixed(b: _Builder, name: str) -> Any:
    cin, c1, (r3, c3), (r5, c5), proj = _V1_MIXED[name]
    block = b.concat(name + "_")
    with block.name_scope():
        block.add(b.branch(None, (cin, c1, 1)))
        block.add(b.branch(None, (cin, r3, 1), (r3, c3, 3, None, 1)))
        block.add(b.branch(None, (cin, r5, 1), (r5, c5, 3, None, 1)))
        block.add(b.branch(nn.MaxPool3D(pool_size=3, strides=1, padding=1), (cin, proj, 1)))
    return block


def _v1_features(b: _Builder, partial_bn: bool) -> Any:
    features = nn.HybridSequential(prefix="")
    features.add(b.unit(3, 64, 7, 2, 3))
    features.add(nn.MaxPool3D(pool_size=(1, 3, 3), strides=(1, 2, 2), padding=(0, 1, 1)))
    if partial_bn:
        b.freeze()
    features.add(b.unit(64, 64, 1))
    features.add(b.unit(64, 192, 3, None, (1, 1, 1)))
    features.add(nn.MaxPool3D(pool_size=(1, 3, 3), strides=(1, 2, 2), padding=(0, 1, 1)))
    for name in ("Mixed_3a", "Mixed_3b"):
        features.add(_v1_mixed(b, name))
    features.add(nn.MaxPool3D(pool_size=3, strides=(2, 2, 2), padding=(1, 1, 1)))
    for name in ("Mixed_4a", "Mixed_4b", "Mixed_4c", "Mixed_4d", "Mixed_4e"):
        features.add(_v1_mixed(b, name))
    features.add(nn.MaxPool3D(pool_size=2, strides=(2, 2, 2)))
    for name in ("Mixed_5a", "Mixed_5b"):
        features.add(_v1_mixed(b, name))
    features.add(nn.GlobalAvgPool3D())
    return features


def _avg() -> Any:
    return nn.AvgPool3D(pool_size=3, strides=1, padding=1)


def _max() -> Any:
    return nn.MaxPool3D(pool_size=3, strides=2, padding=(1, 0, 0))


# Inception V3's factorised kernels in 3D: (7, 1, 7) and (7, 7, 1) with matching padding
_K71, _P71 = (7, 1, 7), (3, 0, 3)
_K17, _P17 = (7, 7, 1), (3, 3, 0)
_K31, _P31 = (3, 1, 3), (1, 0, 1)
_K13, _P13 = (3, 3, 1), (1, 1, 0)


def _v3_a(b: _Builder, cin: int, pool_features: int, prefix: str) -> Any:
    block = b.concat(prefix)
    with block.name_scope():
        block.add(b.branch(None, (cin, 64, 1)))
        block.add(b.branch(None, (cin, 48, 1), (48, 64, 5, None, 2)))
        block.add(b.branch(None, (cin, 64, 1), (64, 96, 3, None, 1), (96, 96, 3, None, 1)))
        block.add(b.branch(_avg(), (cin, pool_features, 1)))
    return block


def _v3_b(b: _Builder) -> Any:
    block = b.concat("B_")
    with block.name_scope():
        block.add(b.branch(None, (288, 384, 3, 2, (1, 0, 0))))
        block.add(b.branch(None, (288, 64, 1), (64, 96, 3, None, 1), (96, 96, 3, 2, (1, 0, 0))))
        block.add(b.branch(_max()))
    return block


def _v3_c(b: _Builder, c7: int, prefix: str) -> Any:
    block = b.concat(prefix)
    with block.name_scope():
        block.add(b.branch(None, (768, 192, 1)))
        block.add(b.branch(None, (768, c7, 1), (c7, c7, _K71, None, _P71), (c7, 192, _K17, None, _P17)))
        block.add(b.branch(None, (768, c7, 1), (c7, c7, _K17, None, _P17), (c7, c7, _K71, None, _P71),
                           (c7, c7, _K17, None, _P17), (c7, 192, _K71, None, _P71)))
        block.add(b.branch(_avg(), (768, 192, 1)))
    return block


def _v3_d(b: _Builder) -> Any:
    block = b.concat("D_")
    with block.name_scope():
        block.add(b.branch(None, (768, 192, 1), (192, 320, 3, 2, (1, 0, 0))))
        block.add(b.branch(None, (768, 192, 1), (192, 192, _K71, None, _P71), (192, 192, _K17, None, _P17),
                           (192, 192, 3, 2, (1, 0, 0))))
        block.add(b.branch(_max()))
    return block


def _v3_split(b: _Builder, stem: Any) -> Any:
    """``stem`` then two 384-channel convolutions side by side (3x1x3 and 3x3x1)."""
    seq = nn.HybridSequential(prefix="")
    seq.add(stem)
    split = b.concat()
    split.add(b.branch(None, (384, 384, _K31, None, _P31)))
    split.add(b.branch(None, (384, 384, _K13, None, _P13)))
    seq.add(split)
    return seq


def _v3_e(b: _Builder, cin: int, prefix: str) -> Any:
    block = b.concat(prefix)
    with block.name_scope():
        block.add(b.branch(None, (cin, 320, 1)))
        block.add(_v3_split(b, b.branch(None, (cin, 384, 1))))
        block.add(_v3_split(b, b.branch(None, (cin, 448, 1), (448, 384, 3, None, 1))))
        block.add(b.branch(_avg(), (cin, 192, 1)))
    return block


def _v3_features(b: _Builder, partial_bn: bool) -> Any:
    features = nn.HybridSequential(prefix="")
    features.add(b.unit(3, 32, 3, 2, (1, 0, 0)))
    if partial_bn:
        b.freeze()
    features.add(b.unit(32, 32, 3, None, (1, 0, 0)))
    features.add(b.unit(32, 64, 3, None, 1))
    features.add(nn.MaxPool3D(pool_size=3, strides=(1, 2, 2), padding=(1, 0, 0)))
    features.add(b.unit(64, 80, 1))
    features.add(b.unit(80, 192, 3, None, (1, 0, 0)))
    features.add(nn.MaxPool3D(pool_size=3, strides=(1, 2, 2), padding=(1, 0, 0)))
    for cin, pool_features, prefix in ((192, 32, "A1_"), (256, 64, "A2_"), (288, 64, "A3_")):
        features.add(_v3_a(b, cin, pool_features, prefix))
    features.add(_v3_b(b))
    for c7, prefix in ((128, "C1_"), (160, "C2_"), (160, "C3_"), (192, "C4_")):
        features.add(_v3_c(b, c7, prefix))
    features.add(_v3_d(b))
    features.add(_v3_e(b, 1280, "E1_"))
    features.add(_v3_e(b, 2048, "E2_"))
    features.add(nn.GlobalAvgPool3D())
    return features


#: version -> (features builder, feature width, the registered 2D network it inflates)
VERSIONS = {1: (_v1_features, 1024, "googlenet"), 3: (_v3_features, 2048, "inceptionv3")}


class I3DInception(ClipClassifier):
    """``features`` (ending in global average pooling), the mean over a video's clips, ``head``
    (dropout, ``output``).

    Parameters
    ----------
    version : 1 (GoogLeNet) or 3.
    nclass : action classes.
    partial_bn : freeze the running statistics of every norm but the first.
    num_segments, num_crop : clips of one video in the batch, averaged before the classifier.
    feat_ext : return the averaged features instead of class scores.
    """

    def __init__(self, version: int = 1, nclass: int = 400, dropout_ratio: float = 0.5, init_std: float = 0.01,
                 partial_bn: bool = False, num_segments: int = 1, num_crop: int = 1, feat_ext: bool = False,
                 norm_layer: Callable[..., HybridBlock] = BatchNorm3D, norm_kwargs: dict | None = None) -> None:
        if version not in VERSIONS:
            raise ValueError(f"unknown Inception version {version!r}; known: {', '.join(map(str, VERSIONS))}")
        build, feat_dim, _ = VERSIONS[version]
        super().__init__(feat_dim, num_segments, num_crop, feat_ext)
        with self.name_scope():
            self.features = build(_Builder(norm_layer, norm_kwargs), partial_bn)
            self.head, self.output = self.make_head(feat_dim, nclass, dropout_ratio, init_std)

    def pooled(self, F, x):
        return self.features(x)


@head_argument("nclass")
def i3d_inception(version: int = 1, nclass: int = 400, pretrained_base: bool | str = False,
                  use_tsn: bool = False, **options: Any) -> I3DInception:
    """I3D Inception V1 or V3.

    Parameters
    ----------
    version : 1 (GoogLeNet, 224x224 frames) or 3 (299x299 frames).
    nclass : action classes.
    pretrained_base : start from the ImageNet network (``googlenet`` or ``inceptionv3``,
        through the hub's cache), its 2D kernels inflated into 3D.
    use_tsn : accepted for GluonCV's call pattern and ignored: GluonCV 0.10 never reads it
        (``num_segments`` sets the consensus).
    options : :class:`I3DInception` arguments (``partial_bn``, ``num_segments`` ...).
    """
    net = I3DInception(version, nclass, **options)
    if pretrained_base:
        from ...common.backbones.features import backbone

        return inflate_base(net, backbone(VERSIONS[version][2], pretrained_base))
    return net


def inflate_base(net: I3DInception, base: Any) -> I3DInception:
    """``net`` initialised, its layers from the 2D ImageNet Inception ``base`` (kernels
    inflated, see :func:`.layers3d.inflate_from_2d`); the classifier keeps its initialisation."""
    net.initialize()
    classifier = [p for key, p in base._collect_params_with_prefix().items()
                  if key.startswith(("output.", "head.", "fc."))]
    inflate_from_2d(net, base, exclude3d=net.output.collect_params().values(), exclude2d=classifier)
    return net
