"""Finding a converted file (an ONNX graph, safetensors weights) by model name, without MXNet.

``gluon-hub convert`` writes such files into a weights index under tags such as
``default.onnx``. A machine without MXNet learns the entry from an installed plugin's
specs, from the bundles it imported (the cache keeps their names), or from an index the
caller names; the file itself then comes through the verified cache like any weights.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..specs import WeightVariant
from ._weights_index import weights_from_index

#: The formats ``convert`` writes, by the suffix of their file names.
FORMATS = {"onnx": ".onnx", "safetensors": ".safetensors"}


def _candidates(name: str, index: str | os.PathLike[str] | None, root: str | os.PathLike[str] | None
                ) -> list[tuple[str, WeightVariant]]:
    """Every known entry of ``name``, each with where it was learnt, plugins first."""
    from .._api import info
    from ..cache import cache_dir
    from ..errors import UnknownNameError
    from ._bundle import IMPORTED_INDEX

    found: list[tuple[str, WeightVariant]] = []
    try:
        spec = info(name)
        found += [(f"plugin {spec.plugin!r}", v) for v in spec.weights]
        name = spec.name
    except UnknownNameError:
        pass
    indexes = []
    if index is not None:
        given = Path(index)
        indexes.append(given / "weights.json" if given.is_dir() else given)
    imported = cache_dir(root) / IMPORTED_INDEX
    if imported.is_file():
        indexes.append(imported)
    for path in indexes:
        found += [(str(path), v) for v in weights_from_index(path).get(name, ())]
    return found


def _default_weights_tag(name: str) -> str:
    """The tag of the weights ``gluon-hub convert NAME --pretrained`` converts, or ``default``."""
    from .._api import info
    from ..errors import UnknownNameError

    try:
        weights = info(name).weights
    except UnknownNameError:
        return "default"
    return weights[0].tag if weights else "default"


def find_converted(
    name: str,
    format: str = "onnx",
    tag: str | None = None,
    *,
    index: str | os.PathLike[str] | None = None,
    root: str | os.PathLike[str] | None = None,
    graph: str | None = None,
) -> WeightVariant:
    """The index entry of ``name``'s converted file; see :func:`fetch_converted`."""
    if format not in FORMATS:
        raise ValueError(f"unknown format {format!r}; converted files are {', '.join(FORMATS)}")
    suffix = FORMATS[format]
    if graph is not None and format != "onnx":
        raise ValueError(f"graph={graph!r} names one of a model's ONNX graphs; {format} files hold no graph")
    # one of several graphs is tagged TAG-GRAPH.onnx, as convert writes it
    ending = f"-{graph}{suffix}" if graph is not None else suffix
    base = tag[: -len(suffix)] if tag is not None and tag.endswith(suffix) else tag
    found = _candidates(name, index, root)
    if graph is None:
        tags = None if base is None else (base, f"{base}{suffix}")
        matching = [v for _, v in found if (v.file.filename or "").endswith(suffix) and (tags is None or v.tag in tags)]
    else:
        matching = [v for _, v in found if (v.file.filename or "").endswith(suffix) and v.tag.endswith(ending)
                    and (base is None or v.tag == f"{base}{ending}")]
    if matching:
        return matching[0]
    wanted = f"tagged {tag!r} " if tag is not None else ""
    what = f"{format} file of graph {graph!r}" if graph is not None else f"{format} file"
    known = ", ".join(dict.fromkeys(f"{v.tag} ({where})" for where, v in found)) or "none"
    # the tag convert records: the one asked for, else that of the weights --pretrained takes
    written = base if base is not None else _default_weights_tag(name)
    raise KeyError(
        f"no {what} {wanted}is known for model {name!r} (entries found: {known}); convert it "
        f"where MXNet is installed (gluon-hub convert {name} --pretrained{'' if base is None else ' ' + base} -o DIR"
        f"{' --format ' + format if format != 'onnx' else ''}), then bundle it (gluon-hub bundle "
        f"{name}:{written}{ending}{' and the other graphs' if graph is not None else ''} --from-dir DIR -o FILE) "
        "and 'gluon-hub import FILE' here, or pass "
        "index=DIR/weights.json with the folder served as a mirror"
    )


def fetch_converted(
    name: str,
    format: str = "onnx",
    tag: str | None = None,
    *,
    index: str | os.PathLike[str] | None = None,
    root: str | os.PathLike[str] | None = None,
    progress: bool | None = None,
    graph: str | None = None,
) -> Path:
    """The verified local path of a model's converted file, found by the model's name.

    The entry comes from the installed plugins' specs, then ``index``, then the bundles
    imported into the cache (``gluon-hub import``); the file comes through the cache, so
    mirrors, shared caches and offline mode (``GLUON_HUB_OFFLINE=1``) work as for weights,
    and its hash is checked. Imports no mxnet.

    Parameters
    ----------
    name : the model name (``plugin/name`` where the installed plugins need it).
    format : ``"onnx"`` (a graph for onnxruntime) or ``"safetensors"``.
    tag : the weight tag it was converted from (``default``) or its own (``default.onnx``);
        default the first entry of that format.
    index : a ``weights.json`` (or the folder holding it) that ``gluon-hub convert`` wrote.
    root : the cache to use (default ``GLUON_HUB_HOME``).
    progress : show a download progress bar (default: on a terminal).
    graph : one graph of a model ``convert`` wrote as several (GPT-2's ``prompt`` and
        ``step``), tagged ``TAG-GRAPH.onnx``; ``tag`` is then the ``TAG`` they share.

    Examples
    --------
    >>> import gluon_hub, tempfile
    >>> out = tempfile.mkdtemp()
    >>> graph = f"{out}/tiny.onnx"
    >>> _ = open(graph, "wb").write(b"\\x08\\x07")  # a stand-in; onnxruntime checks real ones
    >>> _ = gluon_hub.publish(graph, "tiny", out, tag="default.onnx")
    >>> fetch_converted("tiny", index=out, root=out).read_bytes()
    b'\\x08\\x07'
    """
    from ..cache import fetch

    variant = find_converted(name, format, tag, index=index, root=root, graph=graph)
    if index is not None and not variant.file.urls:  # the folder the index lies in holds the file
        folder = Path(index) if Path(index).is_dir() else Path(index).parent
        local = folder / (variant.file.filename or "")
        if local.is_file():
            from ..cache import add_file

            return add_file(variant.file, local, root=root)
    return fetch(variant.file, root=root, progress=progress)
