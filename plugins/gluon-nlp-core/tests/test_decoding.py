"""Beam search and sampling against GluonNLP 0.10's samplers on the same decoders, the
Transformer's beam search against GluonNLP's NMT model, and ``gluon-hub translate-text``."""

from __future__ import annotations

import contextlib
import dataclasses
import types

import numpy as np
import pytest

import gluon_hub
import gluon_hub.compat  # noqa: F401  (numpy aliases before gluonnlp imports mxnet)
from gluon_hub import hookimpl
from gluon_hub.cli import main as hub_main
from gluon_hub.compat import mx
from gluon_nlp_core import decoding
from gluon_nlp_core.models.language_model import StandardRNN
from gluon_nlp_core.models.transformer import TransformerNMT
from gluon_nlp_core.text.vocab import Vocab, count_tokens
from gluon_nlp_core.translate import detokenize

import gluonnlp
from gluonnlp.model import sequence_sampler as ref, transformer as ref_transformer
from gluonnlp.model.translation import NMTModel

VOCAB, BATCH, EOS = 7, 3, 0


class TableDecoder:
    """Scores from a fixed table by token, shifted by a per-row state that grows each step;
    the nested one has its batch axis second, declared by state_info (or, with
    ``as_dict``, the same states as a dict, which GluonNLP's hybridized updater refuses)."""

    def __init__(self, seed=0, log_probs=True, sort_rows=False, as_dict=False, eos_boost=0.0):
        rng = np.random.RandomState(seed)
        table = rng.randn(VOCAB, VOCAB) * 2
        self.table = mx.nd.array(-np.sort(-table, axis=1) if sort_rows else table)
        self.log_probs = log_probs
        self.as_dict = as_dict
        self.eos_boost = eos_boost  # EOS gains this much each step: every beam ends

    def state_info(self, batch_size=0):
        if self.as_dict:
            return {"step": None, "extra": [{"__layout__": "TNC"}]}
        return [None, [{"__layout__": "TNC"}]]

    def __call__(self, step_input, states):
        step, extra = (states["step"], states["extra"]) if self.as_dict else states
        shift = mx.nd.broadcast_mul(step, extra[0][0]) * 0.5
        scores = mx.nd.take(self.table, step_input.astype("int32")) + shift
        if self.eos_boost:
            scores = scores + mx.nd.broadcast_mul(step, mx.nd.one_hot(
                mx.nd.array([EOS]), VOCAB)) * self.eos_boost
        if self.log_probs:
            scores = mx.nd.log_softmax(scores)
        if self.as_dict:
            return scores, {"step": step + 1, "extra": extra}
        return scores, [step + 1, extra]


def _states(seed=1, as_dict=False):
    rng = np.random.RandomState(seed)
    # The shift is 0 at the first step, so sorted tables start sorted.
    step, extra = mx.nd.zeros((BATCH, 1)), [mx.nd.array(rng.randn(1, BATCH, VOCAB))]
    return {"step": step, "extra": extra} if as_dict else [step, extra]


INPUTS = mx.nd.array([1, 2, 3])


def _assert_same(expected, got):
    for want, have in zip(expected, got):
        assert have.shape == want.shape and have.dtype == want.dtype
        np.testing.assert_array_equal(have.asnumpy(), want.asnumpy())


@pytest.mark.parametrize("beam_size", [1, 2, 3, 5])
@pytest.mark.parametrize("max_length", [1, 3, 8])
def test_beam_search_equals_gluonnlps(beam_size, max_length):
    decoder = TableDecoder()
    expected = ref.BeamSearchSampler(beam_size, decoder, EOS, ref.BeamSearchScorer(alpha=0.6, K=5),
                                     max_length)(INPUTS, _states())
    got = decoding.BeamSearchSampler(beam_size, decoder, EOS, decoding.BeamSearchScorer(0.6, 5),
                                     max_length)(INPUTS, _states())
    _assert_same(expected, got)
    samples, scores, lengths = got
    assert (np.diff(scores.asnumpy(), axis=1) <= 0).all()  # best first
    if max_length == 8 and beam_size > 1:  # some beams end with EOS before the limit
        assert (lengths.asnumpy() < samples.shape[2]).any()


