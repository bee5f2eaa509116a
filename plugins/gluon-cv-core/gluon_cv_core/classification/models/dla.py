"""DLA-34, "Deep Layer Aggregation" (Yu et al., arXiv:1707.06484), with GluonCV 0.10's
parameter layout; also the backbone of the DLA CenterNets.

A full-resolution 7x7 stem, two plain conv levels, then four tree levels that halve the
resolution (max-pool) and aggregate: each tree's root concatenates its blocks' outputs (and,
in "level-root" trees, the level's pooled input and earlier subtrees) and mixes them with a
1x1 conv. GluonCV's classifier pools every level's output globally and feeds the
concatenation (1008 features for DLA-34) to the dense layer.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from gluon_hub import head_argument

from ...common.blocks import (
    BUILT_FROM_NAME,
    BatchNorm,
    HybridBlock,
    add_conv_norm,
    check_gluoncv_structure,
    make_norm,
    nn,
)

__all__ = ["DLA", "DLAFeatures", "dla34"]

#: GluonCV's DLA normalizes with momentum 0.9 everywhere
_MOMENTUM = 0.9


class BasicBlock(HybridBlock):
    """Two 3x3 convolutions added to a shortcut; the shortcut is given by the tree (its
    pooled, projected input) or is the block's own input."""

    def __init__(self, channels: int, strides: int, norm_layer: Callable[..., HybridBlock],
                 norm_kwargs: dict, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        with self.name_scope():
            self.conv1 = nn.Conv2D(channels, 3, strides, 1, use_bias=False)
            self.bn1 = make_norm(norm_layer, norm_kwargs, in_channels=channels)
            self.relu = nn.Activation("relu")
            self.conv2 = nn.Conv2D(channels, 3, 1, 1, use_bias=False, in_channels=channels)
            self.bn2 = make_norm(norm_layer, norm_kwargs, in_channels=channels)

    def hybrid_forward(self, F, x, *shortcut):
        out = self.bn2(self.conv2(self.relu(self.bn1(self.conv1(x)))))
        return self.relu(out + (shortcut[0] if shortcut else x))


class Root(HybridBlock):
    """Concatenate a tree's outputs, then 1x1 conv, norm and ReLU."""

    def __init__(self, channels: int, in_channels: int, norm_layer: Callable[..., HybridBlock],
                 norm_kwargs: dict, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        with self.name_scope():
            self.conv = nn.Conv2D(channels, 1, use_bias=False, in_channels=in_channels)
            self.bn = make_norm(norm_layer, norm_kwargs, in_channels=channels)
            self.relu = nn.Activation("relu")

    def hybrid_forward(self, F, *xs):
        return self.relu(self.bn(self.conv(F.concat(*xs, dim=1))))


class Tree(HybridBlock):
    """A DLA tree of ``depth`` levels from ``in_channels`` to ``channels``.

    Depth 1 is two basic blocks and a root; depth ``d`` is two trees of depth ``d - 1``,
    the second of which carries the first's output (and, for a level root, the pooled input)
    to its root. Extra inputs of the forward pass are those carried outputs.
    """

    def __init__(self, depth: int, in_channels: int, channels: int, strides: int = 1,
                 level_root: bool = False, root_channels: int = 0,
                 norm_layer: Callable[..., HybridBlock] = BatchNorm, norm_kwargs: dict | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        norms = {"norm_layer": norm_layer, "norm_kwargs": norm_kwargs or {}}
        root_channels = (root_channels or 2 * channels) + (in_channels if level_root else 0)
        self._depth, self._level_root = depth, level_root
        with self.name_scope():
            self.downsample = nn.HybridSequential(prefix="")
            if strides > 1:
                self.downsample.add(nn.MaxPool2D(strides, strides))
            self.project = nn.HybridSequential(prefix="")
            if depth == 1:
                self.tree1 = BasicBlock(channels, strides, **norms)
                self.tree2 = BasicBlock(channels, 1, **norms)
                if in_channels != channels:
                    self.project.add(nn.Conv2D(channels, 1, use_bias=False, in_channels=in_channels),
                                     make_norm(norm_layer, norms["norm_kwargs"], in_channels=channels))
                self.root = Root(channels, root_channels, **norms)
            else:
                self.tree1 = Tree(depth - 1, in_channels, channels, strides, **norms)
                self.tree2 = Tree(depth - 1, channels, channels, root_channels=root_channels + channels,
                                  **norms)

    def hybrid_forward(self, F, x, *carried):
        bottom = self.downsample(x)
        carried = list(carried) + ([bottom] if self._level_root else [])
        if self._depth == 1:
            first = self.tree1(x, self.project(bottom))
            return self.root(self.tree2(first), first, *carried)
        first = self.tree1(x)
        return self.tree2(first, *carried, first)


def _conv_level(channels: int, convs: int, strides: int, norm_layer, norm_kwargs: dict) -> Any:
    """``convs`` (3x3 conv, norm, ReLU) triples, the first strided."""
    seq = nn.HybridSequential()
    for i in range(convs):
        add_conv_norm(seq, channels, 3, strides if i == 0 else 1, 1, norm_layer=norm_layer,
                      norm_kwargs=norm_kwargs)
    return seq


def _levels(depths: Sequence[int], channels: Sequence[int], norm_layer, norm_kwargs: dict) -> list:
    """The stem and the six levels of a DLA."""
    stem = nn.HybridSequential()
    stem.add(nn.Conv2D(channels[0], 7, 1, 3, use_bias=False, in_channels=3),
             make_norm(norm_layer, norm_kwargs, in_channels=channels[0]), nn.Activation("relu"))
    levels = [_conv_level(channels[0], depths[0], 1, norm_layer, norm_kwargs),
              _conv_level(channels[1], depths[1], 2, norm_layer, norm_kwargs)]
    for i in range(2, 6):
        levels.append(Tree(depths[i], channels[i - 1], channels[i], 2, level_root=i > 2,
                           norm_layer=norm_layer, norm_kwargs=norm_kwargs, prefix=f"level{i}_"))
    return [stem, *levels]


class DLAFeatures(HybridBlock):
    """A DLA without its classifier: returns the six levels' outputs (strides 1 to 32).

    Built from existing layers (a :class:`DLA`'s), which it shares: the CenterNet backbone is
    the classifier's own layers, so ``pretrained_base`` weights stay in place.
    """

    def __init__(self, stem: HybridBlock, levels: Sequence[HybridBlock], channels: Sequence[int],
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.channels = tuple(channels)
        # GluonCV's attribute names: they set the parameter names of its files
        self.base_layer = stem
        for i, level in enumerate(levels):
            setattr(self, f"level{i}", level)

    def hybrid_forward(self, F, x):
        outputs = []
        x = self.base_layer(x)
        for i in range(6):
            x = getattr(self, f"level{i}")(x)
            outputs.append(x)
        return outputs


class DLA(DLAFeatures):
    """DLA classifier: every level's globally pooled output, concatenated, then a dense layer."""

    def __init__(self, depths: Sequence[int], channels: Sequence[int], classes: int = 1000,
                 norm_layer: Callable[..., HybridBlock] = BatchNorm, norm_kwargs: dict | None = None,
                 **kwargs: Any) -> None:
        norm_kwargs = {"momentum": _MOMENTUM, **(norm_kwargs or {})}
        stem, *levels = _levels(depths, channels, norm_layer, norm_kwargs)
        super().__init__(stem, levels, channels, **kwargs)
        with self.name_scope():
            self.global_avg_pool = nn.GlobalAvgPool2D()
            self.fc = nn.Dense(classes, in_units=sum(channels))

    def features(self) -> DLAFeatures:
        """The network without its classifier, sharing this one's layers."""
        return DLAFeatures(self.base_layer, [getattr(self, f"level{i}") for i in range(6)], self.channels)

    def hybrid_forward(self, F, x):
        pooled = [F.flatten(self.global_avg_pool(y)) for y in super().hybrid_forward(F, x)]
        return self.fc(F.concat(*pooled, dim=1))


@head_argument("classes")
def dla34(classes: int = 1000, norm_layer: Callable[..., HybridBlock] = BatchNorm,
          norm_kwargs: dict | None = None, momentum: float = _MOMENTUM, levels: Any = None, channels: Any = None,
          block: Any = None, residual_root: bool | None = None, linear_root: bool | None = None,
          use_feature: bool | None = None) -> DLA:
    """DLA-34 (GluonCV's ``dla34``).

    Parameters
    ----------
    classes : size of the classifier output.
    norm_layer, norm_kwargs : normalization class and its extra arguments.
    momentum : the norms' momentum (GluonCV's keyword; ``norm_kwargs`` win).
    levels, channels, block, residual_root, linear_root, use_feature : GluonCV's keywords,
        accepted with DLA-34's own values; others raise ValueError (``net.features()`` is the
        hub's ``use_feature=True``).

    Examples
    --------
    >>> net = dla34(classes=10)
    >>> net.fc._units
    10
    """
    depths, widths = [1, 1, 1, 2, 2, 1], [16, 32, 64, 128, 256, 512]
    check_gluoncv_structure("dla34", {"levels": levels, "channels": channels, "block": block,
                                      "residual_root": residual_root, "linear_root": linear_root,
                                      "use_feature": use_feature},
                            {"levels": depths, "channels": widths, "block": BUILT_FROM_NAME, "residual_root": False,
                             "linear_root": False, "use_feature": False})
    return DLA(depths, widths, classes, norm_layer, {"momentum": momentum, **(norm_kwargs or {})})
