"""ONNX export of the text models through ``gluon_hub.export(name, path, format="onnx")``:
the graphs decoding needs (``ModelSpec.export_graphs``) run in onnxruntime and agree with
the MXNet model (random weights, small configurations built through the factories'
arguments) within 1e-4 of each output's scale, at two sequence lengths, carrying states,
caches and encoder memory from one call to the next as a decoder does."""

from __future__ import annotations

import numpy as np
import pytest

import gluon_hub
from gluon_hub.compat import mx

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

TOLERANCE = 1e-4
_RNG = np.random.RandomState(0)


def _same_weights_model(name: str, **kwargs):
    """The MXNet model export builds: the same seed before both loads gives equal weights."""
    mx.random.seed(7)
    return gluon_hub.load(name, **kwargs)


def _export(tmp_path, name: str, input_shape=None, **kwargs) -> dict[str, ort.InferenceSession]:
    mx.random.seed(7)
    files = gluon_hub.export(name, tmp_path / f"{name}.onnx", format="onnx", input_shape=input_shape,
                             **kwargs)
    sessions = {}
    for path in files:
        assert path.exists(), path
        graph = path.stem[len(name) + 1:] or path.stem
        sessions[graph] = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return sessions


def _run(session: ort.InferenceSession, *inputs) -> list[np.ndarray]:
    names = [i.name for i in session.get_inputs()]
    assert len(names) == len(inputs), (names, [np.shape(x) for x in inputs])
    return session.run(None, {n: np.asarray(x) for n, x in zip(names, inputs)})


def _assert_close(got, want, what: str) -> float:
    """Each output within TOLERANCE of its own scale; returns the largest relative diff."""
    want = [w.asnumpy() if isinstance(w, mx.nd.NDArray) else np.asarray(w) for w in want]
    assert len(got) == len(want), f"{what}: {len(got)} outputs, MXNet gives {len(want)}"
    worst = 0.0
    for index, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape, f"{what} output {index}: shape {g.shape}, MXNet {w.shape}"
        scale = max(float(np.abs(w).max()), 1e-30)
        rel = float(np.abs(g - w).max()) / scale
        assert rel <= TOLERANCE, f"{what} output {index}: max relative difference {rel:.2e}"
        worst = max(worst, rel)
    return worst


def _tokens(shape, vocab=50) -> np.ndarray:
    return _RNG.randint(1, vocab, size=shape).astype("int32")


BERT_SMALL = dict(vocab_size=50, num_layers=1, units=8, hidden_size=16, num_heads=2,
                  max_length=32)


@pytest.mark.parametrize("name, token_types, masked", [
    ("bert_12_768_12", True, True),  # with pooler, next-sentence and masked-LM heads
    ("ernie_12_768_12", True, True),  # BERT with ReLU
    ("roberta_12_768_12", False, True),
    ("distilbert_6_768_12", False, False),
])
def test_bert_style_models_export_with_and_without_valid_length(tmp_path, name, token_types, masked):
    sessions = _export(tmp_path, name, (2, 5), **BERT_SMALL)
    assert set(sessions) == {"full", "valid_length"}
    net = _same_weights_model(name, **BERT_SMALL)
    for length in (5, 9):  # the sequence axis is dynamic: one file serves both
        tokens = _tokens((2, length))
        types = (_RNG.rand(2, length) > 0.5).astype("int32")
        positions = np.array([[1, 2], [0, 2]], dtype="int32")
        for graph, valid in (("full", None), ("valid_length", np.array([length, 3], "int32"))):
            inputs = [tokens] + [types] * token_types + ([] if valid is None else [valid])
            inputs += [positions] * masked
            # The model's own call, with valid_length None in its place for "full".
            call = [tokens] + [types] * token_types + [valid] + [positions] * masked
            want = net(*[None if x is None else mx.nd.array(x, dtype="int32") for x in call])
            want = list(want) if isinstance(want, (tuple, list)) else [want]
            _assert_close(_run(sessions[graph], *inputs), want, f"{name} {graph} at {length}")


def test_gpt2_decodes_two_steps_from_the_exported_cache(tmp_path):
    kwargs = dict(vocab_size=50, units=8, max_length=16, num_layers=2, num_heads=2)
    sessions = _export(tmp_path, "gpt2_117m", (2, 3), **kwargs)
    assert set(sessions) == {"prompt", "step"}
    net = _same_weights_model("gpt2_117m", **kwargs)
    for prompt_length in (3, 6):
        prompt = _tokens((2, prompt_length))
        out = _run(sessions["prompt"], prompt)
        want_scores, want_states = net(mx.nd.array(prompt))
        _assert_close(out, [want_scores, *want_states], f"gpt2 prompt at {prompt_length}")
        seen = prompt
        for step in range(2):
            token = out[0][:, -1].argmax(axis=-1).astype("int32")[:, None]
            out = _run(sessions["step"], token, *out[1:])
            seen = np.concatenate([seen, token], axis=1)
            # The model's own incremental step, and the whole sequence computed at once.
            step_scores, want_states = net(mx.nd.array(token), want_states)
            _assert_close(out, [step_scores, *want_states], f"gpt2 step {step + 1}")
            full_scores, _ = net(mx.nd.array(seen))
            _assert_close(out[:1], [full_scores[:, -1:]], f"gpt2 step {step + 1} vs full")


