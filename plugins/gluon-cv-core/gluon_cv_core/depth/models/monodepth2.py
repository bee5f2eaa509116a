"""Monodepth2 ("Digging Into Self-Supervised Monocular Depth Estimation", ICCV 2019,
arXiv:1806.01260) with GluonCV 0.10's parameter layout.

- :class:`ResnetEncoder`: a ResNet-18 or -34 V1b run to its last stage; it returns
  the five feature maps of strides 2, 4, 8, 16 and 32. It takes RGB in ``[0, 1]`` and
  normalises inside the network with GluonCV's constants; the pose network feeds it two frames
  stacked on the channel axis (6 channels).
- :class:`DepthDecoder`: five stages of (3x3 conv + ELU, nearest 2x upsampling, skip
  concatenation, 3x3 conv + ELU), every 3x3 convolution after a reflection pad; a sigmoid
  disparity head at each scale asked for. It returns ``[disp_3, disp_2, disp_1, disp_0]``
  (coarsest first, ``disp_s`` at ``1 / 2**s`` of the input), as GluonCV's forward does.
- :class:`PoseDecoder`: 1x1 squeeze, two 3x3 convolutions and a 1x1 to six numbers per frame
  pair, averaged over the image and scaled by 0.01: ``(axis-angle, translation)``, each
  ``(N, frames, 1, 3)``.

GluonCV registers every decoder layer twice, once under its position (``decoder.0``) and once
inside a sequence (``decoder.decoder.0``; the pose head's is ``decoder.net.0``), so its files
hold each of those weights under both names; the decoders here keep both names so that those
files load strictly. Inputs need a height and width divisible by 32 (the decoder concatenates
upsampled maps with the encoder's).
"""

from __future__ import annotations

from typing import Any, Sequence

from gluon_hub.compat import mx

from ...common.backbones.resnetv1b import resnet_v1b
from ...common.blocks import HybridBlock, nn

__all__ = ["DepthDecoder", "MonoDepth2", "MonoDepth2PoseNet", "PoseDecoder", "ResnetEncoder", "monodepth2",
           "monodepth2_posenet", "scale_disparity_heads", "BACKBONES", "STRIDE"]

#: backbone name -> (ResNet depth, V1 variant). GluonCV 0.10 also lists V1s encoders of 50 to 152
#: layers, but their 128-channel stem does not fit its decoder (built for 64), so they cannot run
BACKBONES = {"resnet18": (18, "b"), "resnet34": (34, "b")}
#: the encoder's output stride: inputs must be multiples of it
STRIDE = 32
#: GluonCV's input normalisation, applied inside the encoder to RGB in [0, 1]
_PIXEL_MEAN, _PIXEL_STD = 0.45, 0.225
#: output channels of the decoder's stages 0 (full resolution) to 4
_DECODER_CHANNELS = (16, 32, 64, 128, 256)
#: the pose head's width
_POSE_CHANNELS = 256


def _check_backbone(backbone: str) -> tuple[int, str]:
    if backbone not in BACKBONES:
        raise ValueError(f"unknown Monodepth2 backbone {backbone!r}; known: {', '.join(BACKBONES)}")
    return BACKBONES[backbone]


class ResnetEncoder(HybridBlock):
    """The ResNet's stem and four stages; returns their five feature maps, finest first."""

    def __init__(self, backbone: str = "resnet18", num_input_images: int = 1) -> None:
        super().__init__()
        depth, variant = _check_backbone(backbone)
        if num_input_images < 1:
            raise ValueError(f"num_input_images must be at least 1, got {num_input_images}")
        #: channels of the five feature maps
        self.num_ch_enc = (64, 64, 128, 256, 512)
        self.in_channels = 3 * num_input_images
        with self.name_scope():
            # the stem's input channels are inferred: 3, or 6 for the pose network's frame pairs
            self.encoder = resnet_v1b(depth, variant)

    def start_from(self, resnet: Any) -> None:
        """Copy an ImageNet ResNet's parameters into the encoder, as GluonCV's ``pretrained_base``:
        with several input frames, the stem's kernel is repeated for each and divided by their count."""
        frames = self.in_channels // 3
        own = self.encoder._collect_params_with_prefix()
        for name, param in resnet._collect_params_with_prefix().items():
            value = param.data()
            if name == "conv1.weight" and frames > 1:
                value = mx.nd.concat(*[value] * frames, dim=1) / frames
            own[name]._load_init(value, None)  # MXNet's own loader: sets a deferred shape too

    def hybrid_forward(self, F, x):
        net = self.encoder
        stem = net.relu(net.bn1(net.conv1((x - _PIXEL_MEAN) / _PIXEL_STD)))
        features = [stem]
        x = net.maxpool(stem)
        for stage in (net.layer1, net.layer2, net.layer3, net.layer4):
            x = stage(x)
            features.append(x)
        return features


