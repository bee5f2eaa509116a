"""``convert``: a model's weights as an ONNX graph or a safetensors file, published by hash.

Where MXNet is installed, each model is built with its weights, exported (ONNX through
:func:`gluon_hub_deploy.export`) or saved (safetensors), and handed to
:func:`gluon_hub.publish`, which names the file by its sha256 and records it in the
folder's ``weights.json`` under the tag ``<weights tag>.<format>``. ``gluon-hub serve``,
``bundle`` and ``import`` then carry it like any weights, and a machine without MXNet finds
it by model name with :func:`gluon_hub.publishing.fetch_converted`.

Every file is written under a hidden temporary name in the output folder and renamed only
once complete, so a failed or killed conversion never leaves a file under a final name.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any, Sequence

from ._progress import ProgressBar

__all__ = ["FORMATS", "convert"]

#: Output formats and the suffix of their files.
FORMATS = {"onnx": ".onnx", "safetensors": ".safetensors"}


def _weights_tag(name: str, pretrained: bool | str, params: Path | None, tag: str | None) -> str:
    """The tag the converted file is recorded under, before its format suffix."""
    if tag is not None:
        return tag
    if params is not None:
        return "default"
    from gluon_hub import info

    return info(name).weight(pretrained).tag


def _write_safetensors(net: Any, path: Path) -> None:
    """The parameters under the names ``save_parameters`` gives them, as safetensors."""
    try:
        from safetensors import SafetensorError
        from safetensors.numpy import save_file
    except ImportError:
        raise ImportError("--format safetensors needs safetensors: pip install safetensors") from None
    arrays = {key: param.data().asnumpy() for key, param in net._collect_params_with_prefix().items()}
    try:
        save_file(arrays, str(path), metadata={"format": "mxnet-gluon"})
    except SafetensorError as exc:  # its I/O errors (a full disk) are no OSError
        raise OSError(f"writing the safetensors file into {path.parent} failed: {exc}") from None


def _write_onnx(net: Any, spec: Any, path: Path) -> None:
    from . import export

    shape = spec.input.shape if spec.input is not None else None
    if not shape or any(d is None for d in shape):
        raise ValueError(f"model {spec.name!r}: its spec gives no fixed input shape, which ONNX export needs; "
                         "export it with gluon_hub.export(net, path, format='onnx', input_shape=(1, ...))")
    export(net, path, format="onnx", input_shape=(1, *shape), dtype=spec.input.dtype, dynamic_batch=True)


def convert(
    names: Sequence[str],
    out_dir: str | os.PathLike[str],
    *,
    pretrained: bool | str = False,
    params: str | os.PathLike[str] | None = None,
    format: str = "onnx",
    tag: str | None = None,
    progress: bool | None = None,
) -> list[Any]:
    """Convert models' weights to ``format`` and publish each file by hash into ``out_dir``.

    Parameters
    ----------
    names : model names.
    out_dir : the folder to write (a mirror folder: ``gluon-hub serve`` or upload it).
    pretrained : the published weights to convert: ``True`` (the default ones) or a tag.
    params : a ``.params`` or ``.safetensors`` file to convert instead (one model only).
    format : ``"onnx"`` (a graph for onnxruntime, dynamic batch axis) or ``"safetensors"``
        (the parameters under the names ``save_parameters`` gives them).
    tag : the tag to record, before the format suffix; default the weights' tag
        (``default`` for a ``params`` file).
    progress : draw a progress bar over the models (default: on a terminal, or as
        ``GLUON_HUB_PROGRESS`` says).

    Returns
    -------
    list of gluon_hub.WeightVariant
        The entries written, tagged ``<tag>.onnx`` or ``<tag>.safetensors``.
    """
    import gluon_hub

    if format not in FORMATS:
        raise ValueError(f"unknown format {format!r}; use one of {', '.join(FORMATS)}")
    if not names:
        raise ValueError("name at least one model to convert")
    if (params is None) == (pretrained is False):
        raise ValueError("give the weights to convert: pretrained=True or a tag (--pretrained [TAG]), "
                         "or a file (--params FILE); not both")
    if params is not None and len(names) != 1:
        raise ValueError(f"a params file holds one model's weights; name one model, not {len(names)}")
    source = Path(params).expanduser() if params is not None else None
    if source is not None and not source.is_file():
        raise FileNotFoundError(f"no params file at {source}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    with ProgressBar(len(names), "model", progress) as bar:
        for name in names:
            spec = gluon_hub.info(name)
            base = _weights_tag(name, pretrained, source, tag)
            bar.step(f"{name}: loading")
            net = gluon_hub.load(name, pretrained=source if source is not None else pretrained)
            fd, tmp_name = tempfile.mkstemp(prefix=f".{spec.name}-", suffix=f".convert{FORMATS[format]}", dir=out)
            os.close(fd)
            tmp = Path(tmp_name)
            try:
                bar.step(f"{name}: writing {format}")
                if format == "onnx":
                    _write_onnx(net, spec, tmp)
                else:
                    _write_safetensors(net, tmp)
                bar.step(f"{name}: publishing")
                written.append(gluon_hub.publish(tmp, spec.name, out, tag=f"{base}{FORMATS[format]}",
                                                 description=f"{spec.name}:{base} converted to {format}"))
            finally:
                tmp.unlink(missing_ok=True)
            bar.done()
    return written
