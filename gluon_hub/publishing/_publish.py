"""``publish``: a trained network or a ``.params``, ``.safetensors`` or ``.onnx`` file becomes
a hash-named file plus its entry in the weights index; a network passed in brings mxnet with it."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any, Iterable

from ..specs import FileRef, Metric, WeightVariant, _check_name
from ._weights_index import INDEX_FILENAME, _checked_metric, parse_metric, update_index, weights_from_index

_HASH_PREFIX = 12


def _sha256_and_size(path: Path) -> tuple[str, int]:
    from .._cache._hashing import hash_file_sized

    hashes, size = hash_file_sized(path, ["sha256"])
    return hashes["sha256"].partition(":")[2], size


def _check_file(path: Path) -> str:
    """The suffix the published file gets, once ``path`` is checked to be what its suffix says.

    ``.params`` and ``.safetensors`` files get the cache's structural checks (headers only,
    no mxnet): a pickle, which could run code, is refused. An ONNX file is checked to be no
    weights file, pickle or archive; onnxruntime parses the rest.
    """
    from .._cache._paramsfile import LIST_MAGIC, _sniff
    from .._cache._safetensorsfile import is_safetensors
    from ..cache import check_params_file, check_weights_file

    suffix = path.suffix.lower()
    if suffix == ".onnx":
        with open(path, "rb") as stream:
            head = stream.read(8)
        kind = _sniff(head) or ("a weights file" if is_safetensors(path) or head == LIST_MAGIC.to_bytes(8, "little")
                                else None)
        if kind is not None:
            raise ValueError(f"{path} is not an ONNX model: it is {kind}")
        return suffix
    if suffix == ".safetensors":
        if check_weights_file(path) != "safetensors":
            raise ValueError(f"{path} is named .safetensors but is an MXNet .params file; rename it")
        return suffix
    check_params_file(path)
    return ".params"


def _is_block(obj: Any) -> bool:
    return not isinstance(obj, (str, os.PathLike)) and callable(getattr(obj, "save_parameters", None))


def publish(
    net_or_params: Any,
    name: str,
    out_dir: str | os.PathLike[str],
    tag: str = "default",
    metrics: Iterable[Metric | str] = (),
    description: str = "",
    *,
    base_url: str | None = None,
) -> WeightVariant:
    """Write a model's weights as ``<name>-<sha256[:12]>.params`` and record them in the index.

    Parameters
    ----------
    net_or_params : a trained Gluon ``Block`` (saved with ``save_parameters``) or the path
        of a ``.params`` file, which is checked to be an MXNet NDArray file first. A
        ``.safetensors`` file (checked likewise) or an ``.onnx`` graph, as ``gluon-hub
        convert`` writes them, keeps its suffix; give such files their own tag
        (``default.onnx``), since ``load`` reads the weights of a tag, never a graph.
    name : the model name the weights are for, as the plugin's ``ModelSpec`` names it.
    out_dir : folder to upload as-is; created if missing. Its ``weights.json`` is created
        or updated: an existing entry with the same ``tag`` is replaced, with a
        :class:`ReplacedWeightsWarning`; other entries are kept.
    tag : the weight tag, selected by ``load(name, pretrained=tag)``; the first tag listed
        for a model is the one ``pretrained=True`` loads.
    metrics : results the author reports, as :class:`~gluon_hub.Metric` objects or
        ``"NAME=VALUE@DATASET[:SPLIT]"`` strings.
    description : a line on how the weights were trained.
    base_url : where the folder will be uploaded; when given, the entry also carries the
        file's absolute URL, so it can be fetched without a configured mirror.

    Returns
    -------
    WeightVariant
        The entry written to the index; ``variant.file`` names the file by its full sha256.

    Examples
    --------
    >>> import gluon_hub, tempfile
    >>> from gluon_hub.compat import mx
    >>> net = mx.gluon.nn.Dense(2, in_units=3)
    >>> net.initialize()
    >>> out = tempfile.mkdtemp()
    >>> variant = gluon_hub.publish(net, "tiny", out, metrics=["acc=0.5@toy:test"])
    >>> variant.file.filename == f"tiny-{variant.file.digest[:12]}.params"
    True
    """
    _check_name("model", name)
    variant_metrics = tuple(
        parse_metric(m) if isinstance(m, str) else _checked_metric(m) for m in metrics
    )
    _check_name("weight tag", tag)
    if base_url is not None and not re.match(r"^https?://", base_url):
        raise ValueError(f"base_url must be an http(s) URL, got {base_url!r}")
    out = Path(out_dir)
    if (out / INDEX_FILENAME).exists():
        weights_from_index(out / INDEX_FILENAME)  # a broken index fails before any write
    out.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{name}-", suffix=".tmp", dir=out)
    os.close(fd)
    tmp = Path(tmp_name)
    suffix = ".params"
    try:
        if _is_block(net_or_params):
            net_or_params.save_parameters(str(tmp))
        else:
            source = Path(net_or_params)
            if not source.is_file():
                raise FileNotFoundError(f"no params file at {source}")
            suffix = _check_file(source)
            shutil.copyfile(source, tmp)
        tmp.chmod(0o644)  # mkstemp makes it private; the file is meant to be served
        digest, size = _sha256_and_size(tmp)
        filename = f"{name}-{digest[:_HASH_PREFIX]}{suffix}"
        tmp.replace(out / filename)
    finally:
        tmp.unlink(missing_ok=True)
    urls = (f"{base_url.rstrip('/')}/{filename}",) if base_url else ()
    variant = WeightVariant(
        tag=tag,
        file=FileRef(hash=f"sha256:{digest}", size=size, filename=filename, urls=urls),
        metrics=variant_metrics,
        description=description,
    )
    update_index(out / INDEX_FILENAME, name, variant)
    return variant
