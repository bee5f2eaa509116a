"""ELMo (three sizes, character-CNN input) and big_rnn_lm_2048_512 against GluonNLP 0.10.

GluonNLP is the test-only reference: its models are built with random weights, saved with
``save_parameters`` and loaded strictly into ours. ELMo runs at its smallest published size
(GluonNLP's factories refuse other sizes) on a few short words; the big LSTMP model runs
built small, its full size is compared by parameter names and shapes only.
"""

from __future__ import annotations

import json
from importlib import resources

import numpy as np
import pytest

import gluon_hub.compat  # noqa: F401  (numpy aliases before gluonnlp imports mxnet)
from gluon_hub.compat import mx
from gluon_nlp_core.models import big_rnn, elmo
from gluon_nlp_core.text.elmo_chars import ELMoCharVocab, elmo_char_ids

import gluonnlp
from gluonnlp.model import language_model as ref_lm
from gluonnlp.vocab import ELMoCharVocab as RefCharVocab
from mxnet.gluon.model_zoo import model_store

ELMO_NAMES = ["elmo_2x1024_128_2048cnn_1xhighway", "elmo_2x2048_256_2048cnn_1xhighway",
              "elmo_2x4096_512_2048cnn_2xhighway"]
NAMES = [*ELMO_NAMES, "big_rnn_lm_2048_512"]
SMALLEST = ELMO_NAMES[0]
SENTENCES = [["Hello", "wörld", "!"], ["a"], ["naïve", "日本"]]


def _shapes(net):
    return {key: param.shape for key, param in net._collect_params_with_prefix().items()}


def _assert_same_structure(reference, ours):
    """Same parameter names; shapes equal where both sides know them (0: inferred later)."""
    want, have = _shapes(reference), _shapes(ours)
    assert sorted(have) == sorted(want)
    for key, shape in want.items():
        assert len(shape) == len(have[key]), key
        assert all(a == b or 0 in (a, b) for a, b in zip(shape, have[key])), key


def _model_data():
    text = resources.files("gluon_nlp_core").joinpath("_model_data.json").read_text("utf-8")
    return json.loads(text)["models"]


def _reference_big_rnn(**sizes):
    hparams = {**ref_lm.big_rnn_lm_2048_512_hparams, **sizes}
    vocab_size = hparams.pop("vocab_size", big_rnn.GBW_VOCAB_SIZE)
    return ref_lm.BigRNN(vocab_size=vocab_size, **hparams)


@pytest.mark.parametrize("name", ELMO_NAMES)
def test_elmo_full_size_structure_and_count_equal_gluonnlps(name):
    reference, _ = gluonnlp.model.get_model(name)  # no weights are allocated
    ours = getattr(elmo, name)()
    assert _shapes(ours) == _shapes(reference)
    count = sum(int(np.prod(shape)) for shape in _shapes(reference).values())
    assert _model_data()[name]["num_params"] == count


def test_largest_elmo_initialises_its_two_highway_layers_as_gluonnlp_and_hybridizes():
    # Two highway layers used to share one array-valued Constant initializer, which MXNet
    # writes into the graph once and then cannot write again: hybridizing failed.
    name = ELMO_NAMES[-1]
    reference, _ = gluonnlp.model.get_model(name)
    reference.initialize()
    ours = getattr(elmo, name)()
    ours.initialize()
    want, have = reference._collect_params_with_prefix(), ours._collect_params_with_prefix()
    biases = [key for key in want if "_highways" in key and key.endswith("bias")]
    assert len(biases) == 2
    for key in biases:  # zeros for the transform, ones for the gate
        assert np.unique(have[key].data().asnumpy()).tolist() == [0.0, 1.0]
        np.testing.assert_array_equal(have[key].data().asnumpy(), want[key].data().asnumpy())
    ours.hybridize()
    ids, _ = elmo_char_ids(SENTENCES)
    assert ours(mx.nd.array(ids, dtype="int32"))[0][0].shape == (3, 5, 1024)  # token layer
    attrs = ours._cached_graph[1].attr_dict()
    for key in biases:  # a few bytes each, where the Constant wrote 4,096 numbers
        assert attrs[have[key].name]["__init__"] == '["elmohighwaybias", {"gate_bias": 1.0}]'


