"""Writing a model out for deployment: MXNet symbol + params, or ONNX."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any, Iterator, Sequence

__all__ = ["OnnxExportError", "export"]

_FORMATS = ("mxnet", "onnx")


def _shapes(input_shape: Any) -> list[tuple[int, ...]]:
    """One shape, or a list of shapes for a model with several inputs, as int tuples."""
    if not input_shape:
        raise ValueError("input_shape must be a shape such as (1, 3, 224, 224), or a list of shapes")
    several = isinstance(input_shape[0], (tuple, list))
    shapes = [tuple(s) for s in input_shape] if several else [tuple(input_shape)]
    for shape in shapes:
        if not shape or not all(isinstance(d, int) and d > 0 for d in shape):
            raise ValueError(f"input shape {shape} must hold positive ints, the batch axis first")
    return shapes


def _dtypes(dtype: str | Sequence[str], count: int) -> list[str]:
    dtypes = [dtype] * count if isinstance(dtype, str) else list(dtype)
    if len(dtypes) != count:
        raise ValueError(f"{len(dtypes)} dtypes given for {count} inputs")
    return dtypes


def _from_name(name: str, pretrained: bool | str, kwargs: dict[str, Any]) -> tuple[Any, Any, str]:
    """Build ``name`` and read its input shape (batch 1) and dtype from its spec."""
    from gluon_hub import info, load

    spec = info(name)
    net = load(name, pretrained=pretrained, **kwargs)
    shape = spec.input.shape if spec.input is not None else None
    if not shape or any(d is None for d in shape):
        return net, None, spec.input.dtype if spec.input is not None else "float32"
    return net, (1, *shape), spec.input.dtype


def export(
    model: Any,
    path: str | os.PathLike[str],
    format: str = "mxnet",
    input_shape: Sequence[int] | Sequence[Sequence[int]] | None = None,
    *,
    pretrained: bool | str = False,
    dtype: str | Sequence[str] | None = None,
    epoch: int = 0,
    dynamic_batch: bool = False,
    dynamic_spatial: bool = False,
    **kwargs: Any,
) -> list[Path]:
    """Export a model for deployment outside Python and return the files written.

    ``format="mxnet"`` writes ``{path}-symbol.json`` and ``{path}-{epoch:04d}.params``,
    which MXNet's C++, Scala, Java, Clojure and Python (``SymbolBlock.imports``)
    bindings load. ``format="onnx"`` writes the ONNX file ``path`` (opset 13) through
    ``mxnet.onnx``'s converters and the hub's own (it needs onnx 1.14.1, or 1.16.0 on
    Python 3.12); a graph ONNX cannot express raises :class:`OnnxExportError` naming the
    model and the operator.

    A model whose spec names ``export_graphs`` (sequence models: states as inputs and
    outputs, GPT-2's key/value cache, an encoder and a decoder step) is written as those
    graphs, traced at ``input_shape`` (the first input's, in the model's layout) with the
    dtypes and dynamic axes the graphs declare: a lone graph goes to ``path``, several to
    ``{stem}-{graph}{suffix}`` beside it (mxnet: ``{path}-{graph}-symbol.json`` ...), and
    every file is returned.

    Parameters
    ----------
    model : a model name (built with :func:`gluon_hub.load`) or an initialised
        ``HybridBlock``.
    path : the file prefix (mxnet) or file (onnx) to write; parent folders are made.
    input_shape : the input shape with the batch axis, or a list of shapes for several
        inputs. With a model name it defaults to batch 1 of the spec's input shape.
    pretrained : with a model name, which weights to load (see :func:`gluon_hub.load`).
    dtype : the input dtype(s); default the spec's, else ``float32``.
    epoch : the number in the params file name (mxnet).
    dynamic_batch : ONNX only: leave the batch axis of every input free.
    dynamic_spatial : ONNX only: leave every axis after the channel axis (height and
        width; frames too for video) of every input of rank 3 or more free.
    **kwargs : passed to the model's factory when ``model`` is a name.

    Examples
    --------
    >>> from gluon_hub.compat import mx
    >>> net = mx.gluon.nn.HybridSequential()
    >>> net.add(mx.gluon.nn.Dense(2, in_units=3))
    >>> net.initialize()
    >>> import tempfile, os
    >>> files = export(net, os.path.join(tempfile.mkdtemp(), "dense"), input_shape=(1, 3))
    >>> [f.name for f in files]
    ['dense-symbol.json', 'dense-0000.params']
    """
    if format not in _FORMATS:
        raise ValueError(f"unknown export format {format!r}; use one of {', '.join(_FORMATS)}")
    if isinstance(model, str):
        from gluon_hub import info

        spec = info(model)
        if spec.export_graphs:
            from ._graphs import export_spec_graphs

            fixed = {"dtype": dtype, "dynamic_batch": dynamic_batch, "dynamic_spatial": dynamic_spatial}
            return export_spec_graphs(spec, path, format, input_shape, pretrained=pretrained, epoch=epoch,
                                      fixed=fixed, kwargs=kwargs)
    from gluon_hub.compat import mx

    spec_dtype = "float32"
    model_name = model if isinstance(model, str) else type(model).__name__
    if isinstance(model, str):
        model, spec_shape, spec_dtype = _from_name(model, pretrained, kwargs)
        if input_shape is None and spec_shape is None:
            raise ValueError("the model's spec gives no fixed input shape; pass input_shape=(1, ...)")
        input_shape = input_shape or spec_shape
    elif kwargs or pretrained is not False:
        raise TypeError("pretrained and factory arguments apply only when model is a name")
    if not isinstance(model, mx.gluon.HybridBlock):
        raise TypeError(
            f"only a HybridBlock can be exported as a graph, got {type(model).__name__}; "
            "a plain Block runs Python code that no symbol can record"
        )
    if input_shape is None:
        raise ValueError("pass input_shape=(batch, ...) to export a block")
    shapes = _shapes(input_shape)
    dtypes = _dtypes(dtype or spec_dtype, len(shapes))
    if format != "onnx" and (dynamic_batch or dynamic_spatial):
        raise ValueError("dynamic_batch and dynamic_spatial apply to format='onnx' only; an MXNet symbol "
                         "takes any input shape its operators accept")
    if epoch < 0:
        raise ValueError(f"epoch must be non-negative, got {epoch}")

    target = Path(path).expanduser()
    target.parent.mkdir(parents=True, exist_ok=True)
    model.hybridize()
    model(*[mx.nd.zeros(s, dtype=d) for s, d in zip(shapes, dtypes)])
    if format == "mxnet":
        model.export(str(target), epoch=epoch)
        return [Path(f"{target}-symbol.json"), Path(f"{target}-{epoch:04d}.params")]
    # One graph of the model itself: written as a spec's export graphs are, which keeps the
    # ONNX inputs and outputs in call order (mxnet.onnx lists them in the order the graph
    # reads them: SiamRPN's search image came before its template).
    from gluon_hub.specs import ExportGraph

    from ._graphs import export_graphs

    dynamic = _dynamic_axes(shapes, dynamic_batch, dynamic_spatial)
    graph = ExportGraph(name="model", block=model, input_shapes=tuple(shapes), dtypes=tuple(dtypes),
                        dynamic_shapes=tuple(dynamic or ()))
    return export_graphs([graph], target, format, epoch, model_name)


def _dynamic_axes(shapes: list[tuple[int, ...]], batch: bool, spatial: bool) -> list[tuple[int | None, ...]] | None:
    """Each input's shape with None on the axes left free, or None when all are fixed."""
    if not (batch or spatial):
        return None
    return [tuple(None if (batch and axis == 0) or (spatial and axis >= 2 and len(shape) >= 3) else size
                  for axis, size in enumerate(shape)) for shape in shapes]


class OnnxExportError(ValueError):
    """A model whose graph ``mxnet.onnx`` cannot write as ONNX, named with the operator."""


# Operators ONNX has no counterpart for, with the reason a user can act on.
_NOT_PORTABLE = {
    "_contrib_ModulatedDeformableConvolution": "modulated deformable convolution (DCNv2) has no ONNX operator",
    "_contrib_DeformableConvolution": "deformable convolution has no ONNX operator",
}


def _alternatives(name: str) -> str:
    return (f"export it as an MXNet symbol instead (gluon_hub.export({name!r}, path, format='mxnet')) "
            f"or build a native project around it (gluon-hub deploy {name})")


def _failed_node(error: BaseException) -> dict[str, Any] | None:
    """The MXNet node whose converter raised ``error``, read from ``convert_layer``'s frame."""
    tb = error.__traceback__
    node = None
    while tb is not None:
        if tb.tb_frame.f_code.co_name == "convert_layer":
            node = tb.tb_frame.f_locals.get("node")
        tb = tb.tb_next
    return node if isinstance(node, dict) else None


def _check_operators(sym: Any, model_name: str) -> None:
    """Name every operator of ``sym`` that no registered converter writes, before converting."""
    import json

    from gluon_hub_deploy.onnx_converters._common import OPSET, mxnet_graph

    known = set().union(*(ops for version, ops in mxnet_graph().registry_.items() if version <= OPSET))
    ops = {node["op"] for node in json.loads(sym.tojson())["nodes"]}
    blocked = sorted(op for op in ops if op in _NOT_PORTABLE)
    if blocked:
        reasons = "; ".join(f"{op}: {_NOT_PORTABLE[op]}" for op in blocked)
        raise OnnxExportError(f"{model_name} is not portable to ONNX ({reasons}); {_alternatives(model_name)}")
    missing = sorted(op for op in ops if op != "null" and op not in known)
    if missing:
        raise OnnxExportError(f"{model_name} cannot be exported to ONNX: no converter for the MXNet "
                              f"operator(s) {', '.join(missing)}; {_alternatives(model_name)}")


@contextlib.contextmanager
def _checked_at_opset(onnx: Any, opset: int) -> Iterator[None]:
    """Let ``create_onnx_graph_proto``'s own graph check use ``opset``, not onnx's newest.

    It calls ``onnx.checker.check_graph(graph)`` with the default context, which declares
    the newest opset, so opset-13 nodes (ReduceMean's ``axes`` attribute) fail the check.
    """
    context = onnx.checker.DEFAULT_CONTEXT
    before = dict(context.opset_imports)
    context.opset_imports = {"": opset}
    try:
        yield
    finally:
        context.opset_imports = before


def _to_onnx(mx: Any, prefix: str, shapes: list[tuple[int, ...]], dtypes: list[str], target: Path,
             dynamic_axes: list[tuple[int | None, ...]] | None, model_name: str) -> None:
    """Write the exported symbol as an ONNX file that declares the opset its nodes are written for.

    ``mxnet.onnx.export_model`` declares the newest opset the installed onnx knows (19 for
    onnx 1.14) while MXNet writes opset-12/13 nodes (ReduceMean's ``axes`` attribute, Split's
    ``split`` input), so the hub builds the graph at the opset the converters implement and
    writes the model itself.
    """
    import numpy as np

    try:
        import onnx
    except ImportError:
        from gluon_hub.installing import extra_command

        raise ImportError(f"ONNX export needs onnx: {extra_command('gluon-hub-deploy', 'onnx')} (the "
                          "[onnx] extra of gluon-hub-deploy)") from None
    from gluon_hub_deploy.onnx_converters import register_converters
    from gluon_hub_deploy.onnx_converters._common import OPSET, inferred_shapes, mxnet_graph

    register_converters()
    sym = mx.sym.load(f"{prefix}-symbol.json")
    saved = mx.nd.load(f"{prefix}-0000.params")
    params = {key.split(":", 1)[-1]: value for key, value in (saved.items() if isinstance(saved, dict) else ())}
    _check_operators(sym, model_name)
    data_names = [n for n in sym.list_inputs() if n not in params]
    known = {**dict(zip(data_names, shapes)), **{k: v.shape for k, v in params.items()}}
    types = [onnx.helper.np_dtype_to_tensor_dtype(np.dtype(d)) for d in dtypes]
    try:
        with inferred_shapes(sym, known), _checked_at_opset(onnx, OPSET):
            graph = mxnet_graph()().create_onnx_graph_proto(
                sym, params, shapes, types, opset_version=OPSET,
                dynamic=dynamic_axes is not None, dynamic_input_shapes=dynamic_axes)
    except Exception as error:  # noqa: BLE001  (any converter failure becomes one clear error)
        node = _failed_node(error)
        where = f"operator {node['op']} (node {node['name']}, attributes {node.get('attrs', {})})" if node else "a node"
        raise OnnxExportError(f"{model_name} cannot be exported to ONNX: mxnet.onnx failed on {where}: "
                              f"{error}; {_alternatives(model_name)}") from error
    _outputs_in_symbol_order(graph, sym)
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", OPSET)],
                                   producer_name="gluon-hub")
    _weights_out_of_inputs(model)
    _unused_weights_dropped(model)
    onnx.checker.check_model(model)
    partial = target.with_name(f".{target.name}.partial")
    onnx.save(model, str(partial))
    os.replace(partial, target)


