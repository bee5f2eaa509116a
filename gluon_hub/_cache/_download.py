"""Stream one source into a partial file, hashing as the bytes arrive.

HTTP downloads retry with backoff on connection errors (once only when no connection
could be made at all: refused, unreachable, unknown host), 408, 429 and 5xx, resume with
``Range`` + ``If-Range`` when the server supports it and restart cleanly when it does
not (or when the resource changed). Redirects are followed by hand so that one to a
scheme other than http(s), or from https down to http, is refused. Proxies and
``REQUESTS_CA_BUNDLE`` are honoured through requests' environment settings.

Every download is bounded: in bytes (the spec's size, else ``max_download_size``), and
in time by a deadline per source that covers every attempt. The per-read timeout alone
would let a server that drips a byte at a time hold a caller for hours, so the deadline
is enforced by a timer that shuts the download's sockets down, which wakes a read that
is blocked on them.

Bodies are read as sent (``decode_content=False``): ``Content-Length`` and ``Range`` count
the bytes on the wire, so counting and hashing the decoded bytes of a server that gzips
although ``identity`` was asked for would turn a complete body into a false
"incomplete" and a Range request into the compressed stream. The encoding is reported
with the result, and named when the bytes then fail the hash check.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import json
import os
import queue
import random
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Callable, Mapping, cast
from urllib.parse import unquote, urljoin, urlsplit

from ..specs import URL_SCHEMES, url_scheme
from ._errors import DiskFullError
from ._hashing import Hasher
from ._settings import Settings
from ._store import meta_path

CHUNK = 1 << 20
#: Chunks received ahead of the writer thread (memory bound: QUEUE_CHUNKS * CHUNK).
QUEUE_CHUNKS = 16
MAX_REDIRECTS = 10
RETRY_STATUS = {408, 429, 500, 502, 503, 504}
MAX_BACKOFF_S = 8.0
MAX_RETRY_AFTER_S = 30.0
#: Retries of a source whose connection failed at once (refused, unreachable, unknown
#: host): a restarting server may refuse for a moment, but an offline machine or a closed
#: port answers the same every time, so retrying it as often as a timeout only stalls.
CONNECT_FAILURE_RETRIES = 1
_DISK_FULL = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}


class SourceFailed(Exception):
    """This source cannot deliver the file; the caller moves on to the next one."""

    def __init__(self, reason: str, keep_partial: bool = False) -> None:
        super().__init__(reason)
        self.keep_partial = keep_partial


@dataclass
class Result:
    """What a source delivered into the partial file, and how the server labelled it."""

    hash: str
    size: int
    url: str
    content_type: str | None = None
    encoding: str | None = None  # a Content-Encoding other than identity


def local_path(source: str) -> Path | None:
    """The filesystem path of a ``file://`` URL or plain path; None for http(s)."""
    parts = urlsplit(source)
    scheme = url_scheme(source)
    if scheme in ("http", "https"):
        return None
    if scheme == "file":
        if parts.netloc not in ("", "localhost"):
            raise SourceFailed(f"file URL with a remote host {parts.netloc!r} is not supported")
        return Path(unquote(parts.path))
    if scheme:
        raise SourceFailed(f"URL {source!r}: scheme {scheme!r} is not supported; the supported "
                           f"schemes are {', '.join(URL_SCHEMES)}")
    return Path(source)


def check_disk_full(exc: OSError, path: Path) -> None:
    if exc.errno in _DISK_FULL:
        raise DiskFullError(
            exc.errno,
            f"no space left while writing {path.name} to {path.parent} ({os.strerror(exc.errno)}); "
            "the partial file was removed. Free some space or point GLUON_HUB_HOME elsewhere",
        ) from exc