class _PadConv3x3(HybridBlock):
    """Reflection pad of one pixel, then a 3x3 convolution: the map keeps its size."""

    def __init__(self, in_channels: int, channels: int) -> None:
        super().__init__()
        with self.name_scope():
            self.pad = nn.ReflectionPad2D(1)
            self.conv = nn.Conv2D(channels, 3, in_channels=in_channels)

    def hybrid_forward(self, F, x):
        return self.conv(self.pad(x))


class _ConvELU(HybridBlock):
    """A padded 3x3 convolution followed by ELU."""

    def __init__(self, in_channels: int, channels: int) -> None:
        super().__init__()
        with self.name_scope():
            self.conv = _PadConv3x3(in_channels, channels)
            self.nonlin = nn.ELU()

    def hybrid_forward(self, F, x):
        return self.nonlin(self.conv(x))


def _register_twice(block: HybridBlock, layers: list, sequence: str) -> None:
    """Children ``0, 1, ...`` and the same layers again in the sequence ``sequence``: the two
    names GluonCV's files give each decoder weight (see the module docstring)."""
    for position, layer in enumerate(layers):
        block.register_child(layer, str(position))
    setattr(block, sequence, nn.HybridSequential())
    getattr(block, sequence).add(*layers)


class DepthDecoder(HybridBlock):
    """Disparity in ``(0, 1)`` at each of ``scales`` from the encoder's five feature maps."""

    def __init__(self, num_ch_enc: Sequence[int], scales: Sequence[int] = (0, 1, 2, 3),
                 num_output_channels: int = 1, use_skips: bool = True) -> None:
        super().__init__()
        self.scales = tuple(int(s) for s in scales)
        bad = [s for s in self.scales if not 0 <= s <= 4]
        if bad or not self.scales:
            raise ValueError(f"scales must be among 0..4 (the decoder's stages), got {list(scales)}")
        self.use_skips = use_skips
        num_ch_enc = [int(c) for c in num_ch_enc]
        layers = []
        self._stage_index: dict[int, tuple[int, int]] = {}
        with self.name_scope():
            for i in range(4, -1, -1):
                in_channels = num_ch_enc[-1] if i == 4 else _DECODER_CHANNELS[i + 1]
                before = _ConvELU(in_channels, _DECODER_CHANNELS[i])
                skip = num_ch_enc[i - 1] if use_skips and i > 0 else 0
                after = _ConvELU(_DECODER_CHANNELS[i] + skip, _DECODER_CHANNELS[i])
                self._stage_index[i] = (len(layers), len(layers) + 1)
                layers += [before, after]
            self._head_index = {}
            for s in self.scales:
                self._head_index[s] = len(layers)
                layers.append(_PadConv3x3(_DECODER_CHANNELS[s], num_output_channels))
            _register_twice(self, layers, "decoder")

    def hybrid_forward(self, F, features):
        layers = self.decoder
        outputs = []
        x = features[-1]
        for i in range(4, -1, -1):
            before, after = self._stage_index[i]
            x = [F.UpSampling(layers[before](x), scale=2, sample_type="nearest")]
            if self.use_skips and i > 0:
                x.append(features[i - 1])
            x = layers[after](F.concat(*x, dim=1))
            if i in self._head_index:
                outputs.append(F.sigmoid(layers[self._head_index[i]](x)))
        return outputs


