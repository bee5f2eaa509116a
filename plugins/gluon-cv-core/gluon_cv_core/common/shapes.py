"""Parameter shapes inferred from a network's graph before its first call.

MXNet infers a fresh parameter's shape on the first forward pass, from the graph that pass
runs. A hybridized network whose graph leaves some parameters out (GluonCV's custom Mask
R-CNN reads only the pyramid's finest level, yet keeps the others so that GluonCV's files
load) never infers theirs, and MXNet's shape inference then fails on all of them. Where the
shapes do not depend on the image size, inferring them from the symbol on a nominal image
gives every parameter its shape up front, so random initialisation and saving work.
"""

from __future__ import annotations

from typing import Any, Sequence


def shape_parameters(block: Any, symbol: Any, data_shape: Sequence[int]) -> None:
    """Give each of ``block``'s parameters in ``symbol`` the shape the symbol infers from an input
    ``data`` of ``data_shape``; shapes left partly unknown stay as they are."""
    arguments, _, auxiliary = symbol.infer_shape_partial(data=tuple(data_shape))
    names = symbol.list_arguments() + symbol.list_auxiliary_states()
    inferred = {n: tuple(s) for n, s in zip(names, arguments + auxiliary) if s and all(s)}
    for param in block.collect_params().values():
        if param.name in inferred:
            param.shape = inferred[param.name]


__all__ = ["shape_parameters"]
