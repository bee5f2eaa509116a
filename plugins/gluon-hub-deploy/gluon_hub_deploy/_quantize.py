"""Int8 inference on a CPU: MXNet 1.9's oneDNN quantization, with clear errors around it.

The float32 graph is partitioned by the ``MKLDNN_QUANTIZE`` backend (convolution +
BatchNorm + ReLU (+ residual add) fused as for :func:`gluon_hub.optimize`), then each
fused convolution and dense layer is given int8 weights and an int8 (uint8 after a ReLU)
output whose range was measured on calibration data. Calibrated ranges are what make
int8 fast: without them (``calib_mode="none"``) every layer measures its output at run
time, which on an AVX2 machine is no faster than float32.

``int8_model`` is the factory of the int8 registry entries (``resnet50_v1_int8`` ...):
it wraps the float32 model and quantizes it once its weights are in place.
"""

from __future__ import annotations

import os
import tempfile
import warnings
from typing import Any, Iterable, Mapping, Sequence

__all__ = ["quantize", "calibration_layers", "int8_operators", "int8_model", "Int8Model", "CALIB_MODES",
           "AUTO_FLOAT32_OPERATORS"]

#: Calibration modes, as MXNet names them: layer output min/max over the data ('naive'),
#: thresholds minimising the KL divergence of the int8 histogram ('entropy', slower to
#: calibrate), or ranges measured at run time on every call ('none', no data needed but
#: slow).
CALIB_MODES = ("naive", "entropy", "none")
#: Operators that oneDNN runs in int8 in a quantized graph.
_INT8_PREFIXES = ("_contrib_quantize", "_contrib_quantized_", "_contrib_requantize")
#: oneDNN fuses before MXNet quantizes, and MXNet 1.9 matches exclude_operators against the
#: fused node's type: an operator type also excludes the fused nodes built around it.
_FUSED_OPERATORS = {"FullyConnected": "_sg_mkldnn_fully_connected", "Convolution": "_sg_mkldnn_conv"}
#: Operators that MXNet 1.9.1 quantizes but whose int8 kernel fails when the graph runs, kept
#: in float32 always, with why. Its int8 elemwise_mul takes int8 inputs only, and a ReLU's
#: output is uint8 (MobileNetV3's hard-swish, residual attention's masks).
AUTO_FLOAT32_OPERATORS = {
    "elemwise_mul": "excluded automatically: MXNet 1.9.1's int8 elemwise_mul takes int8 inputs "
                    "only and fails at run time on a ReLU's uint8 output",
}
#: Operator types that MXNet 1.9.1 has int8 kernels for: a node of one of these types that runs
#: in float32 is reported in ``gluon_hub_float32_layers``.
_INT8_CAPABLE = {"Convolution", "FullyConnected", "Activation", "Pooling", "Concat", "elemwise_add",
                 "elemwise_mul", "Flatten", "Embedding", "BatchNorm", "RNN"}


