"""Parity with GluonNLP 0.10: same parameters in, same outputs out, for every nlp model.

GluonNLP is a test-only reference. Each model is built small on both sides (the
architecture is the same code path at any size), GluonNLP's parameters are saved with
``save_parameters`` and loaded strictly into ours. Full-size structure (every parameter
name and shape) is compared separately without allocating the weights.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import gluon_hub
import gluon_hub.compat  # noqa: F401  (numpy aliases before gluonnlp imports mxnet)
from gluon_hub._factory import import_object
from gluon_hub.compat import mx
from gluon_hub.testing import count_parameters
from gluon_nlp_core.models.bert import BERTClassifier, BERTForQA, BERTForQALoss
from gluon_nlp_core.models.roberta import RoBERTaClassifier

import gluonnlp
from gluonnlp.model import bert as ref_bert, language_model as ref_lm, transformer as ref_transformer
from gluonnlp.model.translation import NMTModel

#: GPT-2 has no GluonNLP package reference (GluonNLP shipped it in its scripts):
#: tests/test_models_gpt2.py covers it, and tests/test_models_elmo.py ELMo and big_rnn_lm_2048_512.
NAMES = [name for name in gluon_hub.list_models(plugin="nlp") if not name.startswith(("gpt2", "elmo_", "big_rnn"))]
VOCAB_SIZE = 50
TINY_BERT = dict(num_layers=2, units=16, hidden_size=32, num_heads=2, max_length=24)
TINY_NMT = dict(num_layers=2, units=16, hidden_size=32, num_heads=4)
#: Sizes of GluonNLP 0.10's published BERT and RoBERTa vocabularies, as its own test suite
#: asserts them (tests/unittest/test_models.py, test_pretrained_bert_models and
#: test_pretrained_roberta_models): an independent check of the sizes in _model_data.json.
#: The rest: DistilBERT's vocabulary is the file (same sha1) of scibert_basevocab_uncased;
#: ERNIE 1.0's size is Baidu's ernie_config.json, KoBERT's SK T-Brain's config.
VOCAB_SIZES = {
    "book_corpus_wiki_en_uncased": 30522,
    "book_corpus_wiki_en_cased": 28996,
    "openwebtext_book_corpus_wiki_en_uncased": 30522,
    "wiki_multilingual_uncased": 105879,
    "wiki_multilingual_cased": 119547,
    "wiki_cn_cased": 21128,
    "scibert_scivocab_uncased": 31090,
    "scibert_scivocab_cased": 31116,
    "scibert_basevocab_uncased": 30522,
    "scibert_basevocab_cased": 28996,
    "biobert_v1.0_pubmed_cased": 28996,
    "biobert_v1.0_pmc_cased": 28996,
    "biobert_v1.0_pubmed_pmc_cased": 28996,
    "biobert_v1.1_pubmed_cased": 28996,
    "clinicalbert_uncased": 30522,
    "openwebtext_ccnews_stories_books_cased": 50265,
    "distilbert_book_corpus_wiki_en_uncased": 30522,
    "baidu_ernie_uncased": 18000,
    "kobert_news_wiki_ko_cased": 8002,
}
#: Families built from GluonNLP's BERT code: same inputs as BERT's, less what they lack.
_ENCODERS = ("bert", "ernie", "roberta", "distilbert")


def _vocab(cls=gluonnlp.Vocab, size=None):
    """A vocabulary of ``size`` tokens, or of VOCAB_SIZE words plus the class's specials."""
    specials = len(cls(gluonnlp.data.count_tokens([])))
    words = VOCAB_SIZE if size is None else size - specials
    return cls(gluonnlp.data.count_tokens(f"w{i}" for i in range(words)))


def _factory(name):
    return import_object(gluon_hub.info(name).factory, name)


def _family(name):
    for prefix in (*_ENCODERS, "standard_lstm_lm", "awd_lstm_lm", "transformer"):
        if name.startswith(prefix):
            return prefix
    raise LookupError(f"no GluonNLP reference known for nlp model {name!r}: add one here")


def _tiny_lm_sizes(name):
    hparams = {**ref_lm.standard_lstm_lm_hparams, **ref_lm.awd_lstm_lm_hparams}[name]
    # Keep the tie-weights constraint of each model (embed == hidden for standard ones).
    if hparams["embed_size"] == hparams["hidden_size"]:
        return dict(embed_size=12, hidden_size=12)
    return dict(embed_size=8, hidden_size=12)


