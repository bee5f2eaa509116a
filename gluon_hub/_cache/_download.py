"""Stream one source into a partial file, hashing as the bytes arrive.

HTTP downloads retry with backoff on connection errors, 408, 429 and 5xx, resume with
``Range`` + ``If-Range`` when the server supports it and restart cleanly when it does
not (or when the resource changed). Redirects are followed by hand so that one to a
scheme other than http(s) is refused. Proxies and ``REQUESTS_CA_BUNDLE`` are honoured
through requests' environment settings.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import queue
import random
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Callable
from urllib.parse import unquote, urljoin, urlsplit

from ._config import Settings
from ._errors import DiskFullError
from ._store import meta_path

CHUNK = 1 << 20
#: Chunks received ahead of the writer thread (memory bound: QUEUE_CHUNKS * CHUNK).
QUEUE_CHUNKS = 16
MAX_REDIRECTS = 10
RETRY_STATUS = {408, 429, 500, 502, 503, 504}
MAX_BACKOFF_S = 8.0
MAX_RETRY_AFTER_S = 30.0
_DISK_FULL = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}


class SourceFailed(Exception):
    """This source cannot deliver the file; the caller moves on to the next one."""

    def __init__(self, reason: str, keep_partial: bool = False) -> None:
        super().__init__(reason)
        self.keep_partial = keep_partial


@dataclass
class Result:
    """What a source delivered into the partial file."""

    hash: str
    size: int
    url: str


def local_path(source: str) -> Path | None:
    """The filesystem path of a ``file://`` URL or plain path; None for http(s)."""
    parts = urlsplit(source)
    if parts.scheme in ("http", "https"):
        return None
    if parts.scheme == "file":
        if parts.netloc not in ("", "localhost"):
            raise SourceFailed(f"file URL with a remote host {parts.netloc!r} is not supported")
        return Path(unquote(parts.path))
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

    def __init__(self, part: Path, algorithm: str, limit: int | None, progress: Any) -> None:
        self.part, self.algorithm, self.limit, self.progress = part, algorithm, limit, progress
        self.stream: BinaryIO | None = None
        self.hasher = hashlib.new(algorithm)
        self.size = 0
        self._queue: queue.Queue[bytes | None] = queue.Queue(maxsize=QUEUE_CHUNKS)
        self._worker: threading.Thread | None = None
        self._error: BaseException | None = None

    def _open(self, mode: str) -> None:
        self.close()
        self.stream = open(self.part, mode)
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
        self.hasher = hashlib.new(self.algorithm)
        self._open("wb")
        self.size = 0
        self.progress.reset()

    def resume(self) -> int:
        """Open the existing partial for appending, hashing what it holds; its size."""
        self.close()
        self.hasher = hashlib.new(self.algorithm)
        with open(self.part, "rb") as stream:
            while chunk := stream.read(CHUNK):
                self.hasher.update(chunk)
        self._open("ab")
        self.size = self.part.stat().st_size
        self.progress.reset(self.size)
        return self.size

    def write(self, chunk: bytes) -> None:
        if self.limit is not None and self.size + len(chunk) > self.limit:
            raise SourceFailed(f"more than the expected {self.limit} bytes")
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
        return f"{self.algorithm}:{self.hasher.hexdigest()}"

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


def copy_local(source: Path, part: Path, algorithm: str, limit: int | None, progress: Any) -> Result:
    """Copy a file from a local mirror, hashing as it goes."""
    try:
        reader = open(source, "rb")
    except FileNotFoundError:
        raise SourceFailed("no such file") from None
    except OSError as exc:
        raise SourceFailed(f"cannot read: {exc}") from None
    sink = _Sink(part, algorithm, limit, progress)
    with reader:
        progress.reset(0, os.fstat(reader.fileno()).st_size)
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