def quantize(
    block: Any,
    calib_data: Iterable[Any] | None = None,
    calib_mode: str = "naive",
    exclude_layers: Sequence[str] = (),
    exclude_operators: Sequence[str] = (),
    thresholds: Mapping[str, Sequence[float]] | None = None,
) -> Any:
    """An int8 copy of a float32 ``HybridBlock`` for CPU inference with oneDNN.

    What changes: the result is a new ``SymbolBlock`` for inference only (no gradients,
    BatchNorm folded into the weights); it runs on the CPU only; activations are rounded
    to 8 bits within the calibrated ranges, so outputs differ from float32 by a few
    percent of their scale (``bench/bench_fast_inference.py`` reports by how much); memory
    is planned for the shape of the calibration batches, so run it at that shape. The
    float32 ``block`` is left as it was, except that it is hybridized.

    Parameters
    ----------
    block : a ``HybridBlock`` with initialised (or loaded) parameters on the CPU.
    calib_data : an iterable of input batches (``NDArray`` or numpy arrays, batch axis
        first, all of one shape; a tuple per batch for a block with several inputs),
        representative of what the model will see. With ``calib_mode="none"`` only the
        first batch is read, for the input shape.
    calib_mode : ``"naive"`` (min/max of each layer's output over ``calib_data``),
        ``"entropy"`` (KL-divergence thresholds; better with outliers, slower to
        calibrate) or ``"none"`` (ranges measured at run time on every call).
    exclude_layers : names of layers (symbol names, as ``block.export`` writes them) to
        keep in float32, such as the last dense layer when logits must stay exact.
    exclude_operators : operator types to keep in float32 (``"FullyConnected"`` ...), besides
        :data:`AUTO_FLOAT32_OPERATORS` (``elemwise_mul``), which MXNet 1.9.1 cannot run in
        int8 in such graphs and which always stay float32.
    thresholds : recorded output ranges ``{layer output name: (min, max)}`` (see
        :func:`calibration_layers`) to use instead of measuring those layers, with
        ``calib_mode`` ``"naive"`` (the rest are measured) or ``"none"``.

    Returns
    -------
    The int8 ``SymbolBlock``. Its ``gluon_hub_float32_layers`` attribute maps every layer that
    still runs in float32 although MXNet has int8 kernels for its operator type to why:
    ``"exclude_layers"``, ``"exclude_operators"``, an automatic exclusion's reason, or MXNet's
    own choice (a sigmoid activation, a layer fed by float32 ones). Fused layers are named by
    their convolution or dense layer, as ``exclude_layers`` takes them.

    Examples
    --------
    >>> import numpy as np
    >>> from gluon_hub.compat import mx
    >>> net = mx.gluon.nn.HybridSequential()
    >>> net.add(mx.gluon.nn.Conv2D(8, 3, in_channels=3, activation="relu"), mx.gluon.nn.Dense(4))
    >>> net.initialize()
    >>> batches = [np.random.default_rng(i).random((2, 3, 8, 8), dtype=np.float32) for i in range(3)]
    >>> int8 = quantize(net, calib_data=batches)
    >>> int8_operators(int8)[:2]
    ['_contrib_quantize_v2', '_sg_mkldnn_conv']
    >>> int8(mx.nd.array(batches[0])).shape
    (2, 4)
    >>> int8.gluon_hub_float32_layers  # every layer with an int8 kernel runs in int8
    {}
    """
    from gluon_hub.compat import mx

    if calib_mode not in CALIB_MODES:
        raise ValueError(f"calib_mode must be one of {', '.join(map(repr, CALIB_MODES))}, got {calib_mode!r}")
    if calib_data is None:
        need = ("it measures each layer's output range on them" if calib_mode != "none"
                else "it reads the input shape from the first")
        raise ValueError(
            f"quantize(calib_mode={calib_mode!r}) needs calib_data, an iterable of input batches "
            f"({need}); pass a few batches of real inputs, for example calib_data=[x1, x2]"
        )
    if thresholds is not None and calib_mode == "entropy":
        raise ValueError("thresholds are recorded min/max ranges; use them with calib_mode='naive' or 'none'")
    _check_block(mx, block)
    excluded_operators = list(dict.fromkeys([*exclude_operators, *AUTO_FLOAT32_OPERATORS]))
    batches = _batches(mx, calib_data, calib_mode)
    shapes = [mx.io.DataDesc(name, x.shape) for name, x in zip(_input_names(len(batches[0])), batches[0])]
    try:
        block(*batches[0])
    except Exception as exc:
        raise ValueError(
            f"the calibration batches (shape {', '.join(str(d.shape) for d in shapes)}) do not fit "
            f"the block: {_last_line(exc)}"
        ) from exc
    preset = {str(k): (float(v[0]), float(v[1])) for k, v in (thresholds or {}).items()}
    mode, collector = calib_mode, None
    if preset or calib_mode == "naive":
        mode, collector = "customize", _RangeCollector(preset, measure=calib_mode == "naive")
    if calib_mode == "none" and not preset:
        batches = batches[:1]
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Cannot decide type")  # SymbolBlock's, harmless
        int8 = mx.contrib.quantization.quantize_net_v2(
            block, quantized_dtype="auto", quantize_mode="smart",
            exclude_layers=list(exclude_layers),
            exclude_operators=[*excluded_operators, *(_FUSED_OPERATORS[op] for op in excluded_operators
                                                      if op in _FUSED_OPERATORS)],
            calib_data=None if mode == "none" else _BatchIter(mx, batches, shapes),
            data_shapes=shapes, calib_mode=mode, ctx=mx.cpu(), LayerOutputCollector=collector,
        )
        int8 = _with_plain_dense_inputs(mx, int8, [d.name for d in shapes])
    if collector is not None and preset:
        unknown = sorted(set(preset) - collector.seen)
        if unknown:
            raise ValueError(
                f"thresholds name layers the graph does not have: {', '.join(unknown[:5])}"
                f"{' ...' if len(unknown) > 5 else ''}; see calibration_layers(block, x) for its names"
            )
    int8.hybridize(static_alloc=True, static_shape=True)
    try:  # some int8 graphs build but fail when run (MXNet 1.9: int8 feeding a uint8 multiply)
        outputs = int8(*batches[0])
        for out in outputs if isinstance(outputs, (list, tuple)) else [outputs]:
            out.wait_to_read()
    except mx.base.MXNetError as exc:
        raise RuntimeError(
            f"the int8 graph does not run in MXNet {mx.__version__}: {_last_line(exc)}; keep the failing layers "
            "in float32 with exclude_operators=[...] (operator types, such as 'Pooling') or exclude_layers=[...] "
            "(layer names, as block.export writes them)"
        ) from None
    int8.gluon_hub_float32_layers = _float32_layers(int8, exclude_layers, exclude_operators)
    return int8


