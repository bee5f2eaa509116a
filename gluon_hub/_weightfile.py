"""The weight files ``load`` reads: MXNet ``.params`` and safetensors, from the cache or a path.

A safetensors file (``gluon-hub convert --format safetensors`` writes one) holds the arrays
under the names ``save_parameters`` gives them (``features.0.weight``); ``load`` reads it
through the same ``load_parameters`` as a ``.params`` file, so the same checks apply and
a misfit gets the same message. ONNX graphs share the weights index but not ``load``.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import Any, Iterator

#: What ``load`` does not read, by file suffix, with where to take it instead.
_NOT_WEIGHTS = {".onnx": "an ONNX graph: run it with onnxruntime (gluon_hub.publishing.fetch_converted "
                         "finds it by model name)"}


def local_path(pretrained: Any) -> Path | None:
    """The weights file ``pretrained`` names (an ``os.PathLike``, or a string holding a path
    separator, which no weight tag has), else None."""
    if isinstance(pretrained, os.PathLike) or (
        isinstance(pretrained, str) and ("/" in pretrained or os.sep in pretrained)
    ):
        path = Path(pretrained).expanduser()
        if not path.is_file():
            raise FileNotFoundError(f"pretrained={str(pretrained)!r}: no weights file there "
                                    "(a .params or .safetensors file, or give a weight tag)")
        return path
    return None


def refuse_other_formats(filename: str | None, what: str) -> None:
    """A clear error for files in the weights index that are no weights (``.onnx``)."""
    for suffix, why in _NOT_WEIGHTS.items():
        if filename and filename.endswith(suffix):
            raise ValueError(f"{what} is {why}; load() builds a Gluon model from .params or "
                             ".safetensors weights")


@contextlib.contextmanager
def as_params(path: Path) -> Iterator[Path]:
    """``path`` as a file ``load_parameters`` reads: itself, or a safetensors file's arrays
    written as a temporary ``.params`` file (after the cache's structural check)."""
    from ._cache._fetch import check_weights_file

    if check_weights_file(path) == "params":
        yield path
        return
    try:
        from safetensors.numpy import load_file
    except ImportError:
        raise ImportError(f"reading {path} needs safetensors: pip install safetensors") from None
    from .compat import mx

    arrays = load_file(str(path))
    with tempfile.TemporaryDirectory(prefix="gluon-hub-safetensors-") as folder:
        params = Path(folder) / f"{path.stem}.params"
        mx.nd.save(str(params), {k: mx.nd.array(v, dtype=v.dtype) for k, v in arrays.items()})
        yield params
