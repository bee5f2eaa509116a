"""The progress bar of the plugin's long commands (convert, bench): one tqdm bar over their
items, shown on a terminal or as ``GLUON_HUB_PROGRESS`` says, with result lines printed
above it so that they reach stdout whether or not a bar is drawn."""

from __future__ import annotations

import sys


class ProgressBar:
    """A bar of ``total`` items named ``unit``; ``enabled=None`` follows the hub's setting."""

    def __init__(self, total: int, unit: str, enabled: bool | None = None) -> None:
        if enabled is None:
            from gluon_hub.cache import progress_setting  # GLUON_HUB_PROGRESS, read in one place

            enabled = progress_setting()
        if enabled is None:
            enabled = sys.stderr.isatty()
        self._bar = None
        if enabled:
            from tqdm import tqdm

            self._bar = tqdm(total=total, unit=unit, file=sys.stderr, dynamic_ncols=True)

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.close()

    def step(self, label: str) -> None:
        """Name what the current item is doing."""
        if self._bar is not None:
            self._bar.set_description(label)

    def write(self, line: str) -> None:
        """Print a result line to stdout, above the bar."""
        if self._bar is not None:
            self._bar.write(line, file=sys.stdout)
        else:
            print(line, flush=True)

    def done(self) -> None:
        """One more item finished."""
        if self._bar is not None:
            self._bar.update(1)
