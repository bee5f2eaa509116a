"""MXNet's ``Reshape`` with every special code, as ONNX ``Reshape`` over a computed shape.

MXNet's codes read the input shape: 0 copies a dimension, -1 infers one, -2 copies all the
remaining ones, -3 merges two, -4 splits one in two (either half may be -1), and
``reverse=True`` matches them from the right. ``mxnet.onnx`` converts only a few fixed
patterns of them. Here the target shape is built from ``Shape`` slices in the graph, so the
result stays right when the batch or spatial axes are dynamic.
"""

from __future__ import annotations

from typing import Any

from onnx.helper import make_node

from ._common import constant, flag, int_tuple, node_inputs, register

_END = 2**62  # a Slice end past any rank


class _Shape:
    """Pieces of an output shape: constant ints and 1-D int64 tensors made from the input's shape."""

    def __init__(self, name: str, data: str, kwargs: dict[str, Any]) -> None:
        self.name, self.kwargs, self.nodes = name, kwargs, [make_node("Shape", [data], [f"{name}_in_shape"])]
        self.count = 0

    def _fresh(self, what: str) -> str:
        self.count += 1
        return f"{self.name}_{what}{self.count}"

    def dims(self, start: int, end: int | None) -> str:
        """The input dims ``start:end`` (negative indices count from the right; None: to the end)."""
        out = self._fresh("dims")
        begin = constant(self.kwargs, f"{out}_begin", [start])
        stop = constant(self.kwargs, f"{out}_end", [_END if end is None else end])
        self.nodes.append(make_node("Slice", [f"{self.name}_in_shape", begin, stop], [out]))
        return out

    def binary(self, op: str, left: str, right: str) -> str:
        out = self._fresh(op.lower())
        self.nodes.append(make_node(op, [left, right], [out]))
        return out

    def const(self, values: list[int]) -> str:
        return constant(self.kwargs, self._fresh("const"), values)


def _pieces(codes: list[int], shape: _Shape, reverse: bool) -> list[int | str]:
    """One entry per output dim (an int, or a tensor name) following MXNet's reading of ``codes``.

    With ``reverse`` the codes and the input dims are both read from the right, as MXNet
    does; the caller reverses the result.
    """
    def dim(k: int) -> str:  # the k-th input dim counted in reading order
        return shape.dims(-k - 1, -k if k else None) if reverse else shape.dims(k, k + 1)

    out: list[int | str] = []
    src = 0
    i = 0
    while i < len(codes):
        code = codes[i]
        if code == 0:
            out.append(dim(src))
            src += 1
        elif code == -1 or code > 0:
            out.append(code)
            src += 1
        elif code == -2:  # all remaining dims, as one piece in the input's own order
            out.append(shape.dims(0, -src if src else None) if reverse else shape.dims(src, None))
            src = _END
        elif code == -3:
            out.append(shape.binary("Mul", dim(src), dim(src + 1)))
            src += 2
        elif code == -4:
            if i + 2 >= len(codes):
                raise ValueError(f"Reshape code -4 at position {i} of {codes} needs two sizes after it")
            first, second = codes[i + 1], codes[i + 2]
            whole = dim(src)
            src += 1
            i += 2
            if first == -1:
                first_dim: int | str = shape.binary("Div", whole, shape.const([second]))
                halves = [first_dim, second]
            elif second == -1:
                halves = [first, shape.binary("Div", whole, shape.const([first]))]
            else:
                halves = [first, second]
            out.extend(halves)
        else:
            raise ValueError(f"Reshape code {code} in {codes} is not one MXNet defines")
        i += 1
    return out


@register("Reshape")
def convert_reshape(node: dict[str, Any], **kwargs: Any) -> list[Any]:
    """Reshape with MXNet's codes 0, -1, -2, -3, -4 and ``reverse``."""
    name, (data, *_), attrs = node_inputs(node, kwargs)
    codes = list(int_tuple(attrs, "shape"))
    reverse = flag(attrs, "reverse")
    if all(c > 0 or c == -1 for c in codes):
        target = constant(kwargs, f"{name}_target", codes)
        return [make_node("Reshape", [data, target], [name], name=name)]
    shape = _Shape(name, data, kwargs)
    pieces = _pieces(codes[::-1] if reverse else codes, shape, reverse)
    if reverse:
        pieces = pieces[::-1]
    tensors: list[str] = []
    run: list[int] = []
    for piece in pieces + [""]:  # "" flushes the last run of constants
        if isinstance(piece, int):
            run.append(piece)
            continue
        if run:
            tensors.append(shape.const(run))
            run = []
        if piece:
            tensors.append(piece)
    shape.nodes.append(make_node("Concat", tensors, [f"{name}_target"], axis=0))
    return [*shape.nodes, make_node("Reshape", [data, f"{name}_target"], [name], name=name)]
