"""Writing a model out for deployment: MXNet symbol + params, or ONNX."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any, Sequence

__all__ = ["export"]

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
    **kwargs: Any,
) -> list[Path]:
    """Export a model for deployment outside Python and return the files written.

    ``format="mxnet"`` writes ``{path}-symbol.json`` and ``{path}-{epoch:04d}.params``,
    which MXNet's C++, Scala, Java, Clojure and Python (``SymbolBlock.imports``)
    bindings load. ``format="onnx"`` writes the ONNX file ``path`` through
    ``mxnet.onnx`` (it needs onnx 1.14.1, or 1.16.0 on Python 3.12).

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
    from gluon_hub.compat import mx

    spec_dtype = "float32"
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
    if epoch < 0:
        raise ValueError(f"epoch must be non-negative, got {epoch}")

    target = Path(path).expanduser()
    target.parent.mkdir(parents=True, exist_ok=True)
    model.hybridize()
    model(*[mx.nd.zeros(s, dtype=d) for s, d in zip(shapes, dtypes)])
    if format == "mxnet":
        model.export(str(target), epoch=epoch)
        return [Path(f"{target}-symbol.json"), Path(f"{target}-{epoch:04d}.params")]
    with tempfile.TemporaryDirectory() as tmp:
        prefix = os.path.join(tmp, "model")
        model.export(prefix, epoch=0)
        _to_onnx(mx, prefix, shapes, dtypes, target, dynamic_batch)
    return [target]


def _to_onnx(mx: Any, prefix: str, shapes: list[tuple[int, ...]], dtypes: list[str], target: Path, dynamic: bool) -> None:
    import numpy as np

    try:
        import onnx  # noqa: F401  (mxnet.onnx needs it; fail with the fix, not deep inside)
    except ImportError:
        from gluon_hub._index import extra_command

        raise ImportError(f"ONNX export needs onnx: {extra_command('gluon-hub-deploy', 'onnx')} (the "
                          "[onnx] extra of gluon-hub-deploy)") from None
    from gluon_hub_deploy.onnx_converters import register_converters

    register_converters()
    mx.onnx.export_model(
        f"{prefix}-symbol.json",
        f"{prefix}-0000.params",
        in_shapes=shapes,
        in_types=[np.dtype(d) for d in dtypes],
        onnx_file_path=str(target),
        dynamic=dynamic,
        dynamic_input_shapes=[(None, *s[1:]) for s in shapes] if dynamic else None,
    )
    _weights_out_of_inputs(target)


def _weights_out_of_inputs(path: Path) -> None:
    """Drop the weights from the graph's inputs, where ``mxnet.onnx`` also lists them.

    As inputs they could be overridden at run time, so onnxruntime may not fold them into
    constants (nor fuse batch norms into convolutions) and warns once per weight.
    """
    import onnx

    proto = onnx.load(str(path))
    weights = {init.name for init in proto.graph.initializer}
    inputs = [i for i in proto.graph.input if i.name not in weights]
    del proto.graph.input[:]
    proto.graph.input.extend(inputs)
    onnx.save(proto, str(path))
