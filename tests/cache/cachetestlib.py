"""Test helpers of the cache tests: a loopback HTTP server with scripted faults, and more.

Imported by module name (the cache tests' conftest puts this folder on ``sys.path``);
the name is unusual so that it cannot clash with another test folder's helpers.
"""

from __future__ import annotations

import gzip
import hashlib
import http.server
import socket
import ssl
import struct
import subprocess
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
    #: How the body's length is told, per status: "omit" (the body ends when the connection
    #: closes), "chunked", or a literal Content-Length value; the true length otherwise.
    length: dict[int, str] = field(default_factory=dict)
    gzip: bool = False  # sent with Content-Encoding: gzip whatever the request asked
    content_type: str | None = None


@dataclass
class Request:
    path: str
    range: str | None
    if_range: str | None
    status: int = 0
    body: int = 0  # bytes of body sent


class Server:
    """A threaded http.server that counts connections and requests and plays faults from a plan.

    With ``tls=(certfile, keyfile)`` it serves https.
    """

    def __init__(self, tls: tuple[Path, Path] | None = None) -> None:
        self.files: dict[str, Served] = {}
        self.log: list[Request] = []
        self.connections = 0
        self.lock = threading.Lock()
        handler = type("Handler", (_Handler,), {"server_state": self})
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.scheme = "http"
        if tls is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*tls)
            self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
            self.scheme = "https"
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.httpd.server_address[1]}/"

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

    def setup(self) -> None:
        with self.server_state.lock:
            self.server_state.connections += 1
        super().setup()

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
        if kind == "driphead":  # a status line, then a header one byte at a time
            return self._drip_headers(record)
        data = served.data if kind != "wrong" else bytes(b ^ 0xFF for b in served.data)
        if served.gzip:
            data = gzip.compress(data, mtime=0)
        etag = '"%s"' % hashlib.sha1(data).hexdigest()[:16]
        if served.etag and self.headers.get("If-None-Match") == etag:
            return self._status(record, 304)
        start = 0
        wanted = record.range
        if (
            wanted and served.ranges and kind != "norange"
            and (record.if_range is None or record.if_range == etag)
        ):
            start = int(wanted.split("=", 1)[1].split("-", 1)[0])
        body = data[start:]
        record.status = 206 if start else 200
        length = served.length.get(record.status)
        if length == "chunked":
            self.protocol_version = "HTTP/1.1"
            self.close_connection = True
        self.send_response(record.status)
        if length is None:
            self.send_header("Content-Length", str(len(body)))
        elif length == "chunked":
            self.send_header("Transfer-Encoding", "chunked")
        elif length != "omit":
            self.send_header("Content-Length", length)
        if served.gzip:
            self.send_header("Content-Encoding", "gzip")
        if served.content_type:
            self.send_header("Content-Type", served.content_type)
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
                piece = body[offset : offset + step]
                if length == "chunked":
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                else:
                    self.wfile.write(piece)
                self.wfile.flush()
                record.body += len(piece)
                if pause:
                    time.sleep(pause)
            if length == "chunked":
                self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass
        if length in ("omit", "chunked"):
            self.close_connection = True

    def _drip_headers(self, record: Request) -> None:
        record.status = 200
        try:
            self.wfile.write(b"HTTP/1.0 200 OK\r\nX-Drip: ")
            for _ in range(1200):  # a minute at most
                self.wfile.write(b"a")
                self.wfile.flush()
                record.body += 1  # counts header bytes here
                time.sleep(0.05)
        except (BrokenPipeError, ConnectionResetError):
            pass
        self.close_connection = True

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


def self_signed_cert(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key, made with the openssl command."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True,
    )
    return cert, key


def visible_files(home: Path) -> list[Path]:
    """Every file under a final (non-hidden) name in the cache's file store."""
    files = home / "files"
    return [p for p in files.rglob("*") if p.is_file() and not p.name.startswith(".")] if files.exists() else []


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


def installed_plugin(tmp_path: Path, name: str, source: str, data: object) -> dict[str, str]:
    """Plugin module ``name`` (``source``, reading ``name.json`` beside it, holding ``data``)
    installed as distribution ``name``-1.0 with its entry point in a ``PYTHONPATH`` folder, and
    the environment of a shell that sees it: a cache under ``tmp_path``, no config, no proxy
    for the loopback mirrors, this Python first on ``PATH``."""
    import json
    import os
    import textwrap

    site = tmp_path / "site"
    site.mkdir()
    (site / f"{name}.json").write_text(json.dumps(data))
    (site / f"{name}.py").write_text(textwrap.dedent(source))
    info = site / f"{name}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n"
                                   "Requires-Dist: gluon-hub~=0.1\n")
    (info / "entry_points.txt").write_text(f"[gluon_hub]\n{name} = {name}\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GLUON_HUB_")}
    env.update(PYTHONPATH=str(site), GLUON_HUB_HOME=str(tmp_path / "home"), GLUON_HUB_PROGRESS="0",
               GLUON_HUB_CONFIG=str(tmp_path / "no-config.json"), NO_PROXY="127.0.0.1",
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    return env
