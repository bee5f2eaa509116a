"""Feature pyramid (Lin et al., arXiv:1612.03144) over a ResNet, named as GluonCV 0.10 names it.

GluonCV builds the pyramid as a ``SymbolBlock`` over its ResNet, so the published files key
backbone parameters by the network's prefixed names (``resnetv1b_layers1_conv0_weight``) and
the pyramid's by fixed names (``P2_conv_lat_weight``, ``P6_conv1_weight``). The plugin's
ResNet-v1b already creates its layers under GluonCV's names except the projection shortcuts,
which GluonCV puts in a ``down{stage}_`` scope; :func:`resnet_v1b_gluoncv_names` renames those.
"""

from __future__ import annotations

import re
from typing import Any, Sequence

from gluon_hub.compat import mx

from ...common.backbones.features import _shared, tapped_outputs
from ...common.norm import sync_key
from ...common.shapes import shape_parameters

_XAVIER_IN = dict(rnd_type="uniform", factor_type="in", magnitude=1.0)


def resnet_v1b_gluoncv_names(net: Any) -> dict[str, Any]:
    """``{GluonCV's prefixed name: parameter}`` for the plugin's ResNet-v1b family."""
    names: dict[str, Any] = {}
    for key, param in net._collect_params_with_prefix().items():
        match = re.fullmatch(r"layer(\d)\.0\.downsample\.\d+\.(\w+)", key)
        if match is None:
            names[param.name] = param
            continue
        # the shortcut holds one conv and one norm layer: both are number 0 of their kind
        layer = getattr(net, f"layer{match.group(1)}")[0].downsample[int(key.split(".")[3])]
        names[f"{net.prefix}down{match.group(1)}_{layer._alias()}0_{match.group(2)}"] = param
    return names


def fpn_features(net: Any, taps: Sequence[str], num_filters: int = 256, no_bias: bool = False,
                 sync_norm: bool = False, num_devices: int = 0) -> Any:
    """A ``SymbolBlock`` returning ``[P2, P3, P4, P5, P6]`` for the backbone outputs at ``taps``.

    Each level is a 1x1 lateral conv of its backbone stage plus the 2x nearest upsampling of
    the coarser level, then a 3x3 conv; P6 is a stride-2 3x3 conv of P5's lateral output.
    ``sync_norm`` adds MXNet's symbolic ``SyncBatchNorm`` after every pyramid conv (the
    ``*_syncbn`` models), with GluonCV's layer names.
    """
    shared = _shared(resnet_v1b_gluoncv_names(net))
    stages = len(taps) + 1

    def norm(y: Any, name: str) -> Any:
        if not sync_norm:
            return y
        extra = {"ndev": num_devices} if num_devices >= 1 else {}
        return mx.sym.contrib.SyncBatchNorm(y, key=sync_key(name), name=name, **extra)

    def conv(y: Any, name: str, kernel: int, stride: int = 1) -> Any:
        return mx.sym.Convolution(y, num_filter=num_filters, kernel=(kernel, kernel), pad=(kernel // 2,) * 2,
                                  stride=(stride, stride), no_bias=no_bias, name=name)

    with mx.name.NameManager():  # layer names independent of any enclosing name scope
        data = mx.sym.var("data", dtype="float32")  # typed: SymbolBlock infers its parameters' types from it
        outputs = tapped_outputs(net, data, taps)
        levels = []
        y = None
        for i, stage in enumerate(outputs[::-1]):
            level = stages - i
            if i == 0:
                y = norm(conv(stage, f"P{level}_conv_lat", 1), f"P{level}_lat_bn")
                p6 = norm(conv(y, f"P{stages + 1}_conv1", 3, 2), f"P{stages + 1}_pre_bn")
            else:
                lateral = norm(conv(stage, f"P{level}_conv_lat", 1), f"P{level}_conv1_bn")
                up = mx.sym.UpSampling(y, scale=2, sample_type="nearest", name=f"P{level}_upsp")
                up = mx.sym.slice_like(up, lateral, axes=(2, 3), name=f"P{level}_clip")
                y = mx.sym.ElementWiseSum(lateral, up, name=f"P{level}_sum")
            levels.append(norm(conv(y, f"P{level}_conv1", 3), f"P{level}_bn"))
        pyramid = levels[::-1] + [p6]
    block = mx.gluon.SymbolBlock(pyramid, data, params=shared)
    # the backbone's and pyramid's shapes do not depend on the image size; known now, they hold
    # where a hybridized network leaves levels unused (custom_mask_rcnn_fpn reads P2 only)
    shape_parameters(block, mx.sym.Group(pyramid), (1, 3, 256, 256))
    for name, param in block.collect_params().items():
        if name.startswith("P"):
            param.init = _pyramid_init(name)
    return block


def _pyramid_init(name: str) -> Any:
    """The initialiser of the pyramid's parameter ``name``: Xavier for its convolutions' weights,
    the usual constants for the rest. A symbol's parameters have none of their own, and MXNet
    then applies the initialiser given to ``net.initialize`` to every one of them, biases and
    normalisation statistics included (Xavier refuses vectors)."""
    if name.endswith("_weight"):
        return mx.init.Xavier(**_XAVIER_IN)
    return mx.init.One() if name.endswith(("_gamma", "_var")) else mx.init.Zero()


__all__ = ["fpn_features", "resnet_v1b_gluoncv_names"]