def _reference(name, full_size=False, vocab_size=None):
    """GluonNLP's model (small unless full_size; with a vocabulary of ``vocab_size``, else
    a small one) and the kwargs that build ours alike."""
    family = _family(name)
    if family in _ENCODERS:
        sizes = {} if full_size else TINY_BERT
        extra = {} if full_size else dict(embed_size=TINY_BERT["units"])
        bert_like = family in ("bert", "ernie")
        vocab = _vocab(gluonnlp.vocab.BERTVocab if bert_like else gluonnlp.Vocab, vocab_size)
        build = {"roberta": ref_bert.get_roberta_model,
                 "distilbert": lambda _, **kw: ref_bert.distilbert_6_768_12(dataset_name=None,
                                                                            **kw)
                 }.get(family, ref_bert.get_bert_model)
        net, _ = build(name, vocab=vocab, pretrained=False, hparam_allow_override=True,
                       **sizes, **extra)
        return net, dict(vocab_size=len(vocab), **sizes)
    if family in ("standard_lstm_lm", "awd_lstm_lm"):
        sizes = {} if full_size else _tiny_lm_sizes(name)
        vocab = _vocab(size=vocab_size)
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
    vocab = _vocab(size=vocab_size)
    net = NMTModel(vocab, vocab, encoder, decoder, one_step, share_embed=True,
                   embed_size=units, tie_weights=True, embed_initializer=None,
                   prefix="transformer_")
    return net, dict(vocab_size=len(vocab), **sizes)


def _inputs(name, rng):
    family = _family(name)
    if family in _ENCODERS:
        batch, length = 3, 9
        tokens = mx.nd.array(rng.randint(0, VOCAB_SIZE, (batch, length)))
        types = mx.nd.array(rng.randint(0, 2, (batch, length)))
        valid = mx.nd.array([9, 4, 6])
        masked = mx.nd.array(rng.randint(0, 4, (batch, 3)))
        return {"roberta": (tokens, valid, masked), "distilbert": (tokens, valid)}.get(
            family, (tokens, types, valid, masked))
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
    if _family(name) in _ENCODERS:  # integer ids, types, lengths and positions, as declared
        integers = [x.astype("int32") for x in inputs]
        for want, have in zip(expected, _flatten(ours(*integers))):
            np.testing.assert_allclose(have.asnumpy(), want.asnumpy(), rtol=1e-4, atol=1e-5)


def _shapes(net):
    return {key: param.shape for key, param in net._collect_params_with_prefix().items()}


def _assert_same_structure(reference, ours):
    """Same parameter names, and shapes equal where both sides know them."""
    want, have = _shapes(reference), _shapes(ours)
    assert sorted(have) == sorted(want)
    for key, shape in want.items():
        # 0 is a dimension left to shape inference on one side.
        assert len(shape) == len(have[key]), key
        assert all(a == b or 0 in (a, b) for a, b in zip(shape, have[key])), key


def _default_vocab_size(name):
    return inspect.signature(_factory(name)).parameters["vocab_size"].default


@pytest.mark.parametrize("name", NAMES)
def test_full_size_parameter_names_and_shapes_match(name):
    reference, kwargs = _reference(name, full_size=True)
    _assert_same_structure(reference, _factory(name)(vocab_size=kwargs["vocab_size"]))


def _symbolic_count(net, inputs):
    """Parameters of ``net`` with shapes inferred from ``inputs``' shapes, allocating none."""
    names = [f"input{i}" for i in range(len(inputs))]
    outputs = _flatten_symbols(net(*[mx.sym.var(n) for n in names]))
    graph = mx.sym.Group(outputs)
    arg_shapes, _, _ = graph.infer_shape(**{n: x.shape for n, x in zip(names, inputs)})
    shapes = dict(zip(graph.list_arguments(), arg_shapes))
    return sum(int(np.prod(shapes[p.name])) for p in net.collect_params().values())


def _flatten_symbols(out):
    if isinstance(out, mx.sym.Symbol):
        return [out]
    return [leaf for item in out for leaf in _flatten_symbols(item)]


