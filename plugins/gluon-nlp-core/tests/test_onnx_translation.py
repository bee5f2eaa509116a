"""Transformer translation through ONNX (``gluon_nlp_core.onnx_runner.Translator``) against the
MXNet model's ``translate``, and ``gluon-hub translate-text --runtime onnx --json`` against
``--runtime mxnet --json`` in fresh processes.

The model is ``transformer_en_de_512``'s spec built small (2 layers of 16 units) under a test
plugin, every parameter drawn from a fixed seed and the EOS score raised so that some
hypotheses end before the length limit. Its ``encoder`` and ``decoder_step`` graphs are
exported by name from the saved parameters. Greedy decoding (beam 1) and beam search (beam 4,
alpha 0.6, K 5: the command's defaults; and beam 3) give the same token ids in both runtimes.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

import gluon_hub
import gluon_hub.runtime
from gluon_hub import hookimpl
from gluon_hub.compat import mx
from gluon_nlp_core.text.vocab import Vocab, count_tokens
from gluon_nlp_core.translate import source_batch, translate_subwords

pytest.importorskip("onnxruntime")
pytestmark = [pytest.mark.portability, pytest.mark.mxnet]

TINY = dict(num_layers=2, units=16, hidden_size=32, num_heads=4)
PLUGIN = "onnxnmttest"
NAME = f"{PLUGIN}/tiny_nmt"
LINES = ["w3@@ w7 w9", "w12 w5@@ w5 w30 w1 w17 w8", "w2", "w21 w33 w4@@ w19"]
#: Registers the small spec in a fresh process, then runs the hub's command line.
_CLI = """
import dataclasses, sys, types
import gluon_hub
from gluon_hub import hookimpl
from gluon_hub.cli import main
spec = dataclasses.replace(gluon_hub.info("transformer_en_de_512"), name="tiny_nmt", plugin="", kwargs={tiny!r})
gluon_hub.register_plugin(types.SimpleNamespace(GLUON_HUB_API=">=1,<2",
                          gluon_hub_models=hookimpl(lambda: [spec])), {plugin!r})
rc = main(sys.argv[1:])
if "--runtime" in sys.argv:
    assert "mxnet" not in sys.modules, "the ONNX runtime imported mxnet"