def test_big_rnn_full_size_structure_equals_gluonnlps():
    ours = big_rnn.big_rnn_lm_2048_512()
    _assert_same_structure(_reference_big_rnn(), ours)
    assert _shapes(ours)["embedding.0.weight"] == (793471, 512)
    count = sum(int(np.prod(shape)) for shape in _shapes(ours).values())
    assert _model_data()["big_rnn_lm_2048_512"]["num_params"] == count


@pytest.mark.parametrize("name", NAMES)
def test_published_files_and_hashes_are_gluonnlps(name):
    # Every model-store entry of the name (ELMo's large model has two: gbw and 5bw).
    published = {key: sha1 for key, sha1 in model_store._model_sha1.items()
                 if key.startswith(f"{name}_")}
    registered = {f"{name}_{w['tag']}": w["sha1"] for w in _model_data()[name]["weights"]}
    assert published and registered == published


def test_char_ids_equal_gluonnlps():
    long_word = "x" * 47 + "é" + "tail"  # the 48-byte cut falls inside "é"
    tokens = ["<bos>", "<eos>", "Hello", "wörld", "日本", "🙂", "", "a b", long_word,
              "z" * 80]
    assert ELMoCharVocab()(tokens) == RefCharVocab()(tokens)
    assert ELMoCharVocab()("Hello") == RefCharVocab()("Hello")
    assert len(ELMoCharVocab()) == len(RefCharVocab()) == 262


def test_char_id_batches_wrap_and_pad_sentences():
    ids, mask = elmo_char_ids(SENTENCES)
    assert ids.shape == (3, 5, 50) and mask.tolist() == [[1] * 5, [1, 1, 1, 0, 0], [1] * 4 + [0]]
    ref = RefCharVocab()
    assert ids[1, :3].tolist() == ref(["<bos>", "a", "<eos>"])
    assert not ids[1, 3:].any()


def _states(batch, proj, hidden, seed):
    """Non-zero ``[forward, backward]`` begin states of the two layers, as new lists (GluonNLP
    writes its new states into the lists it is given)."""
    rng = np.random.RandomState(seed)

    def pair():
        return [mx.nd.array(rng.uniform(-1, 1, (batch, proj))),
                mx.nd.array(rng.uniform(-1, 1, (batch, hidden)))]
    return [[pair(), pair()], [pair(), pair()]]


def _outputs(result):
    outputs, states = result
    flat = [state for direction in states for layer in direction for state in layer]
    return [x.asnumpy() for x in (*outputs, *flat)]


def _assert_close(got, want):
    assert len(got) == len(want)
    for have, expected in zip(got, want):
        np.testing.assert_allclose(have, expected, rtol=1e-5, atol=1e-5)


@pytest.fixture(scope="module")
def elmo_pair(tmp_path_factory):
    """GluonNLP's smallest ELMo with random weights, and ours loaded strictly from its file."""
    reference, _ = gluonnlp.model.get_model(SMALLEST)
    mx.random.seed(0)
    reference.initialize(mx.init.Normal(0.05))
    path = str(tmp_path_factory.mktemp("elmo") / "reference.params")
    reference.save_parameters(path)
    ours = elmo.elmo_2x1024_128_2048cnn_1xhighway()
    ours.load_parameters(path)
    hybrid = elmo.elmo_2x1024_128_2048cnn_1xhighway()
    hybrid.load_parameters(path)
    hybrid.hybridize()
    return reference, ours, hybrid, path


def test_elmo_outputs_and_states_equal_gluonnlps_with_lengths(elmo_pair):
    reference, ours, hybrid, _ = elmo_pair
    ids, mask = elmo_char_ids(SENTENCES)
    x, m = mx.nd.array(ids), mx.nd.array(mask)
    want = _outputs(reference(x, _states(3, 128, 1024, 1), m))
    assert len(want) == 3 + 8
    _assert_close(_outputs(ours(x, _states(3, 128, 1024, 1), m)), want)
    # Small weights keep the gates off saturation, so that every difference shows.
    # GluonNLP's ELMo cannot be hybridized with a mask (it multiplies without broadcasting):
    # ours hybridized is held to its imperative result, on repeated calls too.
    for _ in range(3):
        _assert_close(_outputs(hybrid(x, _states(3, 128, 1024, 1), m)), want)


