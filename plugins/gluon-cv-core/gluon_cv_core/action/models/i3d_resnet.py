"""I3D on ResNet-50/101 V1 ("Quo Vadis, Action Recognition?", arXiv:1705.07750), with optional
non-local blocks (arXiv:1711.07971), and the Slow pathway alone (SlowFast, arXiv:1812.03982),
with GluonCV 0.10's parameter layout.

A ResNet whose bottlenecks are 3D: an "inflated" block's first convolution spans 3 frames
(3x1x1), the others see one frame (1x1x1, 1x3x3). The stem is 5x7x7 with stride 2 in time
(1x7x7, no temporal stride, in the Slow network), I3D halves the frames again after stage 1,
and the last stage is pooled over time and space.

GluonCV's I3D bottleneck keeps its layers twice, as attributes and inside a ``bottleneck``
container, so its files hold every such weight under both names; the Slow network's
bottleneck has no container. :class:`I3DResNet` reproduces either layout.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from gluon_hub import head_argument

from ...common.blocks import BUILT_FROM_NAME, HybridBlock, check_gluoncv_structure, make_norm, nn
from ...common.norm import BatchNorm3D
from .kinetics_start import start_from_kinetics
from .layers3d import ClipClassifier, inflate_from_2d
from .nonlocal_block import NonLocal

__all__ = ["I3DResNet", "I3DBottleneck", "i3d_resnet", "i3d_slow_resnet", "inflate_base", "inflate_pattern",
           "NONLOCAL_PATTERNS"]

#: depth -> blocks per stage
STAGE_BLOCKS = {50: (3, 4, 6, 3), 101: (3, 4, 23, 3), 152: (3, 8, 36, 3)}

#: (depth, non-local blocks) -> where stages 2 and 3 have one (block indices), as GluonCV places them
NONLOCAL_PATTERNS = {
    (50, 5): ((1, 3), (1, 3, 5)),
    (50, 10): ((0, 1, 2, 3), (0, 1, 2, 3, 4, 5)),
    (101, 5): ((1, 3), (6, 13, 20)),
    (101, 10): ((0, 1, 2, 3), (2, 6, 10, 14, 18, 22)),
}


def inflate_pattern(depth: int) -> tuple[tuple[int, ...], ...]:
    """I3D's choice of temporal (3x1x1) blocks: all of stage 1, every other block of stages 2
    and 3 starting with the first, every other of stage 4 starting with the second."""
    first, second, third, fourth = STAGE_BLOCKS[depth]
    return ((1,) * first, tuple(1 - i % 2 for i in range(second)), tuple(1 - i % 2 for i in range(third)),
            tuple(i % 2 for i in range(fourth)))


class I3DBottleneck(HybridBlock):
    """A 3D ResNet bottleneck: 1x1x1 (3x1x1 when inflated), 1x3x3, 1x1x1, a shortcut, a relu,
    then an optional non-local block.

    ``contained`` adds GluonCV I3D's ``bottleneck`` container (same layers, second names),
    which is created with ``prefix`` inside the current name scope.
    """

    expansion = 4

    def __init__(self, inplanes: int, planes: int, spatial_stride: int = 1, temporal_stride: int = 1,
                 dilation: int = 1, downsample: Any = None, inflate: bool = True, inflate_style: str = "3x1x1",
                 nonlocal_block: bool = False, contained: bool = True, prefix: str = "",
                 norm_layer: Callable[..., HybridBlock] = BatchNorm3D, norm_kwargs: dict | None = None) -> None:
        super().__init__()
        if inflate_style not in ("3x1x1", "3x3x3"):
            raise ValueError(f"inflate_style must be '3x1x1' or '3x3x3', got {inflate_style!r}")
        outplanes = planes * self.expansion
        if not inflate:
            kernels, paddings = ((1, 1, 1), (1, 3, 3)), ((0, 0, 0), (0, dilation, dilation))
        elif inflate_style == "3x1x1":
            kernels, paddings = ((3, 1, 1), (1, 3, 3)), ((1, 0, 0), (0, dilation, dilation))
        else:
            kernels, paddings = ((1, 1, 1), (3, 3, 3)), ((0, 0, 0), (1, dilation, dilation))
        # GluonCV applies the stride in time only where the block is inflated
        stride_t = temporal_stride if inflate else 1

        def norm(channels: int) -> Any:
            return make_norm(norm_layer, norm_kwargs, in_channels=channels)

        def build() -> None:
            self.conv1 = nn.Conv3D(in_channels=inplanes, channels=planes, kernel_size=kernels[0],
                                   padding=paddings[0], use_bias=False)
            self.conv2 = nn.Conv3D(in_channels=planes, channels=planes, kernel_size=kernels[1],
                                   strides=(stride_t, spatial_stride, spatial_stride), padding=paddings[1],
                                   dilation=(1, dilation, dilation), use_bias=False)
            self.bn1 = norm(planes)
            self.bn2 = norm(planes)
            self.conv3 = nn.Conv3D(in_channels=planes, channels=outplanes, kernel_size=1, use_bias=False)
            self.bn3 = norm(outplanes)
            self.relu = nn.Activation("relu")
            self.downsample = downsample
            self.nonlocal_block = NonLocal(outplanes, norm_layer=norm_layer, norm_kwargs=norm_kwargs) \
                if nonlocal_block else None

        if contained:
            self.bottleneck = nn.HybridSequential(prefix=prefix)
            with self.bottleneck.name_scope():
                build()
            self.bottleneck.add(self.conv1, self.bn1, self.relu, self.conv2, self.bn2, self.relu,
                                self.conv3, self.bn3)
            if self.nonlocal_block is not None:
                self.bottleneck.add(self.nonlocal_block)
        else:
            build()

    def hybrid_forward(self, F, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        identity = x if self.downsample is None else self.downsample(x)
        out = F.Activation(out + identity, act_type="relu")
        return out if self.nonlocal_block is None else self.nonlocal_block(out)


def _stage(index: int, inplanes: int, planes: int, blocks: int, spatial_stride: int, temporal_stride: int,
           dilation: int, inflate: Sequence[int], inflate_style: str, nonlocal_at: Sequence[int],
           contained: bool, norm_layer: Callable[..., HybridBlock], norm_kwargs: dict | None,
           shortcut_norm_kwargs: dict | None) -> Any:
    """Stage ``index`` (1-based) of ``blocks`` bottlenecks, the first one striding and projecting."""
    name = f"layer{index}_"
    if len(inflate) != blocks:
        raise ValueError(f"stage {index} has {blocks} blocks but {len(inflate)} inflate flags")
    downsample = None
    outplanes = planes * I3DBottleneck.expansion
    if spatial_stride != 1 or inplanes != outplanes:
        downsample = nn.HybridSequential(prefix=name + "downsample_")
        with downsample.name_scope():
            downsample.add(nn.Conv3D(in_channels=inplanes, channels=outplanes, kernel_size=1,
                                     strides=(temporal_stride, spatial_stride, spatial_stride), use_bias=False))
            downsample.add(make_norm(norm_layer, shortcut_norm_kwargs, in_channels=outplanes))
    stage = nn.HybridSequential(prefix=name)
    with stage.name_scope():
        for i in range(blocks):
            first = i == 0
            stage.add(I3DBottleneck(
                inplanes if first else outplanes, planes, spatial_stride if first else 1,
                temporal_stride if first else 1, dilation, downsample if first else None,
                inflate=inflate[i] == 1, inflate_style=inflate_style, nonlocal_block=i in nonlocal_at,
                contained=contained, prefix=f"{i}_", norm_layer=norm_layer, norm_kwargs=norm_kwargs))
    return stage


class I3DResNet(ClipClassifier):
    """``first_stage`` (stem conv, norm, relu, max-pool), ``res_layers`` (four stages), global
    average pooling, the mean over a video's clips, ``head`` (dropout, ``fc``).

    Parameters
    ----------
    nclass : action classes.
    depth : 50, 101 or 152.
    inflate : per stage, per block: 1 where the block's first convolution spans 3 frames.
    nonlocal_at : per stage, the indices of the blocks followed by a non-local block.
    spatial_strides, temporal_strides, dilations : of each stage's first block.
    conv1_kernel_t, conv1_stride_t, pool1_kernel_t, pool1_stride_t : the stem's temporal extent.
    temporal_pool2 : halve the frames after stage 1 (I3D; the Slow network does not).
    contained : GluonCV I3D's double naming of bottleneck layers (see :class:`I3DBottleneck`).
    partial_bn : freeze the running statistics of the shortcut projections' norms, which is
        what GluonCV 0.10's ``partial_bn`` does to this network.
    bn_frozen : also freeze the stem's norm (GluonCV's ``bn_frozen``).
    num_segments, num_crop : clips of one video in the batch, averaged before the classifier.
    feat_ext : return the averaged features instead of class scores.
    """

    def __init__(self, nclass: int, depth: int = 50, inflate: Sequence[Sequence[int]] | None = None,
                 nonlocal_at: Sequence[Sequence[int]] = ((), (), (), ()),
                 spatial_strides: Sequence[int] = (1, 2, 2, 2), temporal_strides: Sequence[int] = (1, 1, 1, 1),
                 dilations: Sequence[int] = (1, 1, 1, 1), conv1_kernel_t: int = 5, conv1_stride_t: int = 2,
                 pool1_kernel_t: int = 1, pool1_stride_t: int = 2, temporal_pool2: bool = True,
                 inflate_style: str = "3x1x1", contained: bool = True, partial_bn: bool = False,
                 bn_frozen: bool = False, dropout_ratio: float = 0.5, init_std: float = 0.01,
                 num_segments: int = 1, num_crop: int = 1, feat_ext: bool = False,
                 norm_layer: Callable[..., HybridBlock] = BatchNorm3D, norm_kwargs: dict | None = None) -> None:
        if depth not in STAGE_BLOCKS:
            raise ValueError(f"unsupported ResNet depth {depth}; known: {', '.join(map(str, STAGE_BLOCKS))}")
        stage_blocks = STAGE_BLOCKS[depth]
        super().__init__(2048, num_segments, num_crop, feat_ext)
        inflate = inflate_pattern(depth) if inflate is None else inflate
        frozen = {**(norm_kwargs or {}), "use_global_stats": True}
        stem_kwargs = frozen if bn_frozen else norm_kwargs
        shortcut_kwargs = frozen if bn_frozen or partial_bn else norm_kwargs
        self.temporal_pool2 = temporal_pool2
        # created outside this block's name scope, as GluonCV creates them (global names)
        self.first_stage = nn.HybridSequential(prefix="")
        self.first_stage.add(nn.Conv3D(in_channels=3, channels=64, kernel_size=(conv1_kernel_t, 7, 7),
                                       strides=(conv1_stride_t, 2, 2), padding=((conv1_kernel_t - 1) // 2, 3, 3),
                                       use_bias=False))
        self.first_stage.add(make_norm(norm_layer, stem_kwargs, in_channels=64))
        self.first_stage.add(nn.Activation("relu"))
        self.first_stage.add(nn.MaxPool3D(pool_size=(pool1_kernel_t, 3, 3), strides=(pool1_stride_t, 2, 2),
                                          padding=(pool1_kernel_t // 2, 1, 1)))
        self.pool2 = nn.MaxPool3D(pool_size=(2, 1, 1), strides=(2, 1, 1))
        self.res_layers = nn.HybridSequential(prefix="")
        inplanes = 64
        for i, blocks in enumerate(stage_blocks):
            planes = 64 * 2 ** i
            self.res_layers.add(_stage(i + 1, inplanes, planes, blocks, spatial_strides[i], temporal_strides[i],
                                       dilations[i], inflate[i], inflate_style, nonlocal_at[i], contained,
                                       norm_layer, norm_kwargs, shortcut_kwargs))
            inplanes = planes * I3DBottleneck.expansion
        self.st_avg = nn.GlobalAvgPool3D()
        self.head, self.fc = self.make_head(self.feat_dim, nclass, dropout_ratio, init_std)

    def pooled(self, F, x):
        x = self.first_stage(x)
        for i, stage in enumerate(self.res_layers):
            x = stage(x)
            if i == 0 and self.temporal_pool2:
                x = self.pool2(x)
        return self.st_avg(x)

    def nonlocal_blocks(self) -> list[NonLocal]:
        """The network's non-local blocks, in order."""
        return [block.nonlocal_block for stage in self.res_layers for block in stage
                if block.nonlocal_block is not None]