@pytest.mark.parametrize("name", NAMES)
def test_declared_num_params_is_gluonnlps_count(name):
    # The conformance kit checks our built model against num_params; this checks the
    # number itself against GluonNLP's model at full size with the default vocabulary.
    reference, _ = _reference(name, full_size=True, vocab_size=_default_vocab_size(name))
    inputs = _inputs(name, np.random.RandomState(0))
    if _family(name) in _ENCODERS:  # shapes inferred symbolically: no weight allocated
        assert _symbolic_count(reference, inputs) == gluon_hub.info(name).num_params
        return
    # GluonNLP's language models call mx.nd in their forward: they cannot run symbolically.
    reference.collect_params().setattr("grad_req", "null")  # no gradient buffers
    reference.initialize(mx.init.Zero())
    reference(*inputs)  # completes deferred shapes
    assert count_parameters(reference) == gluon_hub.info(name).num_params


@pytest.mark.parametrize("name", NAMES)
def test_weight_variants_build_the_architecture_of_their_file(name):
    spec = gluon_hub.info(name)
    default = _default_vocab_size(name)
    first = spec.weights[0]
    assert not first.kwargs, "the factory's defaults are the first variant's"
    assert first.file.filename == (
        f"gluon/models/{name}_{first.tag}-{first.file.digest[:8]}.zip")
    assert first.file.extract.endswith(".params") and first.file.algorithm == "sha1"
    for variant in spec.weights:
        size = {**spec.kwargs, **variant.kwargs}.get("vocab_size", default)
        assert f"({size} tokens)" in variant.description, variant.tag
        if _family(name) in _ENCODERS:
            assert size == VOCAB_SIZES[variant.tag], variant.tag
        assert variant.kwargs.get("vocab_size") == (None if size == default else size)
        # Besides the vocabulary, only heads that the file lacks (test_models_registry.py).
        assert set(variant.kwargs) <= {"vocab_size", "use_decoder", "use_classifier"}


def _gluonnlp_bert(name, vocab_size, use_decoder=True, use_classifier=True):
    """GluonNLP's full-size BERTModel built directly (get_model would fetch a vocabulary)."""
    hparams = ref_bert.bert_hparams[name]
    encoder = ref_bert.BERTEncoder(
        num_layers=hparams["num_layers"], units=hparams["units"],
        hidden_size=hparams["hidden_size"], max_length=hparams["max_length"],
        num_heads=hparams["num_heads"], dropout=hparams["dropout"])
    return ref_bert.BERTModel(
        encoder, vocab_size, token_type_vocab_size=hparams["token_type_vocab_size"],
        units=hparams["units"], embed_size=hparams["embed_size"],
        word_embed=hparams["word_embed"], use_decoder=use_decoder,
        use_classifier=use_classifier)


@pytest.mark.parametrize("name, tag", [
    (name, variant.tag) for name in NAMES for variant in gluon_hub.info(name).weights
    if variant.kwargs])
def test_variant_kwargs_give_the_embedding_and_decoder_of_gluonnlps_model(name, tag):
    spec = gluon_hub.info(name)
    variant = spec.weight(tag)
    kwargs = {**spec.kwargs, **variant.kwargs}
    size = kwargs.get("vocab_size", _default_vocab_size(name))
    ours = _factory(name)(**kwargs)  # as load(pretrained=tag)
    heads = {key: kwargs[key] for key in ("use_decoder", "use_classifier") if key in kwargs}
    reference = _gluonnlp_bert(name, size, **heads)
    _assert_same_structure(reference, ours)
    want, have = _shapes(reference), _shapes(ours)
    vocab_sized = [key for key, shape in want.items() if size in shape]
    decoder = {"decoder.3.weight", "decoder.3.bias"} if kwargs.get("use_decoder", True) else set()
    assert set(vocab_sized) == {"word_embed.0.weight", *decoder}
    for key in vocab_sized:
        assert have[key] == want[key], key


# -- fine-tuning heads -------------------------------------------------------------------


def _tiny_berts(**heads):
    """GluonNLP's tiny BERTModel and ours, built alike with the given heads."""
    vocab = _vocab(gluonnlp.vocab.BERTVocab)
    reference, _ = ref_bert.get_bert_model(
        "bert_12_768_12", vocab=vocab, pretrained=False, hparam_allow_override=True,
        embed_size=TINY_BERT["units"], **TINY_BERT, **heads)
    return reference, _factory("bert_12_768_12")(vocab_size=len(vocab), **TINY_BERT, **heads)


def _check_both_modes(ours, inputs, expected):
    np.testing.assert_allclose(ours(*inputs).asnumpy(), expected, rtol=1e-5, atol=1e-5)
    ours.hybridize()
    np.testing.assert_allclose(ours(*inputs).asnumpy(), expected, rtol=1e-4, atol=1e-5)


