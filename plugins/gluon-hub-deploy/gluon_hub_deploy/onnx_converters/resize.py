"""MXNet's ``_contrib_BilinearResize2D`` in all its modes, as ONNX ``Resize`` (linear).

``mxnet.onnx`` converts only the ``size`` mode with fixed sizes, while the segmentation
models resize ``like`` another tensor (and some by a scale). Here the output size is computed
in the graph from the input's (or ``like``'s) shape, so it follows dynamic spatial axes.
``align_corners=True`` maps to ONNX's ``align_corners``; ``False`` to ``pytorch_half_pixel``,
the same sampling as MXNet's (source = (x + 0.5) * in / out - 0.5, clamped at 0).
"""

from __future__ import annotations

from typing import Any

from onnx import TensorProto
from onnx.helper import make_node

from ._common import constant, flag, node_inputs, register

_PARITY_MODES = {  # output size from the input size, by the parity of each dimension
    "to_even_down": ("Sub", False),  # odd: size - 1
    "to_even_up": ("Add", False),    # odd: size + 1
    "to_odd_down": ("Sub", True),    # even: size - 1
    "to_odd_up": ("Add", True),      # even: size + 1
}


def _float_attr(attrs: dict[str, str], key: str) -> float | None:
    value = attrs.get(key, "None")
    return None if value in ("None", "") else float(value)


@register("_contrib_BilinearResize2D")
def convert_bilinear_resize(node: dict[str, Any], **kwargs: Any) -> list[Any]:
    """BilinearResize2D: modes size (sizes or scales), like, odd_scale and the parity modes."""
    name, inputs, attrs = node_inputs(node, kwargs)
    data = inputs[0]
    mode = attrs.get("mode", "size")
    scales = (_float_attr(attrs, "scale_height"), _float_attr(attrs, "scale_width"))
    c = lambda suffix, values, dtype="int64": constant(kwargs, f"{name}_{suffix}", values, dtype)  # noqa: E731
    nodes = [
        make_node("Shape", [data], [f"{name}_shape"]),
        make_node("Slice", [f"{name}_shape", c("0", [0]), c("2", [2])], [f"{name}_nc"]),
        make_node("Slice", [f"{name}_shape", c("2b", [2]), c("4", [4])], [f"{name}_hw_in"]),
    ]
    hw_in = f"{name}_hw_in"
    if mode == "like":
        if len(inputs) < 2:
            raise ValueError(f"BilinearResize2D {name} in mode 'like' has no second input")
        nodes += [make_node("Shape", [inputs[1]], [f"{name}_like_shape"]),
                  make_node("Slice", [f"{name}_like_shape", c("2c", [2]), c("4b", [4])], [f"{name}_hw"])]
    elif mode in _PARITY_MODES:
        op, change_even = _PARITY_MODES[mode]
        nodes.append(make_node("Mod", [hw_in, c("two", [2, 2])], [f"{name}_odd"]))
        step = f"{name}_odd"
        if change_even:
            nodes.append(make_node("Sub", [c("one", [1, 1]), f"{name}_odd"], [f"{name}_even"]))
            step = f"{name}_even"
        nodes.append(make_node(op, [hw_in, step], [f"{name}_hw"]))
    elif mode in ("size", "odd_scale") and None not in scales:
        # size: floor(size * scale); odd_scale: (size - odd) * scale + odd, odd = size % 2
        base = hw_in
        if mode == "odd_scale":
            nodes += [make_node("Mod", [hw_in, c("two", [2, 2])], [f"{name}_odd"]),
                      make_node("Sub", [hw_in, f"{name}_odd"], [f"{name}_even_part"])]
            base = f"{name}_even_part"
        nodes += [make_node("Cast", [base], [f"{name}_hw_f"], to=TensorProto.DOUBLE),
                  make_node("Mul", [f"{name}_hw_f", c("scales", scales, "float64")], [f"{name}_hw_scaled"]),
                  make_node("Floor", [f"{name}_hw_scaled"], [f"{name}_hw_floor"]),
                  make_node("Cast", [f"{name}_hw_floor"], [f"{name}_hw_base"], to=TensorProto.INT64)]
        if mode == "odd_scale":
            nodes.append(make_node("Add", [f"{name}_hw_base", f"{name}_odd"], [f"{name}_hw"]))
        else:
            nodes[-1].output[0] = f"{name}_hw"
    elif mode == "size":
        height, width = int(attrs.get("height", 1)), int(attrs.get("width", 1))
        nodes.append(make_node("Identity", [c("hw_fixed", [height, width])], [f"{name}_hw"]))
    else:
        raise ValueError(f"BilinearResize2D {name}: mode {mode!r} needs scale_height and scale_width")
    transform = "align_corners" if flag(attrs, "align_corners", True) else "pytorch_half_pixel"
    nodes += [
        make_node("Concat", [f"{name}_nc", f"{name}_hw"], [f"{name}_sizes"], axis=0),
        make_node("Resize", [data, c("roi", [], "float32"), c("no_scales", [], "float32"), f"{name}_sizes"],
                  [name], name=name, mode="linear", coordinate_transformation_mode=transform),
    ]
    return nodes
