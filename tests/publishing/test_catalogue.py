"""``gluon-hub catalogue``: the data of the written site (models, datasets, embeddings), read back without a browser, and
``gluon-hub serve`` serving it beside a mirror. The installed plugins are listed (the plugin
autoload this folder's conftest turns off is back on for the command), plus a model of a
plugin that only a registry index knows. tests/browser drives the same site in Chromium."""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

import gluon_hub
from gluon_hub.publishing import serve

# A description and paper that a careless page would turn into markup or a script link.
HOSTILE = '<script>alert("x")</script> & </script><!--'
BENCH_ROW = {"model": "resnet18_v1", "runtime": "onnx", "batch": 1, "latency_ms": 4.25, "throughput": 235.3,
             "peak_mb": 123.0, "machine": {"cpu": "Test CPU 9000"}, "versions": {"onnxruntime": "1.99"},
             "measured_at": "2026-11-28T01:00:00Z"}


def _index_with_outsider(path: Path) -> Path:
    """The packaged registry index plus a plugin nobody installed, with one hostile model."""
    data = json.loads((Path(gluon_hub.__file__).parent / "registry.json").read_text(encoding="utf-8"))
    data["plugins"].append({"name": "outsider", "distribution": "gluon-outsider", "version": "1.0"})
    data["models"].append({"name": "odd_net", "factory": "gluon_outsider:odd_net", "plugin": "outsider",
                           "task": "image-classification", "description": HOSTILE,
                           "paper": "javascript:alert(1)"})
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def write_catalogue(tmp_path: Path, *extra: str) -> tuple[Path, subprocess.CompletedProcess]:
    """Run the real command with the installed plugins, a bench file and the outsider index."""
    home = Path(os.environ["GLUON_HUB_HOME"])
    (home / "bench").mkdir(parents=True)
    lines = [json.dumps(BENCH_ROW), '{"model": "resnet18_v1", "runt']  # the second was cut short
    (home / "bench" / "results.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "GLUON_HUB_DISABLE_PLUGIN_AUTOLOAD"}
    env["GLUON_HUB_INDEX"] = str(_index_with_outsider(tmp_path / "registry.json"))
    out = tmp_path / "site"
    done = subprocess.run([sys.executable, "-m", "gluon_hub.cli", "catalogue", "-o", str(out), *extra],
                          capture_output=True, text=True, env=env, timeout=120)
    return out, done


def embedded(page: str, element_id: str):
    match = re.search(rf'<script type="application/json" id="{element_id}">(.*?)</script>', page, re.S)
    assert match, f"no #{element_id} data in the page"
    return json.loads(match.group(1))


def installed(kind: str) -> set[str]:
    env = {k: v for k, v in os.environ.items() if k != "GLUON_HUB_DISABLE_PLUGIN_AUTOLOAD"}
    done = subprocess.run([sys.executable, "-m", "gluon_hub.cli", "list", "--kind", kind, "--json"],
                          capture_output=True, text=True, env=env, check=True, timeout=120)
    return {f"{s['plugin']}/{s['name']}" for s in json.loads(done.stdout)}


def test_the_index_lists_every_model_and_dataset_with_a_page_each(tmp_path):
    out, done = write_catalogue(tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"wrote {out / 'index.html'}" in done.stdout
    entries = embedded((out / "index.html").read_text(encoding="utf-8"), "catalogue-data")
    models = {e["id"]: e for e in entries if e["kind"] == "models"}
    datasets = {e["id"] for e in entries if e["kind"] == "datasets"}
    embeddings = {e["id"] for e in entries if e["kind"] == "embeddings"}
    assert installed("models") <= set(models) and installed("datasets") == datasets
    assert installed("embeddings") == embeddings and "nlp/glove.6B.50d" in embeddings
    vocabularies = {e["id"] for e in entries if e["kind"] == "vocabularies"}
    assert installed("vocabularies") == vocabularies and "nlp/openai_webtext_bpe_ranks" in vocabularies
    assert set(models) - installed("models") == {"outsider/odd_net"}
    assert models["outsider/odd_net"]["installed"] is False and models["cv/resnet18_v1"]["installed"] is True
    assert models["cv/resnet18_v1"]["pretrained"] and models["cv/resnet18_v1"]["portable"]
    assert models["cv/resnet18_v1"]["top1"] == pytest.approx(70.93)
    for entry in entries:
        assert (out / entry["page"]).is_file(), entry["page"]


def test_a_model_page_has_weights_metrics_portability_usage_and_bench_rows(tmp_path):
    out, done = write_catalogue(tmp_path)
    assert done.returncode == 0, done.stderr
    page = (out / "models" / "cv" / "resnet18_v1.html").read_text(encoding="utf-8")
    data = embedded(page, "entry-data")
    weights = data["weights"][0]
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())
    assert weights["file"]["hash"] in text and weights["file"]["filename"] in text
    assert any(s.endswith(weights["file"]["filename"]) for s in weights["file"]["sources"])
    for source in weights["file"]["sources"]:
        assert source in text
    metric = weights["metrics"][0]
    assert metric["source"].startswith("https://") and f'href="{metric["source"]}"' in page
    assert data["onnx"]["status"] == "exportable" and "?x3x?x?" in text and "Opset 13" in text
    assert data["int8"] is None and "int8 no int8 entry" in text
    assert "C++, Java, Clojure gluon-hub deploy resnet18_v1 --lang cpp" in text
    float_model = embedded((out / "models" / "cv" / "mobilenet1.0.html").read_text(encoding="utf-8"), "entry-data")
    int8_page = (out / "models" / "cv" / "mobilenet1.0_int8.html").read_text(encoding="utf-8")
    assert float_model["int8"] == "cv/mobilenet1.0_int8"
    assert "this is the int8 variant of <code>cv/mobilenet1.0</code>" in int8_page
    assert 'net = gluon_hub.load("resnet18_v1", pretrained=True)' in text
    assert 'gluon_hub.runtime.load("resnet18_v1", "resnet18_v1.onnx")' in text and "model.classify(" in text
    assert data["labels"][:2] == ["tench", "goldfish"] and "1000 labels" in text
    pose = html.unescape((out / "models" / "cv" / "simple_pose_resnet18_v1b.html").read_text(encoding="utf-8"))
    assert "model.predict([\"photo.jpg\"], finder, threshold=0.5)" in pose  # the pose runner's call
    action = html.unescape((out / "models" / "cv" / "inceptionv1_ucf101.html").read_text(encoding="utf-8"))
    assert 'model.classify(["video.mp4"], topk=5)' in action  # the action runner's call
    tracker = html.unescape((out / "models" / "cv" / "siamrpn_alexnet_v2_otb15.html").read_text(encoding="utf-8"))
    assert 'model.track("video.mp4", (40, 30, 90, 120))' in tracker  # the tracking runner's call
    gpt2 = html.unescape((out / "models" / "nlp" / "gpt2_117m.html").read_text(encoding="utf-8"))
    assert 'gluon_hub.runtime.load("gpt2_117m", "gpt2_117m.onnx")' in gpt2 and "model.generate(" in gpt2
    assert data["bench"] == [BENCH_ROW] and "Test CPU 9000" in text and "4.25" in text
    index = (out / "index.html").read_text(encoding="utf-8")
    assert "1 unreadable line skipped" in index
    glove = (out / "embeddings" / "nlp" / "glove.6B.50d.html").read_text(encoding="utf-8")
    assert 'gluon_hub.load_embedding("glove.6B.50d")' in html.unescape(glove) and "50 dimensions" in glove
    merges = (out / "vocabularies" / "nlp" / "openai_webtext_bpe_ranks.html").read_text(encoding="utf-8")
    assert 'gluon_hub.load_vocabulary("openai_webtext_bpe_ranks")' in html.unescape(merges)
    assert "tokens</p>" in merges and "sha" in merges


def test_text_from_specs_is_escaped_and_nothing_is_fetched_from_elsewhere(tmp_path):
    out, done = write_catalogue(tmp_path)
    assert done.returncode == 0, done.stderr
    page = (out / "models" / "outsider" / "odd_net.html").read_text(encoding="utf-8")
    assert "<script>alert" not in page and "<!--" not in page
    assert 'href="javascript:' not in page
    assert embedded(page, "entry-data")["description"] == HOSTILE  # the data survives whole
    assert "pip install gluon-outsider" in html.unescape(page)
    for path in out.rglob("*"):
        if path.suffix in (".html", ".css", ".js"):
            content = path.read_text(encoding="utf-8")
            # every script, style sheet, image or font is a file of the site
            for ref in re.findall(r'(?:src|<link[^>]*href)="([^"]*)"|url\(([^)]*)\)', content):
                target = "".join(ref)
                assert "//" not in target and (path.parent / target).resolve().is_file(), (path, target)


def test_a_missing_bench_file_given_by_name_is_an_error(tmp_path):
    _, done = write_catalogue(tmp_path, "--bench", str(tmp_path / "nope.jsonl"))
    assert done.returncode == 1
    assert "--bench" in done.stderr and "no such file" in done.stderr


def _get(url: str) -> tuple[int, str, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.url, response.read().decode("utf-8")
    except urllib.error.HTTPError as exc:
        return exc.code, url, ""


def test_serve_puts_the_catalogue_beside_the_mirror(tmp_path):
    out, done = write_catalogue(tmp_path)
    assert done.returncode == 0, done.stderr
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "weights.params").write_bytes(b"weights")
    with serve(mirror, catalogue=out) as server:
        assert server.catalogue_url == server.url + "catalogue/"
        status, _, body = _get(server.catalogue_url)
        assert status == 200 and 'id="catalogue-data"' in body
        status, final, _ = _get(server.url + "catalogue")  # redirected, so relative links work
        assert status == 200 and final == server.catalogue_url
        status, _, body = _get(server.catalogue_url + "models/cv/resnet18_v1.html")
        assert status == 200 and "resnet18_v1" in body
        assert _get(server.catalogue_url + "assets/catalogue.js")[0] == 200
        assert _get(server.url + "weights.params")[0] == 200
        assert _get(server.catalogue_url + "%2e%2e/weights.params")[0] == 404
    with serve(mirror) as plain:
        assert plain.catalogue_url is None and _get(plain.url + "catalogue/")[0] == 404


def test_serving_a_folder_without_a_catalogue_says_how_to_write_one(tmp_path):
    with pytest.raises(FileNotFoundError, match="gluon-hub catalogue -o"):
        serve(tmp_path, catalogue=tmp_path)
