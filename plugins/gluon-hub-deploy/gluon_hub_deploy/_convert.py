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


#: Tasks whose runners feed the image at its own size (the presets keep its aspect ratio, and
#: segmentation runs at the image's size): their graphs leave the axes after the channels free.
IMAGE_SIZED_TASKS = frozenset({"object-detection", "semantic-segmentation", "instance-segmentation",
                               "depth-estimation"})


def _write_onnx(net: Any, spec: Any, path: Path) -> None:
    from . import export

    inputs = [spec.input, *spec.extra_inputs] if spec.input is not None else []
    shapes = [tuple(i.shape or ()) for i in inputs]
    if not shapes or any(not shape or any(d is None for d in shape) for shape in shapes):
        raise ValueError(f"model {spec.name!r}: its spec gives no fixed input shape, which ONNX export needs; "
                         "export it with gluon_hub.export(net, path, format='onnx', input_shape=(1, ...))")
    # a model of several inputs (SiamRPN: the template and the search crop) is traced at each
    traced = (1, *shapes[0]) if len(shapes) == 1 else [(1, *shape) for shape in shapes]
    export(net, path, format="onnx", input_shape=traced, dtype=spec.input.dtype, dynamic_batch=True,
           dynamic_spatial=spec.task in IMAGE_SIZED_TASKS)


def _publish_graphs(net: Any, spec: Any, out: Path, base: str) -> list[Any]:
    """Export the graphs the spec names (``export_graphs``) and publish each by hash: a lone
    graph under ``TAG.onnx``, several under ``TAG-GRAPH.onnx`` (what ``gluon_hub.runtime.load``
    looks up by model name), all written in a hidden folder of ``out`` first."""
    import gluon_hub

    from ._graphs import export_graphs, spec_graphs

    graphs = spec_graphs(spec, net, None)
    with tempfile.TemporaryDirectory(prefix=f".{spec.name}-", suffix=".convert", dir=out) as tmp:
        files = export_graphs(graphs, Path(tmp) / "model.onnx", "onnx", 0, spec.qualified_name)
        return [gluon_hub.publish(file, spec.name, out, tag=f"{base}{'' if len(graphs) == 1 else '-' + graph.name}.onnx",
                                  description=f"{spec.name}:{base} converted to onnx"
                                  + ("" if len(graphs) == 1 else f" (graph {graph.name!r})"))
                for graph, file in zip(graphs, files)]


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
    format : ``"onnx"`` (a graph for onnxruntime, dynamic batch axis; a model whose spec
        names ``export_graphs`` as those graphs, several tagged ``<tag>-<graph>.onnx``) or
        ``"safetensors"`` (the parameters under the names ``save_parameters`` gives them).
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
            if format == "onnx" and spec.export_graphs:
                bar.step(f"{name}: writing its graphs")
                written += _publish_graphs(net, spec, out, base)
                bar.done()
                continue
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