class PoseDecoder(HybridBlock):
    """Axis-angle rotation and translation of each frame pair, ``(N, frames, 1, 3)`` each."""

    def __init__(self, num_ch_enc: Sequence[int], num_input_features: int = 1,
                 num_frames_to_predict_for: int | None = 2, stride: int = 1) -> None:
        super().__init__()
        if num_frames_to_predict_for is None:
            num_frames_to_predict_for = num_input_features - 1
        if num_frames_to_predict_for < 1:
            raise ValueError(f"num_frames_to_predict_for must be at least 1, got {num_frames_to_predict_for}")
        self.num_frames = num_frames_to_predict_for
        width = _POSE_CHANNELS
        with self.name_scope():
            layers = [
                nn.Conv2D(width, 1, in_channels=int(num_ch_enc[-1])),
                nn.Conv2D(width, 3, stride, 1, in_channels=num_input_features * width),
                nn.Conv2D(width, 3, stride, 1, in_channels=width),
                nn.Conv2D(6 * self.num_frames, 1, in_channels=width),
            ]
            _register_twice(self, layers, "net")

    def hybrid_forward(self, F, feature_lists):
        squeeze, first, second, last = self.net[0], self.net[1], self.net[2], self.net[3]
        x = F.concat(*[F.relu(squeeze(features[-1])) for features in feature_lists], dim=1)
        x = last(F.relu(second(F.relu(first(x)))))
        x = 0.01 * F.mean(x, axis=(2, 3)).reshape((-1, self.num_frames, 1, 6))
        return F.slice_axis(x, axis=3, begin=0, end=3), F.slice_axis(x, axis=3, begin=3, end=6)


class _CheckedInput(HybridBlock):
    """Refuses NDArray inputs the network cannot take, with their shape, before MXNet does."""

    def forward(self, x, *args):
        shape = getattr(x, "shape", None)
        if shape is not None and hasattr(x, "asnumpy"):
            channels = self.encoder.in_channels
            if len(shape) != 4 or shape[1] != channels or shape[2] % STRIDE or shape[3] % STRIDE:
                raise ValueError(
                    f"{type(self).__name__} takes (batch, {channels}, height, width) with height and width "
                    f"multiples of {STRIDE}, got {tuple(shape)}; resize the image (the published models "
                    "were trained at 192x640)")
        return super().forward(x, *args)

    def infer_shape(self, *args):
        """Shapes of deferred parameters from the graph, as HybridBlock's, but leaving out the
        ResNet's classifier: it is outside the graph (kept only so that GluonCV's files load), and
        HybridBlock's version fails on it when a fresh network is first run hybridized."""
        inputs, out = self._get_graph(*args)
        arg_shapes, _, aux_shapes = out.infer_shape(**{i.name: a.shape for i, a in zip(inputs, args)})
        shapes = {**dict(zip(out.list_arguments(), arg_shapes)), **dict(zip(out.list_auxiliary_states(), aux_shapes))}
        for param in self.collect_params().values():
            if param.name in shapes:
                param.shape = shapes[param.name]


class MonoDepth2(_CheckedInput):
    """Depth network: an image batch ``(N, 3, H, W)`` in ``[0, 1]`` -> disparities
    ``[disp_3, disp_2, disp_1, disp_0]`` of shape ``(N, 1, H / 2**s, W / 2**s)``."""

    def __init__(self, backbone: str = "resnet18", scales: Sequence[int] = (0, 1, 2, 3),
                 num_output_channels: int = 1, use_skips: bool = True, num_input_images: int = 1) -> None:
        super().__init__()
        with self.name_scope():
            self.encoder = ResnetEncoder(backbone, num_input_images=num_input_images)
            self.decoder = DepthDecoder(self.encoder.num_ch_enc, scales, num_output_channels, use_skips)

    def hybrid_forward(self, F, x):
        return self.decoder(self.encoder(x))


def scale_disparity_heads(net: MonoDepth2, x: Any, largest: float = 10.0) -> float:
    """Scale the initialised ``net``'s disparity heads so that the largest |logit| before their
    sigmoid is ``largest`` on the batch ``x``; returns the factor applied.

    Random He weights put those logits in the hundreds, where the sigmoid saturates and its
    float32 rounding near 0 and 1 is all a comparison sees; a trained model's stay within about
    10. The heads are the decoder's last convolutions (only the sigmoid reads them), so scaling
    their weight and bias scales the logits exactly; they are measured with the heads first
    shrunk 1e4 times, where the sigmoid is far from saturation and inverts precisely. Used
    where random weights must behave like trained ones: the ONNX portability measurement and
    the runner tests.
    """
    import numpy as np

    if not isinstance(net, MonoDepth2):
        raise TypeError(f"scale_disparity_heads takes a Monodepth2 depth network, not {type(net).__name__}")
    heads = [net.decoder.decoder[i] for i in net.decoder._head_index.values()]
    params = [p for head in heads for p in head.collect_params().values()]
    for param in params:
        param.set_data(param.data() * 1e-4)
    outputs = net(x if isinstance(x, mx.nd.NDArray) else mx.nd.array(x))
    logits = [np.log(o / (1 - o)) for o in (out.asnumpy().astype(np.float64) for out in outputs)]
    factor = largest / max(float(np.abs(logit).max()) for logit in logits)
    for param in params:
        param.set_data(param.data() * factor)
    return factor * 1e-4


