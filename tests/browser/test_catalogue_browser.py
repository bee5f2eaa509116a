"""The catalogue in a real headless Chromium: opened from disk and over ``gluon-hub serve``, it
is searched, filtered and followed to a model's page, and screenshots of it are not blank.

Needs Chromium from Debian's packages (``scripts/system-deps.sh`` installs it, as
``scripts/test.sh`` does on the CI's Python 3.11 leg) and playwright (the ``test`` extra);
playwright's own browser download is not used. Only the 3.11 leg runs tests/, so a missing
browser is a failure here, not a skip. About 10 s.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
BENCH_ROW = {"model": "resnet18_v1", "runtime": "mxnet", "batch": 32, "latency_ms": 81.5, "throughput": 392.6,
             "peak_mb": 410.0, "machine": {"cpu": "Browser Test CPU"}, "versions": {"mxnet": "1.9.1"},
             "measured_at": "2026-11-28T01:00:00Z"}


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).is_file():
        pytest.fail(f"{CHROMIUM} is missing: run 'bash scripts/system-deps.sh' (Debian's chromium package)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("playwright is missing: pip install -e '.[test]' (scripts/setup.sh does)")
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM)
        yield chromium
        chromium.close()


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """The installed plugins, a cache in tmp_path and one bench result in it."""
    home = tmp_path / "home"
    (home / "bench").mkdir(parents=True)
    (home / "bench" / "results.jsonl").write_text(json.dumps(BENCH_ROW) + "\n", encoding="utf-8")
    variables = {k: v for k, v in os.environ.items() if not k.startswith("GLUON_HUB_")}
    return {**variables, "GLUON_HUB_HOME": str(home), "GLUON_HUB_CONFIG": str(tmp_path / "no-config.json")}


@pytest.fixture
def page(browser):
    """A fresh page that records every request and every script error."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    tab = context.new_page()
    tab.requests, tab.errors = [], []
    tab.on("request", lambda request: tab.requests.append(request.url))
    tab.on("pageerror", lambda error: tab.errors.append(str(error)))
    yield tab
    context.close()


def not_blank(path: Path) -> None:
    from PIL import Image, ImageStat

    with Image.open(path) as image:
        spread = ImageStat.Stat(image.convert("L")).stddev[0]
    assert spread > 10, f"{path} looks blank (grey-level spread {spread:.1f})"


def rows(page) -> list[dict[str, str]]:
    """The result table as the user sees it."""
    return page.eval_on_selector_all("#results tbody tr", """trs => trs.map(tr => ({
        name: tr.cells[0].textContent, plugin: tr.cells[1].textContent, task: tr.cells[2].textContent,
        last: tr.cells[tr.cells.length - 1].textContent}))""")


def browse(page, start: str, shots: Path) -> None:
    """Search, filter and follow a link from the index at ``start``; checks each step."""
    page.goto(start)
    total = len(rows(page))
    assert total > 300 and page.text_content("#count") == f"{total} of {total} models"
    page.fill("#search", "resnet18 imagenet")
    found = rows(page)
    assert "resnet18_v1" in [r["name"] for r in found] and len(found) < total
    page.select_option("#portable", "yes")
    portable = rows(page)
    assert portable and all(r["last"] == "yes" for r in portable) and len(portable) <= len(found)
    page.screenshot(path=str(shots / "search.png"))
    page.fill("#search", "")
    page.select_option("#portable", "")
    page.select_option("#plugin", "nlp")
    assert rows(page) and {r["plugin"] for r in rows(page)} == {"nlp"}
    page.select_option("#plugin", "")
    page.select_option("#kind", "datasets")
    assert page.is_disabled("#pretrained") and "datasets" in page.text_content("#count")
    page.select_option("#kind", "embeddings")
    page.fill("#search", "glove")
    assert "glove.6B.50d" in [r["name"] for r in rows(page)] and "embeddings" in page.text_content("#count")
    page.select_option("#kind", "models")
    page.fill("#search", "resnet18_v1")
    page.click("#results a:text-is('resnet18_v1')")
    page.wait_for_url("**/models/cv/resnet18_v1.html")
    assert page.text_content("h1") == "resnet18_v1"
    body = page.text_content("main")
    for expected in ("Weights", "sha1:", "top-1", "exportable", 'gluon_hub.load("resnet18_v1", pretrained=True)',
                     "gluon_hub.runtime.load(", "Browser Test CPU", "392.6"):
        assert expected in body, expected
    page.screenshot(path=str(shots / "model.png"), full_page=True)
    page.click("header a")
    page.wait_for_selector("#results tbody tr")
    for shot in ("search.png", "model.png"):
        not_blank(shots / shot)
    assert not page.errors, page.errors


def test_the_catalogue_works_from_disk(page, env, tmp_path):
    out = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "gluon_hub.cli", "catalogue", "-o", str(out)], env=env, check=True,
                   timeout=120, capture_output=True)
    browse(page, (out / "index.html").as_uri(), tmp_path)
    assert all(url.startswith("file://") for url in page.requests), page.requests  # nothing left the machine


def test_the_catalogue_works_over_gluon_hub_serve(page, env, tmp_path):
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    server = subprocess.Popen([sys.executable, "-m", "gluon_hub.cli", "serve", str(mirror), "--port", "0"],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        first = server.stdout.readline().strip()
        assert first.startswith("Serving "), (first, server.stderr.read() if server.poll() is not None else "")
        url = first.rsplit(" at ", 1)[1]
        assert url.startswith("http://127.0.0.1:")
        browse(page, url + "catalogue/", tmp_path)
        assert all(request.startswith(url) for request in page.requests), page.requests
        server.send_signal(signal.SIGINT)
        assert server.wait(timeout=20) == 0
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
