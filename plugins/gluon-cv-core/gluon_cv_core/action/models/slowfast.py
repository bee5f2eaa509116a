"""SlowFast networks ("SlowFast Networks for Video Recognition", arXiv:1812.03982), with
GluonCV 0.10's parameter layout.

Two 3D ResNets see the same video: the Slow pathway few frames with full width, the Fast
pathway ``alpha`` times more frames with ``1 / beta_inv`` of the width. After the stem and
each of stages 2-4 a lateral connection (a ``fusion_kernel_size x 1 x 1`` convolution with
temporal stride ``alpha``) brings Fast features to the Slow frame rate, where they are
concatenated to the Slow features. Both pathways are pooled and their features concatenated
before ``fc``.

Input packing (as in GluonCV): one clip tensor ``(batch, 3, fast_frames + slow_frames, H, W)``
holds the Fast pathway's frames first (``fast_frames`` frames sampled every
``fast_temporal_stride`` frames) and the Slow pathway's after them (``slow_frames`` frames
every ``slow_temporal_stride``). ``slowfast_4x16`` models take 32 + 4 = 36 frames,
``8x8`` ones 32 + 8 = 40, ``16x8`` ones 64 + 16 = 80; frames are 224x224 for the published
weights, and any multiple of 32 pixels works.
"""

from __future__ import annotations

from typing import Any, Callable

from gluon_hub import head_argument
from gluon_hub.compat import mx

from ...common.blocks import BUILT_FROM_NAME, HybridBlock, check_gluoncv_structure, make_norm, nn
from ...common.norm import BatchNorm3D
from .kinetics_start import start_from_kinetics
from .layers3d import check_clips

__all__ = ["SlowFast", "Bottleneck", "slowfast", "DEPTHS"]


def _conv3d(channels: int, kernel: Any, strides: Any = 1, padding: Any = 0, **options: Any) -> Any:
    """A bias-free 3D convolution, He-initialised as GluonCV initialises its video networks."""
    return nn.Conv3D(channels, kernel, strides, padding, use_bias=False,
                     weight_initializer=mx.init.MSRAPrelu(), **options)


