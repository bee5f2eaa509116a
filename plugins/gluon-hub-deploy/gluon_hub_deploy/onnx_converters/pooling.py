"""MXNet's ``_contrib_AdaptiveAvgPooling2D`` for any output size, as two matrix products.

ONNX has no adaptive pooling and ``mxnet.onnx`` converts only output size 1, while the
pyramid-pooling segmenters (PSPNet, Fast-SCNN) pool to 2, 3 and 6 bins. Bin ``i`` of an axis
of length ``n`` split in ``o`` averages rows ``floor(i n / o)`` to ``ceil((i + 1) n / o)``,
so pooling is ``M_h @ x @ M_w^T`` with ``M[i, j] = 1 / size(bin i)`` inside bin ``i``. The
matrices are built in the graph from the input's shape, so spatial axes may stay dynamic.
"""

from __future__ import annotations

from typing import Any

from onnx import TensorProto
from onnx.helper import make_node

from ._common import constant, int_tuple, node_inputs, register


def _bin_matrix(name: str, data_shape: str, axis: int, bins: int, kwargs: dict[str, Any]) -> tuple[str, list[Any]]:
    """The (bins, n) averaging matrix for ``axis`` of the input, and the nodes computing it."""
    p = f"{name}_axis{axis}"
    c = lambda suffix, values, dtype="int64": constant(kwargs, f"{p}_{suffix}", values, dtype)  # noqa: E731
    nodes = [
        make_node("Gather", [data_shape, c("index", axis)], [f"{p}_n"], axis=0),  # a scalar
        make_node("Range", [c("zero", 0), f"{p}_n", c("one", 1)], [f"{p}_j"]),
        make_node("Mul", [c("i", [[i] for i in range(bins)]), f"{p}_n"], [f"{p}_i_n"]),
        make_node("Div", [f"{p}_i_n", c("bins", bins)], [f"{p}_start"]),
        make_node("Add", [f"{p}_i_n", f"{p}_n"], [f"{p}_i1_n"]),
        make_node("Add", [f"{p}_i1_n", c("bins_1", bins - 1)], [f"{p}_i1_n_up"]),
        make_node("Div", [f"{p}_i1_n_up", c("bins_b", bins)], [f"{p}_end"]),
        make_node("GreaterOrEqual", [f"{p}_j", f"{p}_start"], [f"{p}_after"]),
        make_node("Less", [f"{p}_j", f"{p}_end"], [f"{p}_before"]),
        make_node("And", [f"{p}_after", f"{p}_before"], [f"{p}_inside"]),
        make_node("Cast", [f"{p}_inside"], [f"{p}_mask"], to=TensorProto.FLOAT),
        make_node("Sub", [f"{p}_end", f"{p}_start"], [f"{p}_count"]),
        make_node("Cast", [f"{p}_count"], [f"{p}_count_f"], to=TensorProto.FLOAT),
        make_node("Div", [f"{p}_mask", f"{p}_count_f"], [f"{p}_matrix"]),
    ]
    return f"{p}_matrix", nodes


@register("_contrib_AdaptiveAvgPooling2D")
def convert_adaptive_avg_pooling(node: dict[str, Any], **kwargs: Any) -> list[Any]:
    """Adaptive average pooling of an NCHW tensor to ``output_size`` (one int or (h, w))."""
    name, (data, *_), attrs = node_inputs(node, kwargs)
    size = int_tuple(attrs, "output_size", (1,))
    out_h, out_w = (size[0], size[0]) if len(size) == 1 else size[:2]
    if (out_h, out_w) == (1, 1):
        return [make_node("GlobalAveragePool", [data], [name], name=name)]
    nodes = [make_node("Shape", [data], [f"{name}_shape"])]
    rows, row_nodes = _bin_matrix(name, f"{name}_shape", 2, out_h, kwargs)
    cols, col_nodes = _bin_matrix(name, f"{name}_shape", 3, out_w, kwargs)
    return [
        *nodes, *row_nodes, *col_nodes,
        make_node("Transpose", [cols], [f"{cols}_t"], perm=[1, 0]),
        make_node("MatMul", [data, f"{cols}_t"], [f"{name}_width_pooled"]),
        make_node("MatMul", [rows, f"{name}_width_pooled"], [name], name=name),
    ]
