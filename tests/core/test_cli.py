"""The gluon-hub command line, run as users run it: a subprocess with real plugins."""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HELPERS = Path(__file__).parent / "helpers"


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "gluon_hub.cli", *args],
        capture_output=True, text=True, env=full_env, timeout=120,
    )


def test_plugins_lists_the_first_party_plugins():
    result = run("plugins", "--json")
    assert result.returncode == 0, result.stderr
    infos = {p["name"]: p for p in json.loads(result.stdout)}
    assert {"hub", "cv", "nlp", "contrib"} <= set(infos)
    assert infos["cv"]["distribution"] == "gluon-cv-core"


def test_list_json_is_parseable_and_filtered():
    result = run("list", "*", "--json")
    assert result.returncode == 0, result.stderr
    specs = json.loads(result.stdout)
    assert specs and all({"name", "factory", "plugin"} <= set(s) for s in specs)


def test_unknown_model_exits_1_with_the_error_on_stderr():
    result = run("info", "no_such_model_anywhere")
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.startswith("gluon-hub: error: no model named 'no_such_model_anywhere'")


def test_bad_usage_exits_2():
    assert run("list", "--kind", "nonsense").returncode == 2
    assert run().returncode == 2


def test_search_shows_install_hint_for_uninstalled_plugins(tmp_path):
    index = {
        "schema": "gluon-hub-registry/1", "hub_api": "1.0",
        "plugins": [{"name": "geo", "distribution": "gluon-geo", "version": "0.3.0"}],
        "models": [{"name": "satnet", "factory": "gluon_geo.m:satnet", "plugin": "geo",
                    "task": "segmentation", "description": "satellite segmentation"}],
    }
    path = tmp_path / "index.json"
    path.write_text(json.dumps(index))
    result = run("search", "satellite", env={"GLUON_HUB_INDEX": str(path)})
    assert result.returncode == 0, result.stderr
    assert "geo/satnet" in result.stdout and "pip install gluon-geo" in result.stdout


def test_bad_index_from_environment_is_reported(tmp_path):
    path = tmp_path / "index.json"
    path.write_text("{broken")
    result = run("search", "x", env={"GLUON_HUB_INDEX": str(path)})
    assert result.returncode == 1
    assert "not valid JSON" in result.stderr


def test_registry_check_fails_on_a_stale_copy(tmp_path):
    stale = tmp_path / "registry.json"
    stale.write_text(json.dumps({"schema": "gluon-hub-registry/1", "plugins": []}))
    result = run("registry", "check", "--path", str(stale))
    assert result.returncode == 1
    assert "is stale; run 'gluon-hub registry build'" in result.stderr
    built = run("registry", "build", "--path", str(stale))
    assert built.returncode == 0, built.stderr
    assert run("registry", "check", "--path", str(stale)).returncode == 0


@pytest.mark.parametrize("disable", ["GLUON_HUB_DISABLE_PLUGIN_AUTOLOAD"])
def test_cli_honours_autoload_off(disable):
    result = run("plugins", "--json", env={disable: "1"})
    assert json.loads(result.stdout) == []


def test_plugin_warnings_are_one_plain_line():
    result = run("list", "--json", env={"GLUON_HUB_DISABLE_PLUGINS": "contrib"})
    version = importlib.metadata.version("gluon-contrib")
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == [
        f"gluon-hub: warning: plugin 'contrib' (distribution gluon-contrib {version}) is disabled by "
        "GLUON_HUB_DISABLE_PLUGINS; its names are unavailable until it is removed from that variable"
    ]


