"""Every task's runner on a bundle made where MXNet runs, by model name, with MXNet's answers.

``scripts/export_onnx_fixtures.py`` (``.ci/run``'s Python 3.11 leg) writes ``bundle/`` into the
folder ``GLUON_HUB_TEST_ONNX_DIR`` names: one small model per task with seeded random weights,
``gluon-hub predict NAME INPUT --params FILE --json`` recorded in MXNet, the models converted
(``gluon_hub_deploy.convert``, the pose estimator's detector exported after its reset to
``person``) and packed by ``gluon-hub bundle``, and the text models' graphs with MXNet's BERT
features and GPT-2 greedy tokens. Here, with no MXNet (the Python 3.13 + numpy 2 leg; on 3.11
``import mxnet`` is made to fail the same way), the bundle is imported into a fresh cache and
``gluon-hub predict NAME INPUT --runtime onnx --json`` runs by name, offline, in a real
subprocess (for depth too, a small Mask R-CNN and, with ``translate-text``, a small Transformer,
both registered by a plugin in both processes): the same JSON structure, strings and counts,
numbers within each case's stated tolerance (Mask R-CNN's mask areas within a few pixels). The text runners (BERT, GPT-2, LSTM language-model scoring) are loaded
by name too (``gluon_hub.runtime.load``: each graph from the imported ``default-GRAPH.onnx``
through the cache), with MXNet's ids and answers. Without the variable these tests are skipped.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

FOLDER = os.environ.get("GLUON_HUB_TEST_ONNX_DIR")
#: prepended to a child's code, makes ``import mxnet`` fail there
NO_MXNET = (Path(__file__).parent / "helpers" / "no_mxnet.py").read_text()
#: JSON keys whose numbers are pixel coordinates, and those that count a mask's pixels (each case
#: states their tolerances apart)
COORDINATES, AREAS = {"box", "x", "y"}, {"mask_area"}

#: ``import mxnet`` fails in the child as where MXNet is not installed; the small specs the
#: manifest names (``SMALL_SPECS``: copies of a published spec with other keyword arguments and,
#: where given, another input shape) are registered as the export registered them; then the
#: hub's CLI runs
WITHOUT_MXNET = NO_MXNET + """
import dataclasses, json, os, sys, types
import gluon_hub
from gluon_hub.cli import main

small = json.loads(os.environ.get("SMALL_SPECS") or "null")
if small:
    specs = []
    for s in small["specs"]:
        like = gluon_hub.info(s["like"])
        shape = s.get("input_shape")
        specs.append(dataclasses.replace(like, name=s["name"], plugin="", kwargs=s["kwargs"], input=dataclasses.replace(
            like.input, shape=tuple(shape)) if shape else like.input))
    gluon_hub.register_plugin(types.SimpleNamespace(GLUON_HUB_API=">=1,<2",
                              gluon_hub_models=gluon_hub.hookimpl(lambda: specs)), small["plugin"])
sys.exit(main(sys.argv[1:]))
"""


def _manifest() -> dict[str, Any]:
    if not FOLDER:
        pytest.skip("GLUON_HUB_TEST_ONNX_DIR is not set: point it at a folder written by "
                    "scripts/export_onnx_fixtures.py where MXNet is installed")
    manifest_file = Path(FOLDER) / "manifest.json"
    if not manifest_file.is_file():  # set but wrong: an error, not a skip
        raise FileNotFoundError(f"GLUON_HUB_TEST_ONNX_DIR={FOLDER!r} has no manifest.json; write the folder with "
                                "scripts/export_onnx_fixtures.py")
    manifest = json.loads(manifest_file.read_text())
    if "bundle" not in manifest:
        raise KeyError(f"{manifest_file} has no bundle; write the folder again with scripts/export_onnx_fixtures.py")
    return {**manifest["bundle"], "made_with": manifest["made_with"]}


@pytest.fixture(scope="module")
def bundle() -> dict[str, Any]:
    return _manifest()


@pytest.fixture(scope="module")
def imported(bundle, tmp_path_factory) -> dict[str, str]:
    """The environment of a fresh cache the bundle was imported into, offline, with no mirror."""
    env = {key: value for key, value in os.environ.items()
           if key not in ("GLUON_HUB_MIRRORS", "GLUON_HUB_SHARED_CACHE")}
    env.update(GLUON_HUB_HOME=str(tmp_path_factory.mktemp("cache")), GLUON_HUB_OFFLINE="1", GLUON_HUB_PROGRESS="0",
               SMALL_SPECS=json.dumps(bundle.get("small")))
    done = subprocess.run([sys.executable, "-c", WITHOUT_MXNET, "import", str(Path(FOLDER, bundle["file"]))],
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return env


def _same(want: Any, got: Any, atol: float, pixels: float, where: str = "", rtol: float = 0.0,
          area: tuple[float, float] = (0, 0)) -> None:
    """``got`` has ``want``'s structure, strings and integers; floats within ``atol`` plus
    ``rtol`` of the number, or within ``pixels`` under a coordinate key; mask areas within the
    larger of ``area``'s pixels and fraction of the area (pixels on the 0.5 threshold may flip)."""
    if isinstance(want, dict):
        assert isinstance(got, dict) and set(got) == set(want), f"{where}: keys {sorted(got)} != {sorted(want)}"
        for key in want:
            if key in AREAS:
                tolerance = max(area[0], area[1] * want[key])
                assert isinstance(got[key], int) and abs(got[key] - want[key]) <= tolerance, \
                    f"{where}.{key}: {got[key]!r}, MXNet {want[key]!r} (tolerance {tolerance:g})"
                continue
            pixel = key in COORDINATES
            _same(want[key], got[key], pixels if pixel else atol, pixels, f"{where}.{key}", 0.0 if pixel else rtol,
                  area)
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), f"{where}: {len(got)} items, MXNet {len(want)}"
        for index, (w, g) in enumerate(zip(want, got)):
            _same(w, g, atol, pixels, f"{where}[{index}]", rtol, area)
    elif isinstance(want, float) or isinstance(got, float):
        assert isinstance(got, (int, float)) and not isinstance(got, bool), f"{where}: {got!r}, MXNet {want!r}"
        tolerance = atol + rtol * abs(want)
        assert abs(got - want) <= tolerance, f"{where}: {got!r}, MXNet {want!r} (tolerance {tolerance:g})"
    else:
        assert got == want, f"{where}: {got!r}, MXNet {want!r}"


