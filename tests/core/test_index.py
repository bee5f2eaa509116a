"""registry.json: validation with clear errors, other locations, build and check."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import gluon_hub
from gluon_hub import IndexFormatError
from gluon_hub import _index

GOOD = {
    "schema": "gluon-hub-registry/1",
    "hub_api": "1.0",
    "plugins": [{"name": "geo", "distribution": "gluon-geo", "version": "0.3.0"}],
    "models": [{"name": "satnet", "factory": "gluon_geo.m:satnet", "plugin": "geo"}],
}


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("{not json", "not valid JSON: .* line 1, column 2"),
        ("[]", "top level: expected an object"),
        (json.dumps({**GOOD, "schema": "other/9"}), "'schema': is 'other/9'"),
        (json.dumps({**GOOD, "plugins": [{"name": "geo"}]}), r"plugins\[0\]: needs string fields"),
        (json.dumps({**GOOD, "models": [{"name": "x", "factory": "nocolon", "plugin": "geo"}]}),
         r"models\[0\]: .*'package.module:attribute'"),
        (json.dumps({**GOOD, "models": [{"name": "x", "factory": "a:b", "plugin": "geo", "colour": 1}]}),
         r"unknown fields \['colour'\]"),
        (json.dumps({**GOOD, "models": [{"name": "x", "factory": "a:b", "plugin": "nope"}]}),
         "plugin 'nope' is not in 'plugins'"),
    ],
)
def test_bad_index_gets_an_error_saying_where(tmp_path, text, fragment):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(IndexFormatError, match=fragment):
        gluon_hub.set_index(str(path))


def test_missing_index_file_is_a_clear_error(tmp_path):
    with pytest.raises(IndexFormatError, match="could not read registry index"):
        gluon_hub.set_index(str(tmp_path / "absent.json"))


def test_index_from_environment_and_from_url(tmp_path, monkeypatch, only_fakes):
    body = json.dumps(GOOD).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        monkeypatch.setenv("GLUON_HUB_INDEX", f"http://127.0.0.1:{server.server_port}/registry.json")
        with pytest.raises(gluon_hub.PluginNotInstalledError, match="pip install gluon-geo"):
            gluon_hub.info("satnet")
    finally:
        server.shutdown()
        server.server_close()


def test_packaged_index_is_valid_and_names_the_first_party_plugins():
    index = _index.read()
    distributions = {p["distribution"] for p in index.data["plugins"]}
    assert distributions == set(_index.FIRST_PARTY)


def test_build_is_deterministic_and_round_trips(fake_dist, only_fakes):
    fake_dist("alpha", distribution="gluon-contrib")  # pose as a first-party plugin
    infos = gluon_hub.plugins()
    specs = {"models": list(gluon_hub._hub.get_hub().catalog("models"))}
    text = _index.build(infos, specs)
    assert text == _index.build(infos, specs)
    index = _index.parse(text, "built")
    assert index.lookup("models", "ALPHA_NET") == {"plugin": "alpha", "distribution": "gluon-contrib"}