def test_beam_search_from_raw_scores_and_early_end_equal_gluonnlps():
    decoder = TableDecoder(seed=3, log_probs=False, eos_boost=3.0)
    for alpha, K in ((0.0, 5.0), (1.0, 2.0)):
        expected = ref.BeamSearchSampler(4, decoder, EOS, ref.BeamSearchScorer(alpha, K, False),
                                         40)(INPUTS, _states())
        got = decoding.BeamSearchSampler(4, decoder, EOS, decoding.BeamSearchScorer(alpha, K, False),
                                         40)(INPUTS, _states())
        _assert_same(expected, got)
        # Every beam ended with EOS long before 40 steps: no EOS was forced at the limit.
        assert got[0].shape[2] < 40 and (got[2].asnumpy() < got[0].shape[2]).any()


@pytest.mark.parametrize("temperature", [1.0, 0.6])
def test_sampling_draws_equal_gluonnlps_under_the_same_seed(temperature):
    decoder = TableDecoder(seed=2, log_probs=False)
    mx.random.seed(7)
    expected = ref.SequenceSampler(5, decoder, EOS, 6, temperature)(INPUTS, _states())
    mx.random.seed(7)
    got = decoding.SequenceSampler(5, decoder, EOS, 6, temperature)(INPUTS, _states())
    _assert_same(expected, got)
    assert len({tuple(row) for row in got[0].asnumpy().reshape(-1, got[0].shape[2])}) > 3


def test_top_k_equals_gluonnlps_where_its_top_k_is_right_and_keeps_the_k_best_always():
    # GluonNLP 0.10's top-k mask is right only for rows already sorted best first.
    decoder = TableDecoder(seed=4, log_probs=False, sort_rows=True)
    unshifted = [mx.nd.zeros((BATCH, 1)), [mx.nd.zeros((1, BATCH, VOCAB))]]  # rows stay sorted
    mx.random.seed(11)
    expected = ref.SequenceSampler(4, decoder, EOS, 5, 0.8, top_k=3)(INPUTS, unshifted)
    mx.random.seed(11)
    got = decoding.SequenceSampler(4, decoder, EOS, 5, 0.8, top_k=3)(INPUTS, unshifted)
    _assert_same(expected, got)

    # Unsorted scores, one step from token 1: only its 2 best tokens, in their proportions.
    table = TableDecoder(seed=5, log_probs=False).table
    mx.random.seed(0)
    sampler = decoding.SequenceSampler(2000, lambda x, s: (mx.nd.take(table, x), s), EOS, 1,
                                       top_k=2)
    draws = sampler(mx.nd.array([1]), [])[0][0, :, 1].asnumpy()
    row = table[1].asnumpy()
    best = np.argsort(-row)[:2]
    assert set(draws) <= set(best)
    want = np.exp(row[best] - row[best].max()) / np.exp(row[best] - row[best].max()).sum()
    np.testing.assert_allclose([np.mean(draws == b) for b in best], want, atol=0.04)


def test_language_model_decoder_samples_like_gluonnlp_with_batch_axis_one_states():
    mx.random.seed(0)
    net = StandardRNN(vocab_size=11, embed_size=8, hidden_size=8, num_layers=2, dropout=0.0,
                      tie_weights=True)
    net.initialize(mx.init.Normal(0.5))
    decoder = decoding.LanguageModelDecoder(net)
    inputs = mx.nd.array([4, 5])
    start = net.begin_state(batch_size=2)
    expected = ref.BeamSearchSampler(3, decoder, 2, ref.BeamSearchScorer(from_logits=False),
                                     6)(inputs, start)
    got = decoding.BeamSearchSampler(3, decoder, 2, decoding.BeamSearchScorer(from_logits=False),
                                     6)(inputs, start)
    _assert_same(expected, got)


