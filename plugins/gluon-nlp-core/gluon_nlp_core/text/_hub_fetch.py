"""Fetching a file of one of the plugin's hub entries (an embedding, a vocabulary) by the
plugin's own functions, so that an offline miss names what the hub would: the prefetch of
the entry by name, a command that works, rather than the ``python -c`` fetch of a bare file."""

from __future__ import annotations

import os
from pathlib import Path

from gluon_hub import FileRef


def fetch_entry_file(kind: str, name: str, ref: FileRef, root: str | os.PathLike[str] | None) -> Path:
    """``gluon_hub.fetch(ref)``; offline without it, the miss names ``gluon-hub cache prefetch
    --kind KIND NAME`` where the hub's entry ``name`` of ``kind`` lists this very file."""
    from gluon_hub import cache

    try:
        return cache.fetch(ref, root=root)
    except cache.OfflineMissError as miss:
        command = _prefetch_command(kind, name, ref)
        if command is None:
            raise
        raise miss.with_command(command) from None


def _prefetch_command(kind: str, name: str, ref: FileRef) -> str | None:
    import gluon_hub
    from gluon_hub import cache

    info = {"embeddings": gluon_hub.embedding_info, "vocabularies": gluon_hub.vocabulary_info}[kind]
    try:
        spec = info(name)
    except (gluon_hub.HubError, KeyError):  # a source of the caller's own, not a hub entry
        return None
    return cache.prefetch_command(spec) if any(f.hash == ref.hash for f in spec.files) else None