def calibration_layers(block: Any, example_input: Any) -> list[str]:
    """The names of the layer outputs ``thresholds`` may set, in graph order.

    These are outputs of the graph after oneDNN fusion (``sg_mkldnn_conv_bn_act_0_output``
    ...), the names under which calibration records ranges.
    """
    from gluon_hub.compat import mx

    _check_block(mx, block)
    inputs = example_input if isinstance(example_input, (tuple, list)) else (example_input,)
    inputs = [mx.nd.array(x, dtype=x.dtype) if not isinstance(x, mx.nd.NDArray) else x for x in inputs]
    symbol, args = _graph(mx, block, inputs)
    backend = symbol.get_backend_symbol("MKLDNN_QUANTIZE")
    _, layers = mx.contrib.quantization._quantize_symbol(backend, mx.cpu(), offline_params=list(args),
                                                         quantized_dtype="auto", quantize_mode="smart")
    return list(layers)


def int8_operators(block: Any) -> list[str]:
    """The int8 operators of a quantized block's graph, sorted: the quantize step, the
    quantized fused convolutions and dense layers (``_sg_mkldnn_*`` marked quantized),
    requantize and quantized pooling, flatten ..."""
    import json

    graph = getattr(block, "_cached_graph", ())
    if not graph:
        return []
    ops = set()
    for node in json.loads(graph[1].tojson())["nodes"]:
        if node["op"].startswith(_INT8_PREFIXES):
            ops.add(node["op"])
        # a convolution writes its flag as "true", a dense layer as "True"
        elif node["op"].startswith("_sg_mkldnn_") and node.get("attrs", {}).get("quantized", "").lower() == "true":
            ops.add(node["op"])
    return sorted(ops)