def test_dict_states_give_what_list_states_give():
    as_list = decoding.BeamSearchSampler(3, TableDecoder(), EOS, max_length=5)(INPUTS, _states())
    as_dict = decoding.BeamSearchSampler(3, TableDecoder(as_dict=True), EOS, max_length=5)(
        INPUTS, _states(as_dict=True))
    _assert_same(as_list, as_dict)


def test_bad_arguments_say_what_is_wrong():
    with pytest.raises(ValueError, match="beam_size must be at least 1"):
        decoding.BeamSearchSampler(0, TableDecoder(), EOS)
    with pytest.raises(ValueError, match="eos_id"):
        decoding.SequenceSampler(2, TableDecoder(), -1)
    with pytest.raises(ValueError, match="temperature"):
        decoding.SequenceSampler(2, TableDecoder(), EOS, temperature=0)
    states = [mx.nd.zeros((BATCH + 1, 1)), [mx.nd.zeros((1, BATCH, VOCAB))]]
    with pytest.raises(ValueError, match=r"batch size 3 on its batch axis 0; got shape \(4, 1\)"):
        decoding.BeamSearchSampler(2, TableDecoder(), EOS)(INPUTS, states)


# --- the Transformer ---------------------------------------------------------------------

TINY_NMT = dict(num_layers=2, units=16, hidden_size=32, num_heads=4)


@pytest.fixture(scope="module")
def nmt(tmp_path_factory):
    """GluonNLP's NMT model at random and ours with its parameters, EOS made likely, and
    the file of the parameters before that."""
    vocab = gluonnlp.Vocab(gluonnlp.data.count_tokens(f"w{i}" for i in range(40)))
    encoder, decoder, one_step = ref_transformer.get_transformer_encoder_decoder(
        units=16, hidden_size=32, num_layers=2, num_heads=4, dropout=0.1, scaled=True,
        max_src_length=530, max_tgt_length=549)
    reference = NMTModel(vocab, vocab, encoder, decoder, one_step, share_embed=True,
                         embed_size=16, tie_weights=True, embed_initializer=None,
                         prefix="transformer_")
    mx.random.seed(0)
    reference.initialize(mx.init.Normal(0.2))
    src = mx.nd.array(np.random.RandomState(0).randint(4, len(vocab), (3, 7)))
    src_len = mx.nd.array([7, 3, 5])
    reference(src, src[:, :2], src_len, mx.nd.array([2, 2, 2]))
    plain = tmp_path_factory.mktemp("nmt") / "plain.params"
    reference.save_parameters(str(plain))
    eos = vocab[vocab.eos_token]
    bias = reference.tgt_proj.bias.data()
    bias[eos] = bias[eos] + 2.5  # some hypotheses end before the length limit
    path = tmp_path_factory.mktemp("nmt") / "tiny.params"
    reference.save_parameters(str(path))
    ours = TransformerNMT(len(vocab), **TINY_NMT)
    ours.load_parameters(str(path))
    return reference, ours, vocab, src, src_len, plain


@pytest.mark.parametrize("beam_size, max_length", [(2, 5), (4, 9)])
def test_transformer_beam_search_equals_gluonnlps_translator(nmt, beam_size, max_length):
    reference, ours, vocab, src, src_len, _ = nmt
    bos, eos = vocab[vocab.bos_token], vocab[vocab.eos_token]

    def step(step_input, states):  # what GluonNLP's BeamSearchTranslator runs
        out, states, _ = reference.decode_step(step_input, states)
        return mx.nd.log_softmax(out), states

    memory, _ = reference.encode(src, valid_length=src_len)
    states = reference.decoder.init_state_from_encoder(memory, src_len)
    samples, _, lengths = ref.BeamSearchSampler(beam_size, step, eos, ref.BeamSearchScorer(0.6, 5),
                                                max_length)(mx.nd.full((3,), bos), states)
    got = ours.translate(src, bos, eos, src_len, max_length=max_length, beam_size=beam_size,
                         alpha=0.6).asnumpy()
    ended = False
    for row, sample, length in zip(got, samples[:, 0].asnumpy(), lengths[:, 0].asnumpy()):
        want = [int(t) for t in sample[1:length] if t != eos][:max_length]
        have = [int(t) for t in row]
        assert have[:len(want)] == want and set(have[len(want):]) <= {eos}
        ended = ended or length - 1 <= max_length and sample[length - 1] == eos
    assert ended  # an EOS the model chose, not only the one forced at the limit