sys.exit(rc)
""".format(tiny=TINY, plugin=PLUGIN)


def _register() -> None:
    spec = dataclasses.replace(gluon_hub.info("transformer_en_de_512"), name="tiny_nmt", plugin="", kwargs=TINY)
    gluon_hub.register_plugin(types.SimpleNamespace(GLUON_HUB_API=">=1,<2",
                                                    gluon_hub_models=hookimpl(lambda: [spec])), PLUGIN)


#: The EOS score's raise in each model: hypotheses then end before the length limit or at it,
#: as greedy decoding (which ends later) and beam search (earlier, by the length penalty) run.
BOOST = {"greedy": 2.75, "beam": 0.75}


def _model(folder: Path, vocab: Vocab, boost: float) -> tuple[Path, Path, object]:
    """The parameters file, the ONNX path of its exported graphs and the MXNet model."""
    net = gluon_hub.load(NAME, vocab_size=len(vocab))
    src = mx.nd.array([[5, 6, 7]])
    net(src, src, mx.nd.array([3]), mx.nd.array([3]))  # shapes the parameters
    rng = np.random.RandomState(0)
    for key, param in sorted(net.collect_params().items()):
        centre = 1.0 if key.endswith("gamma") else 0.0
        param.set_data(mx.nd.array(rng.normal(centre, 0.2, param.shape)))
    eos = vocab[vocab.eos_token]
    bias = net.tgt_proj.bias.data()
    bias[eos] = bias[eos] + boost
    params = folder / f"tiny-{boost}.params"
    net.save_parameters(str(params))
    path = folder / f"tiny-{boost}.onnx"
    gluon_hub.export(NAME, path, format="onnx", pretrained=str(params), vocab_size=len(vocab))
    return params, path, gluon_hub.load(NAME, pretrained=str(params), vocab_size=len(vocab))


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """The vocabulary, its JSON file, and per decoding the parameters file, ONNX path and MXNet model."""
    _register()
    folder = tmp_path_factory.mktemp("nmt")
    vocab = Vocab(count_tokens(f"w{i}" for i in range(40)))
    (folder / "vocab.json").write_text(vocab.to_json(), encoding="utf-8")
    yield vocab, folder / "vocab.json", {kind: _model(folder, vocab, boost) for kind, boost in BOOST.items()}
    with contextlib.suppress(gluon_hub.PluginError):
        gluon_hub.unregister_plugin(PLUGIN)


@pytest.mark.parametrize("beam_size", [1, 3, 4])
def test_translation_ids_are_the_mxnet_models(exported, beam_size):
    vocab, _, models = exported
    _, path, net = models["greedy" if beam_size == 1 else "beam"]
    runner = gluon_hub.runtime.load(NAME, path, vocab=vocab)
    assert type(runner).__name__ == "Translator" and runner.max_source == 530
    ids, width = source_batch(vocab, LINES, runner.max_source)
    src = np.array([row + [runner.pad_id] * (width - len(row)) for row in ids])
    want = net.translate(mx.nd.array(src), runner.bos_id, runner.eos_id, mx.nd.array([len(r) for r in ids]),
                         max_length=8, beam_size=beam_size, alpha=0.6, K=5.0).asnumpy().astype(int)
    got = runner.translate_ids(ids, beam_size, alpha=0.6, K=5.0, max_length=8)
    assert got.tolist() == want.tolist()
    ended = [row.index(runner.eos_id) if runner.eos_id in row else None for row in got.tolist()]
    assert None in ended and len(set(ended)) > 1, f"EOS chosen by the model and the limit reached: {ended}"
    assert runner.translate_subwords(LINES, beam_size, max_length=8, batch_size=3) == translate_subwords(
        net, vocab, LINES, beam_size, max_length=8, batch_size=3)


def _hub_json(*args: str) -> list[dict]:
    done = subprocess.run([sys.executable, "-c", _CLI, "translate-text", NAME, *args], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return [json.loads(line) for line in done.stdout.splitlines()]


@pytest.mark.parametrize("kind, beam", [("greedy", "1"), ("beam", "4")])
def test_cli_json_is_the_same_for_both_runtimes(exported, tmp_path, kind, beam):
    _, vocab_file, models = exported
    params, path, _ = models[kind]
    (tmp_path / "in.txt").write_text("\n".join(LINES) + "\n", encoding="utf-8")
    common = ("--input", str(tmp_path / "in.txt"), "--vocab", str(vocab_file), "--max-length", "8", "--json",
              "--batch-size", "3", "--beam-size", beam)
    by_mxnet = _hub_json(*common, "--params", str(params))
    by_onnx = _hub_json(*common, "--runtime", "onnx", "--model-file", str(path))
    assert by_onnx == by_mxnet and [row["source"] for row in by_onnx] == LINES
    assert all(set(row) == {"source", "translation", "subwords"} for row in by_onnx)
    assert len({row["translation"] for row in by_onnx}) > 1


def test_cli_says_what_applies_to_which_runtime(exported, capsys):
    from gluon_hub.cli import main

    _, vocab_file, models = exported
    params, path, _ = models["beam"]
    assert main(["translate-text", NAME, "w2", "--runtime", "onnx", "--params", str(params)]) == 1
    assert "--params applies to the MXNet runtime" in capsys.readouterr().err
    assert main(["translate-text", NAME, "w2", "--model-file", str(path), "--params", str(params),
                 "--vocab", str(vocab_file)]) == 1
    assert "--model-file applies to --runtime onnx" in capsys.readouterr().err
    assert main(["translate-text", NAME, "w2", "--runtime", "onnx", "--vocab", str(vocab_file),
                 "--model-file", str(path.with_name("missing.onnx"))]) == 1
    assert "missing-encoder.onnx" in capsys.readouterr().err
