"""Test helpers of the cache tests: a loopback HTTP server with scripted faults, and more.

Imported by module name (the cache tests' conftest puts this folder on ``sys.path``);
the name is unusual so that it cannot clash with another test folder's helpers.
"""

from __future__ import annotations

import hashlib
import http.server
import socket
import struct
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from gluon_hub import FileRef


@dataclass
class Served:
    data: bytes
    plan: list[str] = field(default_factory=list)  # one fault per request, then normal
    ranges: bool = True
    etag: bool = True
    delay: float = 0.0  # before the body of every response
    throttle: tuple[int, float] | None = None  # (bytes per write, seconds between)


@dataclass
class Request:
    path: str
    range: str | None
    if_range: str | None
    status: int = 0
    body: int = 0  # bytes of body sent


class Server:
    """A threaded http.server that counts requests and plays faults from a plan."""

    def __init__(self) -> None:
        self.files: dict[str, Served] = {}
        self.log: list[Request] = []
        self.lock = threading.Lock()
        handler = type("Handler", (_Handler,), {"server_state": self})
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/"

    def add(self, path: str, data: bytes, **options) -> str:
        self.files["/" + path.lstrip("/")] = Served(data, **options)
        return self.url + path.lstrip("/")

    def requests(self, path: str | None = None) -> list[Request]:
        with self.lock:
            return [r for r in self.log if path is None or r.path == "/" + path.lstrip("/")]

    def body_requests(self, path: str | None = None) -> int:
        return sum(1 for r in self.requests(path) if r.body > 0)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class _Handler(http.server.BaseHTTPRequestHandler):
    server_state: Server

    def log_message(self, *args) -> None:  # keep test output clean
        pass

    def do_GET(self) -> None:  # noqa: N802
        state = self.server_state
        record = Request(self.path, self.headers.get("Range"), self.headers.get("If-Range"))
        with state.lock:
            state.log.append(record)
            served = state.files.get(self.path)
            action = served.plan.pop(0) if served and served.plan else "ok"
        if served is None:
            return self._status(record, 404)
        kind, _, arg = action.partition(":")
        if kind == "status":  # "status:429" or, with a Retry-After header, "status:429:1"
            code, _, retry_after = arg.partition(":")
            return self._status(record, int(code), retry_after)
        if kind == "redirect":
            record.status = 302
            self.send_response(302)
            self.send_header("Location", arg)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if kind == "slow":
            time.sleep(float(arg))
        data = served.data if kind != "wrong" else bytes(b ^ 0xFF for b in served.data)
        etag = '"%s"' % hashlib.sha1(data).hexdigest()[:16]
        start = 0
        wanted = record.range
        if (
            wanted and served.ranges and kind != "norange"
            and (record.if_range is None or record.if_range == etag)
        ):
            start = int(wanted.split("=", 1)[1].split("-", 1)[0])
        body = data[start:]
        record.status = 206 if start else 200
        self.send_response(record.status)
        self.send_header("Content-Length", str(len(body)))
        if served.ranges:
            self.send_header("Accept-Ranges", "bytes")
        if served.etag:
            self.send_header("ETag", etag)
        if start:
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        self.end_headers()
        if served.delay:
            time.sleep(served.delay)
        if kind in ("drop", "short"):
            half = body[: len(body) // 2]
            self.wfile.write(half)
            self.wfile.flush()
            record.body = len(half)
            if kind == "drop":  # an abrupt reset rather than a clean close
                time.sleep(0.3)  # let the client read what was sent; a reset discards it
                self.connection.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                )
            self.close_connection = True
            return
        step, pause = served.throttle or (len(body) or 1, 0.0)
        try:
            for offset in range(0, len(body), step):
                self.wfile.write(body[offset : offset + step])
                record.body += len(body[offset : offset + step])
                if pause:
                    time.sleep(pause)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _status(self, record: Request, status: int, retry_after: str = "") -> None:
        record.status = status
        self.send_response(status)
        if retry_after:
            self.send_header("Retry-After", retry_after)
        self.send_header("Content-Length", "0")
        self.end_headers()


def sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def ref_for(data: bytes, filename: str = "files/blob.bin", **kw) -> FileRef:
    return FileRef(hash=sha256(data), size=len(data), filename=filename, **kw)


def temp_leftovers(home: Path) -> list[Path]:
    """Partial downloads and temp files anywhere in the cache."""
    return [p for p in home.rglob(".*") if p.name.endswith((".part", ".tmp", ".part.json"))]


def run_python(code: str, env: dict[str, str], args: list[str] = (), timeout: float = 60):
    """Run ``code`` with ``args`` in a fresh interpreter of this venv."""
    import subprocess

    return subprocess.run(
        [sys.executable, "-c", code, *args], env=env, capture_output=True, text=True,
        timeout=timeout,
    )


def tiny_net(units: int = 3):
    """A two-layer network for the end-to-end test (factory ``cachetestlib:tiny_net``)."""
    from gluon_hub.compat import mx

    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Dense(4, activation="relu", in_units=5))
    net.add(mx.gluon.nn.Dense(units, in_units=4))
    return net