def _with_plain_dense_inputs(mx: Any, int8: Any, input_names: Sequence[str]) -> Any:
    """``int8`` with a ``Reshape`` to 2-D in front of each fused dense layer's data input.

    MXNet 1.9.1's fused oneDNN dense layer (``SgMKLDNNFCOp::Forward``) decides at its first
    run whether its input must be reordered out of oneDNN's blocked layout, and never checks
    again. In the cached graph (``static_shape=True``) of SE-ResNeXt and SENet-154 the 4-D
    pooled input reaches the last dense layer in a different layout from the second call on,
    which then fails inside the graph with "We can't generate TBlob for MKLDNN data": the
    outputs are never made, so no operator added after them helps (Cast, copy, reshape,
    Flatten there all fail alike). Fed through a 2-D ``Reshape``, the dense layer gets a
    plain array on every call (checked over repeated calls on both models).
    ``static_shape=False`` also avoids it but ran 3 to 18 times slower on these CPUs. The reshape is the one the layer makes itself (``flatten=True``: batch
    axis, then the rest), so outputs are bit-identical; a layer with ``flatten=False`` keeps
    its input axes and is left as it is.
    """
    import json

    graph = json.loads(int8._cached_graph[1].tojson())
    nodes: list[dict[str, Any]] = []
    where: dict[int, int] = {}
    for index, node in enumerate(graph["nodes"]):
        node = {**node, "inputs": [[where[e[0]], *e[1:]] for e in node["inputs"]]}
        if node["op"] == "_sg_mkldnn_fully_connected" and _flattens(node):
            nodes.append({"op": "Reshape", "name": f"{node['name']}_plain_input", "attrs": {"shape": "(0, -1)"},
                          "inputs": [node["inputs"][0]]})
            node["inputs"][0] = [len(nodes) - 1, 0, 0]
        where[index] = len(nodes)
        nodes.append(node)
    if len(nodes) == len(graph["nodes"]):
        return int8
    graph.update(nodes=nodes, arg_nodes=[where[i] for i in graph["arg_nodes"]],
                 heads=[[where[h[0]], *h[1:]] for h in graph["heads"]])
    graph.pop("node_row_ptr", None)  # optional: recomputed from the nodes when loading
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Cannot decide type")
        rebuilt = mx.gluon.SymbolBlock(mx.sym.load_json(json.dumps(graph)), [mx.sym.var(n) for n in input_names])
    old = int8.collect_params()
    for name, param in rebuilt.collect_params().items():
        # int8 weights keep their dtype, as quantize_net_v2 loads them
        param._load_init(old[name].data(), mx.cpu(), cast_dtype=True, dtype_source="saved")
    return rebuilt


def _flattens(node: Mapping[str, Any]) -> bool:
    """Whether a fused dense node flattens its input to (batch, rest), as ``Dense`` does by default."""
    inner = [n for n in node["subgraphs"][0]["nodes"] if n["op"] == "FullyConnected"]
    return bool(inner) and inner[0].get("attrs", {}).get("flatten", "True").lower() == "true"


def _float32_layers(int8: Any, exclude_layers: Sequence[str], exclude_operators: Sequence[str]) -> dict[str, str]:
    """What :func:`quantize` reports as ``gluon_hub_float32_layers``, from the int8 graph it ran."""
    import json

    from gluon_hub.compat import mx

    reasons = {}
    for node in json.loads(int8._cached_graph[1].tojson())["nodes"]:
        name, op = node["name"], node["op"]
        if op.startswith("_sg_mkldnn_"):
            if node.get("attrs", {}).get("quantized", "").lower() == "true":  # a dense layer writes "True"
                continue
            # a float32 fused node: named by the convolution or dense layer inside it
            inner = [n for n in node["subgraphs"][0]["nodes"] if n["op"] in ("Convolution", "FullyConnected")]
            if not inner:
                continue
            name, op = inner[0]["name"], inner[0]["op"]
        elif op not in _INT8_CAPABLE:
            continue
        if name in exclude_layers:
            reasons[name] = "exclude_layers"
        elif op in exclude_operators:
            reasons[name] = "exclude_operators"
        elif op in AUTO_FLOAT32_OPERATORS:
            reasons[name] = AUTO_FLOAT32_OPERATORS[op]
        else:
            reasons[name] = (f"left in float32 by MXNet {mx.__version__}'s quantization: no int8 kernel "
                             "for this case (a sigmoid Activation ...) or its input")
    return reasons


