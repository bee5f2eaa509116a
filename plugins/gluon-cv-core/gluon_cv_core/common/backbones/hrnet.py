"""HRNet for ImageNet classification ("Deep High-Resolution Representation Learning for Visual
Recognition", arXiv:1908.07919), with GluonCV 0.10's parameter layout (its ``hrnet_*_c`` names).

A stem (two stride-2 3x3 convolutions) and a stage of bottlenecks feed three stages that keep
parallel branches at strides 4, 8, 16 and 32 (one more branch per stage). Each stage is a
sequence of modules; a module runs a few basic blocks on every branch, then fuses: output
branch ``i`` sums every input branch brought to its resolution (1x1 conv and nearest
upsampling from coarser branches, stride-2 3x3 convolutions from finer ones). The
classification head widens each branch with one bottleneck and merges them from fine to
coarse with stride-2 convolutions before a 2048-wide 1x1 conv, global pooling and the
classifier.

Nearest upsampling by exact factors means every branch's size must be half the one above
it: inputs must be multiples of 32 (GluonCV has the same limit). The segmentation networks
(:mod:`gluon_cv_core.segmentation.models.hrnet_seg`) reuse :class:`HRNetStages` with bilinear fusion instead,
which resizes each coarser branch to the finer one's size and so runs at any input size.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from gluon_hub import head_argument
from gluon_hub.compat import mx

from ..blocks import BatchNorm, HybridBlock, add_conv_norm, check_choice, check_gluoncv_structure, make_norm, nn
from .resnet import BasicBlockV1, _ResidualV1

__all__ = ["HRNet", "HRNetStages", "hrnet", "CONFIGS"]

#: name -> (bottlenecks in the first stage, their width, basic blocks per branch,
#: modules in stages 2, 3 and 4, width of the finest branch; each coarser branch doubles it)
CONFIGS = {
    "w18_small_v1": (1, 32, 2, (1, 1, 1), 16),
    "w18_small_v2": (2, 64, 2, (1, 3, 2), 18),
    "w18": (4, 64, 4, (1, 4, 3), 18),
    "w30": (4, 64, 4, (1, 4, 3), 30),
    "w32": (4, 64, 4, (1, 4, 3), 32),
    "w40": (4, 64, 4, (1, 4, 3), 40),
    "w44": (4, 64, 4, (1, 4, 3), 44),
    "w48": (4, 64, 4, (1, 4, 3), 48),
    "w64": (4, 64, 4, (1, 4, 3), 64),
}
#: how a module brings coarser branches to a finer one's size: GluonCV's ``nearest``
#: (exact factors of 2) and ``bilinear_like`` (to the finer branch's size, corners not aligned)
INTERPOLATIONS = ("nearest", "bilinear_like")
#: bottleneck widths (before the 4x expansion) of the head on each branch
_HEAD_WIDTHS = (32, 64, 128, 256)
_HEAD_CHANNELS = 2048


class Bottleneck(_ResidualV1):
    """1x1 reduce, 3x3, 1x1 expand by 4, all bias-free as in the original HRNet (GluonCV's
    ResNet bottleneck keeps biases on its 1x1 convolutions; this one must not)."""

    def __init__(self, channels: int, in_channels: int, norm_layer: Callable[..., HybridBlock] = BatchNorm,
                 norm_kwargs: dict | None = None, **kwargs: Any) -> None:
        super().__init__(channels, 1, in_channels != channels, in_channels, False, norm_layer, norm_kwargs,
                         **kwargs)
        norms = {"norm_layer": norm_layer, "norm_kwargs": norm_kwargs}
        add_conv_norm(self.body, channels // 4, 1, **norms)
        add_conv_norm(self.body, channels // 4, 3, padding=1, **norms)
        add_conv_norm(self.body, channels, 1, act=None, **norms)


def _bottlenecks(count: int, channels: int, in_channels: int, norm_layer, norm_kwargs) -> Any:
    """``count`` bottlenecks to ``channels``; the first projects its input when widths differ."""
    seq = nn.HybridSequential()
    for k in range(count):
        seq.add(Bottleneck(channels, in_channels if k == 0 else channels, norm_layer, norm_kwargs))
    return seq


class HighResolutionModule(HybridBlock):
    """Basic blocks on each branch, then every output branch sums all branches at its size."""

    def __init__(self, widths: Sequence[int], num_blocks: int, norm_layer: Callable[..., HybridBlock],
                 norm_kwargs: dict | None, interp: str = "nearest", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        check_choice("interp", interp, INTERPOLATIONS)
        norms = {"norm_layer": norm_layer, "norm_kwargs": norm_kwargs}
        self._count = len(widths)
        self._interp = interp
        with self.name_scope():
            self.branches = nn.HybridSequential()
            for width in widths:
                branch = nn.HybridSequential()
                for _ in range(num_blocks):
                    branch.add(BasicBlockV1(width, 1, False, width, **norms))
                self.branches.add(branch)
            self.fuse_layers = nn.HybridSequential()
            for i, width in enumerate(widths):
                row = nn.HybridSequential()
                for j, source in enumerate(widths):
                    path = nn.HybridSequential()
                    if j > i:  # coarser: match channels here, upsample in the forward pass
                        add_conv_norm(path, width, 1, act=None, **norms)
                    elif j == i:
                        path = mx.gluon.contrib.nn.Identity()
                    else:  # finer: one stride-2 conv per halving, the last one to this width
                        for step in range(i - j):
                            last = step == i - j - 1
                            add_conv_norm(path, width if last else source, 3, 2, 1,
                                          act=None if last else "relu", **norms)
                    row.add(path)
                self.fuse_layers.add(row)

    def hybrid_forward(self, F, *xs):
        xs = [branch(x) for branch, x in zip(self.branches, xs)]
        outputs = []
        for i, row in enumerate(self.fuse_layers):
            y = row[0](xs[0])
            for j in range(1, self._count):
                term = row[j](xs[j])
                if j > i and self._interp == "nearest":
                    term = F.UpSampling(term, scale=2 ** (j - i), sample_type="nearest")
                elif j > i:
                    term = F.contrib.BilinearResize2D(term, xs[i], mode="like", align_corners=False)
                y = y + term
            outputs.append(F.relu(y))
        return outputs


def _transition(previous: Sequence[int], widths: Sequence[int], norm_layer, norm_kwargs) -> Any:
    """Adapt each existing branch to its new width (3x3 conv, or nothing when equal) and start
    the new branch from the coarsest one with a stride-2 3x3 conv."""
    norms = {"norm_layer": norm_layer, "norm_kwargs": norm_kwargs}
    layers = nn.HybridSequential()
    for i, width in enumerate(widths):
        if i < len(previous):
            if width == previous[i]:
                layers.add(mx.gluon.contrib.nn.Identity())
            else:
                layers.add(add_conv_norm(nn.HybridSequential(), width, 3, 1, 1, **norms))
        else:
            downs = nn.HybridSequential()
            for _ in range(i + 1 - len(previous)):
                downs.add(add_conv_norm(nn.HybridSequential(), width, 3, 2, 1, **norms))
            layers.add(downs)
    return layers


def _norm_relu(seq: Any, norm_layer: Callable[..., HybridBlock], norm_kwargs: dict | None) -> Any:
    """Append the norm and ReLU that follow a biased head convolution."""
    seq.add(make_norm(norm_layer, norm_kwargs))
    seq.add(nn.Activation("relu"))
    return seq


class HRNetStages(HybridBlock):
    """The stem and the three multi-resolution stages, as this block's own layers (``conv1``
    ... ``stage4``, GluonCV's attribute names) for a head to follow; :meth:`branches` gives
    the four branches' outputs, finest first.

    ``norm_kwargs`` go to the stem's and the transitions' norms, ``stage_norm_kwargs`` to those
    of the first stage's bottlenecks and of the modules (GluonCV's segmentation networks set
    a momentum on the former only). ``interp`` is the modules' upsampling (:data:`INTERPOLATIONS`).
    """

    def __init__(self, config: str, norm_layer: Callable[..., HybridBlock], norm_kwargs: dict | None,
                 stage_norm_kwargs: dict | None, interp: str = "nearest", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        check_choice("config", config, CONFIGS)
        stem_blocks, stem_width, num_blocks, modules, width = CONFIGS[config]
        norms = {"norm_layer": norm_layer, "norm_kwargs": norm_kwargs}
        stage_norms = {"norm_layer": norm_layer, "norm_kwargs": stage_norm_kwargs}
        with self.name_scope():
            self.conv1 = nn.Conv2D(64, 3, 2, 1, use_bias=False)
            self.bn1 = make_norm(norm_layer, norm_kwargs)
            self.conv2 = nn.Conv2D(64, 3, 2, 1, use_bias=False)
            self.bn2 = make_norm(norm_layer, norm_kwargs)
            self.layer1 = _bottlenecks(stem_blocks, stem_width * 4, 64, **stage_norms)
            previous = [stem_width * 4]
            for stage, count in enumerate(modules, 2):
                widths = [width * 2 ** k for k in range(stage)]
                setattr(self, f"transition{stage - 1}", _transition(previous, widths, **norms))
                blocks = nn.HybridSequential()
                for _ in range(count):
                    blocks.add(HighResolutionModule(widths, num_blocks, interp=interp, **stage_norms))
                setattr(self, f"stage{stage}", blocks)
                previous = widths
        #: channels of the four branches, finest first
        self.branch_widths = tuple(previous)

    def branches(self, F, x) -> list:
        """The outputs of the last stage's branches (strides 4, 8, 16, 32), finest first."""
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.relu(self.bn2(self.conv2(x)))
        xs = [self.layer1(x)]
        for stage in (2, 3, 4):
            transition = getattr(self, f"transition{stage - 1}")
            # the new, coarsest branch starts from the previous coarsest one
            xs = [layer(xs[min(i, len(xs) - 1)]) for i, layer in enumerate(transition)]
            for module in getattr(self, f"stage{stage}"):
                xs = module(*xs)
        return xs


