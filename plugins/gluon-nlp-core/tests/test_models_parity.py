"""Parity with GluonNLP 0.10: same parameters in, same outputs out, for every nlp model.

GluonNLP is a test-only reference. Each model is built small on both sides (the
architecture is the same code path at any size), GluonNLP's parameters are saved with
``save_parameters`` and loaded strictly into ours. Full-size structure (every parameter
name and shape) is compared separately without allocating the weights.
"""

from __future__ import annotations

import inspect

import gluon_hub.compat  # noqa: F401  (numpy aliases before gluonnlp imports mxnet)
import gluonnlp
import numpy as np
import pytest
from gluonnlp.model import bert as ref_bert
from gluonnlp.model import language_model as ref_lm
from gluonnlp.model import transformer as ref_transformer
from gluonnlp.model.translation import NMTModel

import gluon_hub
from gluon_hub._factory import import_object
from gluon_hub.compat import mx

NAMES = gluon_hub.list_models(plugin="nlp")
VOCAB_SIZE = 50
TINY_BERT = dict(num_layers=2, units=16, hidden_size=32, num_heads=2, max_length=24)
TINY_NMT = dict(num_layers=2, units=16, hidden_size=32, num_heads=4)


def _vocab(cls=gluonnlp.Vocab):
    """A vocabulary of at least VOCAB_SIZE entries (the classes add special tokens)."""
    return cls(gluonnlp.data.count_tokens(f"w{i}" for i in range(VOCAB_SIZE)))


def _factory(name):
    return import_object(gluon_hub.info(name).factory, name)


def _family(name):
    for prefix in ("bert", "standard_lstm_lm", "awd_lstm_lm", "transformer"):
        if name.startswith(prefix):
            return prefix
    raise LookupError(f"no GluonNLP reference known for nlp model {name!r}: add one here")


def _tiny_lm_sizes(name):
    hparams = {**ref_lm.standard_lstm_lm_hparams, **ref_lm.awd_lstm_lm_hparams}[name]
    # Keep the tie-weights constraint of each model (embed == hidden for standard ones).
    if hparams["embed_size"] == hparams["hidden_size"]:
        return dict(embed_size=12, hidden_size=12)
    return dict(embed_size=8, hidden_size=12)


def _reference(name, full_size=False):
    """GluonNLP's model (small unless full_size) and the kwargs that build ours alike."""
    family = _family(name)
    if family == "bert":
        sizes = {} if full_size else TINY_BERT
        extra = {} if full_size else dict(embed_size=TINY_BERT["units"])
        vocab = _vocab(gluonnlp.vocab.BERTVocab)
        net, _ = ref_bert.get_bert_model(name, vocab=vocab, pretrained=False,
                                         hparam_allow_override=True, **sizes, **extra)
        return net, dict(vocab_size=len(vocab), **sizes)
    if family in ("standard_lstm_lm", "awd_lstm_lm"):
        sizes = {} if full_size else _tiny_lm_sizes(name)
        vocab = _vocab()
        net, _ = gluonnlp.model.get_model(name, vocab=vocab, pretrained=False,
                                          hparam_allow_override=True, **sizes)
        return net, dict(vocab_size=len(vocab), **sizes)
    hparams = ref_transformer.transformer_en_de_hparams
    sizes = {} if full_size else TINY_NMT
    units = sizes.get("units", hparams["num_units"])
    encoder, decoder, one_step = ref_transformer.get_transformer_encoder_decoder(
        units=units, hidden_size=sizes.get("hidden_size", hparams["hidden_size"]),
        num_layers=sizes.get("num_layers", hparams["num_layers"]),
        num_heads=sizes.get("num_heads", hparams["num_heads"]), dropout=hparams["dropout"],
        scaled=hparams["scaled"], max_src_length=530, max_tgt_length=549)
    vocab = _vocab()
    net = NMTModel(vocab, vocab, encoder, decoder, one_step, share_embed=True,
                   embed_size=units, tie_weights=True, embed_initializer=None,
                   prefix="transformer_")
    return net, dict(vocab_size=len(vocab), **sizes)


def _inputs(name, rng):
    family = _family(name)
    if family == "bert":
        batch, length = 3, 9
        tokens = mx.nd.array(rng.randint(0, VOCAB_SIZE, (batch, length)))
        types = mx.nd.array(rng.randint(0, 2, (batch, length)))
        valid = mx.nd.array([9, 4, 6])
        masked = mx.nd.array(rng.randint(0, 4, (batch, 3)))
        return tokens, types, valid, masked
    if family == "transformer":
        src = mx.nd.array(rng.randint(0, VOCAB_SIZE, (3, 8)))
        tgt = mx.nd.array(rng.randint(0, VOCAB_SIZE, (3, 6)))
        return src, tgt, mx.nd.array([8, 3, 5]), mx.nd.array([6, 2, 4])
    return (mx.nd.array(rng.randint(0, VOCAB_SIZE, (7, 3))),)


def _flatten(out):
    if isinstance(out, mx.nd.NDArray):
        return [out]
    return [leaf for item in out for leaf in _flatten(item)]


@pytest.mark.parametrize("name", NAMES)
def test_same_parameters_give_same_outputs(name, tmp_path):
    rng = np.random.RandomState(0)
    reference, kwargs = _reference(name)
    mx.random.seed(0)
    reference.initialize(mx.init.Normal(0.2))
    inputs = _inputs(name, rng)
    expected = _flatten(reference(*inputs))
    if _family(name) == "transformer":
        expected = expected[:1]  # GluonNLP adds a list of attention outputs
    path = str(tmp_path / "reference.params")
    reference.save_parameters(path)

    ours = _factory(name)(**kwargs)
    ours.load_parameters(path)  # strict: no missing, no extra parameter
    got = _flatten(ours(*inputs))
    assert len(got) == len(expected)
    for want, have in zip(expected, got):
        np.testing.assert_allclose(have.asnumpy(), want.asnumpy(), rtol=1e-5, atol=1e-5)

    ours.hybridize()
    for want, have in zip(expected, _flatten(ours(*inputs))):
        np.testing.assert_allclose(have.asnumpy(), want.asnumpy(), rtol=1e-4, atol=1e-5)


def _shapes(net):
    return {key: param.shape for key, param in net._collect_params_with_prefix().items()}


@pytest.mark.parametrize("name", NAMES)
def test_full_size_parameter_names_and_shapes_match(name):
    reference, kwargs = _reference(name, full_size=True)
    ours = _factory(name)(vocab_size=kwargs["vocab_size"])
    want, have = _shapes(reference), _shapes(ours)
    assert sorted(have) == sorted(want)
    for key, shape in want.items():
        # 0 is a dimension left to shape inference on one side.
        assert len(shape) == len(have[key]), key
        assert all(a == b or 0 in (a, b) for a, b in zip(shape, have[key])), key


@pytest.mark.parametrize("name", NAMES)
def test_published_variants_name_the_vocabulary_size_the_factory_defaults_to(name):
    spec = gluon_hub.info(name)
    default = inspect.signature(_factory(name)).parameters["vocab_size"].default
    first = spec.weights[0]
    assert f"vocab_size={default}" in first.description
    assert first.file.filename == (
        f"gluon/models/{name}_{first.tag}-{first.file.digest[:8]}.zip")
    assert first.file.extract.endswith(".params") and first.file.algorithm == "sha1"
