"""Word embeddings are hub entries like models and datasets (issue 33, item 3).

A plugin on PYTHONPATH registers one embedding through ``gluon_hub_embeddings``; its file, a
tiny text table generated here, is served from a loopback mirror. ``list``, ``search``,
``info``, ``cache prefetch`` and ``bundle`` find it by name, ``load_embedding`` loads it offline
once prefetched, and the offline hint is a command that works when run as printed. No MXNet.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gluon_hub.publishing import serve

PLUGIN = '''
import json
from pathlib import Path

from gluon_hub import EmbeddingSpec, FileRef, hookimpl

GLUON_HUB_API = ">=1.1,<2"
REF = FileRef(**json.loads((Path(__file__).parent / "embplug.json").read_text()))


def read_table(spec, root=None, lower=False):
    """The file's rows as {word: [floats]}: the plugin's embedding object."""
    from gluon_hub import fetch

    rows = fetch(spec.files[0], root=root).read_text().splitlines()
    return {(w.lower() if lower else w): [float(v) for v in vs]
            for w, *vs in (line.split() for line in rows)}


@hookimpl
def gluon_hub_embeddings():
    return [EmbeddingSpec(name="tiny_vec.3d", factory="embplug:read_table", family="tiny",
                          dim=3, files=(REF,), description="three words in three dimensions",
                          tags=("glove-like",))]
'''

TABLE = {"the": [0.5, -1.25, 2.0], "cat": [1.0, 0.0, -0.5], "sat": [-2.0, 0.25, 0.125]}
NAME, QUALIFIED = "tiny_vec.3d", "embplug/tiny_vec.3d"
PREFETCH = f"gluon-hub cache prefetch --kind embeddings {QUALIFIED}"
LOAD = f"import gluon_hub, json; print(json.dumps(gluon_hub.load_embedding({NAME!r})))"


@pytest.fixture
def world(tmp_path: Path):
    """The plugin installed on PYTHONPATH, its file on a loopback mirror, and environments:
    offline with an empty cache, and connected to the mirror."""
    site, mirror = tmp_path / "site", tmp_path / "mirror" / "vectors"
    site.mkdir(), mirror.mkdir(parents=True)
    data = "".join(f"{w} {' '.join(map(str, v))}\n" for w, v in TABLE.items()).encode()
    (mirror / "tiny.txt").write_bytes(data)
    ref = {"hash": "sha256:" + hashlib.sha256(data).hexdigest(), "size": len(data), "filename": "vectors/tiny.txt"}
    (site / "embplug.json").write_text(json.dumps(ref))
    (site / "embplug.py").write_text(textwrap.dedent(PLUGIN))
    info = site / "emb_plug-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: emb-plug\nVersion: 1.0\n"
                                   "Requires-Dist: gluon-hub~=0.1\n")
    (info / "entry_points.txt").write_text("[gluon_hub]\nembplug = embplug\n")
    base = {k: v for k, v in os.environ.items() if not k.startswith("GLUON_HUB_")}
    base.update(PYTHONPATH=str(site), GLUON_HUB_HOME=str(tmp_path / "home"), GLUON_HUB_PROGRESS="0",
                GLUON_HUB_CONFIG=str(tmp_path / "no-config.json"), NO_PROXY="127.0.0.1",
                PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    with serve(tmp_path / "mirror") as server:
        yield {"offline": dict(base, GLUON_HUB_OFFLINE="1"), "online": dict(base, GLUON_HUB_MIRRORS=server.url),
               "tmp": tmp_path, "ref": ref}


def _run(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(list(args), env=env, capture_output=True, text=True, timeout=300)


def _hub(env: dict, *args: str) -> subprocess.CompletedProcess:
    return _run(env, sys.executable, "-m", "gluon_hub", *args)


def test_list_search_and_info_find_an_embedding_by_name(world):
    env = world["offline"]
    listed = _hub(env, "list", "--kind", "embeddings", "--plugin", "embplug")
    assert listed.returncode == 0, listed.stderr
    assert re.search(r"embplug/tiny_vec\.3d\s+tiny\s+3\s+55 B\s+three words", listed.stdout), listed.stdout
    found = _hub(env, "search", "glove-like")  # a tag; no --kind: every kind is searched
    assert found.returncode == 0, found.stderr
    assert re.search(r"embplug/tiny_vec\.3d\s+embeddings\s+tiny\s+installed", found.stdout), found.stdout
    shown = _hub(env, "info", NAME)  # no --kind: the first kind that knows the name
    assert shown.returncode == 0, shown.stderr
    assert "kind: embedding" in shown.stdout and f"{world['ref']['hash']}" in shown.stdout
    assert f"prefetch: {PREFETCH}" in shown.stdout
    code = ("import gluon_hub; print(gluon_hub.list_embeddings('tiny*'), gluon_hub.embedding_info("
            f"{NAME!r}).dim, [r['name'] for r in gluon_hub.search('three words', kind='embeddings')])")
    api = _run(env, sys.executable, "-c", code)
    assert api.stdout.split() == ["['tiny_vec.3d']", "3", "['tiny_vec.3d']"], api.stderr


def test_an_unknown_name_says_so_and_suggests_close_ones(world):
    env = world["offline"]
    api = _run(env, sys.executable, "-c", "import gluon_hub; gluon_hub.load_embedding('tiny_vec.2d')")
    assert "UnknownNameError: no embedding named 'tiny_vec.2d'; did you mean: tiny_vec.3d" in api.stderr, api.stderr
    cli = _hub(env, "info", "tiny_vec.2d")
    assert cli.returncode == 1
    assert "nor a dataset, embedding" in cli.stderr and "tiny_vec.3d (embedding)" in cli.stderr, cli.stderr


def test_offline_hint_is_a_prefetch_that_works_then_load_is_offline(world):
    missing = _run(world["offline"], sys.executable, "-c", LOAD)
    assert missing.returncode == 1, missing.stdout + missing.stderr
    found = re.search(r"on a machine with network access run: (.+?) ; then copy the cache", missing.stderr)
    assert found, missing.stderr
    assert found.group(1) == PREFETCH
    ran = _run(world["online"], "bash", "-c", found.group(1))  # verbatim, as a user would
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "1 files" in ran.stdout
    loaded = _run(world["offline"], sys.executable, "-c", LOAD)
    assert loaded.returncode == 0, loaded.stderr
    assert json.loads(loaded.stdout) == TABLE


def test_prefetch_by_bare_name_and_bundle_carry_an_embedding(world):
    assert _hub(world["online"], "cache", "prefetch", NAME).returncode == 0  # no --kind
    out = world["tmp"] / "emb.tar"
    made = _hub(world["offline"], "bundle", NAME, "-o", str(out))
    assert made.returncode == 0, made.stderr
    assert f"embedding {QUALIFIED}" in made.stdout and "tiny.txt" in made.stdout
    elsewhere = dict(world["offline"], GLUON_HUB_HOME=str(world["tmp"] / "elsewhere"))
    assert _run(elsewhere, sys.executable, "-c", LOAD).returncode == 1  # an empty cache there
    imported = _hub(elsewhere, "import", str(out))
    assert imported.returncode == 0, imported.stderr
    loaded = _run(elsewhere, sys.executable, "-c", LOAD)
    assert loaded.returncode == 0, loaded.stderr
    assert json.loads(loaded.stdout) == TABLE
    assert not (world["tmp"] / "elsewhere" / "imported-weights.json").exists()  # no model name recorded