class HRNet(HRNetStages):
    """HRNet with GluonCV's classification head (see the module docstring).

    Attribute names (``conv1`` ... ``stage4``, ``incre_blocks``, ``downsamp_blocks``,
    ``final_layer``, ``classifier``) are GluonCV's: they set the parameter names of its files.
    """

    def __init__(self, config: str = "w18", classes: int = 1000,
                 norm_layer: Callable[..., HybridBlock] = BatchNorm, norm_kwargs: dict | None = None,
                 **kwargs: Any) -> None:
        super().__init__(config, norm_layer, norm_kwargs, norm_kwargs, **kwargs)
        norms = {"norm_layer": norm_layer, "norm_kwargs": norm_kwargs}
        with self.name_scope():
            self.incre_blocks = nn.HybridSequential()
            for head, branch in zip(_HEAD_WIDTHS, self.branch_widths):
                self.incre_blocks.add(_bottlenecks(1, head * 4, branch, **norms))
            self.downsamp_blocks = nn.HybridSequential()
            for finer, coarser in zip(_HEAD_WIDTHS, _HEAD_WIDTHS[1:]):
                down = nn.HybridSequential()
                down.add(nn.Conv2D(coarser * 4, 3, 2, 1, in_channels=finer * 4))
                self.downsamp_blocks.add(_norm_relu(down, **norms))
            self.final_layer = nn.HybridSequential()
            self.final_layer.add(nn.Conv2D(_HEAD_CHANNELS, 1, in_channels=_HEAD_WIDTHS[-1] * 4))
            _norm_relu(self.final_layer, **norms)
            self.avg = nn.GlobalAvgPool2D()
            self.classifier = nn.Dense(classes, in_units=_HEAD_CHANNELS)

    def hybrid_forward(self, F, x):
        xs = self.branches(F, x)
        y = self.incre_blocks[0](xs[0])
        for down, incre, branch in zip(self.downsamp_blocks, list(self.incre_blocks)[1:], xs[1:]):
            y = incre(branch) + down(y)
        return self.classifier(self.avg(self.final_layer(y)))