class MonoDepth2PoseNet(_CheckedInput):
    """Pose network: frame pairs ``(N, 6, H, W)`` (two RGB frames in ``[0, 1]`` stacked on the
    channel axis) -> ``(axis-angle, translation)``, each ``(N, frames, 1, 3)``."""

    def __init__(self, backbone: str = "resnet18", num_input_images: int = 2, num_input_features: int = 1,
                 num_frames_to_predict_for: int | None = 2, stride: int = 1) -> None:
        super().__init__()
        with self.name_scope():
            self.encoder = ResnetEncoder(backbone, num_input_images=num_input_images)
            self.decoder = PoseDecoder(self.encoder.num_ch_enc, num_input_features, num_frames_to_predict_for,
                                       stride)

    def hybrid_forward(self, F, x):
        return self.decoder([self.encoder(x)])


def _start_from_imagenet(net: Any, backbone: str, pretrained_base: bool | str) -> Any:
    """``net`` with its encoder from the ImageNet ResNet's published weights, through the hub's cache."""
    if pretrained_base:
        from ...common.backbones.features import backbone as classification_network

        depth, variant = _check_backbone(backbone)
        net.encoder.start_from(classification_network(f"resnet{depth}_v1{variant}", pretrained_base))
    return net


def monodepth2(backbone: str = "resnet18", scales: Sequence[int] = (0, 1, 2, 3), num_output_channels: int = 1,
               use_skips: bool = True, num_input_images: int = 1, pretrained_base: bool | str = False) -> MonoDepth2:
    """Monodepth2's depth network (GluonCV's ``monodepth2_resnet18_kitti_*_640x192``).

    Parameters
    ----------
    backbone : ``resnet18`` (the published models) or ``resnet34``.
    scales : the decoder stages (0 = full resolution) that output a disparity map.
    num_output_channels : channels of each disparity map.
    use_skips : concatenate the encoder's feature maps into the decoder.
    num_input_images : frames stacked on the channel axis of the input (the published: 1).
    pretrained_base : start the encoder from the ImageNet ResNet's weights (through the hub's
        cache), as GluonCV's default does; the hub's default, False, never downloads unasked.

    Examples
    --------
    >>> net = monodepth2()
    >>> net.decoder.scales
    (0, 1, 2, 3)
    """
    return _start_from_imagenet(MonoDepth2(backbone, scales, num_output_channels, use_skips, num_input_images),
                                backbone, pretrained_base)


def monodepth2_posenet(backbone: str = "resnet18", num_input_images: int = 2, num_input_features: int = 1,
                       num_frames_to_predict_for: int | None = 2, stride: int = 1,
                       pretrained_base: bool | str = False) -> MonoDepth2PoseNet:
    """Monodepth2's pose network (GluonCV's ``monodepth2_resnet18_posenet_kitti_*_640x192``).

    Parameters
    ----------
    backbone : as for :func:`monodepth2`.
    num_input_images : frames stacked on the channel axis of the input.
    num_input_features : encoder outputs the head concatenates.
    num_frames_to_predict_for : poses predicted per input (``None``: ``num_input_features - 1``).
    stride : stride of the head's 3x3 convolutions.
    pretrained_base : start the encoder from the ImageNet ResNet's weights (through the hub's
        cache), its stem's kernel repeated for each frame and divided by their count, as GluonCV's.

    Examples
    --------
    >>> net = monodepth2_posenet()
    >>> net.encoder.in_channels
    6
    """
    return _start_from_imagenet(
        MonoDepth2PoseNet(backbone, num_input_images, num_input_features, num_frames_to_predict_for, stride),
        backbone, pretrained_base)
