"""Plain-text tables for the terminal."""

from __future__ import annotations

from typing import Sequence


def format_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """Left-aligned columns separated by two spaces; ``None`` prints as ``-``."""
    cells = [[("-" if v is None else str(v)) for v in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        widths = [max(w, len(c)) for w, c in zip(widths, row)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells]
    return "\n".join(lines)


def human_size(n: int | None) -> str:
    """Bytes as a short human-readable size."""
    if n is None:
        return "-"
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GB"


def human_count(n: int | None) -> str:
    """A count as people read it: ``676``, ``25.6K``, ``11.7M``, ``1.2B``."""
    if n is None:
        return "-"
    for scale, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "K")):
        if abs(n) >= scale:
            return f"{n / scale:.1f}{suffix}"
    return str(n)


def plural(n: int, singular: str) -> str:
    """``1 model``, ``2 models``, ``2 losses``, ``2 vocabularies``."""
    if n == 1:
        return f"1 {singular}"
    if singular.endswith("y") and singular[-2:-1] not in "aeiou":
        return f"{n} {singular[:-1]}ies"
    return f"{n} {singular}{'es' if singular.endswith('s') else 's'}"