def inflate_base(net: I3DResNet, resnet: Any) -> I3DResNet:
    """``net`` initialised, its ResNet layers from the 2D ResNet V1b ``resnet`` of the same
    depth (kernels inflated, see :func:`.layers3d.inflate_from_2d`); the non-local blocks and
    the classifier keep their initialisation."""
    net.initialize()
    exclude = [p for block in net.nonlocal_blocks() for p in block.collect_params().values()]
    inflate_from_2d(net, resnet, exclude3d=exclude + list(net.fc.collect_params().values()),
                    exclude2d=resnet.fc.collect_params().values())
    return net


@head_argument("nclass")
def i3d_resnet(depth: int = 50, nclass: int = 400, nonlocal_blocks: int = 0, pretrained_base: bool | str = False,
               use_kinetics_pretrain: bool = False, use_tsn: bool = False, frozen_stages: int = -1,
               num_stages: int | None = None, inflate_stride: Sequence[int] | None = None, nonlocal_cfg: Any = None,
               nonlocal_stages: Sequence[int] | None = None, nonlocal_freq: Sequence[int] | None = None,
               **options: Any) -> I3DResNet:
    """I3D on ResNet-``depth`` V1, with 0, 5 or 10 non-local blocks placed as GluonCV places them.

    Parameters
    ----------
    depth : 50 or 101 (GluonCV's published I3D ResNets).
    nclass : action classes.
    nonlocal_blocks : 0, 5 or 10 non-local blocks in stages 2 and 3.
    pretrained_base : start from the ImageNet ResNet V1b of the same depth (through the hub's
        cache), its 2D kernels inflated into 3D; new layers keep their initialisation.
    use_kinetics_pretrain : start from the published ``i3d_resnet50_v1_kinetics400`` weights
        (through the hub's cache), all but the classifier, as GluonCV's UCF101/HMDB51 models did.
    use_tsn : accepted for GluonCV's call pattern and ignored: GluonCV 0.10 never reads it
        (``num_segments`` sets the consensus).
    frozen_stages : accepted for GluonCV's call pattern and ignored: GluonCV 0.10 stores it and
        never reads it.
    num_stages, inflate_stride, nonlocal_cfg, nonlocal_stages, nonlocal_freq : GluonCV's keywords,
        accepted with this network's own values (GluonCV's defaults; the non-local models take
        them from ``nonlocal_blocks``); others raise ValueError.
    options : :class:`I3DResNet` arguments (``partial_bn``, ``dropout_ratio``, ``num_segments`` ...).
    """
    check_gluoncv_structure(
        f"I3D ResNet-{depth}",
        {"num_stages": num_stages, "inflate_stride": inflate_stride, "nonlocal_cfg": nonlocal_cfg,
         "nonlocal_stages": nonlocal_stages, "nonlocal_freq": nonlocal_freq},
        {"num_stages": 4, "inflate_stride": (1, 1, 1, 1),
         **(dict.fromkeys(("nonlocal_cfg", "nonlocal_stages", "nonlocal_freq"), BUILT_FROM_NAME) if nonlocal_blocks
            else {"nonlocal_cfg": BUILT_FROM_NAME, "nonlocal_stages": (-1,), "nonlocal_freq": (0, 1, 1, 0)})})
    if nonlocal_blocks and (depth, nonlocal_blocks) not in NONLOCAL_PATTERNS:
        known = ", ".join(f"{d}/{n}" for d, n in NONLOCAL_PATTERNS)
        raise ValueError(f"no non-local layout for depth {depth} with {nonlocal_blocks} blocks; known: {known}")
    if pretrained_base and use_kinetics_pretrain:
        raise ValueError("pass either pretrained_base or use_kinetics_pretrain, not both")
    if use_kinetics_pretrain and (depth, nonlocal_blocks) != (50, 0):
        raise ValueError("use_kinetics_pretrain needs depth 50 without non-local blocks "
                         "(the published i3d_resnet50_v1_kinetics400 weights)")
    nonlocal_at = ((),) + NONLOCAL_PATTERNS[(depth, nonlocal_blocks)] + ((),) if nonlocal_blocks else ((),) * 4
    net = I3DResNet(nclass, depth, nonlocal_at=nonlocal_at, **options)
    if pretrained_base:
        from ...common.backbones.features import backbone

        return inflate_base(net, backbone(f"resnet{depth}_v1b", pretrained_base))
    if use_kinetics_pretrain:
        start_from_kinetics(net, "i3d_resnet50_v1_kinetics400", classifier=("fc.", "head."))
    return net


