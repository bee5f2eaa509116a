"""Parsing device lists such as ``cpu`` or ``gpu0,gpu1`` from the command line."""

from __future__ import annotations

import re
from typing import Any

from gluon_hub.compat import mx


def contexts(text: str) -> list[Any]:
    """``"cpu"``, ``"gpu0,gpu1"`` or ``"0,1"`` (GPU ids) as MXNet contexts."""
    found = []
    for item in (t.strip().lower() for t in text.split(",") if t.strip()):
        match = re.fullmatch(r"(cpu|gpu)?\(?(\d*)\)?", item)
        if not match or (match.group(1) is None and not match.group(2)):
            raise ValueError(f"device {item!r}: write cpu, gpu0, gpu1 ... or bare GPU ids")
        kind, index = match.group(1) or "gpu", int(match.group(2) or 0)
        found.append(mx.cpu(index) if kind == "cpu" else mx.gpu(index))
    if not found:
        raise ValueError("give at least one device, for example cpu or gpu0")
    return found
