"""Measuring a model's row of the portability matrix: export it to ONNX, run the file in
onnxruntime and MXNet on the same inputs at two sizes, and record what happened.

Random weights (He-initialised, normalisation parameters away from their initial values, see
:func:`random_initializer`): the matrix says whether the *graph* leaves MXNet intact, which
does not depend on trained values, and no weights can be assumed present. A family whose
random outputs leave the range trained weights give, so that the comparison would measure
float32 rounding in a saturated function rather than the graph, names a hook in
:data:`TRAINED_LIKE` that moves its last layers back into that range.
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from gluon_hub import info, load
from gluon_hub.portability import spec_fingerprint
from gluon_hub.specs import InputSpec, ModelSpec, OnnxPortability
from gluon_hub.testing import _example_shape
from gluon_hub_deploy._quantize import Int8Model

__all__ = ["TOLERANCE", "TRAINED_LIKE", "measure", "random_initializer", "second_shape"]

#: The largest protobuf message, so the largest ONNX file without external data, in bytes.
_PROTOBUF_LIMIT = 2**31
#: A row is exportable when every output's ``max|onnx - mxnet| <= TOLERANCE * max|mxnet|``.
TOLERANCE = 1e-4

#: The length a free (``None``) axis gets, such as a text model's sequence length.
_FREE = 16

#: factory -> ``"module:function"`` called as ``function(net, first_input)`` after the random
#: initialisation: it rescales a family's output heads so that random weights give outputs in
#: a trained model's range (Monodepth2: He weights put the disparity logits in the hundreds,
#: where the sigmoid saturates at 0 and 1; its heads are scaled to logits within 10). Only
#: exact, linear rescalings of layers nothing but the output reads belong here.
TRAINED_LIKE = {
    "gluon_cv_core.depth.models.monodepth2:monodepth2": "gluon_cv_core.depth.models.monodepth2:scale_disparity_heads",
    # R-CNNs: saturated scores make top-k and NMS choose among ties, huge offsets put boxes at 1e5
    # pixels; RPN, class, box (and mask) heads are scaled to a trained detector's output range
    **dict.fromkeys(("gluon_cv_core.detection.models.faster_rcnn:faster_rcnn",
                     "gluon_cv_core.detection.models.faster_rcnn:custom_faster_rcnn_fpn",
                     "gluon_cv_core.detection.models.doublehead_rcnn:doublehead_rcnn",
                     "gluon_cv_core.detection.models.mask_rcnn:mask_rcnn"),
                    "gluon_cv_core.detection.models.faster_rcnn:scale_rcnn_heads"),
    # SSD: ResNet-34's features reach 5e3, its softmax gives 1.0 and its boxes overflow; class
    # and box predictors are scaled per layer to a trained SSD's logits and offsets
    "gluon_cv_core.detection.models.ssd:ssd": "gluon_cv_core.detection.models.ssd:scale_ssd_heads",
    # CenterNet: heatmap logits saturate the sigmoid at 1.0, so the top-k peaks tie; heatmap,
    # size and offset heads are scaled to a trained CenterNet's range
    "gluon_cv_core.detection.models.center_net:center_net":
        "gluon_cv_core.detection.models.center_net:scale_center_net_heads",
    # YOLOv3: DarkNet-53's features reach 1e5, its sigmoids give 1.0 and its boxes overflow; each
    # scale's centre, log-scale, objectness and class terms are scaled to a trained YOLOv3's range
    "gluon_cv_core.detection.models.yolo3:yolo3": "gluon_cv_core.detection.models.yolo3:scale_yolo3_heads",
}


def second_shape(shape: tuple[int, ...], image_like: bool) -> tuple[int, ...]:
    """The other size a model is checked at: height and width three quarters of the
    default's, rounded to a multiple of 32 (what strided backbones need); for other
    inputs, the free axes at another length."""
    if not image_like:
        return shape
    *lead, h, w = shape
    return (*lead, *(max(32, int(round(d * 0.75 / 32)) * 32) for d in (h, w)))


def random_initializer(seed: int = 0) -> Any:
    """He (fan-in) weights, zero for a vector the network named as a weight (FPN's lateral
    biases), and normalisation parameters drawn away from their initial values.

    Initial values (gamma 1, beta 0, running mean 0, variance 1) make a normalisation layer
    the identity, so a converter that ignores ``fix_gamma`` or mixes up the running
    statistics would pass unnoticed. The variance is log-uniform in [1/2, 2] and gamma
    log-uniform in [2/3, 3/2] times 0.911, so that E[gamma^2 / variance] = 1 and a deep
    network keeps its activations' scale (unscaled, each layer multiplied their variance by
    1.2 on average: detectors' scores saturated into ties and an SSD's boxes overflowed);
    beta and the mean are uniform in [-0.2, 0.2]. Each parameter's values depend only on
    ``seed`` and its name.
    """
    import zlib

    from gluon_hub.compat import mx

    class _Initializer(mx.init.Xavier):
        def __call__(self, desc: Any, arr: Any) -> None:
            super().__call__(desc, arr)  # Gluon passes every parameter through here, even one with its own init
            name = str(desc)
            kind = next((k for k in _NORMALISATION if name.endswith(k)), None)
            if kind is not None:
                rng = np.random.default_rng([seed, zlib.crc32(name.encode())])
                low, high, log = _NORMALISATION[kind]
                values = rng.uniform(low, high, arr.shape)
                arr[:] = np.exp(values) if log else values

        def _init_weight(self, name: str, arr: Any) -> None:
            if len(arr.shape) < 2:
                arr[:] = 0
            else:
                super()._init_weight(name, arr)

    return _Initializer(rnd_type="gaussian", factor_type="in", magnitude=2)


_GAMMA_SPREAD, _VARIANCE_SPREAD = math.log(3 / 2), math.log(2)
#: log of gamma's factor making E[gamma^2] * E[1 / variance] = 1 for the log-uniform draws
#: (E[exp(2u)] = sinh(2a) / 2a for u uniform in [-a, a], E[exp(-v)] = sinh(b) / b)
_GAMMA_SHIFT = -0.5 * math.log(math.sinh(2 * _GAMMA_SPREAD) / (2 * _GAMMA_SPREAD)
                               * math.sinh(_VARIANCE_SPREAD) / _VARIANCE_SPREAD)
#: Name suffix -> (low, high, log-uniform) of the values :func:`random_initializer` draws.
_NORMALISATION = {
    "gamma": (_GAMMA_SHIFT - _GAMMA_SPREAD, _GAMMA_SHIFT + _GAMMA_SPREAD, True),
    "beta": (-0.2, 0.2, False),
    "running_mean": (-0.2, 0.2, False),
    "moving_mean": (-0.2, 0.2, False),
    "running_var": (-_VARIANCE_SPREAD, _VARIANCE_SPREAD, True),
    "moving_var": (-_VARIANCE_SPREAD, _VARIANCE_SPREAD, True),
}


def _he_initialised(name: str) -> Any:
    net = load(name)
    net.initialize(random_initializer(), force_reinit=True)
    net.hybridize()
    return net


def _mxnet_outputs(net: Any, arrays: list[np.ndarray]) -> list[np.ndarray]:
    from gluon_hub.compat import mx

    out = net(*[mx.nd.array(a, dtype=a.dtype) for a in arrays])
    flat = out if isinstance(out, (list, tuple)) else [out]
    return [o.asnumpy() for o in _flatten(flat)]


def _flatten(outputs: Sequence[Any]) -> list[Any]:
    flat: list[Any] = []
    for o in outputs:
        flat.extend(_flatten(o) if isinstance(o, (list, tuple)) else [o])
    return flat


def _onnx_outputs(path: Path, arrays: list[np.ndarray]) -> list[np.ndarray]:
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    feed = {i.name: a for i, a in zip(session.get_inputs(), arrays)}
    return session.run(None, feed)


def _relative_difference(expected: list[np.ndarray], actual: list[np.ndarray], detections: bool = False) -> float:
    """The largest ``max|actual - expected| / max|expected|`` over the outputs (a detector's
    kept detections paired, see :func:`_paired_detections`)."""
    if len(expected) != len(actual):
        raise ValueError(f"onnxruntime gave {len(actual)} outputs, MXNet {len(expected)}")
    if detections:
        paired = _paired_detections(expected, actual)
        if paired is not None:
            expected, actual = paired
    worst = 0.0
    for e, a in zip(expected, actual):
        if e.shape != a.shape:
            raise ValueError(f"an output has shape {a.shape} in onnxruntime, {e.shape} in MXNet")
        e64, a64 = e.astype(np.float64), a.astype(np.float64)
        scale = float(np.max(np.abs(e64))) if e64.size else 0.0
        diff = float(np.max(np.abs(a64 - e64))) if e64.size else 0.0
        if not (math.isfinite(scale) and math.isfinite(diff)):
            raise ValueError("MXNet's or onnxruntime's outputs are not finite")
        worst = max(worst, diff / scale if scale > 0 else diff)
    return worst


_DETECTION_TASKS = ("object-detection", "instance-segmentation")


def _paired_detections(expected: list[np.ndarray], actual: list[np.ndarray]
                       ) -> tuple[list[np.ndarray], list[np.ndarray]] | None:
    """A detector's kept detections (id >= 0) of MXNet and of onnxruntime, each of MXNet's
    rows beside its counterpart: the same image and class, the score within the tolerance of
    the scores' scale, the nearest box. ``None`` when the outputs are not (ids, scores,
    boxes, then per-detection extras such as masks).

    Top-k and NMS order equal scores differently in onnxruntime and MXNet, and scores that
    differ in the seventh digit reorder near-ties, so rows are paired, not compared by
    position (sorting by rounded scores put neighbours that straddle a rounding step in
    different orders: YOLOv3 measured 1.0 of its scale that way). For the same reason the
    last places of a full top-k may go to different detections among scores within the
    tolerance of the cut (CenterNet's 100th peak), and where every detection above a score
    threshold is kept (the COCO R-CNNs keep thousands with random weights) the two may keep a
    few more or fewer among the scores within the tolerance of the threshold; those are left
    out, any other row without a counterpart is an error.
    """
    kept = [_kept(outputs) for outputs in (expected, actual)]
    if kept[0] is None or kept[1] is None:
        return None
    (e_rows, e_flat), (a_rows, a_flat) = kept[0], kept[1]
    tolerance = TOLERANCE * max(float(np.max(np.abs(e_rows[:, 2]))) if len(e_rows) else 0.0, 1e-12)
    box_tolerance = TOLERANCE * max(float(np.max(np.abs(e_rows[:, 3:]))) if len(e_rows) else 0.0, 1e-12)
    e_cut, a_cut = _at_the_cut(e_rows, tolerance), _at_the_cut(a_rows, tolerance)
    free = np.ones(len(a_rows), dtype=bool)
    paired: list[tuple[int, int]] = []
    for i in np.argsort(-e_rows[:, 2], kind="stable"):
        image, class_id, score = e_rows[i, :3]
        near = np.flatnonzero(free & (a_rows[:, 0] == image) & (a_rows[:, 1] == class_id)
                              & (np.abs(a_rows[:, 2] - score) <= tolerance))
        distances = np.abs(a_rows[near, 3:] - e_rows[i, 3:]).max(axis=1)
        if e_cut[i] and (not len(near) or distances.min() > box_tolerance):
            continue  # a near-tie at the cut that onnxruntime's top-k left out
        if not len(near):
            raise ValueError(f"MXNet's detection of class {int(class_id)} scoring {score:.6g} has no "
                             f"counterpart in onnxruntime's within {tolerance:.1e} of its score")
        partner = int(near[np.argmin(distances)])
        free[partner] = False
        paired.append((int(i), partner))
    extra = np.flatnonzero(free & ~a_cut)
    if len(extra):
        raise ValueError(f"onnxruntime keeps a detection of class {int(a_rows[extra[0], 1])} scoring "
                         f"{a_rows[extra[0], 2]:.6g} that MXNet does not")
    mine, theirs = (np.array([p[k] for p in paired], dtype=np.int64) for k in (0, 1))
    return [f[mine] for f in e_flat], [f[theirs] for f in a_flat]


def _at_the_cut(rows: np.ndarray, tolerance: float) -> np.ndarray:
    """Rows scoring within ``tolerance`` of their image's lowest kept score."""
    lowest = {image: rows[rows[:, 0] == image, 2].min() for image in np.unique(rows[:, 0])}
    return np.array([row[2] <= lowest[row[0]] + tolerance for row in rows], dtype=bool)


def _kept(outputs: list[np.ndarray]) -> tuple[np.ndarray, list[np.ndarray]] | None:
    """(image, id, score, box) rows of the kept detections, and every output's kept rows."""
    if len(outputs) < 3:
        return None
    ids, scores, boxes = outputs[:3]
    if not (ids.ndim == scores.ndim == boxes.ndim == 3 and ids.shape[2] == scores.shape[2] == 1
            and boxes.shape[2] == 4 and ids.shape[:2] == scores.shape[:2] == boxes.shape[:2]):
        return None
    images = np.repeat(np.arange(ids.shape[0], dtype=np.float64), ids.shape[1])[:, None]
    rows = np.concatenate([images, np.concatenate([ids, scores, boxes], axis=-1).reshape(-1, 6)], axis=1)
    kept = np.flatnonzero(rows[:, 1] >= 0)
    flat = [o.reshape(ids.shape[0] * ids.shape[1], *o.shape[2:])[kept] for o in outputs]
    return rows[kept].astype(np.float64), flat


def _noise_floor(net: Any, arrays: list[np.ndarray], expected: list[np.ndarray], detections: bool) -> float:
    """How far MXNet's own outputs move (relative to their scale) when its float inputs move
    by 1e-7 relative, one or two float32 steps: deep networks with random weights can amplify
    rounding until a comparison says nothing about the converter (ResNeSt-101 moves by 0.46)."""
    signs = np.random.default_rng(2)
    moved = [a * (1 + np.float32(1e-7) * signs.choice(np.array([-1, 1], a.dtype), a.shape))
             if a.dtype.kind == "f" else a for a in arrays]
    try:
        return _relative_difference(expected, _mxnet_outputs(net, moved), detections)
    except ValueError:  # another number of detections, or not finite: as far as it can move
        return math.inf


def _unreproducible(worst: float | str, floor: float, where: str = "") -> str:
    """The row's text when MXNet cannot reproduce itself: ``worst`` is onnxruntime's distance
    from MXNet, or what differs where detections could not be paired."""
    own = ("MXNet's own detections change (another count, or one without a counterpart)" if math.isinf(floor)
           else f"MXNet's own outputs move by {floor:.1e} of their scale")
    theirs = (f"onnxruntime's are {worst:.1e} from MXNet's (tolerance {TOLERANCE:.0e})" if isinstance(worst, float)
              else f"onnxruntime's differ: {worst}")
    at = f" {where}" if where else ""
    return (f"not comparable with random weights{at}: {own} when its input moves by 1e-7 (float32 "
            f"rounding grows through this network with random weights), {theirs}")


def _differing(net: Any, arrays: list[np.ndarray], expected: list[np.ndarray], detections: bool,
               difference: float | str, where: str = "") -> str:
    """The blocked row's text for onnxruntime's ``difference`` from MXNet (beyond the tolerance,
    or detections that could not be paired): unreproducible where MXNet's own outputs move as
    far when its input moves by 1e-7."""
    floor = _noise_floor(net, arrays, expected, detections)
    if floor > TOLERANCE:
        return _unreproducible(difference, floor, where)
    at = f"{where} " if where else ""
    if isinstance(difference, str):
        return f"{at}onnxruntime's outputs differ from MXNet's: {difference}"
    return f"{at}onnxruntime's outputs differ from MXNet's by {difference:.1e} of their scale (tolerance {TOLERANCE:.0e})"


def _blocked(fingerprint: str, why: str) -> OnnxPortability:
    return OnnxPortability(status="blocked", fingerprint=fingerprint, blocker=why)


def measure(name: str) -> OnnxPortability:
    """Export ``name`` with random weights and compare onnxruntime with MXNet.

    The export first leaves the batch and spatial axes free; if the graph does not run
    (or differs) at the second size that way, it is exported again with fixed shapes, and
    the second size gets a file of its own, so the row records fixed shapes.
    """
    from gluon_hub_deploy._export import OnnxExportError

    spec = info(name)
    fingerprint = spec_fingerprint(spec)
    if spec.input is None or spec.input.shape is None:
        return _blocked(fingerprint, "the spec declares no input shape to export at")
    if (spec.num_params or 0) * 4 >= _PROTOBUF_LIMIT:  # checked first: building it may exhaust memory
        return _blocked(fingerprint, f"its float32 parameters ({spec.num_params * 4 / 2**30:.1f} GiB) exceed "
                                     f"ONNX's 2 GiB protobuf limit, and mxnet.onnx 1.9.1 writes no external "
                                     f"data; export it as an MXNet symbol instead (gluon_hub.export({name!r}, "
                                     f"path, format='mxnet'))")
    inputs = [spec.input, *spec.extra_inputs]
    net = _he_initialised(name)
    # an int8 video entry takes whole videos' frames (num_segments of them), not one frame
    batch = net.input_shape[0] if isinstance(net, Int8Model) else 1
    shapes = [_example_shape(s, batch, _FREE) for s in inputs]
    image_like = len(shapes[0]) >= 4 and spec.input.dtype in (None, "float32") and None not in spec.input.shape
    text_like = any(None in (s.shape or ()) for s in inputs)
    seconds = ([second_shape(shapes[0], True), *shapes[1:]] if image_like
               else [_example_shape(s, 1, _FREE * 2) for s in inputs] if text_like else None)
    dtypes = [(s.dtype or "float32") for s in inputs]
    detections = spec.task in _DETECTION_TASKS
    if spec.export_graphs:
        return _measure_graphs(spec, net, shapes[0], fingerprint)
    first = _random_inputs(shapes, dtypes, 0)
    try:  # the trained-like hook runs the network too, so it fails where MXNet does
        if spec.factory in TRAINED_LIKE:
            from gluon_hub.specs import import_object

            import_object(TRAINED_LIKE[spec.factory], f"the trained-like weights of {name!r}")(net, first[0])
        expected = _mxnet_outputs(net, first)
    except Exception as error:  # noqa: BLE001  (recorded in the row, not raised)
        return _blocked(fingerprint, f"MXNet itself failed at {shapes}: {type(error).__name__}: {error}")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.onnx"
        try:
            _export_onnx(net, path, shapes, dtypes, name, free=True, spatial=image_like)
            dynamic = True
        except OnnxExportError as error:
            return _blocked(fingerprint, str(error))
        try:
            got = _onnx_outputs(path, first)
        except Exception as error:  # noqa: BLE001
            return _blocked(fingerprint, f"onnxruntime failed to run the exported graph: {error}")
        try:
            worst = _relative_difference(expected, got, detections)
        except ValueError as error:  # detections that cannot be paired
            return _blocked(fingerprint, _differing(net, first, expected, detections, str(error)))
        if worst > TOLERANCE:
            return _blocked(fingerprint, _differing(net, first, expected, detections, worst))
        if seconds is not None:
            second = _random_inputs(seconds, dtypes, 1)
            try:
                second_expected = _mxnet_outputs(net, second)
            except Exception:  # noqa: BLE001  (the model itself takes one size only: alexnet's dense layers)
                return _exportable(fingerprint, shapes, worst)
            try:
                second_worst = _relative_difference(second_expected, _onnx_outputs(path, second), detections)
            except Exception:  # noqa: BLE001  (the graph fixes a shape: export per size below)
                second_worst = math.inf
            if second_worst > TOLERANCE:
                dynamic = False
                fixed = Path(tmp) / "second.onnx"
                _export_onnx(net, fixed, seconds, dtypes, name, free=False, spatial=False)
                try:
                    second_worst = _relative_difference(second_expected, _onnx_outputs(fixed, second), detections)
                except ValueError as error:  # detections that cannot be paired
                    return _blocked(fingerprint, _differing(net, second, second_expected, detections, str(error),
                                                            f"at {seconds}"))
                if second_worst > TOLERANCE:
                    return _blocked(fingerprint, _differing(net, second, second_expected, detections, second_worst,
                                                            f"at {seconds}"))
            worst = max(worst, second_worst)
    recorded = [_free_axes(s, image_like, text_like, spec_input) for s, spec_input in zip(shapes, inputs)]
    return _exportable(fingerprint, recorded if dynamic else shapes, worst)


def _exportable(fingerprint: str, shapes: Sequence[Sequence[int | None]], worst: float) -> OnnxPortability:
    return OnnxPortability(status="exportable", fingerprint=fingerprint, opset=_opset(),
                           input_shapes=tuple(tuple(s) for s in shapes), max_rel_diff=float(f"{worst:.2e}"))


def _export_onnx(net: Any, path: Path, shapes: list[tuple[int, ...]], dtypes: list[str], name: str,
                 free: bool, spatial: bool) -> None:
    """``export(net, path, format="onnx", ...)``, with errors naming the model ``name``."""
    from gluon_hub.specs import ExportGraph
    from gluon_hub_deploy._export import _dynamic_axes
    from gluon_hub_deploy._graphs import export_graphs

    dynamic = _dynamic_axes(shapes, free, spatial)
    export_graphs([ExportGraph(name="model", block=net, input_shapes=tuple(shapes), dtypes=tuple(dtypes),
                               dynamic_shapes=tuple(dynamic or ()))], path, "onnx", 0, name)


def _random_inputs(shapes: Sequence[tuple[int, ...]], dtypes: Sequence[str], seed: int) -> list[np.ndarray]:
    """Random floats in [-1, 1); ones for integer inputs (valid ids, types and lengths)."""
    rng = np.random.default_rng(seed)
    return [np.ones(s, d) if "int" in d else rng.uniform(-1, 1, s).astype(d) for s, d in zip(shapes, dtypes)]


def _measure_graphs(spec: ModelSpec, net: Any, input_shape: tuple[int, ...], fingerprint: str) -> OnnxPortability:
    """A model exported as several graphs (states, caches, encoder and decoder step): each
    graph is compared on its own, at its traced shapes and with its free axes doubled."""
    from gluon_hub_deploy._export import OnnxExportError
    from gluon_hub_deploy._graphs import export_graphs, graph_path, spec_graphs

    graphs = spec_graphs(spec, net, input_shape)
    worst, recorded = 0.0, []
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "model.onnx"
        try:
            export_graphs(graphs, target, "onnx", 0, spec.qualified_name)
        except OnnxExportError as error:
            return _blocked(fingerprint, str(error))
        for graph in graphs:
            sizes = [graph.input_shapes]
            if graph.dynamic_shapes:
                sizes.append(tuple(tuple(2 * fixed if free is None else fixed for fixed, free in zip(s, d))
                                   for s, d in zip(graph.input_shapes, graph.dynamic_shapes)))
            for seed, shapes in enumerate(sizes):
                arrays = _random_inputs(shapes, graph.dtypes, seed)
                try:
                    diff = _relative_difference(_mxnet_outputs(graph.block, arrays),
                                                _onnx_outputs(graph_path(target, graph, len(graphs)), arrays))
                except Exception as error:  # noqa: BLE001  (recorded in the row)
                    return _blocked(fingerprint, f"graph {graph.name!r} at {shapes}: {type(error).__name__}: {error}")
                if diff > TOLERANCE:
                    return _blocked(fingerprint, f"graph {graph.name!r}: onnxruntime's outputs differ from "
                                                 f"MXNet's by {diff:.1e} of their scale at {shapes}")
                worst = max(worst, diff)
            recorded += list(graph.dynamic_shapes or graph.input_shapes)
    return _exportable(fingerprint, recorded, worst)


def _free_axes(shape: tuple[int, ...], image_like: bool, text_like: bool, spec: InputSpec) -> tuple[int | None, ...]:
    """The exported shape with ``None`` on the axes the ONNX file leaves free."""
    if image_like and len(shape) >= 3:
        return (None, shape[1], *([None] * (len(shape) - 2)))
    from gluon_hub.testing import _batch_axis

    batch = _batch_axis(spec)
    return tuple(None if axis == batch else d for axis, d in enumerate(shape))


def _opset() -> int:
    from gluon_hub_deploy.onnx_converters._common import OPSET

    return OPSET


def _main() -> None:
    """``python -m gluon_hub_deploy._measure NAME``: the row as JSON on the last line of
    stdout (``gluon-hub portability`` runs one such process per model)."""
    import json
    import sys
    import warnings

    from gluon_hub.specs import _to_jsonable

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # MXNet's and onnx's deprecation chatter
        row = measure(sys.argv[1])
    print(json.dumps(_to_jsonable(row)))


if __name__ == "__main__":
    _main()