def test_sentence_classifier_matches_gluonnlps(tmp_path):
    reference_bert, ours_bert = _tiny_berts(use_pooler=True, use_decoder=False,
                                            use_classifier=False)
    # With dropout, the dense layer is the second of the classifier on both sides.
    reference = ref_bert.BERTClassifier(reference_bert, num_classes=3, dropout=0.1)
    mx.random.seed(0)
    reference.initialize(mx.init.Normal(0.2))
    tokens, types, valid, _ = _inputs("bert_12_768_12", np.random.RandomState(0))
    expected = reference(tokens, types, valid).asnumpy()  # not recording: no dropout
    path = str(tmp_path / "classifier.params")
    reference.save_parameters(path)

    ours = BERTClassifier(ours_bert, num_classes=3, dropout=0.1)
    ours.load_parameters(path)  # strict: the same parameter names and shapes
    _check_both_modes(ours, (tokens, types, valid), expected)


def _log_softmax(logits):
    top = logits.max(axis=-1, keepdims=True)
    return logits - top - np.log(np.exp(logits - top).sum(axis=-1, keepdims=True))


def test_squad_head_is_a_dense_layer_over_gluonnlps_sequence_output(tmp_path):
    # GluonNLP keeps its QA head in scripts/bert/model/qa.py (BertForQA): Dense(2,
    # flatten=False) over BERT's sequence output, channel 0 the start and channel 1 the end
    # scores. Here it is computed in numpy over GluonNLP's BERTModel, same parameters.
    reference, ours_bert = _tiny_berts(use_pooler=False, use_decoder=False,
                                       use_classifier=False)
    mx.random.seed(0)
    reference.initialize(mx.init.Normal(0.2))
    tokens, types, valid, _ = _inputs("bert_12_768_12", np.random.RandomState(0))
    sequence = reference(tokens, types, valid).asnumpy().astype(np.float64)
    path = str(tmp_path / "bert.params")
    reference.save_parameters(path)
    rng = np.random.RandomState(1)
    weight, bias = rng.normal(0, 0.5, (2, TINY_BERT["units"])), rng.normal(0, 0.5, (2,))
    scores = sequence @ weight.T + bias  # (batch, length, 2)

    ours = BERTForQA(ours_bert)
    ours.bert.load_parameters(path)
    ours.span_classifier.initialize()
    ours.span_classifier.weight.set_data(mx.nd.array(weight))
    ours.span_classifier.bias.set_data(mx.nd.array(bias))
    _check_both_modes(ours, (tokens, types, valid), scores)

    # The loss is the mean of the start and the end cross-entropy of each sample.
    start, end = np.array([0, 2, 5]), np.array([3, 2, 5])
    loss = BERTForQALoss()(ours(tokens, types, valid), mx.nd.array(start),
                           mx.nd.array(end)).asnumpy()
    rows = np.arange(len(start))
    want = -(_log_softmax(scores[..., 0])[rows, start]
             + _log_softmax(scores[..., 1])[rows, end]) / 2
    np.testing.assert_allclose(loss, want, rtol=1e-4)


def test_roberta_classifier_matches_gluonnlps(tmp_path):
    vocab = _vocab()
    reference_roberta, _ = ref_bert.get_roberta_model(
        "roberta_12_768_12", vocab=vocab, pretrained=False, hparam_allow_override=True,
        use_decoder=False, embed_size=TINY_BERT["units"], **TINY_BERT)
    # With dropout, the dense layers are the second and the fourth on both sides.
    reference = ref_bert.RoBERTaClassifier(reference_roberta, num_classes=3, dropout=0.1)
    mx.random.seed(0)
    reference.initialize(mx.init.Normal(0.2))
    tokens, valid, _ = _inputs("roberta_12_768_12", np.random.RandomState(0))
    expected = reference(tokens, valid).asnumpy()
    path = str(tmp_path / "classifier.params")
    reference.save_parameters(path)

    ours = RoBERTaClassifier(_factory("roberta_12_768_12")(
        vocab_size=len(vocab), use_decoder=False, **TINY_BERT), num_classes=3, dropout=0.1)
    ours.load_parameters(path)  # strict
    _check_both_modes(ours, (tokens, valid), expected)
    with pytest.raises(ValueError, match="use_decoder=False"):
        RoBERTaClassifier(_factory("roberta_12_768_12")(vocab_size=10, **TINY_BERT))
