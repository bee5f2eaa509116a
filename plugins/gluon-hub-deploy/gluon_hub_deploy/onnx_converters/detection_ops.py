"""Converters the detectors need: ``box_nms`` with MXNet's own semantics, and ``repeat``.

MXNet 1.9.1's ``_contrib_box_nms`` converter maps the operator onto one class-agnostic ONNX
``NonMaxSuppression``: it ignores ``id_index``/``force_suppress=False`` (boxes of different
classes suppress each other, so SSD and YOLOv3 lose detections), uses ``topk`` as the number of
boxes kept after NMS rather than the number of best-scoring boxes that enter it, and keeps
rows of the background class, which MXNet treats as invalid. The converter here writes
the operator as MXNet computes it:

1. a row is valid when its score exceeds ``valid_thresh`` and, with ``id_index``, its class id
   is not ``background_id`` (-1 by default: the rows detectors mark as nothing);
2. the ``topk`` valid rows with the highest scores enter NMS (all with ``topk=-1``);
3. greedy NMS with ``overlap_thresh``, per class unless ``force_suppress`` (ONNX's per-class
   ``NonMaxSuppression`` over one-hot class scores);
4. the kept rows come first, by descending score; every other row is -1, and the output has
   the input's shape.

MXNet's opset-13 ``repeat`` converter computes the tiling in the graph from the input's shape;
in YOLOv3 onnxruntime (1.32) then fails while constant-folding it at load ("Attempt to replace
the existing tensor"; loading with constant folding disabled works). The converter here uses the
rank MXNet infers: it unsqueezes after the (non-negative) axis, tiles with a constant, and
merges the two axes.
"""

from __future__ import annotations

from typing import Any

from ._common import constant, flag, input_shape, node_inputs, register

# Scores of rows that must never be selected, and the NMS score threshold that drops them:
# finite, because onnxruntime's NonMaxSuppression compares scores with the threshold.
_EXCLUDED = -3.0e38
_EXCLUDED_THRESHOLD = -1.0e38


