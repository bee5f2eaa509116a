"""Publishing weights: hash-named files, the index a plugin ships, mirrors and bundles.

:func:`publish` turns a trained network (or a ``.params`` file) into a file named by its
hash plus an entry in a weights index, ``weights.json``, in one output folder, ready to
upload to any static HTTP host or object store. A plugin ships the index in its package
and builds its specs from it with :func:`weights_from_index`; the hub then fetches the
file by hash from any mirror. :func:`serve` runs such a mirror on this machine, and
:func:`bundle` / :func:`import_bundle` carry weights to machines without a network.
:func:`fetch_converted` finds what ``gluon-hub convert`` wrote (an ONNX graph, safetensors
weights) by model name, through the same cache, where MXNet is not installed.

This module imports nothing heavy: plugin modules call :func:`weights_from_index` while
the hub lists models, where mxnet must not be imported; a network passed to
:func:`publish` brings mxnet with it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from ._converted import fetch_converted
from ._publish import publish
from ._weights_index import INDEX_FILENAME, SCHEMA, parse_metric, weights_from_index
from .errors import BundleError, ReplacedWeightsWarning

if TYPE_CHECKING:
    from ._bundle import BundleFile
    from ._mirror_server import MirrorServer

__all__ = [
    "BundleError",
    "INDEX_FILENAME",
    "SCHEMA",
    "ReplacedWeightsWarning",
    "bundle",
    "fetch_converted",
    "import_bundle",
    "parse_metric",
    "publish",
    "serve",
    "weights_from_index",
]


def serve(
    directory: str | os.PathLike[str],
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    verbose: bool = False,
    catalogue: str | os.PathLike[str] | None = None,
) -> MirrorServer:
    """Serve a folder as a read-only mirror, in a background thread, and return the server.

    The server answers GET and HEAD, byte ranges (206, so downloads resume) and
    ETag/Last-Modified validators; it never lists folders and refuses any path that leads
    outside ``directory``. ``gluon-hub serve`` runs the same server in the foreground.

    Parameters
    ----------
    directory : the mirror folder, for example the output folder of :func:`publish`.
    host : address to listen on; the default loopback address is reachable only from this
        machine. Give a LAN address (or ``0.0.0.0``) to serve other machines.
    port : TCP port; 0 picks a free one (read it from ``server.url``).
    verbose : log each request to stderr.
    catalogue : a folder ``gluon-hub catalogue`` wrote, served beside the mirror at
        ``server.catalogue_url`` (``/catalogue/``).

    Returns
    -------
    MirrorServer
        Already serving; point ``GLUON_HUB_MIRRORS`` at ``server.url`` and call
        ``server.shutdown()`` when done, or use it in a ``with`` block.

    Examples
    --------
    >>> import tempfile, urllib.request
    >>> folder = tempfile.mkdtemp()
    >>> _ = open(f"{folder}/hello.txt", "w").write("hi")
    >>> with serve(folder) as server:
    ...     urllib.request.urlopen(server.url + "hello.txt").read()
    b'hi'
    """
    from ._mirror_server import MirrorServer

    return MirrorServer(directory, host, port, verbose, catalogue).start()


def bundle(
    models: Sequence[str],
    output: str | os.PathLike[str],
    *,
    from_dir: str | os.PathLike[str] | None = None,
    root: str | os.PathLike[str] | None = None,
    all_tags: bool = False,
) -> list[BundleFile]:
    """Write the weights of some models, with a checked manifest, into one tar file.

    Carry the file to a machine without network access and :func:`import_bundle` it there;
    ``load(name, pretrained=True)`` then works offline.

    Parameters
    ----------
    models : model names, each ``NAME`` (its default weights) or ``NAME:TAG``; a name that
        is no model but an embedding or a dataset bundles that entry's files.
    output : the tar file to write (``.tar.gz`` or ``.tgz`` compresses it); written to a
        temp file first, so a failed run leaves no half bundle.
    from_dir : take the files from this folder (for example ``publish``'s output, whose
        ``weights.json`` also names models no installed plugin provides) instead of
        fetching them through the cache.
    root : the cache to fetch through (default ``GLUON_HUB_HOME``).
    all_tags : bundle every weight tag of the models named without a tag.

    Returns
    -------
    list of BundleFile
        What the bundle holds: member path, sha256, size, FileRef and ``model:tag`` users.
    """
    from ._bundle import write_bundle

    return write_bundle(models, output, from_dir=from_dir, root=root, all_tags=all_tags)


def import_bundle(
    archive: str | os.PathLike[str], root: str | os.PathLike[str] | None = None
) -> list[tuple[BundleFile, Path]]:
    """Verify a bundle completely, then add its files to the cache.

    Links, absolute paths, ``..``, undeclared members, wrong sizes and wrong hashes are
    all refused with a :class:`BundleError` naming the file, before
    anything enters the cache: a damaged bundle leaves the cache as it was.

    Parameters
    ----------
    archive : a file written by :func:`bundle` (``gluon-hub bundle``).
    root : the cache to fill (default ``GLUON_HUB_HOME``).

    Returns
    -------
    list of (BundleFile, Path)
        Each imported file and where it now lies in the cache.
    """
    from ._bundle import read_bundle

    return read_bundle(archive, root=root)
