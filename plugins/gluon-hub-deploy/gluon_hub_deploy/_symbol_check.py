"""Check an MXNet symbol JSON (an exported graph) that a user hands the hub before MXNet reads it.

A symbol file is code in all but name: ``Custom`` runs whatever Python operator is
registered under its ``op_type``, and ``_Native``/``_NDArray`` take raw callback pointers
from their attributes; and MXNet's C++ parser was not written for hostile input.
So before ``mx.sym.load_json`` sees a file, it is read with a size bound, parsed as JSON,
and walked: every node must name an operator MXNet has registered (or ``null``, an input),
none of the operators above, and only earlier nodes as inputs (a graph, not a loop), with
at most :data:`MAX_NODES` nodes in all, subgraphs included. Every place that reads a
user's symbol file goes through :func:`load_symbol` or :func:`import_symbol_block`.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import Any, Sequence

from gluon_hub import _env
from gluon_hub.errors import HubError

#: Operators that run code or follow pointers named by the file rather than compute.
REFUSED_OPS = frozenset({"Custom", "_CustomFunction", "_Native", "_NDArray"})
#: The largest symbol file read, in bytes, unless ``GLUON_HUB_MAX_SYMBOL_SIZE`` says otherwise:
#: the largest exported zoo graphs (BERT large, ELMo) are a few MB.
MAX_SYMBOL_SIZE = 64 << 20
#: The most nodes a graph may have, subgraphs included: the zoo's largest have about 10 000,
#: and checking (then MXNet's parsing) stays well under a second at this bound.
MAX_NODES = 500_000


class SymbolFormatError(HubError, ValueError):
    """A symbol JSON is too large, malformed, or names an operator the hub will not run."""


@functools.lru_cache(maxsize=None)
def registered_ops() -> frozenset[str]:
    """Every operator name the loaded ``libmxnet`` knows (``MXListAllOpNames``)."""
    import ctypes

    from gluon_hub.compat import mx

    lib, check_call, py_str = mx.base._LIB, mx.base.check_call, mx.base.py_str
    size = ctypes.c_uint()
    names = ctypes.POINTER(ctypes.c_char_p)()
    check_call(lib.MXListAllOpNames(ctypes.byref(size), ctypes.byref(names)))
    return frozenset(py_str(names[i]) for i in range(size.value))


def max_symbol_size() -> int:
    """``GLUON_HUB_MAX_SYMBOL_SIZE`` in bytes, else :data:`MAX_SYMBOL_SIZE`."""
    value = _env.max_symbol_size()
    if value is None:
        return MAX_SYMBOL_SIZE
    if value <= 0:
        raise ValueError(f"GLUON_HUB_MAX_SYMBOL_SIZE must be a positive number of bytes, got {value:g}")
    return int(value)


def check_symbol_file(path: str | os.PathLike[str]) -> str:
    """The text of the symbol file at ``path`` once it passed every check; else SymbolFormatError."""
    path = Path(path).expanduser()
    limit = max_symbol_size()
    try:
        with open(path, "rb") as stream:
            data = stream.read(limit + 1)
    except FileNotFoundError:
        raise FileNotFoundError(f"symbol file {str(path)!r} does not exist") from None
    if len(data) > limit:
        raise SymbolFormatError(
            f"symbol file {path} is larger than {limit} bytes (GLUON_HUB_MAX_SYMBOL_SIZE); "
            "refusing to parse it. Raise the variable if this really is a graph")
    try:
        text = data.decode("utf-8")
        graph = json.loads(text)
    except ValueError as exc:
        raise SymbolFormatError(f"symbol file {path} is not JSON text: {exc}") from None
    _check_graph(graph, path, "", [0])
    return text


def _fail(path: Path, where: str, what: str) -> SymbolFormatError:
    return SymbolFormatError(f"symbol file {path}{where}: {what}; refusing to load it")


def _check_graph(graph: Any, path: Path, where: str, count: list[int]) -> None:
    """Walk one graph (and its subgraphs), counting nodes into ``count[0]``."""
    if not isinstance(graph, dict) or not isinstance(graph.get("nodes"), list):
        raise _fail(path, where, "not an MXNet symbol (a JSON object with a 'nodes' list)")
    nodes = graph["nodes"]
    count[0] += len(nodes)
    if count[0] > MAX_NODES:
        raise _fail(path, where, f"more than {MAX_NODES} nodes")
    known = registered_ops()
    for index, node in enumerate(nodes):
        if not isinstance(node, dict) or not isinstance(node.get("op"), str):
            raise _fail(path, where, f"node {index} has no operator name")
        op, name = node["op"], node.get("name", f"#{index}")
        if op in REFUSED_OPS:
            raise _fail(path, where, f"node {name!r} uses operator {op!r}, which runs code or follows "
                                     "pointers the file names rather than computing; the hub refuses it")
        if op != "null" and op not in known:
            raise _fail(path, where, f"node {name!r} uses operator {op!r}, which this MXNet does not "
                                     "register (a newer MXNet, a plugin library, or not an MXNet graph)")
        inputs = node.get("inputs", [])
        if not isinstance(inputs, list):
            raise _fail(path, where, f"node {name!r} has inputs that are not a list")
        for entry in inputs:
            if (not isinstance(entry, list) or not entry or not all(type(v) is int for v in entry)
                    or not 0 <= entry[0] < index):
                raise _fail(path, where, f"node {name!r} has input {entry!r}, not an earlier node")
        for i, sub in enumerate(node.get("subgraphs") or []):
            _check_graph(sub, path, f"{where} (subgraph {i} of node {name!r})", count)
    for key in ("arg_nodes", "heads"):
        for entry in graph.get(key, []):
            first = entry[0] if isinstance(entry, list) and entry else entry
            if type(first) is not int or not 0 <= first < len(nodes):
                raise _fail(path, where, f"{key} names {entry!r}, not one of its {len(nodes)} nodes")


def load_symbol(path: str | os.PathLike[str]) -> Any:
    """``mx.sym.load`` of a user's symbol file, once :func:`check_symbol_file` passed it."""
    text = check_symbol_file(path)
    from gluon_hub.compat import mx

    try:
        return mx.sym.load_json(text)
    except mx.base.MXNetError as exc:
        raise SymbolFormatError(f"MXNet cannot read symbol file {path}: "
                                f"{str(exc).strip().splitlines()[0]}") from None