@head_argument("classes")
def hrnet(config: str = "w18", classes: int = 1000, norm_layer: Callable[..., HybridBlock] = BatchNorm,
          norm_kwargs: dict | None = None, stage_interp_type: str = "nearest", num_classes: int | None = None,
          purpose: str | None = None) -> HRNet:
    """HRNet-``config`` for classification (GluonCV's ``hrnet_<config>_c``).

    Parameters
    ----------
    config : a key of :data:`CONFIGS`: ``"w18_small_v1"``, ``"w18_small_v2"``, ``"w18"``,
        ``"w30"``, ``"w32"``, ``"w40"``, ``"w44"``, ``"w48"`` or ``"w64"``.
    classes : size of the classifier output.
    norm_layer, norm_kwargs : normalization class and its extra arguments.
    stage_interp_type : how the modules upsample coarser branches, one of :data:`INTERPOLATIONS`
        (GluonCV's keyword; the published weights were trained with ``"nearest"``).
    num_classes : GluonCV's name for ``classes``.
    purpose : GluonCV's keyword, accepted as ``"cls"`` only: the HRNet segmentation networks
        are models of their own here.

    Examples
    --------
    >>> net = hrnet("w18_small_v1", classes=10)
    >>> net.classifier._units
    10
    """
    check_gluoncv_structure(f"hrnet {config}", {"purpose": purpose}, {"purpose": "cls"})
    check_choice("stage_interp_type", stage_interp_type, INTERPOLATIONS)
    if num_classes is not None:
        if classes not in (1000, num_classes):
            raise ValueError(f"classes={classes} and num_classes={num_classes} disagree; pass one of them")
        classes = num_classes
    return HRNet(config, classes, norm_layer, norm_kwargs, interp=stage_interp_type)