def _outputs_in_symbol_order(graph: Any, sym: Any) -> None:
    """Order the graph's outputs as the model returns them.

    ``mxnet.onnx`` lists them in the order it converts their nodes, which differs from the
    symbol's for models whose outputs come from several branches (ICNet's auxiliary heads).
    Its ONNX names are the symbol's output names without ``_output`` (``x_output1`` -> ``x1``).
    """
    import re

    order = {}
    for index, name in enumerate(sym.list_outputs()):
        match = re.fullmatch(r"(.*)_output(\d?)", name)
        order[match.group(1) + match.group(2) if match else name] = index
    outputs = sorted(graph.output, key=lambda o: order.get(o.name, len(order)))
    del graph.output[:]
    graph.output.extend(outputs)


def _weights_out_of_inputs(proto: Any) -> None:
    """Drop the weights from the graph's inputs, where ``mxnet.onnx`` also lists them.

    As inputs they could be overridden at run time, so onnxruntime may not fold them into
    constants (nor fuse batch norms into convolutions) and warns once per weight.
    """
    weights = {init.name for init in proto.graph.initializer}
    inputs = [i for i in proto.graph.input if i.name not in weights]
    del proto.graph.input[:]
    proto.graph.input.extend(inputs)


def _unused_weights_dropped(proto: Any) -> None:
    """Drop the initializers no node reads, such as the stored gamma of a ``fix_gamma``
    BatchNorm (whose converter scales by ones): onnxruntime warns about each one."""
    used = {o.name for o in proto.graph.output}

    def read(graph: Any) -> None:
        for node in graph.node:
            used.update(node.input)
            for attribute in node.attribute:  # Loop and If bodies read outer names too
                for body in [attribute.g, *attribute.graphs]:
                    read(body)

    read(proto.graph)
    kept = [init for init in proto.graph.initializer if init.name in used]
    del proto.graph.initializer[:]
    proto.graph.initializer.extend(kept)
