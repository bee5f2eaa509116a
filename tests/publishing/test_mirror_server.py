"""The mirror server over real loopback sockets: ranges, validators, and no way out of DIR."""

from __future__ import annotations

import http.client
import os
import signal
import subprocess
import sys
import urllib.request

import pytest

from gluon_hub.publishing import serve

PAYLOAD = bytes(range(256)) * 40  # 10240 bytes, every offset distinguishable


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory):
    """A mirror folder, with a secret beside it that must never be served."""
    tmp_path = tmp_path_factory.mktemp("site")
    root = tmp_path / "mirror"
    (root / "sub").mkdir(parents=True)
    (root / "model-abc.params").write_bytes(PAYLOAD)
    (root / "sub" / "weights.json").write_text('{"schema": "x"}')
    (root / ".hidden").write_text("hidden")
    (tmp_path / "secret.txt").write_text("secret")
    (root / "leak.txt").symlink_to(tmp_path / "secret.txt")
    with serve(root) as server:
        yield server


def request(server, method: str, path: str, headers: dict | None = None):
    """Send ``path`` exactly as given (no client-side normalisation of '..')."""
    host, port = server.server_address[:2]
    conn = http.client.HTTPConnection(host, port, timeout=10)
    try:
        conn.request(method, path, headers=headers or {})
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()


def test_get_and_head(site):
    assert site.url.startswith("http://127.0.0.1:") and site.url.endswith("/")
    with urllib.request.urlopen(site.url + "model-abc.params") as response:
        assert response.read() == PAYLOAD
    status, headers, body = request(site, "HEAD", "/model-abc.params")
    assert (status, headers["Content-Length"], body) == (200, str(len(PAYLOAD)), b"")
    assert headers["Accept-Ranges"] == "bytes" and headers["ETag"] and headers["Last-Modified"]
    assert request(site, "GET", "/sub/weights.json?x=1")[2] == b'{"schema": "x"}'


@pytest.mark.parametrize("header, start, end", [
    ("bytes=100-199", 100, 199),
    ("bytes=10000-", 10000, len(PAYLOAD) - 1),
    ("bytes=-40", len(PAYLOAD) - 40, len(PAYLOAD) - 1),
    ("bytes=10200-99999", 10200, len(PAYLOAD) - 1),
])
def test_range_requests_get_206(site, header, start, end):
    status, headers, body = request(site, "GET", "/model-abc.params", {"Range": header})
    assert status == 206
    assert headers["Content-Range"] == f"bytes {start}-{end}/{len(PAYLOAD)}"
    assert body == PAYLOAD[start:end + 1]


def test_unsatisfiable_stale_and_conditional_requests(site):
    status, headers, _ = request(site, "GET", "/model-abc.params", {"Range": "bytes=20000-"})
    assert (status, headers["Content-Range"]) == (416, f"bytes */{len(PAYLOAD)}")
    etag = request(site, "HEAD", "/model-abc.params")[1]["ETag"]
    assert request(site, "GET", "/model-abc.params", {"If-None-Match": etag})[0] == 304
    # A resume against a file that changed since (If-Range no longer matches) gets it whole.
    status, _, body = request(site, "GET", "/model-abc.params",
                              {"Range": "bytes=5-", "If-Range": '"stale"'})
    assert (status, body) == (200, PAYLOAD)
    status, _, body = request(site, "GET", "/model-abc.params", {"Range": "bytes=5-", "If-Range": etag})
    assert (status, body) == (206, PAYLOAD[5:])


@pytest.mark.parametrize("path", [
    "/../secret.txt", "/%2e%2e/secret.txt", "/sub/../../secret.txt", "/sub/%2E%2E/%2e%2e/secret.txt",
    "/..%2fsecret.txt", "/sub%2f..%2f..%2fsecret.txt", "//etc/passwd", "/%2fetc%2fpasswd",
    "/..\\secret.txt", "/leak.txt", "/.hidden", "/", "/sub/", "/sub", "/missing.params",
])
def test_nothing_outside_the_files_is_served(site, path):
    status, _, body = request(site, "GET", path)
    assert status in (403, 404), (path, status)
    assert b"secret" not in body and b"root:" not in body


def test_cli_serve_prints_its_url_first_and_stops_cleanly(tmp_path):
    (tmp_path / "f.bin").write_bytes(b"mirror bytes")
    env = {**os.environ, "GLUON_HUB_DISABLE_PLUGIN_AUTOLOAD": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "gluon_hub.cli", "serve", str(tmp_path), "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        # as from a terminal: a run started in the background (`cmd &` in a script) inherits
        # SIGINT ignored, and Python then keeps ignoring Ctrl-C
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        first = proc.stdout.readline().strip()
        assert first.startswith(f"Serving {tmp_path.resolve()} at http://127.0.0.1:"), first
        url = first.rsplit(" at ", 1)[1]
        with urllib.request.urlopen(url + "f.bin", timeout=10) as response:
            assert response.read() == b"mirror bytes"
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=20) == 0
        assert "stopped" in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_serving_a_missing_directory_is_an_error(tmp_path):
    with pytest.raises(NotADirectoryError, match="not a directory"):
        serve(tmp_path / "nope")