@pytest.mark.parametrize("name", ["standard_lstm_lm_200", "awd_lstm_lm_600"])
def test_lstm_language_models_carry_their_states_through_two_steps(tmp_path, name):
    kwargs = dict(vocab_size=50, embed_size=8, hidden_size=8)
    sessions = _export(tmp_path, name, (3, 2), **kwargs)
    net = _same_weights_model(name, **kwargs)
    states = [s.asnumpy() for s in _flat(net.begin_state(batch_size=2))]
    want_states = net.begin_state(batch_size=2)
    for length in (3, 5):  # two steps of different lengths, states carried over
        tokens = _tokens((length, 2))
        out = _run(sessions[name], tokens, *states)
        want_scores, want_states = net(mx.nd.array(tokens), want_states)
        _assert_close(out, [want_scores, *_flat(want_states)], f"{name} at {length}")
        states = out[1:]


def test_big_rnn_carries_its_states_at_its_export_length(tmp_path):
    kwargs = dict(vocab_size=50, embed_size=8, hidden_size=16, projection_size=8)
    name = "big_rnn_lm_2048_512"
    sessions = _export(tmp_path, name, (3, 2), **kwargs)
    net = _same_weights_model(name, **kwargs)
    states = [s.asnumpy() for s in net.begin_state(batch_size=2)]
    want_states = net.begin_state(batch_size=2)
    for step in range(2):  # LSTMP layers are unrolled: the length is the exported one
        tokens = _tokens((3, 2))
        out = _run(sessions[name], tokens, *states)
        want_scores, want_states = net(mx.nd.array(tokens), want_states)
        _assert_close(out, [want_scores, *want_states], f"{name} step {step + 1}")
        states = out[1:]


def _flat(nested):
    if isinstance(nested, (list, tuple)):
        return [leaf for item in nested for leaf in _flat(item)]
    return [nested]


def test_transformer_exports_an_encoder_and_a_decoder_step(tmp_path):
    kwargs = dict(vocab_size=50, num_layers=1, units=8, hidden_size=16, num_heads=2)
    sessions = _export(tmp_path, "transformer_en_de_512", (2, 4), **kwargs)
    assert set(sessions) == {"encoder", "decoder_step"}
    net = _same_weights_model("transformer_en_de_512", **kwargs)
    for src_length in (4, 7):
        src = _tokens((2, src_length))
        src_lengths = np.array([src_length, 2], dtype="float32")
        memory = _run(sessions["encoder"], src, src_lengths)
        want_memory = net.encode(mx.nd.array(src), mx.nd.array(src_lengths))
        _assert_close(memory, [want_memory], f"transformer encoder at {src_length}")
        prefix = _tokens((2, 1))
        for step in range(2):
            scores = _run(sessions["decoder_step"], prefix, memory[0], src_lengths)
            want = net.decode(mx.nd.array(prefix), want_memory, mx.nd.array(src_lengths))
            _assert_close(scores, [want[:, -1]], f"transformer step {step + 1}")
            prefix = np.concatenate([prefix, scores[0].argmax(-1).astype("int32")[:, None]], 1)


def test_elmo_exports_with_its_states_at_a_fixed_length(tmp_path):
    kwargs = dict(filters=((1, 4), (2, 4)), char_embed_size=4)
    name = "elmo_2x1024_128_2048cnn_1xhighway"
    net = _same_weights_model(name, **kwargs)
    for length in (3, 5):  # the LSTM loop is unrolled: one export per length
        sessions = _export(tmp_path / str(length), name, (2, length, 50), **kwargs)
        chars = _RNG.randint(1, 262, size=(2, length, 50)).astype("int32")
        states = [s.asnumpy() for s in _flat(net.begin_state(batch_size=2))]
        want_states = net.begin_state(batch_size=2)
        for step in range(2):  # states carried into a second call
            out = _run(sessions[name], chars, *states)
            want_layers, want_states = net(mx.nd.array(chars), want_states)
            _assert_close(out, [*want_layers, *_flat(want_states)], f"elmo at {length}, call {step + 1}")
            states = out[len(want_layers):]


def test_textcnn_exports_with_a_dynamic_sequence_axis(tmp_path):
    kwargs = dict(vocab_size=50, embed_size=8, num_filters=4)
    sessions = _export(tmp_path, "textcnn_rand", (2, 7), **kwargs)
    net = _same_weights_model("textcnn_rand", **kwargs)
    for length in (7, 12):
        tokens = _tokens((2, length))
        _assert_close(_run(sessions["textcnn_rand"], tokens), [net(mx.nd.array(tokens))],
                      f"textcnn at {length}")


def test_graph_exports_refuse_arguments_the_graphs_fix(tmp_path):
    with pytest.raises(ValueError, match="dynamic_batch"):
        gluon_hub.export("textcnn_rand", tmp_path / "t.onnx", format="onnx", dynamic_batch=True,
                         vocab_size=50, embed_size=8, num_filters=4)


def test_mxnet_format_writes_every_graph_as_a_symbol(tmp_path):
    files = gluon_hub.export("gpt2_117m", tmp_path / "gpt2", format="mxnet", vocab_size=50,
                             units=8, max_length=16, num_layers=1, num_heads=2)
    assert [f.name for f in files] == ["gpt2-prompt-symbol.json", "gpt2-prompt-0000.params",
                                       "gpt2-step-symbol.json", "gpt2-step-0000.params"]
    step = mx.gluon.SymbolBlock.imports(str(files[2]), ["data0", "data1", "data2"], str(files[3]))
    cache = mx.nd.zeros((1, 2, 3, 4))
    scores, key, value = step(mx.nd.ones((1, 1)), cache, cache)
    assert scores.shape == (1, 1, 50) and key.shape == (1, 2, 4, 4)
