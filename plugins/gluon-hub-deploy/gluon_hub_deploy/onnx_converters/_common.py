"""What every converter module shares: the opset the hub writes, node inputs, constants and
the shapes MXNet infers for a node's inputs at the export's input shape.

``mxnet.onnx`` (1.9.1) implements its operators for opsets 12 and 13; the hub declares
:data:`OPSET` in every file it writes and registers its own converters for that opset, so
they take precedence over MXNet's opset-12 ones for the same operator.
"""

from __future__ import annotations

import ast
import contextlib
import contextvars
import json
from typing import Any, Callable, Iterator

import numpy as np

__all__ = ["OPSET", "register", "mxnet_graph", "node_inputs", "constant", "int_tuple", "flag", "input_shape", "inferred_shapes"]

OPSET = 13

_SHAPES: contextvars.ContextVar[dict[tuple[int, int], tuple[int, ...]]] = contextvars.ContextVar("shapes")


def register(op_name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a converter for ``op_name`` at :data:`OPSET` in ``mxnet.onnx``'s registry."""
    return mxnet_graph().register(op_name, OPSET)


def mxnet_graph() -> Any:
    """``mxnet.onnx``'s graph converter class, whose registry holds every converter (MXNet is
    imported through the hub's compat module, which says how to install it)."""
    from gluon_hub.compat import mx

    return mx.onnx.mx2onnx._export_onnx.MXNetGraph


def node_inputs(node: dict[str, Any], kwargs: dict[str, Any]) -> tuple[str, list[str], dict[str, str]]:
    """The node's name, the ONNX names of its inputs, and its MXNet attributes (strings)."""
    lookup = kwargs["outputs_lookup"]
    names = [lookup[index][output].name for index, output, *_ in node["inputs"]]
    return node["name"], names, node.get("attrs", {})


def constant(kwargs: dict[str, Any], name: str, values: Any, dtype: str = "int64") -> str:
    """Add ``values`` as an initializer named ``name`` and return the name."""
    from onnx import numpy_helper

    kwargs["initializer"].append(numpy_helper.from_array(np.asarray(values, dtype=dtype), name))
    return name


def int_tuple(attrs: dict[str, str], key: str, default: tuple[int, ...] = ()) -> tuple[int, ...]:
    """An MXNet tuple attribute such as ``"(0, -4, 2, -1)"`` as ints."""
    if key not in attrs or attrs[key] in ("None", ""):
        return default
    value = ast.literal_eval(attrs[key])
    return tuple(int(v) for v in (value if isinstance(value, (tuple, list)) else (value,)))


def flag(attrs: dict[str, str], key: str, default: bool = False) -> bool:
    """An MXNet boolean attribute ("True", "1", "False", "0")."""
    return attrs.get(key, str(default)) in ("True", "true", "1")


def input_shape(node: dict[str, Any], kwargs: dict[str, Any], position: int = 0) -> tuple[int, ...]:
    """The shape MXNet infers for the node's input at the export's input shape.

    Its rank always holds; with dynamic axes, the batch and spatial sizes may differ at run
    time, so converters use only the rank and axes the graph fixes (channels, groups).
    """
    index, output, *_ = node["inputs"][position]
    try:
        return _SHAPES.get()[(index, output)]
    except LookupError:
        raise RuntimeError(f"no inferred shape for input {position} of {node['name']}") from None


@contextlib.contextmanager
def inferred_shapes(sym: Any, input_shapes: dict[str, tuple[int, ...]]) -> Iterator[None]:
    """Make every node output's inferred shape available to :func:`input_shape` meanwhile."""
    internals = sym.get_internals()
    _, out_shapes, _ = internals.infer_shape(**input_shapes)
    by_name = dict(zip(internals.list_outputs(), out_shapes))
    shapes: dict[tuple[int, int], tuple[int, ...]] = {}
    for index, node in enumerate(json.loads(sym.tojson())["nodes"]):
        name = node["name"]
        if node["op"] == "null":
            if name in by_name:
                shapes[(index, 0)] = tuple(by_name[name])
            continue
        if f"{name}_output" in by_name:
            shapes[(index, 0)] = tuple(by_name[f"{name}_output"])
        k = 0
        while f"{name}_output{k}" in by_name:
            shapes[(index, k)] = tuple(by_name[f"{name}_output{k}"])
            k += 1
    token = _SHAPES.set(shapes)
    try:
        yield
    finally:
        _SHAPES.reset(token)
