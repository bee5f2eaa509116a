"""``convert`` of a model that exports as several graphs: every graph published by hash
(``TAG-GRAPH.onnx``), and ``gluon_hub.runtime.load(name)`` finding them by model name through
the folder's index, and through a bundle imported into an empty cache, offline.

The model is ``transformer_en_de_512``'s spec built small (one layer of 8 units) under a test
plugin, with seeded weights saved here; its runner (``Translator``) must translate as the same
graphs exported to a file by ``gluon_hub.export`` and as the MXNet model.
"""

from __future__ import annotations

import contextlib
import dataclasses
import types

import numpy as np
import pytest

import gluon_hub
import gluon_hub.runtime
from gluon_hub import hookimpl
from gluon_hub.compat import mx
from gluon_hub.publishing import bundle, import_bundle, weights_from_index
from gluon_hub_deploy._convert import convert

pytest.importorskip("onnxruntime")
text = pytest.importorskip("gluon_nlp_core.text.vocab")
pytestmark = pytest.mark.portability

PLUGIN = "convertgraphstest"
NAME = f"{PLUGIN}/tiny_nmt"
SOURCES = [[5, 9, 12, 3], [7, 3]]  # ids, each ending with EOS (3)


@pytest.fixture
def tiny(tmp_path_factory):
    """The vocabulary, a parameters file of seeded weights and the MXNet model of it (in the
    fresh hub conftest.py makes for each test)."""
    vocab = text.Vocab(text.count_tokens(f"w{i}" for i in range(20)))
    spec = dataclasses.replace(gluon_hub.info("transformer_en_de_512"), name="tiny_nmt", plugin="",
                               kwargs=dict(num_layers=1, units=8, hidden_size=16, num_heads=2, vocab_size=len(vocab)))
    gluon_hub.register_plugin(types.SimpleNamespace(GLUON_HUB_API=">=1,<2",
                                                    gluon_hub_models=hookimpl(lambda: [spec])), PLUGIN)
    net = gluon_hub.load(NAME)
    net(mx.nd.array([[5, 6]]), mx.nd.array([[5, 6]]), mx.nd.array([2]), mx.nd.array([2]))
    rng = np.random.RandomState(1)
    for key, param in sorted(net.collect_params().items()):
        param.set_data(mx.nd.array(rng.normal(1.0 if key.endswith("gamma") else 0.0, 0.3, param.shape)))
    params = tmp_path_factory.mktemp("tiny") / "tiny.params"
    net.save_parameters(str(params))
    yield vocab, params, net
    with contextlib.suppress(gluon_hub.PluginError):
        gluon_hub.unregister_plugin(PLUGIN)


def _mxnet_ids(net, vocab, beam_size: int) -> list[list[int]]:
    src = np.array([row + [vocab[vocab.padding_token]] * (4 - len(row)) for row in SOURCES])
    out = net.translate(mx.nd.array(src), vocab[vocab.bos_token], vocab[vocab.eos_token],
                        mx.nd.array([len(row) for row in SOURCES]), max_length=6, beam_size=beam_size, alpha=0.6)
    return out.asnumpy().astype(int).tolist()


def test_convert_publishes_every_graph_and_the_runtime_finds_them_by_name(tiny, tmp_path, monkeypatch):
    vocab, params, net = tiny
    site = tmp_path / "site"
    written = convert([NAME], site, params=params, progress=False)
    assert [v.tag for v in written] == ["default-encoder.onnx", "default-decoder_step.onnx"]
    index = weights_from_index(site / "weights.json")["tiny_nmt"]
    assert [v.tag for v in index] == [v.tag for v in written]
    files = sorted(p.name for p in site.iterdir() if p.suffix == ".onnx")
    assert files == sorted(v.file.filename for v in written) and all(f.startswith("tiny_nmt-") for f in files)
    assert not [p for p in site.iterdir() if p.name.startswith(".")], "no temporary file or folder left"

    exported = tmp_path / "exported" / "tiny.onnx"
    gluon_hub.export(NAME, exported, format="onnx", pretrained=str(params))
    by_file = gluon_hub.runtime.load(NAME, exported, vocab=vocab)
    monkeypatch.setenv("GLUON_HUB_HOME", str(tmp_path / "home"))
    by_name = gluon_hub.runtime.load(NAME, index=site, vocab=vocab, tag="default")
    assert {by_name.encoder_session.path.name, by_name.step_session.path.name} == set(files)
    for beam in (1, 4):
        want = _mxnet_ids(net, vocab, beam)
        assert by_name.translate_ids(SOURCES, beam, max_length=6).tolist() == want
        assert by_file.translate_ids(SOURCES, beam, max_length=6).tolist() == want

    archive = tmp_path / "carry" / "graphs.tar"
    bundle([f"{NAME}:{v.tag}" for v in written], archive, from_dir=site)
    monkeypatch.setenv("GLUON_HUB_HOME", str(tmp_path / "offline-home"))
    monkeypatch.setenv("GLUON_HUB_OFFLINE", "1")
    import_bundle(archive)
    offline = gluon_hub.runtime.load(NAME, vocab=vocab)  # by name alone: the imported bundle's index
    assert offline.translate_ids(SOURCES, 4, max_length=6).tolist() == _mxnet_ids(net, vocab, 4)
    with pytest.raises(KeyError, match=r"no onnx file of graph 'encoder' tagged 'other' is known for model "
                       r"'convertgraphstest/tiny_nmt' \(entries found: .*default-encoder\.onnx .*bundle "
                       r"convertgraphstest/tiny_nmt:other-encoder\.onnx and the other graphs"):
        gluon_hub.runtime.load(NAME, vocab=vocab, tag="other")
