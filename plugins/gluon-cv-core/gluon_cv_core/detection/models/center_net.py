"""CenterNet, "Objects as Points" (Zhou et al., arXiv:1904.07850), as GluonCV 0.10 lays it out.

A backbone upsampled back to stride 4 feeds three small heads: a per-class ``heatmap`` of
object centres, the box size ``wh`` and the sub-cell centre offset ``reg``. Decoding needs
no anchors: a 3x3 max-pool keeps the local peaks of the heatmap, the ``topk`` best
(class, cell) pairs become boxes. Three upsampling backbones exist:

- ResNet V1b with three (conv, BN, ReLU, stride-2 transposed conv, BN, ReLU) stages; the
  ``*_dcnv2`` variants use MXNet's modulated deformable convolution (DCNv2) for the convs;
  MXNet 1.9 runs its forward pass on CPU and GPU but its backward on GPU only, so these
  variants infer anywhere and train on a GPU;
- MobileNetV3 with three DUC stages (conv, BN, ReLU, pixel shuffle);
- DLA-34 with iterative deep aggregation (IDA): coarser levels are projected, upsampled by
  grouped transposed convolutions and merged into finer ones, down to stride 4; the
  ``*_dcnv2`` variants use DCNv2 for those projections and merges. GluonCV publishes no
  weights for the DLA CenterNets. Inputs must be multiples of 32 (or one less), since each
  upsampled level must meet the finer one exactly; GluonCV has the same limit.

In inference the network returns ``(class ids, scores, boxes)`` of shapes ``(B, K, 1)``,
``(B, K, 1)``, ``(B, K, 4)`` in input pixels, ``K = topk``, like the hub's other detectors
(GluonCV returns ids and scores as ``(B, K)``; the values are the same). In training mode it
returns the heatmap (sigmoid, clipped to ``[1e-4, 1 - 1e-4]`` for the focal loss), ``wh``
and ``reg`` maps, as GluonCV does.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from gluon_hub import head_argument
from gluon_hub.compat import mx

from ...common.backbones.features import backbone
from ...common.blocks import BUILT_FROM_NAME, BatchNorm, check_gluoncv_structure, make_norm
from ...common.boxes import class_index_map, nms_split
from ..classes import BY_DATASET, keep_named_classes

nn = mx.gluon.nn
HybridBlock = mx.gluon.HybridBlock

#: backbone -> (classification network, upsampling kind, upsampling widths)
BACKBONES = {
    "resnet18_v1b": ("resnet18_v1b", "deconv", (256, 128, 64)),
    "resnet50_v1b": ("resnet50_v1b", "deconv", (256, 128, 64)),
    "resnet101_v1b": ("resnet101_v1b", "deconv", (256, 128, 64)),
    "mobilenetv3_large_duc": ("mobilenetv3_large", "duc", (512, 256, 256)),
    "mobilenetv3_small_duc": ("mobilenetv3_small", "duc", (512, 256, 128)),
    "dla34": ("dla34", "ida", ()),
}
#: initial heatmap bias, -log((1 - 0.1) / 0.1): every centre starts at probability 0.1
_HEATMAP_BIAS = -2.19


@mx.init.register
class BilinearUpsampling(mx.init.Initializer):
    """Transposed-conv weights that start as bilinear upsampling of the first input channel.

    CenterNet starts its stride-2 transposed convolutions as smooth upsamplers rather than
    noise; as in GluonCV, every output channel reads input channel 0 and the remaining
    weights are small Gaussian noise.
    """

    def _init_weight(self, _name: str, arr: Any) -> None:
        values = np.random.normal(0, 0.01, arr.shape)
        kernel = arr.shape[2]
        factor = int(np.ceil(kernel / 2))
        centre = (2 * factor - 1 - factor % 2) / (2.0 * factor)
        ramp = 1 - np.abs(np.arange(kernel) / factor - centre)
        values[:, 0] = np.outer(ramp, ramp[:arr.shape[3]])
        arr[:] = values


class DeconvResNet(HybridBlock):
    """ResNet V1b's stem and four stages, then three stride-2 upsampling stages (stride 4 out).

    ``base_network`` and ``deconv`` are GluonCV's attribute names: they set the parameter names
    of the published files.
    """

    def __init__(self, net: HybridBlock, filters: Sequence[int], dcn: bool = False,
                 norm_layer: Any = BatchNorm, norm_kwargs: dict | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        in_channels = net.fc._in_units
        self.base_network = nn.HybridSequential()
        self.base_network.add(net.conv1, net.bn1, net.relu, net.maxpool, net.layer1, net.layer2, net.layer3,
                              net.layer4)
        with self.name_scope():
            self.deconv = nn.HybridSequential(prefix="deconv_")
            for width in filters:
                if dcn:
                    conv = mx.gluon.contrib.cnn.ModulatedDeformableConvolution(
                        width, kernel_size=3, strides=1, padding=1, in_channels=in_channels)
                else:
                    conv = nn.Conv2D(width, 3, 1, 1, in_channels=in_channels)
                self.deconv.add(conv, make_norm(norm_layer, norm_kwargs, momentum=0.9), nn.Activation("relu"),
                                nn.Conv2DTranspose(width, 4, 2, 1, use_bias=False, in_channels=width,
                                                   weight_initializer=BilinearUpsampling()),
                                make_norm(norm_layer, norm_kwargs, momentum=0.9), nn.Activation("relu"))
                in_channels = width
        self.out_channels = in_channels

    def hybrid_forward(self, F, x):
        return self.deconv(self.base_network(x))


class DUC(HybridBlock):
    """Dense upsampling convolution: conv, BN, ReLU, then pixel shuffle by ``scale``."""

    def __init__(self, channels: int, scale: int = 2, norm_layer: Any = BatchNorm,
                 norm_kwargs: dict | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        with self.name_scope():
            self.conv = nn.Conv2D(channels, 3, padding=1, use_bias=False)
            self.bn = make_norm(norm_layer, norm_kwargs)
            self.relu = nn.Activation("relu")
            self.pixel_shuffle = mx.gluon.contrib.nn.PixelShuffle2D(scale)

    def hybrid_forward(self, F, x):
        return self.pixel_shuffle(self.relu(self.bn(self.conv(x))))


class DUCMobileNet(HybridBlock):
    """MobileNetV3's features up to the global pool (stride 32), then three DUC stages."""

    def __init__(self, net: HybridBlock, filters: Sequence[int], norm_layer: Any = BatchNorm,
                 norm_kwargs: dict | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        layers = list(net.features)
        end = [isinstance(layer, nn.GlobalAvgPool2D) for layer in layers].index(True)
        with self.name_scope():
            self.feature = net.features[:end]
            self.upsampling = nn.HybridSequential(prefix="upsampling_")
            for width in filters:
                self.upsampling.add(DUC(width, 2, norm_layer, norm_kwargs))
        self.out_channels = filters[-1] // 4

    def hybrid_forward(self, F, x):
        return self.upsampling(self.feature(x))


class AggregationConv(HybridBlock):
    """3x3 conv (DCNv2 with ``dcn``), then BN and ReLU: the projections and merges of IDA.

    ``conv`` and ``actf`` are GluonCV's attribute names (its ``CustomConv``).
    """

    def __init__(self, channels: int, in_channels: int, dcn: bool = False, norm_layer: Any = BatchNorm,
                 norm_kwargs: dict | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        with self.name_scope():
            self.actf = nn.HybridSequential()
            self.actf.add(make_norm(norm_layer, norm_kwargs, in_channels=channels, momentum=0.9),
                          nn.Activation("relu"))
            if dcn:
                self.conv = mx.gluon.contrib.cnn.ModulatedDeformableConvolution(
                    channels, kernel_size=3, strides=1, padding=1, in_channels=in_channels)
            else:
                self.conv = nn.Conv2D(channels, 3, 1, 1, in_channels=in_channels)

    def hybrid_forward(self, F, x):
        return self.actf(self.conv(x))


class IDAUp(HybridBlock):
    """Iterative deep aggregation: each input after the first is projected to ``channels``,
    upsampled by its factor and merged (sum, then :class:`AggregationConv`) with the result
    before it. Returns the first input and every merged result."""

    def __init__(self, channels: int, in_channels: Sequence[int], factors: Sequence[int], dcn: bool = False,
                 norm_layer: Any = BatchNorm, norm_kwargs: dict | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        norms = {"norm_layer": norm_layer, "norm_kwargs": norm_kwargs}
        with self.name_scope():
            self.projs = nn.HybridSequential(prefix="ida_proj")
            self.ups = nn.HybridSequential(prefix="ida_ups")
            self.nodes = nn.HybridSequential(prefix="ida_nodes")
            for width, factor in zip(in_channels[1:], factors[1:]):
                self.projs.add(AggregationConv(channels, width, dcn, **norms))
                # kernel 2f, stride f, padding f/2: exactly f times larger, bilinear at start
                self.ups.add(nn.Conv2DTranspose(channels, factor * 2, factor, factor // 2, groups=channels,
                                                use_bias=False, in_channels=channels,
                                                weight_initializer=BilinearUpsampling()))
                self.nodes.add(AggregationConv(channels, channels, dcn, **norms))

    def hybrid_forward(self, F, *xs):
        merged = [xs[0]]
        for x, proj, up, node in zip(xs[1:], self.projs, self.ups, self.nodes):
            merged.append(node(up(proj(x)) + merged[-1]))
        return merged


class DLAUp(HybridBlock):
    """Aggregate DLA levels from the coarsest down: IDA ``k`` merges the ``k + 2`` coarsest
    levels (already aggregated ones included) into the width of the finest of them.

    Returns one feature map per level from ``levels[0]`` (stride 4) to the coarsest.
    """

    def __init__(self, channels: Sequence[int], dcn: bool = False, norm_layer: Any = BatchNorm,
                 norm_kwargs: dict | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        with self.name_scope():
            self.idas = nn.HybridSequential(prefix="ida")
            in_channels = list(channels)
            for start in range(len(channels) - 2, -1, -1):
                # level start + 1 is twice as coarse as level start; the levels after it were
                # aggregated into its resolution by the previous IDA, so they are too
                factors = [1] + [2] * (len(channels) - start - 1)
                self.idas.add(IDAUp(channels[start], in_channels[start:], factors, dcn, norm_layer, norm_kwargs))
                in_channels[start + 1:] = [channels[start]] * (len(channels) - start - 1)

    def hybrid_forward(self, F, *levels):
        levels = list(levels)
        outputs = [levels[-1]]
        for k, ida in enumerate(self.idas):
            start = len(levels) - k - 2
            levels[start:] = ida(*levels[start:])
            outputs.insert(0, levels[-1])
        return outputs


class DeconvDLA(HybridBlock):
    """DLA-34's levels from stride 4 down, aggregated back to stride 4 (64 channels).

    ``base``, ``dla_up`` and ``ida_up`` are GluonCV's attribute names.
    """

    def __init__(self, net: HybridBlock, dcn: bool = False, norm_layer: Any = BatchNorm,
                 norm_kwargs: dict | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        channels = list(net.channels[2:])  # from stride 4
        with self.name_scope():
            self.base = net.features()
            self.dla_up = DLAUp(channels, dcn, norm_layer, norm_kwargs)
            # the three finest aggregated maps, merged once more into the finest
            self.ida_up = IDAUp(channels[0], channels[:3], [1, 2, 4], dcn, norm_layer, norm_kwargs)
        self.out_channels = channels[0]

    def hybrid_forward(self, F, x):
        aggregated = self.dla_up(*self.base(x)[2:])
        return self.ida_up(*aggregated[:3])[-1]


def _head(channels: int, outputs: int, in_channels: int, bias: float, prefix: str) -> HybridBlock:
    """3x3 conv, ReLU, 1x1 conv. The heatmap starts from Xavier weights and a negative bias,
    the regressions from near-zero weights."""
    init = mx.init.Xavier() if bias else mx.init.Normal(0.001)
    head = nn.HybridSequential(prefix=prefix)
    with head.name_scope():
        head.add(nn.Conv2D(channels, 3, padding=1, in_channels=in_channels, weight_initializer=init),
                 nn.Activation("relu"),
                 nn.Conv2D(outputs, 1, in_channels=channels, weight_initializer=init,
                           bias_initializer=mx.init.Constant(bias)))
    return head


def decode_centers(F, heatmap, wh, reg, topk: int, scale: float):
    """The ``topk`` peaks of ``heatmap`` (B, C, H, W) as ``(class, score, x1, y1, x2, y2)`` rows.

    Class, row and column come from the flat peak index by division, with the map sizes read
    from the data, so one hybridized graph serves every input size. Sizes and offsets are
    gathered from ``wh`` and ``reg`` (B, 2, H, W) with one ``take`` over the whole batch.
    """
    plane = heatmap.slice_axis(axis=1, begin=0, end=1)  # (B, 1, H, W)
    cells = F.sum(F.ones_like(plane), axis=(1, 2, 3)).reshape((-1, 1))
    width = F.sum(F.ones_like(plane.slice_axis(axis=2, begin=0, end=1)), axis=(1, 2, 3)).reshape((-1, 1))
    scores, index = F.topk(heatmap.reshape((0, -1)), k=topk, ret_typ="both")  # (B, K)
    # floats hold these integers exactly (below 2**24) and the divisions cannot round
    # across an integer, so floor gives the integer quotient
    ids = F.floor(F.broadcast_div(index, cells))
    cell = index - F.broadcast_mul(ids, cells)
    ys = F.floor(F.broadcast_div(cell, width))
    xs = cell - F.broadcast_mul(ys, width)
    flat = F.broadcast_add(cell, F.broadcast_mul(F.contrib.arange_like(index, axis=0).reshape((-1, 1)), cells))
    maps = F.concat(reg, wh, dim=1).transpose((0, 2, 3, 1)).reshape((-1, 4))
    picked = F.take(maps, flat)  # (B, K, 4): offset x, offset y, width, height
    cx = xs + picked.slice_axis(axis=-1, begin=0, end=1).reshape((0, 0))
    cy = ys + picked.slice_axis(axis=-1, begin=1, end=2).reshape((0, 0))
    half_w = picked.slice_axis(axis=-1, begin=2, end=3).reshape((0, 0)) / 2
    half_h = picked.slice_axis(axis=-1, begin=3, end=4).reshape((0, 0)) / 2
    boxes = F.stack(cx - half_w, cy - half_h, cx + half_w, cy + half_h, axis=-1) * scale
    return F.concat(ids.expand_dims(-1), scores.expand_dims(-1), boxes, dim=-1)


class CenterNet(HybridBlock):
    """CenterNet over an upsampling ``base_network`` whose output has ``in_channels`` channels.

    Parameters
    ----------
    base_network : a block mapping images to stride-``scale`` features.
    classes : names of the foreground classes.
    in_channels : channels of the base network's output.
    head_conv_channel : width of each head's 3x3 conv.
    scale : stride of the features; boxes are scaled back to input pixels by it.
    topk : detections per image.
    flip_test : average the heatmap and sizes with those of the mirrored image.
    nms_thresh, nms_topk, post_nms : see :meth:`set_nms` (off by default, as in GluonCV:
        the max-pool peak test already removes duplicates).
    """

    def __init__(self, base_network: HybridBlock, classes: Sequence[str], in_channels: int,
                 head_conv_channel: int = 64, scale: float = 4.0, topk: int = 100, flip_test: bool = False,
                 nms_thresh: float = 0, nms_topk: int = 400, post_nms: int = 100, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._classes = tuple(classes)
        self.topk, self.scale, self.flip_test = topk, scale, flip_test
        self.nms_thresh, self.nms_topk, self.post_nms = nms_thresh, nms_topk, min(post_nms, topk)
        self._head_channels = head_conv_channel
        with self.name_scope():
            self.base_network = base_network
            self.heatmap_nms = nn.MaxPool2D(pool_size=3, strides=1, padding=1)
            self.heads = nn.HybridSequential(prefix="heads")
            self.heads.add(_head(head_conv_channel, len(classes), in_channels, _HEATMAP_BIAS, "heatmap"),
                           _head(head_conv_channel, 2, in_channels, 0.0, "wh"),
                           _head(head_conv_channel, 2, in_channels, 0.0, "reg"))

    @property
    def classes(self) -> tuple[str, ...]:
        """Names of the foreground classes."""
        return self._classes

    @property
    def num_classes(self) -> int:
        """Number of foreground classes."""
        return len(self._classes)

    def set_nms(self, nms_thresh: float = 0, nms_topk: int = 400, post_nms: int = 100) -> None:
        """Change NMS over the decoded peaks: ``nms_thresh`` outside (0, 1) disables it (the
        default); ``nms_topk`` rows enter it (-1: all); ``post_nms`` rows are kept (-1: all)."""
        self._clear_cached_op()
        self.nms_thresh, self.nms_topk, self.post_nms = nms_thresh, nms_topk, min(post_nms, nms_topk)

    def _maps(self, F, x):
        features = self.base_network(x)
        heatmap, wh, reg = [head(features) for head in self.heads]
        return F.sigmoid(heatmap), wh, reg

    def hybrid_forward(self, F, x):
        heatmap, wh, reg = self._maps(F, x)
        if mx.autograd.is_training():
            return F.clip(heatmap, 1e-4, 1 - 1e-4), wh, reg
        if self.flip_test:
            flipped_heatmap, flipped_wh, _ = self._maps(F, x.flip(axis=3))
            heatmap = (heatmap + flipped_heatmap.flip(axis=3)) * 0.5
            wh = (wh + flipped_wh.flip(axis=3)) * 0.5
        peaks = F.broadcast_equal(self.heatmap_nms(heatmap), heatmap) * heatmap
        rows = decode_centers(F, peaks, wh, reg, self.topk, self.scale)
        return nms_split(F, rows, self.nms_thresh, self.nms_topk, self.post_nms)

    def reset_class(self, classes: Sequence[str], reuse_weights: Any = None) -> None:
        """Replace the heatmap's class output for new ``classes`` (transfer learning).

        ``reuse_weights`` copies old class rows into the new output: ``{new: old}`` by name or
        index, or a list of names present in both; other classes start afresh. The size and
        offset heads, and the heatmap head's 3x3 conv, are kept.
        """
        mapping = class_index_map(reuse_weights, self._classes, classes)
        self._clear_cached_op()
        old = self.heads[0]
        weight = old[2].weight
        fresh = _head(self._head_channels, len(classes), weight.shape[1], _HEATMAP_BIAS, old.prefix)
        fresh[2].initialize(ctx=weight.list_ctx())
        for old_param, new_param in ((old[2].weight, fresh[2].weight), (old[2].bias, fresh[2].bias)):
            src, dst = old_param.data().asnumpy(), new_param.data().asnumpy()
            for k, v in mapping.items():
                dst[k] = src[v]
            new_param.set_data(mx.nd.array(dst, dtype=dst.dtype))
        heatmap = nn.HybridSequential(prefix=old.prefix)
        heatmap.add(old[0], old[1], fresh[2])
        heads = nn.HybridSequential(prefix=self.heads.prefix)
        heads.add(heatmap, self.heads[1], self.heads[2])
        self.heads = heads
        self._classes = tuple(classes)


#: largest |output| of each head in a trained CenterNet's range (:func:`scale_center_net_heads`):
#: heatmap logits within 8 (sigmoid 0.9997), sizes within 32 cells (128 pixels at stride 4),
#: sub-cell offsets within 1
_HEAD_RANGES = {"heatmap": 8.0, "wh": 32.0, "reg": 1.0}


def scale_center_net_heads(net: CenterNet, x: Any) -> dict[str, float]:
    """Scale the initialised ``net``'s heatmap, size and offset heads so that on the batch
    ``x`` each one's largest |output| is in a trained CenterNet's range
    (:data:`_HEAD_RANGES`); returns each head's factor.

    Random weights put the heatmap logits in the tens to thousands, where the sigmoid gives
    exactly 1.0 in many cells, so the ``topk`` peaks are chosen among ties (which top-k
    breaks differently in two runtimes); the size and offset heads start near zero
    (``Normal(0.001)``), so every box would be a point. Each head's last convolution is read
    only by the decoder, so scaling its weight and bias scales that output exactly. Used by
    the ONNX portability measurement (``gluon_hub_deploy._measure.TRAINED_LIKE``).
    """
    if not isinstance(net, CenterNet):
        raise TypeError(f"scale_center_net_heads takes a CenterNet, not {type(net).__name__}")
    features = net.base_network(x if isinstance(x, mx.nd.NDArray) else mx.nd.array(x))
    factors: dict[str, float] = {}
    for key, head in zip(("heatmap", "wh", "reg"), net.heads):
        largest = float(head(features).abs().max().asscalar())
        factors[key] = _HEAD_RANGES[key] / largest if largest > 0 else 1.0
        for param in head[-1].collect_params().values():
            param.set_data(param.data() * factors[key])
    return factors


@head_argument("classes", transfer=keep_named_classes)
def center_net(base: str, classes: Sequence[str] | str = "voc", pretrained_base: bool | str = False,
               dcn: bool = False, norm_layer: Any = BatchNorm, norm_kwargs: dict | None = None,
               base_network: Any = None, heads: Any = None,
               **options: Any) -> CenterNet:
    """A CenterNet detector on one of GluonCV's backbones.

    Parameters
    ----------
    base : a key of :data:`BACKBONES` (``"resnet50_v1b"``, ``"mobilenetv3_large_duc"`` ...).
    classes : foreground class names, or ``"voc"`` / ``"coco"`` for those datasets' classes.
    pretrained_base : start the backbone from its ImageNet weights through the hub's cache
        (GluonCV's default is ``True``; the hub's is ``False``, so building never downloads).
    dcn : use modulated deformable convolutions (DCNv2) in the ResNet upsampling stages.
    norm_layer, norm_kwargs : normalization of the backbone and the upsampling stages.
    options : :class:`CenterNet` arguments (``topk``, ``flip_test``, ``head_conv_channel`` ...).
    ``base_network`` and ``heads`` (GluonCV's blocks) are accepted left out only: the hub builds
    them from the model's configuration.
    """
    check_gluoncv_structure(f"CenterNet {base}", {"base_network": base_network, "heads": heads},
                            dict.fromkeys(("base_network", "heads"), BUILT_FROM_NAME))
    if base not in BACKBONES:
        raise ValueError(f"unknown CenterNet backbone {base!r}; known: {', '.join(BACKBONES)}")
    names = BY_DATASET.get(classes, classes) if isinstance(classes, str) else tuple(classes)
    if isinstance(names, str) or not names:
        raise ValueError(f"classes must be 'voc', 'coco' or a non-empty list of names, got {classes!r}")
    network, kind, filters = BACKBONES[base]
    if dcn and kind == "duc":
        raise ValueError(f"dcn=True needs a ResNet or DLA backbone; {base!r} upsamples with DUC")
    if kind == "ida":  # DLA's own norm settings stay its defaults, as in GluonCV
        net = backbone(network, pretrained_base)
        features: HybridBlock = DeconvDLA(net, dcn, norm_layer, norm_kwargs)
        return CenterNet(features, names, features.out_channels, **options)
    net = backbone(network, pretrained_base, norm_layer=norm_layer, norm_kwargs=norm_kwargs)
    if kind == "deconv":
        features = DeconvResNet(net, filters, dcn, norm_layer, norm_kwargs)
    else:
        features = DUCMobileNet(net, filters, norm_layer, norm_kwargs)
    return CenterNet(features, names, features.out_channels, **options)


__all__ = ["AggregationConv", "BACKBONES", "BilinearUpsampling", "CenterNet", "DLAUp", "DUC", "DUCMobileNet",
           "DeconvDLA", "DeconvResNet", "IDAUp", "center_net", "decode_centers", "scale_center_net_heads"]
