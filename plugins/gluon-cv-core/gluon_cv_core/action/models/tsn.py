"""2D action recognisers in the Temporal Segment Network style ("Temporal Segment Networks",
arXiv:1608.00859), with GluonCV 0.10's parameter layout.

An ImageNet classification network (VGG-16, Inception V1 or V3, ResNet V1b) runs on every
frame; the per-frame features of one video's ``num_segments`` segments (times ``num_crop``
crops at test time) are averaged ("segmental consensus") before a new linear classifier
``output``. The input is therefore ``(batch * num_segments * num_crop, 3, H, W)``, frames of
one video consecutive, and the output ``(batch, nclass)``.

Where the reused layers sit decides the parameter names, as in GluonCV: VGG-16 and
Inception V3 keep their ``features`` container, Inception V1 and ResNet V1b have their
layers at the top level.
"""

from __future__ import annotations

import itertools
from typing import Any, Callable, Sequence

from gluon_hub import head_argument

from ...common.blocks import BatchNorm, HybridBlock, mx, nn
from .kinetics_start import start_from_kinetics

__all__ = ["TemporalSegmentNet", "tsn", "BACKBONES"]

#: backbone -> (registered classification network, width of one frame's feature)
BACKBONES = {
    "vgg16": ("vgg16", 4096),
    "inceptionv1": ("googlenet", 1024),
    "inceptionv3": ("inceptionv3", 2048),
    "resnet18_v1b": ("resnet18_v1b", 512),
    "resnet34_v1b": ("resnet34_v1b", 512),
    "resnet50_v1b": ("resnet50_v1b", 2048),
    "resnet101_v1b": ("resnet101_v1b", 2048),
    "resnet152_v1b": ("resnet152_v1b", 2048),
}
_GOOGLENET_LAYERS = ("conv1", "maxpool1", "conv2", "conv3", "maxpool2", "inception3a", "inception3b",
                     "maxpool3", "inception4a", "inception4b", "inception4c", "inception4d", "inception4e",
                     "maxpool4", "inception5a", "inception5b")
_RESNET_LAYERS = ("conv1", "bn1", "relu", "maxpool", "layer1", "layer2", "layer3", "layer4", "avgpool", "flat")


class TemporalSegmentNet(HybridBlock):
    """``stages`` applied in order to every frame, the mean over each video's frames, ``output``.

    Parameters
    ----------
    stages : (attribute name, block) pairs; the names are the parameters' first path component.
    feat_dim : width of one frame's feature after the last stage.
    nclass : action classes.
    init_std : standard deviation of the new classifier's normal initial weights.
    num_segments, num_crop : frames of one video in the input (segments times crops).
    feat_ext : return the averaged ``(batch, feat_dim)`` features instead of class scores.
    """

    def __init__(self, stages: Sequence[tuple[str, HybridBlock]], feat_dim: int, nclass: int,
                 init_std: float, num_segments: int = 1, num_crop: int = 1, feat_ext: bool = False) -> None:
        super().__init__()
        if num_segments < 1 or num_crop < 1:
            raise ValueError(f"num_segments and num_crop must be at least 1, got {num_segments} and {num_crop}")
        self._stages = tuple(name for name, _ in stages)
        self.feat_dim = feat_dim
        self.num_segments = num_segments
        self.num_crop = num_crop
        self.feat_ext = feat_ext
        with self.name_scope():
            for name, block in stages:
                setattr(self, name, block)
            self.output = nn.Dense(nclass, in_units=feat_dim, weight_initializer=mx.init.Normal(init_std))

    def hybrid_forward(self, F, x):
        for name in self._stages:
            x = getattr(self, name)(x)
        # one row per video: its segments' (and crops') features, averaged
        x = F.mean(F.reshape(x, shape=(-1, self.num_segments * self.num_crop, self.feat_dim)), axis=1)
        return x if self.feat_ext else self.output(x)


def _first_norm_only_trains(norm_layer: Callable[..., HybridBlock] = BatchNorm) -> Callable[..., HybridBlock]:
    """A norm layer factory whose norms after the first use (and keep) their running statistics:
    GluonCV's "partial BN", which lets small video batches fine-tune an ImageNet network."""
    built = itertools.count()

    def make(**options: Any) -> HybridBlock:
        if next(built):
            options["use_global_stats"] = True
        return norm_layer(**options)

    return make