class Int8Model:
    """A float32 model that quantizes itself once its weights are in place.

    ``gluon_hub.load`` builds a model, then initialises it or loads the published weights
    into it; this class turns either step into "then quantize": ``load_parameters`` loads
    the float32 weights and quantizes with the recorded ``thresholds`` (or calibrates on
    ``calib_data`` when given), ``initialize`` (random weights, which recorded ranges do
    not describe) calibrates on a seeded uniform batch. Calls go to the int8 block.
    """

    def __init__(self, fp32: Any, input_shape: Sequence[int], calib_data: Iterable[Any] | None = None,
                 calib_mode: str | None = None, exclude_layers: Sequence[str] = (),
                 exclude_operators: Sequence[str] = (),
                 thresholds: Mapping[str, Sequence[float]] | None = None) -> None:
        if calib_mode is not None and calib_mode not in CALIB_MODES:
            raise ValueError(f"calib_mode must be one of {', '.join(map(repr, CALIB_MODES))}, got {calib_mode!r}")
        if calib_mode in ("naive", "entropy") and calib_data is None:
            raise ValueError(f"calib_mode={calib_mode!r} needs calib_data, an iterable of input batches "
                             "of this model's input shape")
        self.fp32 = fp32
        self.int8: Any = None
        self.input_shape = tuple(input_shape)
        self._calib_data = None if calib_data is None else list(calib_data)
        self._calib_mode = calib_mode
        self._exclude = (tuple(exclude_layers), tuple(exclude_operators))
        self._thresholds = dict(thresholds or {})

    def initialize(self, init: Any = None, ctx: Any = None, verbose: bool = False,
                   force_reinit: bool = False) -> None:
        """Random float32 weights, then int8 calibrated on a seeded uniform batch (or ``calib_data``)."""
        from gluon_hub.compat import mx

        # force_reinit: the factory's float32 model was initialised once already
        self.fp32.initialize(init or mx.init.Uniform(), ctx=ctx, verbose=verbose, force_reinit=True)
        self._quantize(recorded=False)

    def load_parameters(self, filename: str, ctx: Any = None, **kwargs: Any) -> None:
        """The float32 weights from ``filename``, then int8 with the recorded ranges (or ``calib_data``)."""
        self.fp32.load_parameters(filename, ctx=ctx, **kwargs)
        self._quantize(recorded=True)

    def __call__(self, *args: Any) -> Any:
        if self.int8 is None:
            raise RuntimeError("this int8 model has no weights yet: call load_parameters or initialize first")
        frames = self.input_shape[0]
        if frames > 1 and args and args[0].shape[0] % frames:  # oneDNN's int8 reshape dies of SIGFPE
            raise ValueError(f"this int8 video model averages {frames} frames per video, so its input is "
                             f"(videos * {frames}, {', '.join(map(str, self.input_shape[1:]))}); got "
                             f"{args[0].shape[0]} frames: pass each video's {frames} frames together")
        return self.int8(*args)

    def export(self, path: str, epoch: int = 0) -> None:
        """Write the int8 graph and parameters (``path-symbol.json``, ``path-0000.params``)."""
        self(_uniform(self.input_shape))  # the graph of a SymbolBlock is recorded at its first call
        self.int8.export(path, epoch)

    def collect_params(self, select: str | None = None) -> Any:
        return (self.int8 or self.fp32).collect_params(select)

    def hybridize(self, active: bool = True, **kwargs: Any) -> None:
        """Already compiled: the int8 graph always runs as one cached graph."""

    def __getattr__(self, name: str) -> Any:
        # the float32 model's attributes (``classes`` of a detector ...), and the helpers
        # that ``gluon_hub.load`` uses to explain a weight file that does not fit
        if name.startswith("__") or "fp32" not in self.__dict__:
            raise AttributeError(name)
        return getattr(self.__dict__["fp32"], name)

    def _quantize(self, recorded: bool) -> None:
        if self._calib_data is not None:
            data, mode, thresholds = self._calib_data, self._calib_mode or "naive", None
        elif recorded and self._thresholds:
            data, mode, thresholds = [_uniform(self.input_shape)], "none", self._thresholds
        else:  # random weights: only a measurement describes them
            data, mode, thresholds = [_uniform(self.input_shape)], self._calib_mode or "naive", None
        contexts = {p.list_ctx()[0] for p in self.fp32.collect_params().values()}
        if any(c.device_type != "cpu" for c in contexts):
            raise ValueError(f"int8 models run on the CPU only (oneDNN), but the weights are on "
                             f"{', '.join(sorted(map(str, contexts)))}; load it with ctx=mx.cpu()")
        self.int8 = quantize(self.fp32, calib_data=data, calib_mode=mode,
                             exclude_layers=self._exclude[0], exclude_operators=self._exclude[1],
                             thresholds=thresholds)


