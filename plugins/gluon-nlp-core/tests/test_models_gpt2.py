"""GPT-2 against GluonNLP 0.10's parameter layout and against the model's mathematics.

GluonNLP shipped GPT-2 in its scripts (``scripts/text_generation/model/gpt.py``), not in
the installed package, so there is no importable reference here. What is compared:

* the parameter names and shapes: those that GluonNLP's ``GPT2Model`` stores, written out
  below from that script (block attribute names, ``units * 3`` query/key/value projection,
  ``4 * units`` feed-forward, tied output projection), so its published files load strictly;
* the outputs: an independent float64 numpy implementation of GPT-2 (pre-norm layers,
  tanh-GELU, causal softmax, tied output projection) reads the saved file by those names and
  must give the same next-token scores and the same per-layer keys and values, for a whole
  sequence and for one continued from returned states, hybridized and not.

During development the model was also checked against a transcription of GluonNLP's script
(random GluonNLP weights saved, loaded strictly here): equal logits and states, exactly.
"""

from __future__ import annotations

import numpy as np
import pytest

from gluon_hub.compat import mx
from gluon_nlp_core.models.gpt2 import gpt2_117m, gpt2_345m

TINY = dict(units=16, max_length=24, num_layers=2, num_heads=4)
VOCAB = 40


def _gluonnlp_layout(vocab_size, units, max_length, num_layers):
    """Parameter names and shapes of GluonNLP's GPT2Model (scripts/text_generation/model/gpt.py)."""
    layout = {
        "_embed.weight": (vocab_size, units),
        "_logits_proj.weight": (vocab_size, units),  # the same Parameter as _embed.weight
        "_pos_embed.weight": (max_length, units),
        "_final_ln.gamma": (units,),
        "_final_ln.beta": (units,),
    }
    for i in range(num_layers):
        attention = f"_self_attention_layers.{i}."
        layout.update({
            attention + "_multi_head_qkv_proj.weight": (3 * units, units),
            attention + "_multi_head_qkv_proj.bias": (3 * units,),
            attention + "_out_proj.weight": (units, units),
            attention + "_out_proj.bias": (units,),
            f"_ffn_layers.{i}._hidden_map.weight": (4 * units, units),
            f"_ffn_layers.{i}._hidden_map.bias": (4 * units,),
            f"_ffn_layers.{i}._out_map.weight": (units, 4 * units),
            f"_ffn_layers.{i}._out_map.bias": (units,),
        })
        for norm in ("_attn_ln", "_ffn_ln"):
            layout.update({f"{norm}.{i}.gamma": (units,), f"{norm}.{i}.beta": (units,)})
    return layout


def _shapes(net):
    return {key: tuple(p.shape) for key, p in net._collect_params_with_prefix().items()}


@pytest.mark.parametrize("factory, sizes", [
    (gpt2_117m, dict(units=768, max_length=1024, num_layers=12)),
    (gpt2_345m, dict(units=1024, max_length=1024, num_layers=24)),
])
def test_full_size_parameters_are_gluonnlps(factory, sizes):
    net = factory()  # shapes only: nothing is allocated before initialize()
    assert _shapes(net) == _gluonnlp_layout(50257, **sizes)
    assert net._logits_proj.weight is net._embed.weight  # tied, as in GluonNLP's model


# -- an independent numpy GPT-2 -------------------------------------------------------


def _layer_norm(x, gamma, beta, eps=1e-5):
    mean = x.mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(x.var(-1, keepdims=True) + eps) * gamma + beta


