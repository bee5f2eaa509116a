"""registry.json: validation with clear errors, other locations, build and check."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import gluon_hub
from gluon_hub import IndexFormatError, UnknownNameError, _index

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


@pytest.fixture
def serve_index():
    """Serve a registry index from a real loopback HTTP server; returns its URL."""
    servers = []

    def serve(data: dict) -> str:
        body = json.dumps(data).encode()

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_port}/registry.json"

    yield serve
    for server in servers:
        server.shutdown()
        server.server_close()


def test_index_from_environment_and_from_url(serve_index, monkeypatch, only_fakes):
    monkeypatch.setenv("GLUON_HUB_INDEX", serve_index(GOOD))
    with pytest.raises(gluon_hub.PluginNotInstalledError, match="pip install gluon-geo"):
        gluon_hub.info("satnet")


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


# -- pathological documents: always IndexFormatError, every bad entry listed ------------------
@pytest.mark.parametrize(
    "text, fragment",
    [
        ("[" * 100_000 + "]" * 100_000, "nest more than 32 levels deep"),
        (json.dumps({**GOOD, "models": [{"name": "x", "factory": "a:b", "plugin": "geo",
                                          "kwargs": {"k": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}}]}),
         "nest more than 32 levels deep"),
        ('{"schema": ' + "9" * 5000 + "}", "not usable JSON: .*digits"),
        (json.dumps({**GOOD, "plugins": [{"name": "geo", "version": "1",
                                           "distribution": "gluon-geo; curl evil | sh"}]}),
         "distribution 'gluon-geo; curl evil | sh' is not a valid distribution name"),
        (json.dumps({**GOOD, "plugins": [{**GOOD["plugins"][0], "source": "../../elsewhere"}]}),
         "'source' must be a relative folder"),
    ],
)
def test_pathological_index_is_an_index_format_error(tmp_path, text, fragment):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(IndexFormatError, match=fragment):
        gluon_hub.set_index(str(path))


def test_every_bad_entry_is_listed_at_once():
    data = {**GOOD, "models": [
        {"name": "ok", "factory": "a:b", "plugin": "geo"},
        {"name": "x", "factory": "nocolon", "plugin": "geo"},
        {"name": "y", "factory": "a:b", "plugin": "nope"},
        "not an object",
    ], "losses": {"not": "a list"}}
    with pytest.raises(IndexFormatError) as excinfo:
        _index.parse(json.dumps(data), "many.json")
    message = str(excinfo.value)
    assert "has 4 problems:" in message
    for fragment in ("models[1]: model 'x': factory must be", "models[2] (y): plugin 'nope'",
                     "models[3]: expected an object", "'losses': not a list"):
        assert fragment in message


def test_a_huge_array_of_bad_entries_is_summarised():
    data = {**GOOD, "models": [{"name": "x", "factory": "bad"}] * 200_000}
    with pytest.raises(IndexFormatError) as excinfo:
        _index.parse(json.dumps(data), "huge.json")
    message = str(excinfo.value)
    assert "has 200000 problems" in message and "... and 199980 more" in message
    assert message.count("\n") == _index.MAX_LISTED + 1


def test_cli_with_a_pathological_index_prints_one_error_line(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    result = subprocess.run(
        [sys.executable, "-m", "gluon_hub.cli", "search", "anything"], capture_output=True,
        text=True, env={**os.environ, "GLUON_HUB_INDEX": str(path)}, timeout=120,
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr and "RecursionError" not in result.stderr
    assert result.stderr.startswith(f"gluon-hub: error: registry index {path}")


# -- hints from another index are that index's claim, and never beat what is installed -------
def test_remote_hint_names_the_index_it_came_from(serve_index, monkeypatch, only_fakes):
    url = serve_index(GOOD)
    monkeypatch.setenv("GLUON_HUB_INDEX", url)
    with pytest.raises(gluon_hub.PluginNotInstalledError) as excinfo:
        gluon_hub.load("satnet")
    assert str(excinfo.value) == (
        f"model 'satnet' is provided by the gluon-geo plugin according to the registry index "
        f"{url}; it is not installed; run: pip install gluon-geo"
    )
    [row] = gluon_hub.search("satnet")
    assert (row["index"], row["install"]) == (url, "pip install gluon-geo")


def test_remote_index_never_overrides_an_installed_plugin(serve_index, monkeypatch, fake_dist,
                                                          only_fakes):
    fake_dist("alpha", models=[("alpha_net", "demo")])  # distribution fake-alpha
    url = serve_index({
        **GOOD,
        "plugins": [{"name": "alpha", "distribution": "evil-alpha", "version": "9.9"},
                    {"name": "evil", "distribution": "evil-dist", "version": "1.0"}],
        "models": [{"name": "alpha_net", "factory": "evil.m:net", "plugin": "evil"},
                   {"name": "ghost_net", "factory": "evil.m:net", "plugin": "alpha"}],
    })
    monkeypatch.setenv("GLUON_HUB_INDEX", url)
    assert gluon_hub.info("alpha_net").plugin == "alpha"  # installed wins
    with pytest.raises(UnknownNameError) as excinfo:
        gluon_hub.load("ghost_net")
    message = str(excinfo.value)
    assert not isinstance(excinfo.value, gluon_hub.PluginNotInstalledError)
    assert "pip install" not in message and "evil" not in message
    assert f"the registry index {url} lists it under plugin 'alpha', but the installed " \
           "fake-alpha 1.2.3 does not provide it" in message
    rows = {f"{r['plugin']}/{r['name']}": r for r in gluon_hub.search("net")}
    assert rows["alpha/alpha_net"]["index"] is None
    assert rows["alpha/ghost_net"]["distribution"] == "fake-alpha"  # not the index's claim
    assert (rows["alpha/ghost_net"]["status"], rows["alpha/ghost_net"]["install"]) == (
        "not in installed version", None)
    assert (rows["evil/alpha_net"]["index"], rows["evil/alpha_net"]["install"]) == (
        url, "pip install evil-dist")


def test_cli_search_says_which_index_a_hint_comes_from(serve_index, tmp_path):
    url = serve_index({**GOOD, "models": [{**GOOD["models"][0], "description": "satellite"}]})
    result = subprocess.run(
        [sys.executable, "-m", "gluon_hub.cli", "search", "satellite"], capture_output=True,
        text=True, env={**os.environ, "GLUON_HUB_INDEX": url}, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert f"pip install gluon-geo (per {url})" in result.stdout