def int8_model(fp32: str, input_shape: Sequence[int], calib_data: Iterable[Any] | None = None,
               calib_mode: str | None = None, exclude_layers: Sequence[str] = (),
               exclude_operators: Sequence[str] = (),
               thresholds: Mapping[str, Sequence[float]] | str | None = None, tag: str | None = None,
               **kwargs: Any) -> Int8Model:
    """Factory of int8 registry entries: the float32 model ``fp32`` (a registered name,
    built with ``kwargs``), quantized once its weights are loaded or initialised.

    ``thresholds`` are the recorded ranges used with the published weights: a mapping, or
    a ``"module:function"`` string, imported only now and called with ``fp32``, that
    returns one (so that the spec stays small). Pass ``calib_data`` (batches of
    ``(batch, *input_shape)``) to calibrate on your own data instead, for example after
    fine-tuning. A video model that averages ``num_segments * num_crop`` frames (TSN) is
    planned for one video's frames, ``(frames, *input_shape)``.

    ``tag`` is accepted for GluonCV's call pattern left out only: GluonCV's int8 functions take
    the weight version as ``tag``, the hub as ``pretrained=TAG``.
    """
    from gluon_hub import load

    if tag is not None:
        raise ValueError(f"tag={tag!r}: the hub selects the weight version with pretrained={tag!r}; "
                         "pass that instead of tag")

    if isinstance(thresholds, str):
        from gluon_hub.specs import import_object

        thresholds = import_object(thresholds, f"the thresholds of the int8 model of {fp32!r}")(fp32)
    net = load(fp32, **kwargs)
    # one sample of a TSN-style video model is num_segments * num_crop frames, (frames, 3, H, W)
    frames = getattr(net, "num_segments", 1) * getattr(net, "num_crop", 1)
    return Int8Model(net, (frames, *input_shape), calib_data=calib_data, calib_mode=calib_mode,
                     exclude_layers=exclude_layers, exclude_operators=exclude_operators,
                     thresholds=thresholds)


class _RangeCollector:
    """MXNet's calibration callback: min/max of each layer output, recorded ranges kept."""

    def __init__(self, preset: Mapping[str, tuple[float, float]], measure: bool) -> None:
        self.min_max_dict: dict[str, tuple[float, float]] = dict(preset)
        self.preset = set(preset)
        self.measure = measure
        self.seen: set[str] = set()

    def collect(self, name: Any, arr: Any) -> None:
        import ctypes

        from gluon_hub.compat import mx

        NDArrayHandle, py_str = mx.base.NDArrayHandle, mx.base.py_str  # noqa: N806 (MXNet's names)

        name = py_str(name)
        self.seen.add(name)
        if not self.measure or name in self.preset or not (name.endswith("_output") or name.startswith("data")):
            return
        array = mx.nd.NDArray(ctypes.cast(arr, NDArrayHandle), writable=False)
        low, high = float(array.min().asscalar()), float(array.max().asscalar())
        if name in self.min_max_dict:
            old = self.min_max_dict[name]
            low, high = min(old[0], low), max(old[1], high)
        self.min_max_dict[name] = (low, high)


def _batch_iter_class(mx: Any) -> type:
    class BatchIter(mx.io.DataIter):
        """The calibration batches as the ``DataIter`` MXNet's calibration reads."""

        def __init__(self, batches: list[tuple[Any, ...]], shapes: list[Any]) -> None:
            super().__init__(shapes[0].shape[0])
            self._batches, self.provide_data, self.provide_label = batches, shapes, None
            self._next = 0

        def reset(self) -> None:
            self._next = 0

        def next(self) -> Any:
            if self._next >= len(self._batches):
                raise StopIteration
            self._next += 1
            return mx.io.DataBatch(data=list(self._batches[self._next - 1]))

    return BatchIter


def _BatchIter(mx: Any, batches: list[tuple[Any, ...]], shapes: list[Any]) -> Any:  # noqa: N802
    return _batch_iter_class(mx)(batches, shapes)