def test_a_reader_that_goes_away_is_not_an_error():
    """``gluon-hub list --json | head -1``: the pipe closes early, the command exits 0."""
    reader = "import subprocess, sys; p = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE);" \
             " p.stdout.readline(); p.stdout.close(); sys.exit(p.wait())"
    result = subprocess.run(
        [sys.executable, "-c", reader, sys.executable, "-m", "gluon_hub.cli", "list", "*", "--json"],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "Broken pipe" not in result.stderr and "Traceback" not in result.stderr


def test_registry_build_without_a_first_party_plugin_is_one_error_line(tmp_path):
    result = run("registry", "build", "--path", str(tmp_path / "r.json"),
                 env={"GLUON_HUB_DISABLE_PLUGINS": "nlp"})
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("gluon-hub: error: first-party plugins not loaded: gluon-nlp-core")
    assert not (tmp_path / "r.json").exists()


# -- commands plugins add (issue 13.8) ------------------------------------------------


def test_help_lists_the_commands_plugins_add_with_their_plugin():
    result = run("--help")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    start = lines.index("commands added by plugins ('gluon-hub COMMAND --help' for each):")
    added = {line.split()[0]: line for line in lines[start + 1:] if line.startswith("  ")}
    assert added["predict"].endswith("(plugin cv)")
    assert added["translate"].endswith("(plugin contrib)")


def test_plugins_shows_the_commands_of_each_plugin():
    infos = {p["name"]: p for p in json.loads(run("plugins", "--json").stdout)}
    assert infos["cv"]["commands"] == ["predict"]
    assert infos["contrib"]["commands"] == ["translate"]
    assert infos["nlp"]["commands"] == ["translate-text"]
    table = run("plugins").stdout.splitlines()
    assert "COMMANDS" in table[0].split()
    cv_row = next(line for line in table if line.startswith("cv "))
    assert "predict" in cv_row.split()


# -- errors and bugs (issue 13.9) -----------------------------------------------------

RAISING_COMMAND = '''
from gluon_hub import hookimpl, CommandSpec

GLUON_HUB_API = ">=1,<2"

@hookimpl
def gluon_hub_commands():
    return [CommandSpec(name="explode", factory=__name__ + ":main", description="raises")]

def main(argv):
    return {}["no such key"] if argv == ["key"] else 1 / 0
'''


def test_a_bug_is_shown_with_its_traceback_never_as_a_user_error(fake_dist, tmp_path):
    fake_dist("boom", RAISING_COMMAND)
    result = run("explode", env={"PYTHONPATH": str(tmp_path / "site")})
    assert result.returncode == 1
    assert "Traceback (most recent call last)" in result.stderr
    assert "ZeroDivisionError: division by zero" in result.stderr
    assert "internal error" in result.stderr and "is a bug" in result.stderr
    assert "gluon-hub: error:" not in result.stderr


def test_the_hubs_own_errors_stay_one_line_and_debug_shows_the_traceback():
    plain = run("info", "no_such_model_anywhere")
    assert plain.returncode == 1 and len(plain.stderr.strip().splitlines()) == 1
    assert "Traceback" not in plain.stderr
    for result in (run("--debug", "info", "no_such_model_anywhere"),
                   run("info", "no_such_model_anywhere", env={"GLUON_HUB_DEBUG": "1"})):
        assert result.returncode == 1
        assert "Traceback (most recent call last)" in result.stderr
        assert "UnknownNameError" in result.stderr
        assert result.stderr.strip().splitlines()[-1].startswith("gluon-hub: error: no model named")
    assert "--debug" in run("--help").stdout


# -- small truths in output (issue 13.10) ---------------------------------------------

SMALL_MODEL = '''
from gluon_hub import hookimpl, ModelSpec, WeightVariant, FileRef, Metric

GLUON_HUB_API = ">=1,<2"
FILE = FileRef(hash="sha256:" + "0" * 64, urls=("https://example.org/tiny.params",))

@hookimpl
def gluon_hub_models():
    return [ModelSpec(name="tiny_counted", factory="tests_core_models:dense_net", task="demo",
                      description="tiny", num_params=676,
                      weights=(WeightVariant(tag="t", file=FILE,
                                             metrics=(Metric("accuracy", 0.9731, "digits", "test"),)),))]
'''


def test_list_prints_readable_counts_accuracy_in_percent_and_singulars(fake_dist, tmp_path):
    fake_dist("tiny", SMALL_MODEL)
    result = run("list", "tiny_counted", env={"PYTHONPATH": str(tmp_path / "site")})
    assert result.returncode == 0, result.stderr
    header, _, row, _, total = result.stdout.splitlines()
    assert header.split() == ["NAME", "TASK", "PARAMS", "TOP-1", "%", "WEIGHTS"]
    assert row.split() == ["tiny/tiny_counted", "demo", "676", "97.31", "t"]
    assert total == "1 model"
    resnet = run("list", "resnet18_v1").stdout.splitlines()[2].split()
    assert resnet[2:4] == ["11.7M", "70.93"]  # GluonCV reports percent already
    assert run("list", "--kind", "losses").stdout.splitlines()[-1].endswith(" losses")


# -- predict downloads only when asked (issue 13.7) ---------------------------------


@pytest.fixture
def counting_mirror(tmp_path):
    """A real HTTP mirror on loopback with nothing in it, counting the requests it gets."""
    import functools
    import http.server
    import threading

    requests: list[str] = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def do_GET(self):
            requests.append(self.path)
            super().do_GET()

        def log_message(self, *args):
            pass

    (tmp_path / "mirror").mkdir()
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Handler, directory=str(tmp_path / "mirror")))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/", requests
    server.shutdown()
    server.server_close()