class _Sink:
    """The partial file plus the running hash of exactly the bytes written to it.

    Hashing runs in a worker thread while the caller writes and receives the next chunk
    (hashing, writing and receiving all release the GIL), so a verified download keeps up
    with the network. :meth:`drain` waits until every written chunk is hashed.
    """

    def __init__(self, part: Path, algorithm: str, limit: int, progress: Any, limit_note: str = "") -> None:
        self.part, self.algorithm, self.limit, self.progress = part, algorithm, limit, progress
        self.limit_note = limit_note
        self.stream: BinaryIO | None = None
        self.hasher = Hasher(algorithm)
        self.size = 0
        self._queue: queue.Queue[bytes | None] = queue.Queue(maxsize=QUEUE_CHUNKS)
        self._worker: threading.Thread | None = None
        self._error: BaseException | None = None

    def _open(self, mode: str) -> None:
        self.close()
        self.stream = cast(BinaryIO, open(self.part, mode))
        self._error = None
        self._worker = threading.Thread(target=self._work, name="gluon-hub-write", daemon=True)
        self._worker.start()

    def _work(self) -> None:
        hasher = self.hasher
        while (chunk := self._queue.get()) is not None:
            if self._error is None:
                try:
                    hasher.update(chunk)
                except BaseException as exc:  # handed to the caller by drain()
                    self._error = exc
            self._queue.task_done()
        self._queue.task_done()

    def _raise_error(self) -> None:
        if self._error is not None:
            exc, self._error = self._error, None
            if isinstance(exc, OSError):
                check_disk_full(exc, self.part)
            raise exc

    def restart(self) -> None:
        self.hasher = Hasher(self.algorithm)
        self._open("wb")
        self.size = 0
        self.progress.reset()

    def resume(self) -> int:
        """Open the existing partial for appending, hashing what it holds; its size."""
        self.close()
        self.hasher = Hasher(self.algorithm)
        with open(self.part, "rb") as stream:
            while chunk := stream.read(CHUNK):
                self.hasher.update(chunk)
        self._open("ab")
        self.size = self.part.stat().st_size
        self.progress.reset(self.size)
        return self.size

    def too_big(self) -> SourceFailed:
        return SourceFailed(f"more than the {self.limit} bytes expected{self.limit_note}; stopped reading")

    def write(self, chunk: bytes) -> None:
        if self.size + len(chunk) > self.limit:
            raise self.too_big()
        self._raise_error()
        try:
            self.stream.write(chunk)  # type: ignore[union-attr]
        except OSError as exc:
            check_disk_full(exc, self.part)
            raise
        self._queue.put(chunk)
        self.size += len(chunk)
        self.progress.update(len(chunk))

    def drain(self) -> None:
        """Wait until every accepted chunk is written and hashed."""
        self._queue.join()
        self._raise_error()

    def finish(self) -> str:
        self.drain()
        try:
            self.stream.flush()  # type: ignore[union-attr]
            os.fsync(self.stream.fileno())  # type: ignore[union-attr]
        except OSError as exc:
            check_disk_full(exc, self.part)
            raise
        self.close()
        return self.hasher.value()

    def close(self) -> None:
        """Stop the worker and close the file; raises the worker's error, if any."""
        if self._worker is not None:
            self._queue.put(None)
            self._worker.join()
            self._worker = None
        if self.stream is not None:
            try:
                self.stream.close()
            except OSError as exc:
                check_disk_full(exc, self.part)
                raise
            finally:
                self.stream = None
        self._raise_error()


def copy_local(
    source: Path, part: Path, algorithm: str, limit: int, progress: Any, limit_note: str = ""
) -> Result:
    """Copy a file from a local mirror, hashing as it goes."""
    try:
        reader = open(source, "rb")
    except FileNotFoundError:
        raise SourceFailed("no such file") from None
    except OSError as exc:
        raise SourceFailed(f"cannot read: {exc}") from None
    sink = _Sink(part, algorithm, limit, progress, limit_note)
    with reader:
        size = os.fstat(reader.fileno()).st_size
        if size > limit:
            raise sink.too_big()
        progress.reset(0, size)
        sink.restart()
        try:
            while chunk := reader.read(CHUNK):
                sink.write(chunk)
            digest = sink.finish()
        finally:
            sink.close()
    return Result(digest, sink.size, str(source))