def test_elmo_hybridized_equals_gluonnlps_hybridized(elmo_pair, tmp_path):
    _, _, _, path = elmo_pair
    reference, _ = gluonnlp.model.get_model(SMALLEST)
    reference.load_parameters(path)
    reference.hybridize()
    ours = elmo.elmo_2x1024_128_2048cnn_1xhighway()
    ours.load_parameters(path)
    ours.hybridize()
    x = mx.nd.array(elmo_char_ids(SENTENCES[:2])[0])
    _assert_close(_outputs(ours(x, _states(2, 128, 1024, 2))),
                  _outputs(reference(x, _states(2, 128, 1024, 2))))


def test_elmo_padded_rows_equal_the_sentence_alone(elmo_pair):
    # With the mask the backward direction starts at each row's last real token, so the
    # real positions of a padded row are those of the sentence run on its own.
    _, ours, _, _ = elmo_pair
    ids, mask = elmo_char_ids(SENTENCES)
    padded, _ = ours(mx.nd.array(ids), None, mx.nd.array(mask))
    alone, _ = ours(mx.nd.array(elmo_char_ids(SENTENCES[1:2])[0]))
    unmasked, _ = ours(mx.nd.array(ids))
    for layer_padded, layer_alone in zip(padded, alone):
        np.testing.assert_allclose(layer_padded[1:2, :3].asnumpy(), layer_alone.asnumpy(),
                                   rtol=1e-5, atol=1e-5)
    assert not np.allclose(unmasked[2][1, :3].asnumpy(), alone[2][0].asnumpy(), atol=1e-3)


def test_elmo_zero_states_by_default(elmo_pair):
    _, ours, _, _ = elmo_pair
    x = mx.nd.array(elmo_char_ids(SENTENCES[:1])[0])
    implicit = _outputs(ours(x))
    explicit = _outputs(ours(x, ours.begin_state(1)))
    _assert_close(implicit, explicit)


def test_elmo_refuses_sizes_its_residual_layers_cannot_take():
    with pytest.raises(ValueError, match=r"proj_size \(64\) must equal input_size \(128\)"):
        elmo.ELMoBiLM(output_size=128, hidden_size=256, proj_size=64)


TINY_BIG_RNN = dict(vocab_size=40, embed_size=8, hidden_size=16, projection_size=8,
                    num_layers=2)


def test_big_rnn_outputs_and_states_equal_gluonnlps(tmp_path):
    # Two layers, so that GluonNLP's numbering of the dropouts between them is covered.
    reference = _reference_big_rnn(**TINY_BIG_RNN)
    mx.random.seed(0)
    reference.initialize(mx.init.Normal(0.3))
    rng = np.random.RandomState(0)
    tokens = mx.nd.array(rng.randint(0, 40, (6, 3)))
    states = [mx.nd.array(rng.uniform(-1, 1, s.shape))
              for s in reference.begin_state(batch_size=3)]
    out, new_states = reference(tokens, states)
    want = [x.asnumpy() for x in (out, *new_states)]
    path = str(tmp_path / "reference.params")
    reference.save_parameters(path)

    ours = big_rnn.big_rnn_lm_2048_512(**TINY_BIG_RNN)
    ours.load_parameters(path)
    assert sorted(_shapes(ours)) == sorted(_shapes(reference))
    for hybridize in (False, True):
        if hybridize:
            ours.hybridize()
        out, new_states = ours(tokens, states)
        _assert_close([x.asnumpy() for x in (out, *new_states)], want)
    zero = reference(tokens, reference.begin_state(batch_size=3))[0].asnumpy()
    np.testing.assert_allclose(ours(tokens)[0].asnumpy(), zero, rtol=1e-5, atol=1e-5)