class Bottleneck(HybridBlock):
    """``conv1`` (1x1x1, or 3x1x1 with ``temporal``), ``conv2`` (1x3x3, spatial stride),
    ``conv3`` (1x1x1, x4 channels), each with its norm, and a residual connection.

    ``bn3`` starts at zero scale, so every block starts as the identity.
    """

    expansion = 4

    def __init__(self, inplanes: int, planes: int, strides: int = 1, downsample: HybridBlock | None = None,
                 temporal: bool = False, norm_layer: Callable[..., HybridBlock] = BatchNorm3D,
                 norm_kwargs: dict | None = None, prefix: str | None = None) -> None:
        super().__init__(prefix=prefix)
        norm = dict(norm_layer=norm_layer, norm_kwargs=norm_kwargs)
        with self.name_scope():
            if temporal:
                self.conv1 = _conv3d(planes, (3, 1, 1), 1, (1, 0, 0), in_channels=inplanes)
            else:
                self.conv1 = _conv3d(planes, 1, in_channels=inplanes)
            self.bn1 = make_norm(**norm, in_channels=planes)
            self.conv2 = _conv3d(planes, (1, 3, 3), (1, strides, strides), (0, 1, 1), in_channels=planes)
            self.bn2 = make_norm(**norm, in_channels=planes)
            self.conv3 = _conv3d(planes * self.expansion, 1, in_channels=planes)
            self.bn3 = make_norm(**norm, in_channels=planes * self.expansion, gamma_initializer="zeros")
            self.relu = nn.Activation("relu")
        self.downsample = downsample

    def hybrid_forward(self, F, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        identity = x if self.downsample is None else self.downsample(x)
        return F.Activation(out + identity, act_type="relu")


#: depth -> bottlenecks per stage (res2-res5)
DEPTHS: dict[int, tuple[int, int, int, int]] = {50: (3, 4, 6, 3), 101: (3, 4, 23, 3)}


class SlowFast(HybridBlock):
    """Fast pathway (``fast_conv1``, ``fast_bn1``, ``fast_res2``-``fast_res5``), lateral
    connections (``lateral_p1``, ``lateral_res2``-``lateral_res4``), Slow pathway
    (``slow_conv1``, ``slow_bn1``, ``slow_res2``-``slow_res5``) and ``fc``.

    See the module docstring for the input's layout; scores ``(batch, nclass)``, or the
    ``feat_dim`` pooled features (Slow's, then Fast's) when ``feat_ext``.

    Parameters
    ----------
    layers : bottlenecks per stage.
    slow_frames, fast_frames : frames each pathway takes from the input.
    alpha : the Fast pathway's frame rate over the Slow one's (``fast_frames / slow_frames``).
    beta_inv : the Slow pathway's width over the Fast one's.
    fusion_conv_channel_ratio : a lateral connection's output channels over its input's.
    fusion_kernel_size : the lateral convolutions' temporal kernel.
    width_per_group : the Slow stem's width (64 for ResNets).
    temporal_kernel_blocks : stage 4's blocks after this many use 1x1x1 ``conv1``s instead of
        3x1x1 (GluonCV's ``num_block_temp_kernel``); None for all 3x1x1.
    """

    def __init__(self, nclass: int, layers: tuple[int, ...], slow_frames: int = 4, fast_frames: int = 32,
                 alpha: int = 8, beta_inv: int = 8, fusion_conv_channel_ratio: int = 2,
                 fusion_kernel_size: int = 5, width_per_group: int = 64, temporal_kernel_blocks: int | None = None,
                 dropout_ratio: float = 0.5, num_segments: int = 1, num_crop: int = 1, feat_ext: bool = False,
                 init_std: float = 0.01, norm_layer: Callable[..., HybridBlock] = BatchNorm3D,
                 norm_kwargs: dict | None = None) -> None:
        super().__init__()
        self.slow_frames = slow_frames
        self.fast_frames = fast_frames
        self.num_segments = num_segments
        self.num_crop = num_crop
        self.feat_ext = feat_ext
        self._norm = dict(norm_layer=norm_layer, norm_kwargs=norm_kwargs)
        width = width_per_group
        fast_width = width // beta_inv
        self.feat_dim = width * 32 + width * 32 // beta_inv
        with self.name_scope():
            self.fast_conv1 = _conv3d(fast_width, (5, 7, 7), (1, 2, 2), (2, 3, 3), in_channels=3,
                                      prefix="fast_conv0_")
            self.fast_bn1 = make_norm(**self._norm, in_channels=fast_width, prefix="fast_batchnorm0_")
            self.fast_relu = nn.Activation("relu")
            self.fast_maxpool = nn.MaxPool3D((1, 3, 3), (1, 2, 2), (0, 1, 1))
            self.slow_conv1 = _conv3d(width, (1, 7, 7), (1, 2, 2), (0, 3, 3), in_channels=3, prefix="slow_conv0_")
            self.slow_bn1 = make_norm(**self._norm, in_channels=width, prefix="slow_batchnorm0_")
            self.slow_relu = nn.Activation("relu")
            self.slow_maxpool = nn.MaxPool3D((1, 3, 3), (1, 2, 2), (0, 1, 1))
            # res2..res5 are 1, 2, 4, 8 times the stem's width (Fast: 1 / beta_inv of it); each
            # lateral connection reads the Fast features that enter its stage
            fast_in, slow_in = fast_width, width
            for stage, (multiplier, count) in enumerate(zip((1, 2, 4, 8), layers), start=2):
                strides = 1 if stage == 2 else 2
                fast_planes, slow_planes = width * multiplier // beta_inv, width * multiplier
                # Slow stages 4 and 5 (not 2 and 3) have temporal 3x1x1 kernels; Fast ones all do
                limit = temporal_kernel_blocks if stage == 4 else None
                setattr(self, f"fast_res{stage}", self._stage(f"fast_res{stage}", fast_in, fast_planes, count,
                                                              strides, True, limit))
                name = "lateral_p1" if stage == 2 else f"lateral_res{stage - 1}"
                setattr(self, name, self._lateral(name, fast_in, fusion_conv_channel_ratio, fusion_kernel_size,
                                                  alpha))
                slow_in += fast_in * fusion_conv_channel_ratio  # the lateral's channels join Slow's
                setattr(self, f"slow_res{stage}", self._stage(f"slow_res{stage}", slow_in, slow_planes, count,
                                                              strides, stage >= 4, limit))
                fast_in, slow_in = fast_planes * Bottleneck.expansion, slow_planes * Bottleneck.expansion
            self.avg = nn.GlobalAvgPool3D()
            self.dp = nn.Dropout(dropout_ratio)
            self.fc = nn.Dense(nclass, in_units=self.feat_dim, weight_initializer=mx.init.Normal(init_std))

    def _stage(self, name: str, inplanes: int, planes: int, count: int, strides: int, temporal: bool,
               temporal_kernel_blocks: int | None) -> Any:
        """One pathway's stage; the first block downsamples (and widens) the shortcut."""
        downsample = None
        if strides != 1 or inplanes != planes * Bottleneck.expansion:
            downsample = nn.HybridSequential(prefix=f"{name}_downsample_")
            with downsample.name_scope():
                downsample.add(_conv3d(planes * Bottleneck.expansion, 1, (1, strides, strides), in_channels=inplanes))
                downsample.add(make_norm(**self._norm, in_channels=planes * Bottleneck.expansion))
        stage = nn.HybridSequential(prefix=f"{name}_")
        with stage.name_scope():
            for index in range(count):
                block_temporal = temporal and (temporal_kernel_blocks is None or index < temporal_kernel_blocks)
                stage.add(Bottleneck(inplanes, planes, strides if index == 0 else 1,
                                     downsample if index == 0 else None, block_temporal, **self._norm,
                                     prefix=f"block{index}_"))
                inplanes = planes * Bottleneck.expansion
        return stage

    def _lateral(self, name: str, channels: int, ratio: int, kernel: int, alpha: int) -> Any:
        """Fast features at the Slow frame rate: a strided temporal convolution, norm, relu."""
        lateral = nn.HybridSequential(prefix=f"{name}_")
        with lateral.name_scope():
            lateral.add(_conv3d(channels * ratio, (kernel, 1, 1), (alpha, 1, 1), (kernel // 2, 0, 0),
                                in_channels=channels))
            lateral.add(make_norm(**self._norm, in_channels=channels * ratio))
            lateral.add(nn.Activation("relu"))
        return lateral

    def hybrid_forward(self, F, x):
        fast = F.slice_axis(x, axis=2, begin=0, end=self.fast_frames)
        slow = F.slice_axis(x, axis=2, begin=self.fast_frames, end=self.fast_frames + self.slow_frames)
        fast = self.fast_maxpool(self.fast_relu(self.fast_bn1(self.fast_conv1(fast))))
        slow = self.slow_maxpool(self.slow_relu(self.slow_bn1(self.slow_conv1(slow))))
        laterals = (self.lateral_p1, self.lateral_res2, self.lateral_res3, self.lateral_res4)
        fast_stages = (self.fast_res2, self.fast_res3, self.fast_res4, self.fast_res5)
        slow_stages = (self.slow_res2, self.slow_res3, self.slow_res4, self.slow_res5)
        for lateral, fast_stage, slow_stage in zip(laterals, fast_stages, slow_stages):
            slow = slow_stage(F.concat(slow, lateral(fast), dim=1))
            fast = fast_stage(fast)
        x = F.concat(self.avg(slow).flatten(), self.avg(fast).flatten(), dim=1)
        # segmental consensus: the clips of one video (segments x crops) are consecutive rows
        x = F.reshape(x, shape=(-1, self.num_segments * self.num_crop, self.feat_dim)).mean(axis=1)
        if self.feat_ext:
            return x
        return self.fc(self.dp(x))


@head_argument("nclass")
def slowfast(depth: int = 50, slow_frames: int = 4, fast_frames: int = 32, alpha: int = 8,
             fusion_kernel_size: int = 5, temporal_kernel_blocks: int | None = None,
             slow_temporal_stride: int = 16, fast_temporal_stride: int = 2, nclass: int = 400,
             num_segments: int = 1, num_crop: int = 1, feat_ext: bool = False, dropout_ratio: float = 0.5,
             init_std: float = 0.01, norm_layer: Callable[..., HybridBlock] = BatchNorm3D,
             norm_kwargs: dict | None = None, use_kinetics_pretrain: bool = False, pretrained_base: bool | str = False,
             use_tsn: bool = False, partial_bn: bool = False, bn_eval: bool = True, bn_frozen: bool = False,
             frozen_stages: int = -1, block: Any = None, num_block_temp_kernel_fast: int | None = None,
             num_block_temp_kernel_slow: int | None = None, **options: Any) -> SlowFast:
    """SlowFast on a bottleneck ResNet of ``depth`` (50 or 101), trained from scratch.

    Parameters
    ----------
    depth : the ResNet's depth.
    slow_frames, fast_frames : frames per pathway; the input holds Fast's then Slow's.
    alpha : Fast frames per Slow frame (the lateral convolutions' temporal stride).
    fusion_kernel_size : the lateral convolutions' temporal kernel.
    temporal_kernel_blocks : stage 4 blocks with a 3x1x1 ``conv1`` (the rest 1x1x1); None: all.
    slow_temporal_stride, fast_temporal_stride : frame steps the clip's pathways were sampled
        with (kept on the model as attributes for the data pipeline; the network ignores them).
    nclass : classes scored.
    num_segments, num_crop : clips per video averaged inside the network (consecutive rows).
    feat_ext : return the pooled features instead of scores.
    dropout_ratio : dropout before ``fc`` in training.
    init_std : standard deviation of ``fc``'s initial weights.
    norm_layer, norm_kwargs : the normalization (``SyncBatchNorm`` with ``num_devices`` ...).
    use_kinetics_pretrain : start from the published ``slowfast_4x16_resnet50_kinetics400``
        weights (through the hub's cache), all but ``fc``, as GluonCV's custom model does; the
        network must then have that model's structure.
    pretrained_base, use_tsn, partial_bn, bn_eval, bn_frozen, frozen_stages : accepted for
        GluonCV's call pattern and ignored: GluonCV 0.10's SlowFast stores them but never reads
        them (it has no ImageNet starting point and freezes nothing), so they change nothing there either.
    block, num_block_temp_kernel_fast, num_block_temp_kernel_slow : GluonCV's keywords, accepted
        left out only (GluonCV's bottleneck; ``temporal_kernel_blocks`` is the hub's way to give
        fewer blocks a temporal kernel); others raise ValueError.
    options : other :class:`SlowFast` arguments (``beta_inv``, ``width_per_group`` ...).
    """
    check_gluoncv_structure(
        f"SlowFast ResNet-{depth}",
        {"block": block, "num_block_temp_kernel_fast": num_block_temp_kernel_fast,
         "num_block_temp_kernel_slow": num_block_temp_kernel_slow},
        dict.fromkeys(("block", "num_block_temp_kernel_fast", "num_block_temp_kernel_slow"), BUILT_FROM_NAME))
    if depth not in DEPTHS:
        raise ValueError(f"unknown SlowFast depth {depth!r}; known: {', '.join(map(str, DEPTHS))}")
    if fast_frames != alpha * slow_frames:
        raise ValueError(f"fast_frames ({fast_frames}) must be alpha ({alpha}) x slow_frames ({slow_frames}): "
                         "the lateral connections bring Fast features to the Slow frame rate")
    check_clips(num_segments, num_crop)
    net = SlowFast(nclass, DEPTHS[depth], slow_frames, fast_frames, alpha, fusion_kernel_size=fusion_kernel_size,
                   temporal_kernel_blocks=temporal_kernel_blocks, dropout_ratio=dropout_ratio,
                   num_segments=num_segments, num_crop=num_crop, feat_ext=feat_ext, init_std=init_std,
                   norm_layer=norm_layer, norm_kwargs=norm_kwargs, **options)
    net.slow_temporal_stride = slow_temporal_stride
    net.fast_temporal_stride = fast_temporal_stride
    if use_kinetics_pretrain:
        _start_from_kinetics(net)
    return net


def _start_from_kinetics(net: SlowFast) -> None:
    """Every parameter but ``fc``'s from the published Kinetics-400 SlowFast 4x16 ResNet-50."""
    import gluon_hub

    name = "slowfast_4x16_resnet50_kinetics400"
    # shapes first (a build allocates nothing), so a misfit is refused before any download
    published = slowfast(**gluon_hub.info(f"cv/{name}").kwargs)
    shapes = {key: param.shape for key, param in published._collect_params_with_prefix().items()}
    target = {key: param for key, param in net._collect_params_with_prefix().items() if not key.startswith("fc.")}
    misfits = [key for key, param in target.items() if shapes.get(key) != param.shape]
    if misfits:
        raise ValueError(f"use_kinetics_pretrain needs slowfast_4x16_resnet50_kinetics400's structure "
                         f"(depth 50, 4 + 32 frames, alpha 8); {len(misfits)} parameters differ, first {misfits[0]!r}")
    start_from_kinetics(net, name, classifier=("fc.",))