def _get(session: Any, url: str, headers: dict[str, str], settings: Settings) -> Any:
    """GET with redirects followed by hand, refusing any that leave http(s)."""
    for _ in range(MAX_REDIRECTS + 1):
        response = session.get(
            url, headers=headers, stream=True, allow_redirects=False,
            timeout=(settings.connect_timeout, settings.read_timeout),
        )
        if not response.is_redirect:
            return response
        target = urljoin(url, response.headers["Location"])
        response.close()
        if urlsplit(target).scheme.lower() not in ("http", "https"):
            raise SourceFailed(f"redirected to {target!r}; only http(s) redirects are followed")
        url = target
    raise SourceFailed(f"more than {MAX_REDIRECTS} redirects")


def _content_range_start(value: str | None) -> int | None:
    # "bytes 100-199/200"
    if not value or not value.startswith("bytes "):
        return None
    start = value[6:].split("-", 1)[0]
    return int(start) if start.isdigit() else None


def _retry_delay(attempt: int, response: Any = None) -> float:
    if response is not None:
        after = response.headers.get("Retry-After", "")
        if after.isdigit():
            return min(float(after), MAX_RETRY_AFTER_S)
    return min(MAX_BACKOFF_S, 0.25 * 2**attempt) * (0.5 + random.random() / 2)


def http_download(
    url: str,
    part: Path,
    algorithm: str,
    settings: Settings,
    limit: int | None,
    progress: Any,
    sleep: Callable[[float], None] = time.sleep,
) -> Result:
    """Download ``url`` into ``part`` (resuming what it holds) and return its hash."""
    import requests

    retryable = (requests.ConnectionError, requests.Timeout, requests.exceptions.ChunkedEncodingError)
    sink = _Sink(part, algorithm, limit, progress)
    meta = _read_meta(part)
    validator = meta.get("etag") or meta.get("last_modified") if meta.get("url") == url else None
    offset = sink.resume() if validator and part.exists() else 0
    if not offset:
        sink.restart()
    errors: list[str] = []
    last_response = None
    with requests.Session() as session:
        try:
            for attempt in range(settings.retries + 1):
                if attempt:
                    sleep(_retry_delay(attempt - 1, last_response))
                last_response = None
                headers = {"Accept-Encoding": "identity"}
                if sink.size and validator:
                    headers["Range"] = f"bytes={sink.size}-"
                    headers["If-Range"] = validator
                try:
                    response = _get(session, url, headers, settings)
                except requests.exceptions.SSLError as exc:
                    raise SourceFailed(f"TLS error: {exc}") from None
                except retryable as exc:
                    errors.append(type(exc).__name__)
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
                    if status == 206 and _content_range_start(
                        response.headers.get("Content-Range")
                    ) == sink.size and "Range" in headers:
                        expected_total = sink.size + int(response.headers.get("Content-Length", -1))
                    elif status == 200:
                        if sink.size:
                            sink.restart()  # no Range support, or the resource changed
                        _write_meta(part, url, response)
                        validator = response.headers.get("ETag") or response.headers.get(
                            "Last-Modified"
                        )
                        length = response.headers.get("Content-Length")
                        expected_total = int(length) if length and length.isdigit() else -1
                    elif status == 206:
                        errors.append("HTTP 206 for a range not asked for")
                        sink.restart()
                        validator = None
                        continue
                    else:
                        raise SourceFailed(f"HTTP {status} {response.reason or ''}".rstrip())
                    if expected_total >= 0 and limit is not None and expected_total > limit:
                        raise SourceFailed(f"server announces {expected_total} bytes, expected {limit}")
                    progress.reset(sink.size, expected_total if expected_total >= 0 else None)
                    try:
                        for chunk in response.iter_content(CHUNK):
                            sink.write(chunk)
                    except retryable as exc:
                        errors.append(f"{type(exc).__name__} after {sink.size} bytes")
                        continue
                    if expected_total >= 0 and sink.size != expected_total:
                        errors.append(f"body ended at {sink.size} of {expected_total} bytes")
                        continue
                    return Result(sink.finish(), sink.size, response.url)
            raise SourceFailed(
                f"gave up after {settings.retries + 1} attempts: {', '.join(errors)}",
                keep_partial=bool(validator),
            )
        finally:
            sink.close()

