"""Download progress bars: tqdm on a terminal, silent otherwise or when asked."""

from __future__ import annotations

import sys


class Progress:
    """A resettable byte counter drawn with tqdm when enabled."""

    def __init__(self, label: str, enabled: bool | None) -> None:
        if enabled is None:
            enabled = sys.stderr.isatty()
        self._bar = None
        if enabled:
            from tqdm import tqdm

            self._bar = tqdm(
                desc=label, unit="B", unit_scale=True, unit_divisor=1024,
                file=sys.stderr, leave=False, dynamic_ncols=True,
            )

    def reset(self, done: int = 0, total: int | None = None) -> None:
        if self._bar is not None:
            self._bar.reset(total=total)
            self._bar.update(done)

    def update(self, nbytes: int) -> None:
        if self._bar is not None:
            self._bar.update(nbytes)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