@register("_contrib_box_nms")
def convert_box_nms(node: dict[str, Any], **kwargs: Any) -> list:
    """``box_nms`` (also ``box_non_maximum_suppression``) as MXNet computes it; see the module."""
    from onnx.helper import make_node

    name, inputs, attrs = node_inputs(node, kwargs)
    overlap = float(attrs.get("overlap_thresh", 0.5))
    valid_thresh = float(attrs.get("valid_thresh", 0))
    topk = int(attrs.get("topk", -1))
    coord_start = int(attrs.get("coord_start", 2))
    score_index = int(attrs.get("score_index", 1))
    id_index = int(attrs.get("id_index", -1))
    background_id = int(attrs.get("background_id", -1))
    force_suppress = flag(attrs, "force_suppress")
    in_format = attrs.get("in_format", "corner")
    if attrs.get("out_format", "corner") != in_format:
        raise NotImplementedError(f"box_nms {name}: in_format {in_format!r} and out_format "
                                  f"{attrs.get('out_format')!r} differ; ONNX export keeps one box format")
    if len(input_shape(node, kwargs)) < 2:
        raise NotImplementedError(f"box_nms {name}: the input needs at least 2 axes (boxes, values)")
    dtype = "float32"

    def c(suffix: str, values: Any, kind: str = "int64") -> str:
        return constant(kwargs, f"{name}_{suffix}", values, kind)

    def n(suffix: str) -> str:
        return f"{name}_{suffix}"

    data = inputs[0]
    nodes = [
        make_node("Shape", [data], [n("shape")]),
        make_node("Slice", [n("shape"), c("m2", [-2]), c("big", [2**62])], [n("nk")]),
        make_node("Concat", [c("m1", [-1]), n("nk")], [n("shape3")], axis=0),
        make_node("Reshape", [data, n("shape3")], [n("rows")]),  # (B, N, K)
        make_node("Slice", [n("shape"), c("m2b", [-2]), c("m1b", [-1])], [n("count")]),  # [N]
        make_node("Gather", [n("rows"), c("si", score_index)], [n("score")], axis=2),  # (B, N)
        make_node("Greater", [n("score"), c("vt", valid_thresh, dtype)], [n("valid0")]),
    ]
    valid = n("valid0")
    if id_index >= 0:  # rows of the background class (-1 unless given) are invalid
        nodes += [
            make_node("Gather", [n("rows"), c("ii", id_index)], [n("ids")], axis=2),
            make_node("Equal", [n("ids"), c("bg", float(background_id), dtype)], [n("is_bg")]),
            make_node("Not", [n("is_bg")], [n("not_bg")]),
            make_node("And", [valid, n("not_bg")], [n("valid1")]),
        ]
        valid = n("valid1")
    # The best `topk` valid rows, best first: invalid rows sort last with an excluded score.
    k = n("count")
    if topk > 0:
        nodes.append(make_node("Min", [n("count"), c("topk", [topk])], [n("k")]))
        k = n("k")
    nodes += [
        make_node("Where", [valid, n("score"), c("excluded", _EXCLUDED, dtype)], [n("key")]),
        make_node("TopK", [n("key"), k], [n("cand_score"), n("order")], axis=1, largest=1, sorted=1),
        make_node("Unsqueeze", [n("order"), c("ax_last", [-1])], [n("order3")]),
        make_node("GatherND", [n("rows"), n("order3")], [n("cand")], batch_dims=1),  # (B, k, K)
        make_node("Greater", [n("cand_score"), c("excl_thr", _EXCLUDED_THRESHOLD, dtype)], [n("cand_valid")]),
        make_node("Slice", [n("cand"), c("cs", [coord_start]), c("ce", [coord_start + 4]), c("ax2", [2])],
                  [n("boxes")]),
    ]
    if id_index >= 0 and not force_suppress:
        # One score row per class id present: a row's score in its own class, excluded elsewhere.
        nodes += [
            make_node("Gather", [n("cand"), c("ii2", id_index)], [n("cand_id_f")], axis=2),
            # class ids may be negative (-1 when background_id is another id): count from the least
            make_node("Where", [n("cand_valid"), n("cand_id_f"), c("big_f", 3.0e38, dtype)], [n("id_for_min")]),
            make_node("ReduceMin", [n("id_for_min")], [n("min_id")], keepdims=0),
            make_node("Sub", [n("cand_id_f"), n("min_id")], [n("id_from_min")]),
            make_node("Where", [n("cand_valid"), n("id_from_min"), c("zero_f", 0.0, dtype)], [n("cand_id_v")]),
            make_node("Cast", [n("cand_id_v")], [n("cand_id")], to=7),  # INT64
            make_node("ReduceMax", [n("cand_id")], [n("max_id")], keepdims=0),
            make_node("Add", [n("max_id"), c("one_s", 1)], [n("classes")]),
            make_node("Range", [c("zero_s", 0), n("classes"), c("one_s2", 1)], [n("class_ids")]),
            make_node("Reshape", [n("class_ids"), c("c_shape", [1, -1, 1])], [n("class_col")]),
            make_node("Unsqueeze", [n("cand_id"), c("ax1", [1])], [n("cand_id3")]),
            make_node("Equal", [n("cand_id3"), n("class_col")], [n("one_hot")]),  # (B, C, k)
            make_node("Unsqueeze", [n("cand_score"), c("ax1b", [1])], [n("score3")]),
            make_node("Where", [n("one_hot"), n("score3"), c("excluded2", _EXCLUDED, dtype)], [n("nms_scores")]),
        ]
    else:
        nodes.append(make_node("Unsqueeze", [n("cand_score"), c("ax1c", [1])], [n("nms_scores")]))
    nodes += [
        make_node("NonMaxSuppression",
                  [n("boxes"), n("nms_scores"), k, c("iou", [overlap], dtype),
                   c("score_thr", [_EXCLUDED_THRESHOLD], dtype)],
                  [n("selected")], center_point_box=int(in_format == "center")),
        # keep[b, i] = 1 for every selected (batch, candidate) pair
        make_node("Gather", [n("selected"), c("bi", [0, 2])], [n("sel_bi")], axis=1),
        make_node("Shape", [n("selected")], [n("sel_shape")]),
        make_node("Slice", [n("sel_shape"), c("z1", [0]), c("o1", [1])], [n("sel_count")]),
        make_node("ConstantOfShape", [n("sel_count")], [n("ones")],
                  value=_tensor(1.0)),
        make_node("Shape", [n("cand_score")], [n("bk")]),
        make_node("ConstantOfShape", [n("bk")], [n("zeros")], value=_tensor(0.0)),
        make_node("ScatterND", [n("zeros"), n("sel_bi"), n("ones")], [n("keep")]),
        # kept candidates first, in their (descending score) order
        make_node("Squeeze", [k, c("z2", [0])], [n("k_s")]),
        make_node("Range", [c("zero_s2", 0), n("k_s"), c("one_s3", 1)], [n("pos")]),
        make_node("Cast", [n("pos")], [n("pos_f")], to=1),
        make_node("Neg", [n("pos_f")], [n("neg_pos")]),
        make_node("Cast", [n("keep")], [n("keep_b")], to=9),  # BOOL
        make_node("Where", [n("keep_b"), n("neg_pos"), c("last", -1.0e9, dtype)], [n("pack_key")]),
        make_node("TopK", [n("pack_key"), k], [n("_"), n("pack")], axis=1, largest=1, sorted=1),
        make_node("Unsqueeze", [n("pack"), c("ax_last2", [-1])], [n("pack3")]),
        make_node("GatherND", [n("cand"), n("pack3")], [n("packed")], batch_dims=1),
        make_node("GatherElements", [n("keep"), n("pack")], [n("packed_keep")], axis=1),
        make_node("Cast", [n("packed_keep")], [n("packed_keep_b")], to=9),
        make_node("Unsqueeze", [n("packed_keep_b"), c("ax_last3", [-1])], [n("packed_keep3")]),
        make_node("Where", [n("packed_keep3"), n("packed"), c("minus1", -1.0, dtype)], [n("kept")]),
        # rows after the first k (those topk left out) are -1 too
        make_node("Sub", [n("count"), k], [n("rest")]),
        make_node("Concat", [c("pad0", [0, 0, 0, 0]), n("rest"), c("pad1", [0])], [n("pads")], axis=0),
        make_node("Pad", [n("kept"), n("pads"), c("minus1b", -1.0, dtype)], [n("padded")], mode="constant"),
        # MXNet lists the operator's (first, only visible) output as "<name>_output0"
        make_node("Reshape", [n("padded"), n("shape")], [f"{name}0"]),
    ]
    return nodes