def test_translate_keeps_greedy_for_beam_one(nmt):
    _, ours, vocab, src, src_len, _ = nmt
    bos, eos = vocab[vocab.bos_token], vocab[vocab.eos_token]
    greedy = ours.translate(src, bos, eos, src_len, max_length=6)
    assert ours.translate(src, bos, eos, src_len, max_length=6, beam_size=1).shape == greedy.shape
    with pytest.raises(ValueError, match="beam_size must be at least 1"):
        ours.translate(src, bos, eos, src_len, beam_size=0)


# --- gluon-hub translate-text ------------------------------------------------------------

@pytest.fixture
def tiny_model():
    """transformer_en_de_512's spec under a test plugin, built small."""
    spec = dataclasses.replace(gluon_hub.info("transformer_en_de_512"), name="tiny_nmt",
                               plugin="", kwargs=TINY_NMT)
    plugin = types.SimpleNamespace(GLUON_HUB_API=">=1,<2",
                                   gluon_hub_models=hookimpl(lambda: [spec]))
    gluon_hub.register_plugin(plugin, "decodingtest")
    yield "decodingtest/tiny_nmt"
    with contextlib.suppress(gluon_hub.PluginError):
        gluon_hub.unregister_plugin("decodingtest")


def test_translate_text_command_beam_searches_and_detokenizes(nmt, tiny_model, tmp_path, capsys):
    _, _, ref_vocab, _, _, params = nmt
    ours = TransformerNMT(len(ref_vocab), **TINY_NMT)
    ours.load_parameters(str(params))
    vocab = Vocab(count_tokens(f"w{i}" for i in range(40)))
    assert vocab.idx_to_token == ref_vocab.idx_to_token
    (tmp_path / "vocab.json").write_text(vocab.to_json())
    lines = ["w3@@ w7 w9", "w12 w5@@ w5 w30 w1", "w2"]
    (tmp_path / "in.txt").write_text("\n".join(lines) + "\n")
    code = hub_main(["translate-text", tiny_model, "--input", str(tmp_path / "in.txt"),
                     "--params", str(params), "--vocab", str(tmp_path / "vocab.json"),
                     "--beam-size", "3", "--max-length", "6", "--batch-size", "2"])
    assert code == 0
    printed = capsys.readouterr().out.splitlines()
    expected = []
    for line in lines:  # one at a time: padding in a batch must not change the result
        ids = vocab[line.split()] + [vocab[vocab.eos_token]]
        out = ours.translate(mx.nd.array([ids]), vocab[vocab.bos_token], vocab[vocab.eos_token],
                             mx.nd.array([len(ids)]), max_length=6, beam_size=3, alpha=0.6)
        tokens = [int(t) for t in out[0].asnumpy() if t != vocab[vocab.eos_token]]
        expected.append(detokenize(vocab.to_tokens(tokens)))
    assert printed == expected and any(printed)


def test_translate_text_says_what_is_wrong(tiny_model, tmp_path, capsys):
    (tmp_path / "vocab.json").write_text(Vocab(count_tokens(["a"])).to_json())
    assert hub_main(["translate-text", "transformer_en_de_512", "a", "--vocab",
                     str(tmp_path / "vocab.json")]) == 1
    assert "has 5 tokens but the WMT2014 weights" in capsys.readouterr().err
    assert hub_main(["translate-text", "standard_lstm_lm_200", "a"]) == 1
    assert "needs a machine-translation model" in capsys.readouterr().err
    assert hub_main(["translate-text", tiny_model, "a", "--random-weights", "--vocab",
                     str(tmp_path / "missing.json")]) == 1
    assert "no vocabulary file" in capsys.readouterr().err


def test_detokenize_merges_bpe_subwords():
    assert detokenize(["Gut@@", "en", "Morgen", ",", "Wel@@", "t@@", "!"]) == "Guten Morgen , Welt!"
