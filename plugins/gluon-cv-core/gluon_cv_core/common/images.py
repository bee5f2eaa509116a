"""Decoding image files with MXNet's OpenCV, with errors that name the file."""

from __future__ import annotations

import os
from typing import Any

from gluon_hub.compat import mx

__all__ = ["read_image"]


def read_image(path: str | os.PathLike[str]) -> Any:
    """The image at ``path`` as an ``HWC`` ``uint8`` RGB ``NDArray``."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"image {path!r} does not exist")
    try:
        return mx.image.imread(path, flag=1, to_rgb=True)
    except mx.base.MXNetError as exc:
        # MXNet's message is a C++ traceback; its last line says what failed.
        reason = str(exc).strip().splitlines()[-1]
        raise ValueError(f"cannot decode image {path!r}: {reason}") from None