def _cases() -> list[Any]:
    try:
        return [pytest.param(case, id=case["model"]) for case in _manifest()["cases"]]
    except pytest.skip.Exception:  # collected without the folder: one case, skipped when run
        return [pytest.param(None, id="no-fixtures")]


@pytest.mark.parametrize("case", _cases())
def test_predict_by_name_from_the_bundle_gives_mxnets_json(bundle, imported, case):
    import PIL

    made_with = bundle["made_with"].get("pillow")
    if case["model"].startswith("monodepth2") and made_with != PIL.__version__:
        # both runtimes resize with Pillow's Lanczos filter, whose output moved between releases
        # (Pillow 12.3 against 13.0: the depth's minimum by 1.2e-3); tests/depth compares the
        # runtimes within one environment
        pytest.skip(f"the answers were recorded with Pillow {made_with}, this is Pillow {PIL.__version__}")
    command = [case.get("command", "predict"), case["model"], *case["inputs"], "--runtime", "onnx", "--json",
               *case["options"]]
    done = subprocess.run([sys.executable, "-c", WITHOUT_MXNET, *command], cwd=Path(FOLDER, bundle["folder"]),
                          env=imported, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    got = [json.loads(line) for line in done.stdout.splitlines()]
    assert got, f"gluon-hub {command[0]} printed nothing"
    _same(case["mxnet"], got, case["atol"], case["pixels"], case["model"], case.get("rtol", 0.0),
          tuple(case.get("area", (0, 0))))


def test_text_runners_from_the_bundle_give_mxnets_features_and_tokens(bundle, imported, monkeypatch):
    pytest.importorskip("regex", reason="GPT-2's byte-level BPE needs regex (gluon-nlp-core[tokenizers]), which "
                        "the vision venvs of .ci/run leave out")
    import gluon_hub.runtime
    from gluon_nlp_core.text import BERT_SPECIAL_TOKENS, Vocab

    for key in ("GLUON_HUB_HOME", "GLUON_HUB_OFFLINE"):
        monkeypatch.setenv(key, imported[key])
    text, folder = bundle["text"], Path(FOLDER, bundle["folder"])

    vocab = Vocab.from_tokens(text["bert_words"], **BERT_SPECIAL_TOKENS)
    # by name: each graph the runner needs, imported as TAG-GRAPH.onnx, through the cache
    encoder = gluon_hub.runtime.load("bert_12_768_12", vocab=vocab, lower=True, max_length=64)
    ids, _, lengths = encoder.encode(text["texts"], text["pairs"])
    assert ids.tolist() == text["bert"]["ids"] and lengths.tolist() == text["bert"]["lengths"]
    sequence, pooled = np.array(text["bert"]["sequence"]), np.array(text["bert"]["pooled"])
    for row, found in enumerate(encoder.features(text["texts"], text["pairs"])):
        for got, want in ((found["sequence"], sequence[row, :lengths[row]]), (found["pooled"], pooled[row])):
            assert got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=0, atol=text["bert"]["rtol"] * np.abs(want).max())

    gpt2_vocab = Vocab.from_tokens(text["gpt2_words"], unknown_token=None, eos_token=text["gpt2_words"][0])
    generator = gluon_hub.runtime.load("gpt2_117m", vocab=gpt2_vocab, merges=folder / text["merges"], max_length=32)
    prompt = generator.encode(text["prompt"])
    assert prompt == text["gpt2"]["prompt_ids"]
    got, want = generator.generate_ids(prompt, text["new_tokens"]), text["gpt2"]["greedy"]
    # MXNet's sampler appends the end token to a beam still running after its steps
    assert got == (want if got[-1] == generator.eos_id else want[:-1]), (got, want)


def test_language_model_scorer_from_the_bundle_gives_mxnets_log_probs(bundle, imported, monkeypatch):
    import gluon_hub.runtime
    from gluon_nlp_core.text.vocab import Vocab

    for key in ("GLUON_HUB_HOME", "GLUON_HUB_OFFLINE"):
        monkeypatch.setenv(key, imported[key])
    lm = bundle["text"]["lm"]
    vocab = Vocab.from_json(Path(FOLDER, bundle["folder"], lm["vocab"]).read_text("utf-8"))
    scorer = gluon_hub.runtime.load(lm["model"], vocab=vocab)  # by name: the imported step graph
    assert scorer.encode(lm["text"]) == lm["ids"]
    # in chunks shorter than the text, the LSTM states carried; MXNet ran it at once
    scored = scorer.score(lm["text"], chunk=lm["chunk"])
    assert scored["tokens"] == vocab.to_tokens(lm["ids"][1:])
    np.testing.assert_allclose(scored["log_probs"], lm["log_probs"], rtol=0, atol=lm["atol"])
    assert abs(scored["perplexity"] - lm["perplexity"]) <= lm["atol"] * lm["perplexity"]