@head_argument("nclass")
def i3d_slow_resnet(depth: int = 101, nclass: int = 700, pretrained_base: bool | str = False,
                    use_tsn: bool = False, frozen_stages: int = -1, num_stages: int | None = None,
                    inflate_freq: Sequence[int] | None = None, inflate_stride: Sequence[int] | None = None,
                    nonlocal_cfg: Any = None, nonlocal_stages: Sequence[int] | None = None,
                    nonlocal_freq: Sequence[int] | None = None, **options: Any) -> I3DResNet:
    """The Slow pathway of SlowFast as a network of its own (GluonCV's ``i3d_slow_*``): no
    temporal stride or pooling anywhere, 3x1x1 kernels in stages 3 and 4 only.

    ``pretrained_base`` is refused: GluonCV trained these from scratch. ``use_tsn`` and
    ``frozen_stages`` are accepted for GluonCV's call pattern and ignored, as GluonCV 0.10 ignores
    them. ``num_stages``, ``inflate_freq``, ``inflate_stride`` and the ``nonlocal_*`` keywords are
    accepted with this network's own values (GluonCV's); others raise ValueError.
    """
    check_gluoncv_structure(
        f"I3D Slow ResNet-{depth}",
        {"num_stages": num_stages, "inflate_freq": inflate_freq, "inflate_stride": inflate_stride,
         "nonlocal_cfg": nonlocal_cfg, "nonlocal_stages": nonlocal_stages, "nonlocal_freq": nonlocal_freq},
        {"num_stages": 4, "inflate_freq": (0, 0, 1, 1), "inflate_stride": (1, 1, 1, 1),
         "nonlocal_cfg": BUILT_FROM_NAME, "nonlocal_stages": (-1,), "nonlocal_freq": (0, 0, 0, 0)})
    if pretrained_base:
        raise ValueError("the Slow networks were trained from scratch; no 2D weights to inflate "
                         "(leave pretrained_base false)")
    inflate = tuple((i,) * n for i, n in zip((0, 0, 1, 1), STAGE_BLOCKS[depth]))
    defaults = dict(inflate=inflate, conv1_kernel_t=1, conv1_stride_t=1, pool1_kernel_t=1, pool1_stride_t=1,
                    temporal_pool2=False, contained=False)
    return I3DResNet(nclass, depth, **{**defaults, **options})
