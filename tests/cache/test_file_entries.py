"""Word embeddings and vocabularies are hub entries like models and datasets (issue 33, item 3).

A plugin on PYTHONPATH registers one embedding (``gluon_hub_embeddings``) and one vocabulary
(``gluon_hub_vocabularies``); their files, tiny text files generated here, are served from a
loopback mirror. For each kind, ``list``, ``search``, ``info``, ``cache prefetch`` and
``bundle`` find the entry by name, its ``load_*`` function loads it offline once prefetched,
and the offline hint is a command that works when run as printed. No MXNet.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gluon_hub.publishing import serve

from cachetestlib import installed_plugin

PLUGIN = '''
import json
from pathlib import Path

from gluon_hub import EmbeddingSpec, FileRef, VocabularySpec, hookimpl

GLUON_HUB_API = ">=1.2,<2"
REFS = {name: FileRef(**ref) for name, ref in json.loads((Path(__file__).parent / "fileplug.json").read_text()).items()}


def read_table(spec, root=None, lower=False):
    """The file's rows as {word: [floats]}: the plugin's embedding object."""
    from gluon_hub import fetch

    rows = fetch(spec.files[0], root=root).read_text().splitlines()
    return {(w.lower() if lower else w): [float(v) for v in vs]
            for w, *vs in (line.split() for line in rows)}


def read_tokens(spec, root=None):
    """The file's lines as a token list: the plugin's vocabulary object."""
    from gluon_hub import fetch

    return fetch(spec.files[0], root=root).read_text().splitlines()


@hookimpl
def gluon_hub_embeddings():
    return [EmbeddingSpec(name="tiny_vec.3d", factory="fileplug:read_table", family="tiny",
                          dim=3, files=(REFS["tiny_vec.3d"],), description="three words in three dimensions",
                          tags=("glove-like",))]


@hookimpl
def gluon_hub_vocabularies():
    return [VocabularySpec(name="tiny_vocab", factory="fileplug:read_tokens", family="token-lines",
                           tokens=4, files=(REFS["tiny_vocab"],), description="four tokens, one a line",
                           tags=("wordpiece-like",))]
'''

TABLE = {"the": [0.5, -1.25, 2.0], "cat": [1.0, 0.0, -0.5], "sat": [-2.0, 0.25, 0.125]}
TOKENS = ["[PAD]", "[UNK]", "cat", "##s"]


def _load(kind: str, name: str) -> str:
    return f"import gluon_hub, json; print(json.dumps(gluon_hub.load_{kind}({name!r})))"


#: What each kind's entry is: its name, file, listing row, search tag, and what loads it.
KINDS = {
    "embeddings": dict(name="tiny_vec.3d", file="vectors/tiny.txt", noun="embedding",
                       data="".join(f"{w} {' '.join(map(str, v))}\n" for w, v in TABLE.items()),
                       row=r"fileplug/tiny_vec\.3d\s+tiny\s+3\s+55 B\s+three words", tag="glove-like",
                       count="dim", value=3, query="three words", loaded=TABLE, close="tiny_vec.2d",
                       load=_load("embedding", "tiny_vec.3d")),
    "vocabularies": dict(name="tiny_vocab", file="vocab/tiny.txt", noun="vocabulary",
                         data="".join(f"{t}\n" for t in TOKENS),
                         row=r"fileplug/tiny_vocab\s+token-lines\s+4\s+20 B\s+four tokens", tag="wordpiece-like",
                         count="tokens", value=4, query="four tokens", loaded=TOKENS, close="tiny_vocap",
                         load=_load("vocabulary", "tiny_vocab")),
}


@pytest.fixture
def world(tmp_path: Path):
    """The plugin installed on PYTHONPATH, its files on a loopback mirror, and environments:
    offline with an empty cache, and connected to the mirror."""
    mirror = tmp_path / "mirror"
    refs = {}
    for entry in KINDS.values():
        data = entry["data"].encode()
        (mirror / entry["file"]).parent.mkdir(parents=True)
        (mirror / entry["file"]).write_bytes(data)
        refs[entry["name"]] = {"hash": "sha256:" + hashlib.sha256(data).hexdigest(), "size": len(data),
                               "filename": entry["file"]}
    base = installed_plugin(tmp_path, "fileplug", PLUGIN, refs)
    with serve(mirror) as server:
        yield {"offline": dict(base, GLUON_HUB_OFFLINE="1"), "online": dict(base, GLUON_HUB_MIRRORS=server.url),
               "tmp": tmp_path, "refs": refs}


def _run(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(list(args), env=env, capture_output=True, text=True, timeout=300)


def _hub(env: dict, *args: str) -> subprocess.CompletedProcess:
    return _run(env, sys.executable, "-m", "gluon_hub", *args)


def _prefetch(kind: str) -> str:
    return f"gluon-hub cache prefetch --kind {kind} fileplug/{KINDS[kind]['name']}"


@pytest.mark.parametrize("kind", KINDS)
def test_list_search_and_info_find_an_entry_by_name(world, kind):
    env, entry = world["offline"], KINDS[kind]
    listed = _hub(env, "list", "--kind", kind, "--plugin", "fileplug")
    assert listed.returncode == 0, listed.stderr
    assert re.search(entry["row"], listed.stdout), listed.stdout
    assert f"1 {entry['noun']}\n" in listed.stdout
    found = _hub(env, "search", entry["tag"])  # a tag; no --kind: every kind is searched
    assert found.returncode == 0, found.stderr
    assert re.search(rf"fileplug/{re.escape(entry['name'])}\s+{kind}\s+\S+\s+installed", found.stdout), found.stdout
    assert "1 found" in found.stdout
    shown = _hub(env, "info", entry["name"])  # no --kind: the first kind that knows the name
    assert shown.returncode == 0, shown.stderr
    assert f"kind: {entry['noun']}" in shown.stdout and world["refs"][entry["name"]]["hash"] in shown.stdout
    assert f"prefetch: {_prefetch(kind)}" in shown.stdout
    noun = entry["noun"]
    code = (f"import gluon_hub; print(gluon_hub.list_{kind}('tiny*'), gluon_hub.{noun}_info("
            f"{entry['name']!r}).{entry['count']}, [r['name'] for r in gluon_hub.search({entry['query']!r}, "
            f"kind={kind!r})])")
    api = _run(env, sys.executable, "-c", code)
    assert api.stdout.split() == [f"[{entry['name']!r}]", str(entry["value"]), f"[{entry['name']!r}]"], api.stderr


@pytest.mark.parametrize("kind", KINDS)
def test_an_unknown_name_says_so_and_suggests_close_ones(world, kind):
    env, entry = world["offline"], KINDS[kind]
    api = _run(env, sys.executable, "-c", f"import gluon_hub; gluon_hub.load_{entry['noun']}({entry['close']!r})")
    assert (f"UnknownNameError: no {entry['noun']} named {entry['close']!r}; did you mean: {entry['name']}"
            in api.stderr), api.stderr
    cli = _hub(env, "info", entry["close"])
    assert cli.returncode == 1
    assert "nor a dataset, embedding, vocabulary" in cli.stderr, cli.stderr
    assert f"{entry['name']} ({entry['noun']})" in cli.stderr, cli.stderr


@pytest.mark.parametrize("kind", KINDS)
def test_offline_hint_is_a_prefetch_that_works_then_load_is_offline(world, kind):
    entry = KINDS[kind]
    missing = _run(world["offline"], sys.executable, "-c", entry["load"])
    assert missing.returncode == 1, missing.stdout + missing.stderr
    found = re.search(r"on a machine with network access run: (.+?) ; then copy the cache", missing.stderr)
    assert found, missing.stderr
    assert found.group(1) == _prefetch(kind)
    ran = _run(world["online"], "bash", "-c", found.group(1))  # verbatim, as a user would
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "1 files" in ran.stdout
    loaded = _run(world["offline"], sys.executable, "-c", entry["load"])
    assert loaded.returncode == 0, loaded.stderr
    assert json.loads(loaded.stdout) == entry["loaded"]


@pytest.mark.parametrize("kind", KINDS)
def test_prefetch_by_bare_name_and_bundle_carry_an_entry(world, kind):
    entry = KINDS[kind]
    assert _hub(world["online"], "cache", "prefetch", entry["name"]).returncode == 0  # no --kind
    out = world["tmp"] / "entry.tar"
    made = _hub(world["offline"], "bundle", entry["name"], "-o", str(out))
    assert made.returncode == 0, made.stderr
    assert f"{entry['noun']} fileplug/{entry['name']}" in made.stdout and "tiny.txt" in made.stdout
    elsewhere = dict(world["offline"], GLUON_HUB_HOME=str(world["tmp"] / "elsewhere"))
    assert _run(elsewhere, sys.executable, "-c", entry["load"]).returncode == 1  # an empty cache there
    imported = _hub(elsewhere, "import", str(out))
    assert imported.returncode == 0, imported.stderr
    loaded = _run(elsewhere, sys.executable, "-c", entry["load"])
    assert loaded.returncode == 0, loaded.stderr
    assert json.loads(loaded.stdout) == entry["loaded"]
    assert not (world["tmp"] / "elsewhere" / "imported-weights.json").exists()  # no model name recorded
