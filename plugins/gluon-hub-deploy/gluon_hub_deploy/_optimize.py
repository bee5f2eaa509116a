"""Compiling a block for inference on the machine at hand: MXNet's oneDNN subgraph fusion.

MXNet 1.9's ``MKLDNN`` partitioning backend replaces chains such as convolution +
BatchNorm + ReLU (+ the residual add) and fully connected + activation by single fused
oneDNN operators, and folds each BatchNorm into its convolution's weights. Together with
a static memory plan (``static_alloc``/``static_shape``) this is what makes a hybridized
Gluon model fast on a CPU. Where the fusion cannot run, the block is still hybridized
with the static plan, and a warning says why it was not fused.
"""

from __future__ import annotations

import warnings
from typing import Any

from gluon_hub.errors import OptimizeWarning

__all__ = ["optimize", "fused_operators", "example_inputs"]

#: The partitioning backend of MXNet 1.x's oneDNN build (2.x renamed it ``ONEDNN``).
_BACKEND = "MKLDNN"
#: The prefix of the operators the backend fuses into.
_FUSED_PREFIX = "_sg_mkldnn_"
#: Largest relative difference from the plain model's outputs that fusion may cause.
RTOL = 1e-4


def optimize(block: Any, example_input: Any) -> Any:
    """Compile ``block`` for fast inference on this machine and return it (changed in place).

    On a CPU build of MXNet with oneDNN, the graph is partitioned by the ``MKLDNN``
    backend: convolution + BatchNorm + ReLU (+ residual add) and dense + activation run
    as single fused operators, with the BatchNorm folded into the weights, and memory is
    planned once (``static_alloc``, ``static_shape``). The fused block's outputs on
    ``example_input`` are checked against the plain block's (relative difference at most
    1e-4); where they differ, or where fusion is unavailable (an MXNet without oneDNN, a
    GPU context, a plain ``Block``, a graph the backend rejects or fuses nothing in), the
    block is only hybridized with the static memory plan and an :class:`OptimizeWarning`
    says why.

    What changes on the returned object:

    * it is for inference only: the fused operators use the BatchNorm running statistics
      and compute no correct gradient, so calling it under ``autograd.record`` raises
      ``RuntimeError``; load the model again to train;
    * the BatchNorm statistics and weights are folded at the first call: parameters set
      afterwards (``load_parameters``, ``set_data``) are not seen; optimize again;
    * shapes are fixed to ``example_input``'s: another shape still runs, but memory is
      planned again each time the shape changes, which loses the speed.

    Parameters
    ----------
    block : a ``HybridBlock`` with initialised parameters (a plain ``Block`` gets its
        hybridizable children hybridized, with a warning).
    example_input : an ``NDArray`` (or numpy array) of the shape and dtype the block will
        be called with, batch axis included; a tuple or list of them for several inputs.
        Its context (CPU or GPU) is where the block runs.

    Examples
    --------
    >>> from gluon_hub.compat import mx
    >>> net = mx.gluon.nn.HybridSequential()
    >>> net.add(mx.gluon.nn.Conv2D(4, 3, in_channels=3), mx.gluon.nn.BatchNorm(in_channels=4),
    ...         mx.gluon.nn.Activation("relu"))
    >>> net.initialize()
    >>> x = mx.nd.ones((1, 3, 8, 8))
    >>> net = optimize(net, x)
    >>> fused_operators(net)
    ['_sg_mkldnn_conv']
    """
    from gluon_hub.compat import mx

    inputs = _as_inputs(mx, example_input)
    reason = _unavailable(mx, block, inputs)
    if reason is None:
        reason = _fuse(mx, block, inputs)
    if reason is None:
        _refuse_training(mx, block)
    if reason is not None:
        outcome = _plain(mx, block, inputs, reason)
        warnings.warn(f"gluon_hub.optimize: oneDNN fusion is unavailable ({reason}); {outcome}",
                      OptimizeWarning, stacklevel=2)
    return block


def fused_operators(block: Any) -> list[str]:
    """The names of the fused oneDNN operators in an optimized block's graph, sorted.

    Empty for a block that is not hybridized or was not fused.
    """
    graph = getattr(block, "_cached_graph", ())
    if not graph:
        return []
    return sorted({op for op in _operators(graph[1]) if op.startswith(_FUSED_PREFIX)})


def example_inputs(spec: Any, ctx: Any) -> list[Any]:
    """Batch-1 inputs for a model from its spec, to compile it with: one per declared input.

    Floats are uniform in [0, 1), seeded, so that the check of the fused outputs sees
    varied values; integer inputs (token ids, lengths) are ones, valid for any vocabulary.
    """
    import numpy as np

    from gluon_hub.compat import mx

    declared = [spec.input, *getattr(spec, "extra_inputs", ())] if spec.input is not None else []
    if not declared or any(not s.shape or any(d is None for d in s.shape) for s in declared):
        shapes = [s.shape for s in declared] or "none"
        raise ValueError(
            f"optimize=True needs the fixed input shape(s) of {spec.qualified_name!r}, but its spec "
            f"declares {shapes}; load it without optimize and call gluon_hub.optimize(net, "
            "example_input) with an input of the shape you will use"
        )
    rng = np.random.default_rng(0)
    inputs = []
    for s in declared:
        shape = (1, *s.shape)
        if np.issubdtype(np.dtype(s.dtype), np.floating):
            value = rng.random(shape).astype(s.dtype)
        else:
            value = np.ones(shape, dtype=s.dtype)
        inputs.append(mx.nd.array(value, ctx=ctx, dtype=s.dtype))
    return inputs