def _gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def _numpy_gpt2(params, tokens, heads, num_layers, past=None):
    """Scores ``(batch, length, vocab)`` and per-layer ``[key, value, ...]``."""
    p = {key: value.asnumpy().astype(np.float64) for key, value in params.items()}
    batch, length = tokens.shape
    start = 0 if past is None else past[0].shape[2]
    x = p["_embed.weight"][tokens] + p["_pos_embed.weight"][start:start + length]
    states = []
    for i in range(num_layers):
        att = f"_self_attention_layers.{i}."
        h = _layer_norm(x, p[f"_attn_ln.{i}.gamma"], p[f"_attn_ln.{i}.beta"])
        qkv = h @ p[att + "_multi_head_qkv_proj.weight"].T + p[att + "_multi_head_qkv_proj.bias"]
        q, k, v = (part.reshape(batch, length, heads, -1).transpose(0, 2, 1, 3)
                   for part in np.split(qkv, 3, axis=-1))
        if past is not None:
            k = np.concatenate([past[2 * i], k], axis=2)
            v = np.concatenate([past[2 * i + 1], v], axis=2)
        states += [k, v]
        scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(q.shape[-1])
        future = np.arange(k.shape[2])[None, :] > (start + np.arange(length))[:, None]
        scores = np.where(future, -np.inf, scores)
        weights = np.exp(scores - scores.max(-1, keepdims=True))
        weights /= weights.sum(-1, keepdims=True)
        context = (weights @ v).transpose(0, 2, 1, 3).reshape(batch, length, -1)
        x = x + context @ p[att + "_out_proj.weight"].T + p[att + "_out_proj.bias"]
        h = _layer_norm(x, p[f"_ffn_ln.{i}.gamma"], p[f"_ffn_ln.{i}.beta"])
        hidden = _gelu_tanh(h @ p[f"_ffn_layers.{i}._hidden_map.weight"].T
                            + p[f"_ffn_layers.{i}._hidden_map.bias"])
        x = x + hidden @ p[f"_ffn_layers.{i}._out_map.weight"].T + p[f"_ffn_layers.{i}._out_map.bias"]
    x = _layer_norm(x, p["_final_ln.gamma"], p["_final_ln.beta"])
    return x @ p["_embed.weight"].T, states


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A tiny GPT-2 file with every parameter random (biases and norms included)."""
    net = gpt2_117m(vocab_size=VOCAB, **TINY)
    net.initialize()
    rng = np.random.RandomState(0)
    for param in net.collect_params().values():
        param.set_data(mx.nd.array(rng.normal(0, 0.4, param.shape)))
    path = str(tmp_path_factory.mktemp("gpt2") / "tiny.params")
    net.save_parameters(path)
    params = mx.nd.load(path)
    assert set(params) == set(_gluonnlp_layout(VOCAB, TINY["units"], TINY["max_length"],
                                               TINY["num_layers"]))
    return path, params


def _close(got, want):
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("hybridize", [False, True])
def test_scores_and_incremental_states_equal_the_numpy_model(saved, hybridize):
    path, params = saved
    tokens = np.random.RandomState(1).randint(0, VOCAB, (3, 7))
    want, want_states = _numpy_gpt2(params, tokens, TINY["num_heads"], TINY["num_layers"])

    whole, stepwise = (gpt2_117m(vocab_size=VOCAB, **TINY) for _ in range(2))
    for net in (whole, stepwise):
        net.load_parameters(path)  # strict: every name of GluonNLP's layout, no other
        if hybridize:
            net.hybridize()
    logits, states = whole(mx.nd.array(tokens))
    _close(logits, want)
    assert len(states) == 2 * TINY["num_layers"]
    for got, expected in zip(states, want_states):
        _close(got, expected)

    # The first 4 tokens, then the other 3 from the returned keys and values.
    _, past = whole(mx.nd.array(tokens[:, :4]))
    logits, states = stepwise(mx.nd.array(tokens[:, 4:]), past)
    _close(logits, want[:, 4:])
    for got, expected in zip(states, want_states):
        _close(got, expected)
    # One more token, continuing from those states.
    more = np.array([[1], [2], [3]])
    want_more, _ = _numpy_gpt2(params, np.concatenate([tokens, more], axis=1),
                               TINY["num_heads"], TINY["num_layers"])
    logits, states = stepwise(mx.nd.array(more), states)
    _close(logits, want_more[:, 7:])
    assert states[0].shape == (3, TINY["num_heads"], 8, TINY["units"] // TINY["num_heads"])


def test_too_long_and_malformed_states_are_refused(saved):
    path, _ = saved
    net = gpt2_117m(vocab_size=VOCAB, **TINY)
    net.load_parameters(path)
    _, states = net(mx.nd.ones((1, 20)))
    with pytest.raises(ValueError, match="25 positions .* max_length of 24"):
        net(mx.nd.ones((1, 5)), states)
    with pytest.raises(ValueError, match=r"a key and a value per layer \(4 arrays\), got 2"):
        net(mx.nd.ones((1, 2)), states[:2])