def import_symbol_block(symbol: str | os.PathLike[str], params: str | os.PathLike[str],
                        input_names: Sequence[str] | None = None, dtype: str = "float32") -> Any:
    """A ``SymbolBlock`` of an exported graph and its parameters, both checked first.

    What ``SymbolBlock.imports`` does, with the symbol file checked here and the params file
    by :func:`gluon_hub.cache.check_params_file`. ``input_names`` default to the graph's
    inputs that the params file does not hold, in Gluon's ``data``, ``data0``... order;
    they are typed ``dtype`` (else MXNet warns that it cannot decide their type).
    """
    import re

    from gluon_hub.cache import check_params_file
    from gluon_hub.compat import mx

    graph = load_symbol(symbol)
    params = Path(params).expanduser()
    if not params.is_file():
        raise FileNotFoundError(f"params file {str(params)!r} does not exist")
    check_params_file(params)
    stored = {key.split(":", 1)[-1] for key in mx.nd.load(str(params))}
    if input_names is None:
        input_names = [n for n in graph.list_inputs() if n not in stored]
        input_names.sort(key=lambda n: int(m.group(1)) if (m := re.fullmatch(r"data(\d+)", n)) else -1)
    if not input_names:
        raise SymbolFormatError(f"symbol file {symbol}: every input is in {params}; no data input is left")
    block = mx.gluon.SymbolBlock(graph, [mx.sym.var(n, dtype=dtype) for n in input_names])
    try:
        block.collect_params().load(str(params), ctx=mx.cpu(), allow_missing=False, ignore_extra=False)
    except (AssertionError, ValueError, RuntimeError) as exc:  # mxnet reports mismatches with assert
        raise ValueError(f"{params} does not fit the graph in {symbol}: {exc}") from None
    return block