@pytest.mark.mxnet
def test_predict_never_downloads_unless_asked(tmp_path, counting_mirror):
    from PIL import Image

    url, requests = counting_mirror
    image = tmp_path / "photo.png"
    Image.new("RGB", (40, 30), (200, 30, 30)).save(image)
    env = {"GLUON_HUB_HOME": str(tmp_path / "cache"), "GLUON_HUB_MIRRORS": url}
    default = run("predict", "resnet18_v1", str(image), env=env)
    assert default.returncode == 1
    assert "downloads only when asked: pass --pretrained to download" in default.stderr
    assert "--random-weights" in default.stderr and "Traceback" not in default.stderr
    random = run("predict", "resnet18_v1", str(image), "--random-weights", "-k", "2", env=env)
    assert random.returncode == 0, random.stderr
    assert "weights are RANDOM" in random.stderr
    assert len(random.stdout.splitlines()) == 3  # the path, then the top 2
    assert requests == []
    asked = run("predict", "resnet18_v1", str(image), "--pretrained", env=env)
    assert asked.returncode == 1  # the mirror is empty, but this time it was asked
    assert requests and "resnet18_v1" in requests[0]
    helptext = run("predict", "--help").stdout
    assert "Without any weights option" in helptext and "nothing is downloaded" in helptext



@pytest.mark.mxnet
def test_translate_text_never_downloads_unless_asked(tmp_path, counting_mirror):
    url, requests = counting_mirror
    env = {"GLUON_HUB_HOME": str(tmp_path / "cache"), "GLUON_HUB_MIRRORS": url}
    default = run("translate-text", "transformer_en_de_512", "Gut@@ en Morgen", env=env)
    assert default.returncode == 1
    assert "downloads only when asked: pass --pretrained to download" in default.stderr
    assert "Traceback" not in default.stderr and requests == []
    asked = run("translate-text", "transformer_en_de_512", "Gut@@ en Morgen", "--pretrained", env=env)
    assert asked.returncode == 1  # the mirror is empty, but this time it was asked
    assert requests

# -- check-plugin and publish (issue 13.11) -------------------------------------------

CLASHING = '''
from gluon_hub import hookimpl, ModelSpec, InputSpec

GLUON_HUB_API = ">=1,<2"

@hookimpl
def gluon_hub_models():
    return [ModelSpec(name="resnet50_v1d", factory="tests_core_models:dense_net", task="demo",
                      description="mine", license="MIT", paper="https://example.org/p",
                      input=InputSpec(shape=(4,), layout="NC"), output_shape=(3,), num_params=35)]
'''

TYPO_HOOK = '''
from gluon_hub import hookimpl

GLUON_HUB_API = ">=1,<2"

@hookimpl
def gluon_hub_modelz():
    return []
'''

NO_URL = '''
from gluon_hub import hookimpl, ModelSpec, InputSpec, WeightVariant, FileRef

GLUON_HUB_API = ">=1,<2"

@hookimpl
def gluon_hub_models():
    ref = FileRef(hash="sha256:" + "1" * 64, size=10, filename="mine-111111111111.params")
    return [ModelSpec(name="nourl_net", factory="tests_core_models:dense_net", task="demo",
                      description="mine", license="MIT", paper="https://example.org/p",
                      input=InputSpec(shape=(4,), layout="NC"), output_shape=(3,), num_params=35,
                      weights=(WeightVariant(tag="default", file=ref),))]
'''


@pytest.mark.parametrize("body, words", [
    (CLASHING, "gives the name 'resnet50_v1d' to gluon-cv-core"),
    (TYPO_HOOK, "gluon_hub_modelz"),
    (NO_URL, "has no URL, so it would be looked for on the default public mirror"),
])
def test_check_plugin_fails_on_what_would_break_users(fake_dist, tmp_path, body, words):
    fake_dist("authored", body, distribution="authored-plugin")
    result = run("check-plugin", "authored-plugin", "--no-build",
                 env={"PYTHONPATH": str(tmp_path / "site")})
    assert result.returncode == 1, result.stdout + result.stderr
    assert words in result.stdout + result.stderr
    assert "does NOT conform" in result.stdout or "error:" in result.stderr


@pytest.mark.mxnet
def test_publish_without_a_base_url_says_where_users_will_not_find_the_file(tmp_path):
    from gluon_hub.compat import mx

    params = tmp_path / "net.params"
    mx.nd.save(str(params), {"weight": mx.nd.ones((2, 2))})
    result = run("publish", str(params), "--name", "my_net", "--out", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    assert "no --base-url: the entry has a file name but no URL" in result.stderr
    assert json.loads(result.stdout)["file"]["urls"] == []
    with_url = run("publish", str(params), "--name", "my_net", "--out", str(tmp_path / "out"),
                   "--base-url", "https://example.org/w")
    assert "no --base-url" not in with_url.stderr
    assert json.loads(with_url.stdout)["file"]["urls"][0].startswith("https://example.org/w/")