def _read_meta(part: Path) -> dict[str, Any]:
    try:
        data = json.loads(meta_path(part).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_meta(part: Path, url: str, response: Any) -> None:
    meta = {
        "url": url,
        "etag": response.headers.get("ETag"),
        "last_modified": response.headers.get("Last-Modified"),
    }
    try:
        meta_path(part).write_text(json.dumps(meta), encoding="utf-8")
    except OSError as exc:
        check_disk_full(exc, part)
        raise


# -- the deadline ------------------------------------------------------------------------

_CURRENT = threading.local()  # the Deadline of the download running in this thread


class Deadline:
    """The time one download from one source may take, retries included.

    When it passes, every socket opened for the download is shut down, which ends a read
    blocked on a server that sends a byte now and then (a read timeout never fires there).
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.end = time.monotonic() + seconds
        self.expired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def left(self) -> float:
        return max(0.0, self.end - time.monotonic())

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)
            if not self.expired:
                return
        _shut(sock)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            sockets, self._sockets = self._sockets, []
        for sock in sockets:
            _shut(sock)

    def passed(self) -> bool:
        return self.expired or self.left() <= 0

    def failure(self, received: int) -> SourceFailed:
        return SourceFailed(
            f"not done within the deadline of {self.seconds:g} s (GLUON_HUB_DOWNLOAD_DEADLINE) "
            f"after {received} bytes; the server is too slow or stalls"
        )

    def cancel(self) -> None:
        self._timer.cancel()


def _shut(sock: socket.socket) -> None:
    # A closed socket object has fileno -1 and raises here, so a descriptor number that
    # was reused for something else is never touched.
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


@contextlib.contextmanager
def _deadline(seconds: float):
    deadline = Deadline(seconds)
    _CURRENT.deadline = deadline
    try:
        yield deadline
    finally:
        _CURRENT.deadline = None
        deadline.cancel()


@functools.lru_cache(maxsize=None)
def _adapter_class() -> type:
    """A requests adapter whose connections report their sockets to the current deadline.

    Built on first use so that importing the hub does not import requests.
    """
    from requests.adapters import HTTPAdapter
    from urllib3 import ProxyManager
    from urllib3.connection import HTTPConnection, HTTPSConnection
    from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

    def watched(base: Any) -> type:
        def _new_conn(self: Any) -> socket.socket:
            sock = base._new_conn(self)
            _report(sock)
            return sock

        def connect(self: Any) -> None:
            base.connect(self)
            _report(self.sock)  # the TLS socket, which replaced the plain one

        return type(f"Watched{base.__name__}", (base,), {"_new_conn": _new_conn, "connect": connect})

    pools = {
        "http": type("WatchedPool", (HTTPConnectionPool,), {"ConnectionCls": watched(HTTPConnection)}),
        "https": type("WatchedTLSPool", (HTTPSConnectionPool,),
                      {"ConnectionCls": watched(HTTPSConnection)}),
    }

    class WatchedAdapter(HTTPAdapter):
        def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
            super().init_poolmanager(*args, **kwargs)
            self.poolmanager.pool_classes_by_scheme = pools

        def proxy_manager_for(self, proxy: str, **kwargs: Any) -> Any:
            manager = super().proxy_manager_for(proxy, **kwargs)
            if type(manager) is ProxyManager:  # SOCKS managers keep their own pools
                manager.pool_classes_by_scheme = pools
            return manager

    return WatchedAdapter


def _report(sock: Any) -> None:
    deadline = getattr(_CURRENT, "deadline", None)
    if deadline is not None and sock is not None:
        deadline.watch(sock)


def _session() -> Any:
    import requests

    session = requests.Session()
    adapter = _adapter_class()()
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session


# -- HTTP ----------------------------------------------------------------------------------


def _get(session: Any, url: str, headers: dict[str, str], settings: Settings) -> Any:
    """GET with redirects followed by hand, refusing any that leave http(s) or drop TLS."""
    secure = False
    for _ in range(MAX_REDIRECTS + 1):
        secure = secure or urlsplit(url).scheme.lower() == "https"
        response = session.get(
            url, headers=headers, stream=True, allow_redirects=False,
            timeout=(settings.connect_timeout, settings.read_timeout),
        )
        if not response.is_redirect:
            return response
        target = urljoin(url, response.headers["Location"])
        response.close()
        scheme = urlsplit(target).scheme.lower()
        if scheme not in ("http", "https"):
            raise SourceFailed(f"redirected to {target!r}; only http(s) redirects are followed")
        if secure and scheme == "http":
            raise SourceFailed(
                f"{url} redirected to {target}: refusing to go from https to plain http, "
                "where the bytes could be changed on the way"
            )
        url = target
    raise SourceFailed(f"more than {MAX_REDIRECTS} redirects")


def _number(value: str | None) -> int | None:
    """A header's non-negative integer, or None when it is absent or not a number."""
    value = (value or "").strip()
    return int(value) if value.isdigit() else None


def _content_range(value: str | None) -> tuple[int | None, int | None]:
    """``(start, total)`` of ``bytes START-END/TOTAL``, where a total of ``*`` is taken
    as END + 1; None for what is absent or not a number."""
    if not value or not value.startswith("bytes "):
        return None, None
    span, _, total = value[6:].partition("/")
    start, _, end = span.partition("-")
    last = _number(end)
    return _number(start), _number(total) if total != "*" else (last + 1 if last is not None else None)


def _retry_delay(attempt: int, response: Any = None) -> float:
    if response is not None:
        after = response.headers.get("Retry-After", "")
        if after.isdigit():
            return min(float(after), MAX_RETRY_AFTER_S)
    return min(MAX_BACKOFF_S, 0.25 * 2**attempt) * (0.5 + random.random() / 2)


def encoded_note(encoding: str | None) -> str:
    """Says that the server encoded a body it was asked to send as is."""
    return f"the server sent it with Content-Encoding: {encoding} although identity was asked for"


def _encoding(headers: Mapping[str, str]) -> str | None:
    value = headers.get("Content-Encoding", "").strip().lower()
    return value if value not in ("", "identity") else None


def _connect_failure(exc: BaseException) -> str | None:
    """Why no connection could be made at all (refused, unreachable, unknown host); None for
    other errors (timeouts, dropped connections), which keep the full retry policy."""
    from urllib3.exceptions import NameResolutionError, NewConnectionError

    reason = getattr(exc.args[0], "reason", None) if exc.args else None
    if isinstance(reason, NameResolutionError):
        return "host name not resolved"
    if isinstance(reason, NewConnectionError):
        cause = reason.__cause__ or reason.__context__
        if isinstance(cause, OSError) and cause.errno is not None:
            return f"cannot connect: {os.strerror(cause.errno).lower()}"
        return "cannot connect"
    return None


def _transport_errors() -> tuple[type[BaseException], ...]:
    import requests
    import urllib3

    return (requests.ConnectionError, requests.Timeout, requests.exceptions.ChunkedEncodingError,
            urllib3.exceptions.HTTPError)


def http_download(
    url: str,
    part: Path,
    algorithm: str,
    settings: Settings,
    limit: int,
    progress: Any,
    sleep: Callable[[float], None] = time.sleep,
    limit_note: str = "",
) -> Result:
    """Download ``url`` into ``part`` (resuming what it holds) and return its hash.

    ``limit`` bounds the bytes accepted (``limit_note`` says where it comes from); the
    whole call is bounded by ``settings.download_deadline``.
    """
    import requests

    retryable = _transport_errors()
    sink = _Sink(part, algorithm, limit, progress, limit_note)
    meta = _read_meta(part)
    validator = meta.get("etag") or meta.get("last_modified") if meta.get("url") == url else None
    offset = sink.resume() if validator and part.exists() else 0
    if not offset:
        sink.restart()
    errors: list[str] = []
    unreachable = 0  # connection failures in a row
    last_response = None
    encoding = content_type = None
    with _deadline(settings.download_deadline) as deadline, _session() as session:
        try:
            for attempt in range(settings.retries + 1):
                if attempt:
                    sleep(min(_retry_delay(attempt - 1, last_response), deadline.left()))
                if deadline.passed():
                    raise deadline.failure(sink.size)
                last_response = None
                headers = {"Accept-Encoding": "identity"}
                if sink.size and validator:
                    headers["Range"] = f"bytes={sink.size}-"
                    headers["If-Range"] = validator
                try:
                    response = _get(session, url, headers, settings)
                except requests.exceptions.SSLError as exc:
                    if deadline.passed():
                        raise deadline.failure(sink.size) from None
                    raise SourceFailed(f"TLS error: {exc}") from None
                except retryable as exc:
                    if deadline.passed():
                        raise deadline.failure(sink.size) from None
                    why = _connect_failure(exc)
                    unreachable = unreachable + 1 if why else 0
                    errors.append(why or type(exc).__name__)
                    if unreachable > CONNECT_FAILURE_RETRIES:
                        raise SourceFailed(f"gave up after {len(errors)} attempts: {', '.join(errors)}",
                                           keep_partial=bool(validator)) from None
                    continue
                with response:
                    status = response.status_code
                    if status in RETRY_STATUS:
                        errors.append(f"HTTP {status}")
                        last_response = response
                        continue
                    if status == 416:
                        errors.append("HTTP 416")
                        sink.restart()
                        validator = None
                        continue
                    start, total = _content_range(response.headers.get("Content-Range"))
                    length = _number(response.headers.get("Content-Length"))
                    if status == 206 and "Range" in headers and start == sink.size:
                        # Content-Range's total, else the length of this part; a chunked
                        # answer may give neither, and then the hash alone decides.
                        expected_total = total if total is not None else (
                            sink.size + length if length is not None else -1
                        )
                    elif status == 200:
                        if sink.size:
                            sink.restart()  # no Range support, or the resource changed
                        _write_meta(part, url, response)
                        validator = response.headers.get("ETag") or response.headers.get(
                            "Last-Modified"
                        )
                        expected_total = length if length is not None else -1
                        encoding = _encoding(response.headers)
                        content_type = response.headers.get("Content-Type")
                    elif status == 206:
                        errors.append("HTTP 206 for a range not asked for")
                        sink.restart()
                        validator = None
                        continue
                    else:
                        raise SourceFailed(f"HTTP {status} {response.reason or ''}".rstrip())
                    try:
                        if expected_total > limit:
                            raise SourceFailed(f"server announces {expected_total} bytes, more "
                                               f"than the {limit} expected{limit_note}")
                        progress.reset(sink.size, expected_total if expected_total >= 0 else None)
                        failed = _read_body(response, sink, retryable)
                    except SourceFailed as exc:
                        if _encoding(response.headers):  # the likely reason, named
                            raise SourceFailed(
                                f"{exc}; {encoded_note(_encoding(response.headers))}"
                            ) from None
                        raise
                    if deadline.passed():
                        raise deadline.failure(sink.size)
                    if failed:
                        errors.append(failed)
                        continue
                    if expected_total >= 0 and sink.size != expected_total:
                        errors.append(f"body ended at {sink.size} of {expected_total} bytes")
                        continue
                    return Result(sink.finish(), sink.size, response.url, content_type, encoding)
            raise SourceFailed(
                f"gave up after {settings.retries + 1} attempts: {', '.join(errors)}",
                keep_partial=bool(validator),
            )
        finally:
            sink.close()


def _read_body(response: Any, sink: _Sink, retryable: tuple[type[BaseException], ...]) -> str | None:
    """Write the body as sent into ``sink``; why it broke off, or None when it ended."""
    chunks = response.raw.stream(CHUNK, decode_content=False)
    while True:
        try:
            chunk = next(chunks, None)
        except retryable as exc:
            return f"{type(exc).__name__} after {sink.size} bytes"
        if chunk is None:
            return None
        sink.write(chunk)


def get_bytes(
    url: str, settings: Settings, limit: int, limit_note: str = "",
    headers: Mapping[str, str] | None = None,
) -> tuple[int, Mapping[str, str], bytes]:
    """``(status, headers, body)`` of a small GET, bounded like a download.

    For documents read whole (the registry index): the same timeouts, retries, redirect
    rules and deadline as :func:`http_download`, and at most ``limit`` bytes of body.
    Raises :class:`SourceFailed` saying why when no answer came.
    """
    import requests

    retryable = _transport_errors()
    errors: list[str] = []
    unreachable = 0  # connection failures in a row
    last_response = None
    with _deadline(settings.download_deadline) as deadline, _session() as session:
        for attempt in range(settings.retries + 1):
            if attempt:
                sleep_s = min(_retry_delay(attempt - 1, last_response), deadline.left())
                time.sleep(sleep_s)
            if deadline.passed():
                raise deadline.failure(0)
            last_response = None
            try:
                response = _get(session, url, {"Accept-Encoding": "identity", **(headers or {})}, settings)
            except requests.exceptions.SSLError as exc:
                raise SourceFailed(f"TLS error: {exc}") from None
            except retryable as exc:
                if deadline.passed():
                    raise deadline.failure(0) from None
                why = _connect_failure(exc)
                unreachable = unreachable + 1 if why else 0
                errors.append(why or type(exc).__name__)
                if unreachable > CONNECT_FAILURE_RETRIES:
                    raise SourceFailed(f"gave up after {len(errors)} attempts: {', '.join(errors)}") from None
                continue
            with response:
                if response.status_code in RETRY_STATUS:
                    errors.append(f"HTTP {response.status_code}")
                    last_response = response
                    continue
                length = _number(response.headers.get("Content-Length"))
                if length is not None and length > limit and not _encoding(response.headers):
                    raise SourceFailed(f"server announces {length} bytes, more than the {limit} allowed{limit_note}")
                body = bytearray()
                try:
                    for chunk in response.raw.stream(CHUNK, decode_content=True):
                        body += chunk
                        if len(body) > limit:
                            raise SourceFailed(f"more than the {limit} bytes allowed{limit_note}; stopped reading")
                except retryable as exc:
                    if deadline.passed():
                        raise deadline.failure(len(body)) from None
                    errors.append(f"{type(exc).__name__} after {len(body)} bytes")
                    continue
                if deadline.passed():
                    raise deadline.failure(len(body))
                return response.status_code, response.headers, bytes(body)
        raise SourceFailed(f"gave up after {settings.retries + 1} attempts: {', '.join(errors)}")
