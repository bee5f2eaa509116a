"""Normalisation operators in opset-13 operators: MXNet's ``GroupNorm`` and
``_contrib_SyncBatchNorm``, which ``mxnet.onnx`` has no converter for, and ``BatchNorm``, whose
MXNet converter ignores ``fix_gamma``.

MXNet 1.x normalises each of ``num_groups`` groups of channels over its channels and
positions, then scales and shifts it by that group's ``gamma`` and ``beta`` (both of shape
``(num_groups,)``). In ONNX: view the input as (N, groups, -1), normalise the last axis,
apply the per-group affine and restore the input's shape, read in the graph so that batch and
spatial axes may stay dynamic. (ONNX's own GroupNormalization arrives only in opset 18.)

``BatchNorm`` with ``fix_gamma=True`` (the symbol API's default, and Gluon's
``BatchNorm(scale=False)``) scales by 1 whatever gamma is stored; ``mxnet.onnx`` passed the
stored gamma to ONNX's BatchNormalization, so a model with a non-unit stored gamma (SSD's
extra layers, ResNet V2's input normalisation) came out wrong. Ones take its place here.

``_contrib_SyncBatchNorm`` (the ``*_syncbn_*`` R-CNNs' FPN and heads), which ``mxnet.onnx``
has no converter for, shares devices' batch statistics only in training; MXNet's inference
forward (``sync_batch_norm-inl.h``) is BatchNorm's over axis 1 with the moving statistics,
gamma set to 1 under ``fix_gamma``, so it becomes the same BatchNormalization node.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from onnx.helper import make_node

from ._common import constant, flag, input_shape, node_inputs, register


@register("GroupNorm")
def convert_group_norm(node: dict[str, Any], **kwargs: Any) -> list[Any]:
    """GroupNorm with per-group gamma and beta; ``output_mean_var`` is not supported."""
    name, (data, gamma, beta), attrs = node_inputs(node, kwargs)
    if flag(attrs, "output_mean_var"):
        raise ValueError(f"GroupNorm {name}: output_mean_var=True (mean and variance outputs) has no converter")
    groups = int(attrs.get("num_groups", 1))
    eps = float(attrs.get("eps", 1e-5))
    c = lambda suffix, values, dtype="int64": constant(kwargs, f"{name}__{suffix}", values, dtype)  # noqa: E731
    n = f"{name}__"  # "__": the parameters are "{name}_gamma" and "{name}_beta"
    return [
        make_node("Shape", [data], [n + "shape"]),
        make_node("Reshape", [data, c("grouped_shape", [0, groups, -1])], [n + "grouped"]),
        make_node("ReduceMean", [n + "grouped"], [n + "mean"], axes=[2], keepdims=1),
        make_node("Sub", [n + "grouped", n + "mean"], [n + "centred"]),
        make_node("Mul", [n + "centred", n + "centred"], [n + "squared"]),
        make_node("ReduceMean", [n + "squared"], [n + "var"], axes=[2], keepdims=1),
        make_node("Add", [n + "var", c("eps", eps, "float32")], [n + "var_eps"]),
        make_node("Sqrt", [n + "var_eps"], [n + "std"]),
        make_node("Div", [n + "centred", n + "std"], [n + "normed"]),
        make_node("Unsqueeze", [gamma, c("axis", [1])], [n + "gamma"]),
        make_node("Unsqueeze", [beta, c("axis_b", [1])], [n + "beta"]),
        make_node("Mul", [n + "normed", n + "gamma"], [n + "scaled"]),
        make_node("Add", [n + "scaled", n + "beta"], [n + "shifted"]),
        make_node("Reshape", [n + "shifted", n + "shape"], [name], name=name),
    ]


@register("BatchNorm")
def convert_batch_norm(node: dict[str, Any], **kwargs: Any) -> list[Any]:
    """BatchNorm over axis 1 with its running statistics, gamma replaced by ones under ``fix_gamma``."""
    return _batch_norm("BatchNorm", node, kwargs)


@register("_contrib_SyncBatchNorm")
def convert_sync_batch_norm(node: dict[str, Any], **kwargs: Any) -> list[Any]:
    """SyncBatchNorm as inference runs it: BatchNorm with the moving statistics (``ndev`` and
    ``key`` only synchronise training; it has no ``axis``: always 1)."""
    return _batch_norm("SyncBatchNorm", node, kwargs)


def _batch_norm(op: str, node: dict[str, Any], kwargs: dict[str, Any]) -> list[Any]:
    name, (data, gamma, beta, mean, var), attrs = node_inputs(node, kwargs)
    axis = int(attrs.get("axis", 1))
    if axis != 1:
        raise ValueError(f"{op} {name}: axis={axis} has no converter (ONNX normalises axis 1); "
                         "transpose the channels to axis 1 before the BatchNorm")
    if flag(attrs, "output_mean_var"):
        raise ValueError(f"{op} {name}: output_mean_var=True (mean and variance outputs) has no converter")
    if flag(attrs, "fix_gamma", True):  # MXNet's default: the attribute is often not written
        index, output, *_ = node["inputs"][1]
        dtype = kwargs["outputs_lookup"][index][output].dtype  # a numpy dtype
        gamma = constant(kwargs, f"{name}__ones", np.ones(input_shape(node, kwargs, 1)), dtype.name)
    # momentum matters only in training, which an exported graph never does
    return [make_node("BatchNormalization", [data, gamma, beta, mean, var], [name], name=name,
                      epsilon=float(attrs.get("eps", 1e-3)))]