def _check_block(mx: Any, block: Any) -> None:
    if not isinstance(block, mx.gluon.HybridBlock):
        raise TypeError(f"quantize needs a HybridBlock (a graph to rewrite), got {type(block).__name__}")
    if not mx.runtime.Features().is_enabled("MKLDNN"):
        raise RuntimeError("this MXNet build has no oneDNN (MKLDNN), which int8 inference needs; "
                           "the CPU build from pip (mxnet==1.9.1) has it")
    params = list(block.collect_params().values())
    missing = [p.name for p in params if p._data is None and p._deferred_init == ()]
    if missing:
        raise ValueError(f"the block's parameters are not initialised ({missing[0]} ...): "
                         "call initialize() or load_parameters() first")
    contexts = {str(c) for p in params if p._data is not None for c in p.list_ctx() if c.device_type != "cpu"}
    if contexts:
        raise ValueError(f"int8 inference runs on the CPU only (oneDNN), but the parameters are on "
                         f"{', '.join(sorted(contexts))}; move them with block.collect_params().reset_ctx(mx.cpu())")


def _batches(mx: Any, calib_data: Iterable[Any], calib_mode: str) -> list[tuple[Any, ...]]:
    """The calibration batches as tuples of CPU NDArrays, checked: non-empty, one shape."""
    import numpy as np

    if isinstance(calib_data, (mx.nd.NDArray, np.ndarray)):
        raise TypeError("calib_data must be an iterable of batches (a list of arrays), not one array; "
                        "wrap it: calib_data=[x]")
    try:
        iterator = iter(calib_data)
    except TypeError:
        raise TypeError(f"calib_data must be an iterable of input batches, got {type(calib_data).__name__}") from None
    batches: list[tuple[Any, ...]] = []
    for index, batch in enumerate(iterator):
        items = tuple(batch) if isinstance(batch, (tuple, list)) else (batch,)
        converted = []
        for item in items:
            if isinstance(item, np.ndarray):
                item = mx.nd.array(item, dtype=item.dtype)
            if not isinstance(item, mx.nd.NDArray):
                raise TypeError(f"calibration batch {index} holds a {type(item).__name__}; "
                                "batches must be NDArray or numpy arrays (or tuples of them)")
            if item.context.device_type != "cpu":
                raise ValueError(f"calibration batch {index} is on {item.context}; int8 inference and its "
                                 "calibration run on the CPU only (oneDNN): pass CPU arrays")
            if item.ndim < 2:
                raise ValueError(f"calibration batch {index} has shape {item.shape}; a batch needs a "
                                 "batch axis first, then the input's own axes")
            converted.append(item)
        shapes = [x.shape for x in converted]
        if batches and shapes != [x.shape for x in batches[0]]:
            raise ValueError(f"calibration batch {index} has shape {', '.join(map(str, shapes))}, batch 0 "
                             f"{', '.join(str(x.shape) for x in batches[0])}; all batches must have one "
                             "shape, the one the int8 model will run at")
        batches.append(tuple(converted))
        if calib_mode == "none":
            break
    if not batches:
        raise ValueError("calib_data is empty; pass at least one batch of inputs")
    return batches


def _graph(mx: Any, block: Any, inputs: Sequence[Any]) -> tuple[Any, dict[str, Any]]:
    """The block's float32 symbol and arguments, as ``export`` writes them."""
    block.hybridize()
    block(*inputs)
    with tempfile.TemporaryDirectory() as tmp:
        prefix = os.path.join(tmp, "graph")
        block.export(prefix)
        symbol, args, _ = mx.model.load_checkpoint(prefix, 0)
    return symbol, args


def _input_names(count: int) -> list[str]:
    """The names ``HybridBlock.export`` gives a graph's inputs."""
    return ["data"] if count == 1 else [f"data{i}" for i in range(count)]


def _uniform(shape: Sequence[int]) -> Any:
    import numpy as np

    from gluon_hub.compat import mx

    return mx.nd.array(np.random.default_rng(0).random(tuple(shape), dtype=np.float32))


def _last_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[-1] if lines else ''}"