def _tensor(value: float) -> Any:
    from onnx import TensorProto
    from onnx.helper import make_tensor

    return make_tensor("value", TensorProto.FLOAT, [1], [value])


@register("repeat")
def convert_repeat(node: dict[str, Any], **kwargs: Any) -> list:
    """``repeat(x, repeats, axis)``: each element ``repeats`` times along ``axis`` (flattened
    when ``axis`` is None), as ``numpy.repeat``."""
    from onnx.helper import make_node

    name, inputs, attrs = node_inputs(node, kwargs)
    repeats = int(attrs.get("repeats", 1))
    if repeats < 1:
        raise NotImplementedError(f"repeat {name}: repeats={repeats}; ONNX export needs repeats >= 1")
    rank = len(input_shape(node, kwargs))
    nodes = []
    data = inputs[0]
    if attrs.get("axis", "None") == "None":  # numpy.repeat without an axis flattens first
        nodes.append(make_node("Reshape", [data, constant(kwargs, f"{name}_flat", [-1])], [f"{name}_flat_data"]))
        data, rank, axis = f"{name}_flat_data", 1, 0
    else:
        axis = int(attrs["axis"])
        if not -rank <= axis < rank:
            raise ValueError(f"repeat {name}: axis {axis} is out of range for rank {rank}")
        axis %= rank
    tiles = [1] * (rank + 1)
    tiles[axis + 1] = repeats
    scale = [1] * rank
    scale[axis] = repeats
    return nodes + [
        make_node("Unsqueeze", [data, constant(kwargs, f"{name}_after", [axis + 1])], [f"{name}_unsqueezed"]),
        make_node("Tile", [f"{name}_unsqueezed", constant(kwargs, f"{name}_tiles", tiles)], [f"{name}_tiled"]),
        make_node("Shape", [data], [f"{name}_shape"]),
        make_node("Mul", [f"{name}_shape", constant(kwargs, f"{name}_scale", scale)], [f"{name}_new_shape"]),
        make_node("Reshape", [f"{name}_tiled", f"{name}_new_shape"], [name]),
    ]
