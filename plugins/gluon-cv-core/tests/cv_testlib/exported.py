"""A model with seeded random weights saved as .params and exported to ONNX from the same
weights: what the ONNX runner tests compare the MXNet path against."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gluon_hub
from gluon_hub.compat import mx

from .detection import build_ours, randomize


def seeded_net(name: str, shape: tuple[int, ...], seed: int) -> Any:
    """The hub's model ``name`` built at ``shape`` (height, width; frames first for a video model),
    its weights drawn by ``randomize``."""
    net = build_ours(name)
    net.initialize()
    net(mx.nd.zeros((1, 3, *shape)))
    randomize(net, seed=seed)
    return net


def save_and_export(net: Any, folder: Path, stem: str, shape: tuple[int, ...], *,
                    dynamic_spatial: bool) -> tuple[Path, Path]:
    """``net``'s .params and its ONNX file (batch axis free; spatial axes too if asked)."""
    params, onnx_file = folder / f"{stem}.params", folder / f"{stem}.onnx"
    net.save_parameters(str(params))
    gluon_hub.export(net, onnx_file, format="onnx", input_shape=(1, 3, *shape), dynamic_batch=True,
                     dynamic_spatial=dynamic_spatial)
    return params, onnx_file


def exported_models(names: dict[str, tuple[int, ...]], folder: Path, *, dynamic_spatial: bool = True,
                    seed: int = 0) -> dict[str, tuple[Any, Path, Path]]:
    """Each name's network, .params and ONNX file, from the same seeded weights."""
    found = {}
    for name, shape in names.items():
        net = seeded_net(name, shape, seed)
        found[name] = (net, *save_and_export(net, folder, name, shape, dynamic_spatial=dynamic_spatial))
    return found


def identity_onnx(path: Path, shape: tuple[int | str, ...]) -> Path:
    """An ONNX file whose one input, of ``shape`` (a string names a free axis), is its output:
    a file no runner of the zoo's models should accept."""
    import onnx
    from onnx import TensorProto, helper

    tensor = helper.make_tensor_value_info
    graph = helper.make_graph([helper.make_node("Identity", ["data"], ["out"])], "identity",
                              [tensor("data", TensorProto.FLOAT, list(shape))],
                              [tensor("out", TensorProto.FLOAT, list(shape))])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    return path
