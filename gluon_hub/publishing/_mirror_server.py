"""A read-only HTTP mirror of one directory, for air-gapped sites and for tests.

``gluon-hub serve DIR`` and :func:`gluon_hub.publishing.serve` run it. It serves the regular files under the
directory and nothing else: no listings, no hidden (dot) files, no path that resolves
outside the directory (``..``, encoded or not, and symlinks leading out are refused with
404). It answers GET and HEAD, single byte-range requests with 206 (so the cache can
resume a download), and ETag / Last-Modified validators with 304. Each request runs in
its own thread, so a slow client does not hold up the others.

Given a catalogue folder (``gluon-hub catalogue``'s output), it serves that beside the mirror
at ``/catalogue/``, where a path ending in ``/`` means its ``index.html``; the mirror's own
``catalogue`` folder, if it has one, is then hidden.
"""

from __future__ import annotations

import email.utils
import mimetypes
import os
import re
import socket
import sys
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import BinaryIO
from urllib.parse import unquote, urlsplit

__all__ = ["MirrorServer"]

_CHUNK = 1 << 16
_RANGE_RE = re.compile(r"^bytes=(\d*)-(\d*)$")
#: Where the catalogue is served, beside the mirror's files.
CATALOGUE_PATH = "/catalogue/"


class _Handler(BaseHTTPRequestHandler):
    server: MirrorServer
    protocol_version = "HTTP/1.1"  # keep-alive; every response carries a Content-Length
    server_version = "gluon-hub-mirror"

    def do_GET(self) -> None:
        self._respond(send_body=True)

    def do_HEAD(self) -> None:
        self._respond(send_body=False)

    def log_message(self, format: str, *args: object) -> None:
        if self.server.verbose:
            sys.stderr.write(f"{self.address_string()} - {format % args}\n")

    # -- resolution --------------------------------------------------------------------
    def _resolve(self) -> Path | None:
        """The regular file the request path names inside the root, or None."""
        raw = urlsplit(self.path).path
        if "\\" in raw or "\x00" in raw:
            return None
        parts = [unquote(p) for p in raw.split("/") if p]
        # Dot segments ('..' included) and hidden files are refused, as are separators
        # smuggled in percent-encoded.
        if not parts or any(
            p.startswith(".") or "/" in p or "\\" in p or "\x00" in p for p in parts
        ):
            return None
        root = self.server.root
        if self.server.catalogue is not None and parts[0] == CATALOGUE_PATH.strip("/"):
            root, parts = self.server.catalogue, parts[1:]
            if not parts or raw.endswith("/"):
                parts.append("index.html")
        candidate = root.joinpath(*parts)
        try:
            real = candidate.resolve(strict=True)
        except (OSError, RuntimeError):
            return None
        if not real.is_relative_to(root) or not real.is_file():
            return None
        return real

    # -- responses ---------------------------------------------------------------------
    def _respond(self, send_body: bool) -> None:
        if self.server.catalogue is not None and urlsplit(self.path).path == CATALOGUE_PATH.rstrip("/"):
            self.send_response(HTTPStatus.MOVED_PERMANENTLY)  # its pages link relative to the folder
            self.send_header("Location", CATALOGUE_PATH)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        path = self._resolve()
        if path is None:
            self._error(HTTPStatus.NOT_FOUND, send_body)
            return
        try:
            stream = open(path, "rb")
        except OSError:
            self._error(HTTPStatus.NOT_FOUND, send_body)
            return
        with stream:
            stat = os.fstat(stream.fileno())
            etag = f'"{stat.st_size:x}-{stat.st_mtime_ns:x}"'
            modified = email.utils.formatdate(stat.st_mtime, usegmt=True)
            if self._not_modified(etag, stat.st_mtime):
                self.send_response(HTTPStatus.NOT_MODIFIED)
                self._validators(etag, modified)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            span = self._range(stat.st_size, etag, stat.st_mtime)
            if span == "unsatisfiable":
                self.send_response(HTTPStatus.REQUESTED_RANGE_NOT_SATISFIABLE)
                self.send_header("Content-Range", f"bytes */{stat.st_size}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            start, end = span if isinstance(span, tuple) else (0, stat.st_size - 1)
            length = end - start + 1 if stat.st_size else 0
            self.send_response(HTTPStatus.PARTIAL_CONTENT if span else HTTPStatus.OK)
            if span:
                self.send_header("Content-Range", f"bytes {start}-{end}/{stat.st_size}")
            self.send_header("Content-Type", mimetypes.guess_type(path.name)[0] or "application/octet-stream")
            self.send_header("Content-Length", str(length))
            self.send_header("Accept-Ranges", "bytes")
            self._validators(etag, modified)
            self.end_headers()
            if send_body:
                self._copy(stream, start, length)

    def _validators(self, etag: str, modified: str) -> None:
        self.send_header("ETag", etag)
        self.send_header("Last-Modified", modified)

    def _error(self, status: HTTPStatus, send_body: bool) -> None:
        body = f"{status.value} {status.phrase}\n".encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if send_body:
            self.wfile.write(body)

    def _not_modified(self, etag: str, mtime: float) -> bool:
        match = self.headers.get("If-None-Match")
        if match is not None:
            return match.strip() == "*" or etag in [t.strip().removeprefix("W/") for t in match.split(",")]
        since = self.headers.get("If-Modified-Since")
        if since is None:
            return False
        try:
            parsed = email.utils.parsedate_to_datetime(since)
        except (TypeError, ValueError):
            return False
        return int(mtime) <= parsed.timestamp()

    def _range(self, size: int, etag: str, mtime: float) -> tuple[int, int] | str | None:
        """The single byte range to send, None for the whole file, or "unsatisfiable".

        Several ranges, a malformed header, or an If-Range that no longer matches get the
        whole file, which RFC 9110 allows.
        """
        header = self.headers.get("Range")
        if header is None:
            return None
        if_range = self.headers.get("If-Range")
        if if_range is not None and if_range.strip() != etag:
            try:
                if email.utils.parsedate_to_datetime(if_range).timestamp() < int(mtime):
                    return None
            except (TypeError, ValueError):
                return None
        match = _RANGE_RE.match(header.strip().replace(" ", ""))
        if match is None or not (match[1] or match[2]):
            return None
        if not match[1]:  # a suffix: the last N bytes
            suffix = int(match[2])
            if suffix == 0 or size == 0:
                return "unsatisfiable"
            return max(size - suffix, 0), size - 1
        start = int(match[1])
        end = min(int(match[2]), size - 1) if match[2] else size - 1
        if match[2] and int(match[2]) < start:
            return None
        if start >= size:
            return "unsatisfiable"
        return start, end

    def _copy(self, stream: BinaryIO, start: int, length: int) -> None:
        stream.seek(start)
        try:
            while length > 0:
                chunk = stream.read(min(_CHUNK, length))
                if not chunk:  # the file shrank under us; the client sees a short body
                    break
                self.wfile.write(chunk)
                length -= len(chunk)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True


class MirrorServer(ThreadingHTTPServer):
    """The running mirror: ``url`` to fetch from, ``shutdown()`` to stop it.

    Use it as a context manager to stop it on exit.
    """

    daemon_threads = True
    allow_reuse_address = True

    def __init__(
        self, directory: str | os.PathLike[str], host: str = "127.0.0.1", port: int = 0,
        verbose: bool = False, catalogue: str | os.PathLike[str] | None = None,
    ) -> None:
        root = Path(directory).expanduser().resolve()
        if not root.is_dir():
            raise NotADirectoryError(f"cannot serve {directory}: not a directory")
        self.root = root
        self.catalogue = Path(catalogue).expanduser().resolve() if catalogue is not None else None
        if self.catalogue is not None and not (self.catalogue / "index.html").is_file():
            raise FileNotFoundError(f"{catalogue} holds no index.html; write a catalogue there with "
                                    f"'gluon-hub catalogue -o {catalogue}'")
        self.verbose = verbose
        self.address_family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._thread: threading.Thread | None = None
        super().__init__((host, port), _Handler)

    @property
    def url(self) -> str:
        """The base URL, ending in ``/``, with the port actually bound."""
        host, port = self.server_address[:2]
        name = host.decode() if isinstance(host, bytes) else str(host)
        name = f"[{name}]" if ":" in name else name
        return f"http://{name}:{port}/"

    @property
    def catalogue_url(self) -> str | None:
        """The catalogue's address, or None when no catalogue is served."""
        return self.url.rstrip("/") + CATALOGUE_PATH if self.catalogue is not None else None

    def start(self) -> MirrorServer:
        """Serve in a background daemon thread; returns self."""
        if self._thread is None:
            self._thread = threading.Thread(
                target=self.serve_forever, kwargs={"poll_interval": 0.05},
                name=f"gluon-hub mirror {self.url}", daemon=True,
            )
            self._thread.start()
        return self

    def shutdown(self) -> None:
        """Stop serving and close the socket; waits for the serving thread."""
        if self._thread is not None:
            super().shutdown()
            self._thread.join()
            self._thread = None
        self.server_close()

    def __enter__(self) -> MirrorServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