def _set_dropout(block: HybridBlock, rate: float) -> None:
    """Every dropout inside ``block`` at ``rate``: the reused classifier layers of VGG-16 and
    Inception V3 drop at the dataset's rate, as GluonCV trained them."""
    def visit(child: HybridBlock) -> None:
        if isinstance(child, nn.Dropout):
            child._rate = rate

    block.apply(visit)


@head_argument("nclass")
def tsn(backbone: str, nclass: int, dropout_ratio: float = 0.5, init_std: float = 0.01, num_segments: int = 1,
        num_crop: int = 1, partial_bn: bool | None = None, feat_ext: bool = False,
        pretrained_base: bool | str = False, use_kinetics_pretrain: bool = False, tsn: bool = False,
        use_tsn: bool = False) -> TemporalSegmentNet:
    """A 2D action recogniser on one of :data:`BACKBONES`.

    Parameters
    ----------
    backbone : ``vgg16``, ``inceptionv1``, ``inceptionv3`` or ``resnet{18,34,50,101,152}_v1b``.
    nclass : action classes.
    dropout_ratio : dropout before the classifier (VGG-16: of its two 4096-wide layers).
    init_std : standard deviation of the classifier's initial weights (GluonCV: 0.001 on
        UCF101 and HMDB51, 0.01 on Kinetics-400 and Something-Something-v2).
    num_segments, num_crop : frames averaged per video (segments times test crops).
    partial_bn : Inception backbones only (default on, as GluonCV's): every batch norm but the
        first uses and keeps its ImageNet statistics while training.
    feat_ext : return the averaged features instead of class scores.
    pretrained_base : start the backbone from its ImageNet weights through the hub's cache.
    use_kinetics_pretrain : start from the published ``{backbone}_kinetics400`` weights (through
        the hub's cache), all but the classifier, as GluonCV's ``*_custom`` models do by default
        (the hub's default, False, never downloads unasked).
    tsn, use_tsn : accepted for GluonCV's call pattern (its 2D action factories take one or the
        other) and ignored: GluonCV 0.10 never reads them; ``num_segments`` sets the consensus.

    Examples
    --------
    >>> net = tsn("resnet18_v1b", nclass=5, num_segments=3)
    >>> net.initialize()
    >>> net(mx.nd.zeros((6, 3, 32, 32))).shape  # two videos of three frames each
    (2, 5)
    """
    from ...common.backbones.features import backbone as classification_network

    if backbone not in BACKBONES:
        raise ValueError(f"unknown TSN backbone {backbone!r}; known: {', '.join(BACKBONES)}")
    registered, feat_dim = BACKBONES[backbone]
    if use_kinetics_pretrain:
        _check_kinetics_start(backbone, pretrained_base)
    inception = backbone.startswith("inception")
    if partial_bn and not inception:
        raise ValueError(f"partial_bn is for the Inception backbones; {backbone} has "
                         f"{'no batch norm' if backbone == 'vgg16' else 'every batch norm training, as in GluonCV'}")
    options = {"norm_layer": _first_norm_only_trains()} if inception and partial_bn is not False else {}
    base = classification_network(registered, pretrained_base, **options)
    if backbone == "inceptionv1":
        stages = [(name, getattr(base, name)) for name in _GOOGLENET_LAYERS]
        stages += [("avgpool", nn.AvgPool2D(pool_size=7)), ("dropout", nn.Dropout(dropout_ratio))]
    elif inception or backbone == "vgg16":
        _set_dropout(base.features, dropout_ratio)
        stages = [("features", base.features)]
    else:
        stages = [(name, getattr(base, name)) for name in _RESNET_LAYERS]
        stages.append(("drop", nn.Dropout(dropout_ratio)))
    net = TemporalSegmentNet(stages, feat_dim, nclass, init_std, num_segments, num_crop, feat_ext)
    if use_kinetics_pretrain:
        start_from_kinetics(net, f"{backbone}_kinetics400", classifier=("output.",))
    return net


def _check_kinetics_start(backbone: str, pretrained_base: bool | str) -> None:
    """Refuse a Kinetics-400 start that cannot be made, before anything is built or fetched."""
    import gluon_hub

    if pretrained_base:
        raise ValueError("pass either pretrained_base or use_kinetics_pretrain, not both")
    published = [b for b in BACKBONES if gluon_hub.info(f"cv/{b}_kinetics400").weights]
    if backbone not in published:
        raise ValueError(f"use_kinetics_pretrain: GluonCV publishes no {backbone}_kinetics400 weights; "
                         f"backbones with them: {', '.join(published)}")
