"""Errors of the weight cache; each subclasses the builtin a caller would catch."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import HubError


@dataclass(frozen=True)
class Attempt:
    """One source tried for a file and why it did not deliver it."""

    source: str
    reason: str
    expected: str | None = None
    actual: str | None = None

    def __str__(self) -> str:
        text = f"{self.source}: {self.reason}"
        if self.expected is not None:
            text += f" (expected {self.expected}, got {self.actual})"
        return text


class CacheError(HubError, OSError):
    """The cache could not deliver a verified file."""


class DownloadError(CacheError):
    """Every source of a file failed; ``attempts`` says how, one line per source."""

    def __init__(self, label: str, attempts: list[Attempt], hint: str = "") -> None:
        self.label = label
        self.attempts = list(attempts)
        count = len(self.attempts)
        lines = [f"could not fetch {label}; "
                 + (f"tried {count} source{'' if count == 1 else 's'}:" if count else "no source to try")]
        lines += [f"  - {a}" for a in self.attempts]
        if hint:
            lines.append(hint)
        super().__init__("\n".join(lines))

    def __str__(self) -> str:
        return str(self.args[0])


class OfflineMissError(DownloadError, FileNotFoundError):
    """Offline mode is on and the file is neither cached nor on a local mirror.

    ``command`` fetches the file on a connected machine. The cache knows only the file
    (``file_hash``); a caller that knows which model or dataset wanted it re-raises
    :meth:`with_command` with the prefetch command of that name.
    """

    def __init__(self, label: str, attempts: list[Attempt], command: str, file_hash: str = "") -> None:
        self.command, self.file_hash = command, file_hash
        super().__init__(label, attempts, (
            f"GLUON_HUB_OFFLINE=1 forbids downloading it; on a machine with network access run: "
            f"{command} ; then copy the cache (GLUON_HUB_HOME) here, point GLUON_HUB_SHARED_CACHE "
            "at such a copy, or add a local mirror to GLUON_HUB_MIRRORS"
        ))

    def with_command(self, command: str) -> OfflineMissError:
        """The same miss, with ``command`` as the way to fetch it."""
        return OfflineMissError(self.label, self.attempts, command, self.file_hash)


class DiskFullError(CacheError):
    """The disk filled up while writing a download; nothing was left behind."""


class CacheNotWritableError(CacheError, PermissionError):
    """The cache directory cannot be written to."""


class UnsafeArchiveError(HubError, ValueError):
    """An archive holds absolute paths, ``..``, links, or expands beyond the size limit."""


class ParamsFormatError(HubError, ValueError):
    """A weight file is not a well-formed MXNet NDArray file (for example a pickle)."""