def _as_inputs(mx: Any, example_input: Any) -> tuple[Any, ...]:
    import numpy as np

    items = tuple(example_input) if isinstance(example_input, (tuple, list)) else (example_input,)
    if not items:
        raise ValueError("example_input is empty; pass the array the block will be called with")
    converted = []
    for item in items:
        if isinstance(item, np.ndarray):
            item = mx.nd.array(item, dtype=item.dtype)
        if not isinstance(item, mx.nd.NDArray):
            raise TypeError(
                f"example_input must be an NDArray or numpy array (or a tuple of them), "
                f"got {type(item).__name__}"
            )
        converted.append(item)
    return tuple(converted)


def _unavailable(mx: Any, block: Any, inputs: tuple[Any, ...]) -> str | None:
    """Why fusion cannot even be tried here, or None."""
    if not isinstance(block, mx.gluon.HybridBlock):
        return f"{type(block).__name__} is a plain Block, whose Python forward no graph records"
    if not mx.runtime.Features().is_enabled("MKLDNN"):
        return "this MXNet build has no oneDNN (MKLDNN); the CPU build from pip has it"
    devices = {x.context.device_type for x in inputs}
    if devices != {"cpu"}:
        return f"the input is on {', '.join(sorted(devices))}; oneDNN fuses CPU graphs only"
    return None


def _fuse(mx: Any, block: Any, inputs: tuple[Any, ...]) -> str | None:
    """Partition ``block`` with the oneDNN backend; None when it worked, else why not."""
    expected = _flat(block(*inputs))
    try:
        block.optimize_for(*inputs, backend=_BACKEND, clear=True, static_alloc=True, static_shape=True)
        got = _flat(block(*inputs))
    except Exception as exc:  # the backend's or the block's: either way, fall back
        return f"building or partitioning its graph with the {_BACKEND} backend failed: {_last_line(exc)}"
    if not fused_operators(block):
        return (f"the {_BACKEND} backend fused no operator; oneDNN may be turned off "
                "(MXNET_MKLDNN_ENABLED=0), or the graph has no convolution or dense layer")
    if len(got) != len(expected):
        return f"the fused graph gives {len(got)} outputs instead of {len(expected)}"
    for index, (want, have) in enumerate(zip(expected, got)):
        problem = _difference(want, have)
        if problem:
            return f"output {index} of the fused graph differs from the plain block's: {problem}"
    return None


def _refuse_training(mx: Any, block: Any) -> None:
    """Make a fused block raise under ``autograd.record`` instead of training silently wrong."""

    def inference_only(_block: Any, _args: Any) -> None:
        if mx.autograd.is_recording():
            raise RuntimeError(
                "this block was compiled for inference by gluon_hub.optimize: its fused oneDNN "
                "operators use the BatchNorm running statistics and give no correct gradients; "
                "load the model again (without optimize) to train it"
            )

    if not getattr(block, "_gluon_hub_inference_only", False):
        block.register_forward_pre_hook(inference_only)
        block._gluon_hub_inference_only = True


def _plain(mx: Any, block: Any, inputs: tuple[Any, ...], reason: str) -> str:
    """Hybridize with static memory planning and no backend; say what became of the block.

    A block whose forward no symbol can trace (it calls ``asnumpy`` ...) is left imperative;
    its error is named unless ``reason`` (why fusion failed) already names it.
    """
    if isinstance(block, mx.gluon.HybridBlock):
        block.hybridize(True, backend=None, clear=True, static_alloc=True, static_shape=True)
    else:  # a plain Block passes this on to its hybridizable children
        block.hybridize(True, static_alloc=True, static_shape=True)
    try:
        block(*inputs)
    except Exception as exc:
        block.hybridize(False)
        error = "" if reason.endswith(_last_line(exc)) else f" ({_last_line(exc)})"
        return f"it cannot be hybridized either{error}, so it runs imperatively, as before"
    return "the block was hybridized with static memory planning only, without fused operators"


def _last_line(exc: BaseException) -> str:
    """The line of an error that says what failed: MXNet's messages end a C++ trace with it."""
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[-1] if lines else ''}"


def _difference(want: Any, have: Any) -> str | None:
    """How ``have`` is further than :data:`RTOL` (relative to ``want``'s largest finite
    magnitude) from ``want``, or None. Non-finite values (a box decoded from a huge logit)
    must be the same in both."""
    import numpy as np

    if want.shape != have.shape:
        return f"shape {have.shape} instead of {want.shape}"
    finite = np.isfinite(want)
    if not np.array_equal(finite, np.isfinite(have)) or not np.array_equal(want[~finite], have[~finite],
                                                                            equal_nan=True):
        return "NaN or infinite values in other places"
    if not finite.any():
        return None
    scale = max(float(np.abs(want[finite]).max()), 1e-12)
    diff = float(np.abs(have[finite] - want[finite]).max())
    if diff > RTOL * scale:
        return f"by {diff:.3g}, relative {diff / scale:.3g} (allowed {RTOL})"
    return None


def _flat(outputs: Any) -> list[Any]:
    """Every output array as float64 numpy, nested tuples and lists flattened."""
    if isinstance(outputs, (tuple, list)):
        return [array for item in outputs for array in _flat(item)]
    return [outputs.asnumpy().astype("float64")]


def _operators(symbol: Any) -> list[str]:
    import json

    return [node["op"] for node in json.loads(symbol.tojson())["nodes"]]
