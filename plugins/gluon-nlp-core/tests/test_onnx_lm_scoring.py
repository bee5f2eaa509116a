"""Language-model scoring through ONNX (``gluon_nlp_core.onnx_runner.LanguageModelScorer``)
against the MXNet model.

Each LSTM language model is built small (8 units, a 30-token vocabulary) with seeded weights,
saved, and its ``step`` graph exported by name from that file. The runner scores a text in
chunks, carrying the LSTM states from one chunk to the next; MXNet runs the whole sequence in
one call. Per-token log-probabilities agree within 1e-5 (absolute, float64 log-softmax over
float32 scores) and perplexities within 1e-5 relative. The big RNN's graph has the length it
was exported at (its LSTMP loop is unrolled), so its runner pads the last chunk.
"""

from __future__ import annotations

import numpy as np
import pytest

import gluon_hub
import gluon_hub.runtime
from gluon_hub.compat import mx
from gluon_nlp_core.text.vocab import Vocab, count_tokens

pytest.importorskip("onnxruntime")
pytestmark = [pytest.mark.portability, pytest.mark.mxnet]

TOLERANCE = 1e-5
WORDS = [f"w{i}" for i in range(26)]
TEXT = "w1 w5 w9 w3 w14\nw2 w2 w20 w7\n\nw11 w0 w25 w8 w17 w4 w6\nw13 w1"
MODELS = {
    "standard_lstm_lm_200": dict(embed_size=8, hidden_size=8),
    "awd_lstm_lm_600": dict(embed_size=8, hidden_size=8),
    "big_rnn_lm_2048_512": dict(embed_size=8, hidden_size=16, projection_size=8),
}


@pytest.fixture(scope="module")
def vocab() -> Vocab:
    return Vocab(count_tokens(WORDS))


def _exported(tmp_path, name: str, vocab: Vocab, input_shape=None):
    """The exported ONNX file and the MXNet model of the same seeded weights."""
    kwargs = dict(MODELS[name], vocab_size=len(vocab))
    net = gluon_hub.load(name, **kwargs)
    net(mx.nd.ones((2, 1)), net.begin_state(batch_size=1))  # shapes the parameters
    rng = np.random.RandomState(0)
    for _, param in sorted(net.collect_params().items()):
        param.set_data(mx.nd.array(rng.normal(0.0, 0.5, param.shape)))
    params = tmp_path / f"{name}.params"
    net.save_parameters(str(params))
    path = tmp_path / f"{name}.onnx"
    gluon_hub.export(name, path, format="onnx", input_shape=input_shape, pretrained=str(params), **kwargs)
    return path, gluon_hub.load(name, pretrained=str(params), **kwargs)


def _mxnet_log_probs(net, ids: list[int]) -> np.ndarray:
    """The MXNet model over the whole sequence at once, from zero states."""
    scores, _ = net(mx.nd.array(ids[:-1]).reshape((-1, 1)), net.begin_state(batch_size=1))
    logits = scores.asnumpy()[:, 0].astype(np.float64)
    logits -= logits.max(axis=1, keepdims=True)
    log_softmax = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    return log_softmax[np.arange(len(ids) - 1), ids[1:]]


@pytest.mark.parametrize("name", ["standard_lstm_lm_200", "awd_lstm_lm_600"])
def test_chunked_log_probs_and_perplexity_are_the_mxnet_models(tmp_path, vocab, name):
    path, net = _exported(tmp_path, name, vocab)
    runner = gluon_hub.runtime.load(name, path, vocab=vocab)
    assert type(runner).__name__ == "LanguageModelScorer" and runner.fixed_length is None
    ids = runner.encode(TEXT)
    assert vocab.to_tokens(ids[:7]) == ["<eos>", "w1", "w5", "w9", "w3", "w14", "<eos>"]
    want = _mxnet_log_probs(net, ids)
    for chunk in (4, 7, 100):  # states carried across chunk borders, and one chunk for all
        got = runner.log_probs(ids, chunk)
        assert got.shape == want.shape
        assert float(np.abs(got - want).max()) <= TOLERANCE, chunk
    scored = runner.score(TEXT, chunk=5)
    assert scored["tokens"] == vocab.to_tokens(ids[1:]) and len(scored["log_probs"]) == len(ids) - 1
    perplexity = float(np.exp(-want.mean()))
    assert abs(scored["perplexity"] - perplexity) <= TOLERANCE * perplexity
    # the states matter: from zero states at every chunk the scores differ
    restarted = np.concatenate([runner.log_probs(ids[start:start + 5], 4) for start in range(0, len(ids) - 1, 4)])
    assert float(np.abs(restarted - want).max()) > 1e-3


def test_a_fixed_length_graph_runs_padded_chunks(tmp_path, vocab):
    name = "big_rnn_lm_2048_512"
    path, net = _exported(tmp_path, name, vocab, input_shape=(3, 1))
    runner = gluon_hub.runtime.load(name, path, vocab=vocab)
    assert runner.fixed_length == 3
    ids = runner.encode(TEXT)
    assert (len(ids) - 1) % 3, "the last chunk must be a padded one"
    assert float(np.abs(runner.log_probs(ids) - _mxnet_log_probs(net, ids)).max()) <= TOLERANCE


def test_scoring_says_what_is_wrong(tmp_path, vocab):
    path, _ = _exported(tmp_path, "standard_lstm_lm_200", vocab)
    runner = gluon_hub.runtime.load("standard_lstm_lm_200", path, vocab=vocab)
    with pytest.raises(ValueError, match="at least two tokens"):
        runner.log_probs([3])
    with pytest.raises(ValueError, match="the text has no tokens"):
        runner.score(" \n ")
