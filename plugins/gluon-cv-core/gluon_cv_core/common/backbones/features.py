"""Multi-scale features from the plugin's classification networks, named as GluonCV names them.

GluonCV builds a detector's feature extractor as a ``SymbolBlock`` over its classification
network, so the published detection files name backbone parameters by the network's
*prefixed* names (``features.resnetv10_stage3_conv0_weight``), not by structure. Gluon
derives those names from the order in which layers were created inside each name scope.
The plugin's backbones have GluonCV's structure but may create a layer in a different
order (a residual unit's shortcut before its body, say), so :func:`gluoncv_names` derives
GluonCV's names from the structure alone: it walks the block tree in registration order
and numbers layers per scope, as Gluon does at creation. The backbone is reused as it is,
and ``pretrained_base`` weights come from the hub's cache like any classification model.
"""

from __future__ import annotations

import importlib
import re
from typing import Any, Sequence

from gluon_hub.compat import mx

_XAVIER_OUT = dict(rnd_type="gaussian", factor_type="out", magnitude=2)


def gluoncv_names(net: Any) -> dict[str, Any]:
    """``{GluonCV's prefixed name: parameter}`` for every parameter of ``net``.

    ``net`` gets the prefix Gluon gives the first network of its class in a scope
    (``resnetv10_``); a child whose prefix Gluon generated (its class alias and a number,
    ``conv3_``) is renumbered in registration order within its scope; explicit prefixes
    (``stage1_``) are kept.
    """
    names: dict[str, Any] = {}

    def visit(block: Any, new_prefix: str, counters: dict[str, int]) -> None:
        for param in block._reg_params.values():
            names[new_prefix + param.name[len(block.prefix):]] = param
        for child in block._children.values():
            relative = child.prefix[len(block.prefix):]
            if not relative:  # an empty-prefix block shares its parent's scope and counters
                visit(child, new_prefix, counters)
                continue
            hint = child._alias()
            if re.fullmatch(rf"{re.escape(hint)}\d+_", relative):
                relative = f"{hint}{counters.get(hint, 0)}_"
                counters[hint] = counters.get(hint, 0) + 1
            visit(child, new_prefix + relative, {})

    visit(net, f"{net._alias()}0_", {})
    return names


def backbone(name: str, pretrained: bool | str, **kwargs: Any) -> Any:
    """The plugin's classification network ``name``, with ImageNet weights when ``pretrained``."""
    import gluon_hub

    qualified = f"cv/{name}"
    if pretrained:
        return gluon_hub.load(qualified, pretrained=pretrained, **kwargs)
    spec = gluon_hub.info(qualified)
    module, _, attr = spec.factory.partition(":")
    return getattr(importlib.import_module(module), attr)(**{**spec.kwargs, **kwargs})


def _shared(params: dict[str, Any]) -> Any:
    """A ``ParameterDict`` keyed by the given names, holding the given parameter objects.

    MXNet has no public way to key a parameter by a new name; the backbone's own
    parameters are shared (not copied), so ``pretrained_base`` weights stay in place.
    """
    shared = mx.gluon.ParameterDict()
    for name, param in params.items():
        param.name = name  # the name the symbol's variable (and so the saved file) carries
        shared._params[name] = param
    return shared


def tapped_outputs(net: Any, data: Any, taps: Sequence[str]) -> list[Any]:
    """The symbols of ``net(data)``'s internal outputs named ``taps`` (GluonCV's names)."""
    internals = net(data).get_internals()
    available = set(internals.list_outputs())
    outputs = []
    for tap in taps:
        key = f"{net.prefix}{tap}_output"
        if key not in available:
            raise ValueError(f"{type(net).__name__} has no internal output {tap!r}")
        outputs.append(internals[key])
    return outputs


def expand_features(net: Any, taps: Sequence[str], num_filters: Sequence[int], *,
                    use_1x1_transition: bool = True, use_bn: bool = True, reduce_ratio: float = 1.0,
                    min_depth: int = 128, global_pool: bool = False) -> Any:
    """A ``SymbolBlock``: the backbone's outputs at ``taps``, then extra stride-2 stages.

    ``taps`` are GluonCV's internal output names of ``net`` (``stage3_activation5``,
    ``relu22_fwd``). Each extra stage is an optional 1x1 transition conv (width
    ``max(min_depth, round(f * reduce_ratio))``) and a 3x3 stride-2 conv of ``f`` filters,
    each with BatchNorm and ReLU.
    """
    params = gluoncv_names(net)
    shared = _shared(params)
    with mx.name.NameManager():  # layer names independent of any enclosing name scope
        data = mx.sym.var("data", dtype="float32")  # typed: SymbolBlock infers its parameters' types from it
        outputs = tapped_outputs(net, data, taps)
        y = outputs[-1]
        for i, filters in enumerate(num_filters):
            if use_1x1_transition:
                width = max(min_depth, int(round(filters * reduce_ratio)))
                y = mx.sym.Convolution(y, num_filter=width, kernel=(1, 1), no_bias=use_bn,
                                       name=f"expand_trans_conv{i}")
                if use_bn:
                    y = mx.sym.BatchNorm(y, name=f"expand_trans_bn{i}")
                y = mx.sym.Activation(y, act_type="relu", name=f"expand_trans_relu{i}")
            y = mx.sym.Convolution(y, num_filter=filters, kernel=(3, 3), pad=(1, 1), stride=(2, 2),
                                   no_bias=use_bn, name=f"expand_conv{i}")
            if use_bn:
                y = mx.sym.BatchNorm(y, name=f"expand_bn{i}")
            y = mx.sym.Activation(y, act_type="relu", name=f"expand_relu{i}")
            outputs.append(y)
        if global_pool:
            outputs.append(mx.sym.Pooling(y, pool_type="avg", global_pool=True, kernel=(1, 1)))
    block = mx.gluon.SymbolBlock(outputs, data, params=shared)
    # every new parameter carries its own initializer, so ``initialize(Xavier())`` (a
    # default meant for weights) never reaches the BatchNorm vectors
    constant = {"_gamma": mx.init.One(), "_beta": mx.init.Zero(), "_moving_mean": mx.init.Zero(),
                "_moving_var": mx.init.One()}
    for name, param in block.collect_params().items():
        if name.startswith("expand_") and name.endswith("_weight"):
            param.init = mx.init.Xavier(**_XAVIER_OUT)
        elif name.startswith("expand_"):
            param.init = next((init for suffix, init in constant.items() if name.endswith(suffix)), None)
    return block
