"""Export of the graphs a model's spec names (``ModelSpec.export_graphs``).

Sequence models leave MXNet as several graphs or as one with explicit states (an LSTM's
states, GPT-2's key/value cache, a Transformer's encoder and decoder step); the plugin
that provides the model builds those graphs, and this module writes each one the way
:func:`gluon_hub_deploy.export` writes a plain model.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import Any, Sequence

from gluon_hub.specs import ExportGraph, ModelSpec


def export_spec_graphs(spec: ModelSpec, path: str | os.PathLike[str], format: str,
                       input_shape: Sequence[int] | None, *, pretrained: bool | str, epoch: int,
                       fixed: dict[str, Any], kwargs: dict[str, Any]) -> list[Path]:
    """:func:`gluon_hub_deploy.export` for a model whose spec names its export graphs.

    ``input_shape`` is the model's first input's shape (batch axis included, in the
    model's own layout); the graphs fix their other inputs, dtypes and dynamic axes, so
    the ``fixed`` arguments (dtype, dynamic axes) must be left unset.
    """
    from gluon_hub import load

    given = sorted(name for name, value in fixed.items() if value)
    if given:
        raise ValueError(f"model {spec.qualified_name!r} exports through its graphs "
                         f"({spec.export_graphs}), which fix their inputs' dtypes and dynamic "
                         f"axes: leave {', '.join(given)} unset")
    model = load(spec.qualified_name, pretrained=pretrained, **kwargs)
    target = Path(path).expanduser()
    target.parent.mkdir(parents=True, exist_ok=True)
    graphs = spec_graphs(spec, model, tuple(input_shape) if input_shape else None)
    return export_graphs(graphs, target, format, epoch, spec.qualified_name)


def spec_graphs(spec: ModelSpec, model: Any, input_shape: Sequence[int] | None) -> list[ExportGraph]:
    """The graphs ``spec.export_graphs`` builds for ``model`` (traced at ``input_shape``)."""
    from gluon_hub.specs import import_object

    build = import_object(str(spec.export_graphs), f"the export graphs of model {spec.qualified_name!r}")
    graphs = list(build(model, input_shape))
    names = [g.name for g in graphs]
    if not graphs or len(set(names)) != len(names):
        raise ValueError(f"{spec.export_graphs} must return graphs with distinct names, got {names}")
    return graphs


def graph_path(target: Path, graph: ExportGraph, count: int) -> Path:
    """Where a graph goes: ``path`` itself for a lone graph, else ``{stem}-{graph}{suffix}``."""
    return target if count == 1 else target.with_name(f"{target.stem}-{graph.name}{target.suffix}")


def export_graphs(graphs: list[ExportGraph], target: Path, format: str, epoch: int,
                  model_name: str) -> list[Path]:
    """Write every graph (MXNet symbol and params, or ONNX) and return the files in order."""
    from gluon_hub.compat import mx

    from ._export import _to_onnx

    files: list[Path] = []
    for graph in graphs:
        block = graph.block
        block.hybridize()
        # Ones are valid in every input role (token ids, lengths, positions, states).
        block(*[mx.nd.ones(s, dtype=d) for s, d in zip(graph.input_shapes, graph.dtypes)])
        out = graph_path(target, graph, len(graphs))
        if format == "mxnet":
            block.export(str(out), epoch=epoch)
            files += [Path(f"{out}-symbol.json"), Path(f"{out}-{epoch:04d}.params")]
            continue
        with tempfile.TemporaryDirectory() as tmp:
            prefix = os.path.join(tmp, "model")
            block.export(prefix, epoch=0)
            sym = mx.sym.load(f"{prefix}-symbol.json")
            # mxnet.onnx pairs the shapes with the symbol's inputs in the order the graph
            # first reads them, not in call order (data0, data1, ...). A SymbolBlock's own
            # input names (data, like) carry no call position: they keep the symbol's order.
            names = [n for n in sym.list_inputs() if re.fullmatch(r"data\d*", n)]
            positional = len(names) == len(graph.input_shapes)
            order = [_input_index(n) for n in names] if positional else list(range(len(graph.input_shapes)))
            dynamic = [tuple(graph.dynamic_shapes[i]) for i in order] if graph.dynamic_shapes else None
            _to_onnx(mx, prefix, [tuple(graph.input_shapes[i]) for i in order],
                     [graph.dtypes[i] for i in order], out, dynamic,
                     model_name if len(graphs) == 1 else f"{model_name} (graph {graph.name!r})")
            _in_call_order(out, sym.list_outputs(), positional)
        files.append(out)
    return files


def _input_index(name: str) -> int:
    """The call position of a block's exported input: ``data`` (a lone input), ``data0``..."""
    return int(name[len("data"):] or 0)


def _onnx_output_name(mx_name: str) -> str:
    """The name ``mxnet.onnx`` gives the graph output MXNet calls ``mx_name``."""
    for suffix, index in (("_state_output", "1"), ("_statecell_output", "2"), ("_output", "")):
        if mx_name.endswith(suffix):
            return mx_name[: -len(suffix)] + index
    if re.search(r"_output[0-9]$", mx_name):
        return mx_name[: -len("_output0")] + mx_name[-1]
    return mx_name


def _in_call_order(path: Path, mx_outputs: list[str], positional_inputs: bool = True) -> None:
    """Put the ONNX inputs in call order (``data0``, ``data1``, ...) and the outputs in the
    block's output order (scores first, then the states).

    ``mxnet.onnx`` lists inputs in the order the graph reads them and outputs in node
    order, sorting each node's outputs by name: a recurrent layer's states came before the
    scores computed from its output.
    """
    import onnx

    proto = onnx.load(str(path))
    if positional_inputs:
        inputs = sorted(proto.graph.input, key=lambda i: _input_index(i.name))
        del proto.graph.input[:]
        proto.graph.input.extend(inputs)
    by_name = {o.name: o for o in proto.graph.output}
    ordered = [by_name[_onnx_output_name(name)] for name in mx_outputs]
    del proto.graph.output[:]
    proto.graph.output.extend(ordered)
    onnx.save(proto, str(path))
