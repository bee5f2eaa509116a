"""Model specs of gluon-nlp-core; imports only the stdlib and gluon_hub's specs.

The published weight hashes and the reported results live in ``_model_data.json``; this
module joins them with what is known about each architecture. The files are GluonNLP
0.10's: ``gluon/models/{name}_{tag}-{sha1[:8]}.zip`` holding a ``.params`` whose sha1 is
the one GluonNLP published.

A weight variant's description names the vocabulary it needs (fetch it with
``gluon_nlp_core.text.load_vocab(name)``); a variant whose vocabulary is not the factory's
default size (the first variant's) carries ``vocab_size`` in its ``kwargs``, so that
``gluon_hub.load(name, pretrained=tag)`` builds the embedding and decoder its file holds;
a variant whose file lacks a head (BioBERT, ClinicalBERT) carries ``use_decoder=False``
and the like, from the entry's ``kwargs``, so that its file still loads strictly.

Token ids, token types, valid lengths and masked positions are declared ``int32``: the
models take them as integers (or as GluonNLP's floats), and the conformance kit feeds
integer inputs with ones, which are valid in every one of these roles.
"""

from __future__ import annotations

import json
from importlib import resources

from gluon_hub.specs import FileRef, InputSpec, Metric, ModelSpec, WeightVariant

_MODELS = "gluon_nlp_core.models"

_TOKENS = InputSpec(shape=(None,), layout="NT", dtype="int32")
#: The functions building each family's export graphs (states as inputs and outputs).
_GRAPHS = "gluon_nlp_core.models.export_graphs"
#: The ONNX runners (gluon_hub.runtime.load), of the models whose graphs export.
_ENCODER = "gluon_nlp_core.onnx_runner:TextEncoder"
_BERT = dict(
    task="text-encoding",
    export_graphs=f"{_GRAPHS}:bert_graphs",
    runner=_ENCODER,
    input=_TOKENS,
    # token_types, valid_length, masked_positions: the default model has the masked-LM
    # decoder, which needs the positions to score.
    extra_inputs=(_TOKENS, InputSpec(shape=(), layout="N", dtype="int32"),
                  InputSpec(shape=(None,), layout="NT", dtype="int32")),
    license="Apache-2.0",
    paper="https://arxiv.org/abs/1810.04805",
)
_LENGTH = InputSpec(shape=(), layout="N", dtype="int32")
_ROBERTA = dict(
    task="text-encoding",
    export_graphs=f"{_GRAPHS}:bert_graphs",
    runner=_ENCODER,
    input=_TOKENS,
    extra_inputs=(_LENGTH, InputSpec(shape=(None,), layout="NT", dtype="int32")),
    license="MIT",
    paper="https://arxiv.org/abs/1907.11692",
    tags=("roberta", "transformer", "bpe", "max_length:512"),
)
_GPT2 = dict(
    task="language-modeling",
    export_graphs=f"{_GRAPHS}:gpt2_graphs",
    runner="gluon_nlp_core.onnx_runner:TextGenerator",
    input=_TOKENS,
    output_shape=(None, 50257),
    license="MIT",
    paper="https://cdn.openai.com/better-language-models/language_models_are_unsupervised_multitask_learners.pdf",
    tags=("gpt2", "transformer", "decoder-only", "bpe", "max_length:1024"),
)
#: Published LM and NMT vocabularies (wikitext-2, WMT2014 BPE), the factories' defaults.
_WIKITEXT2_VOCAB, _WMT2014_VOCAB = 33278, 36794
_LM = dict(
    task="language-modeling",
    export_graphs=f"{_GRAPHS}:language_model_graphs",
    runner="gluon_nlp_core.onnx_runner:LanguageModelScorer",
    # Time-major, (length, batch): one free axis beside the batch axis.
    input=InputSpec(shape=(None,), layout="TN", dtype="int32"),
    output_shape=(None, _WIKITEXT2_VOCAB),
    license="Apache-2.0",
)
_ELMO = dict(
    task="text-encoding",
    export_graphs=f"{_GRAPHS}:elmo_graphs",
    # Character ids (gluon_nlp_core.text.elmo_chars.elmo_char_ids): 50 a word.
    input=InputSpec(shape=(None, 50), layout="NTC", dtype="int32"),
    license="Apache-2.0",
    paper="https://arxiv.org/abs/1802.05365",
)
_STANDARD_LM_PAPER = "https://arxiv.org/abs/1409.2329"
_AWD_LM_PAPER = "https://arxiv.org/abs/1708.02182"

#: Everything about each model except its weights and results.
_ARCHITECTURES: dict[str, dict] = {
    "bert_12_768_12": dict(
        _BERT,
        factory=f"{_MODELS}.bert:bert_12_768_12",
        output_shape=(None, 768),  # the sequence encoding, first of the outputs
        description="BERT-base encoder (12 layers, 768 units, 12 heads) with pooler, masked-LM "
        "and next-sentence heads; BERT WordPiece tokenizer, at most 512 tokens",
        tags=("bert", "transformer", "wordpiece", "max_length:512"),
    ),
    "bert_24_1024_16": dict(
        _BERT,
        factory=f"{_MODELS}.bert:bert_24_1024_16",
        output_shape=(None, 1024),
        description="BERT-large encoder (24 layers, 1024 units, 16 heads) with pooler, "
        "masked-LM and next-sentence heads; BERT WordPiece tokenizer, at most 512 tokens",
        tags=("bert", "transformer", "wordpiece", "max_length:512"),
    ),
    "ernie_12_768_12": dict(
        _BERT,
        factory=f"{_MODELS}.bert:ernie_12_768_12",
        output_shape=(None, 768),
        description="Baidu ERNIE 1.0 Chinese encoder (12 layers, 768 units, 12 heads, ReLU) "
        "with pooler, masked-LM and next-sentence heads; WordPiece tokenizer, at most 513 "
        "tokens",
        paper="https://arxiv.org/abs/1904.09223",
        tags=("bert", "ernie", "transformer", "wordpiece", "chinese", "max_length:513"),
    ),
    "roberta_12_768_12": dict(
        _ROBERTA,
        factory=f"{_MODELS}.roberta:roberta_12_768_12",
        output_shape=(None, 768),
        description="RoBERTa-base encoder (12 layers, 768 units, 12 heads) with the masked-LM "
        "head; GPT-2 byte-level BPE tokenizer, at most 512 tokens",
    ),
    "roberta_24_1024_16": dict(
        _ROBERTA,
        factory=f"{_MODELS}.roberta:roberta_24_1024_16",
        output_shape=(None, 1024),
        description="RoBERTa-large encoder (24 layers, 1024 units, 16 heads) with the "
        "masked-LM head; GPT-2 byte-level BPE tokenizer, at most 512 tokens",
    ),
    "distilbert_6_768_12": dict(
        task="text-encoding",
        factory=f"{_MODELS}.distilbert:distilbert_6_768_12",
        export_graphs=f"{_GRAPHS}:bert_graphs",
        runner=_ENCODER,
        input=_TOKENS,
        extra_inputs=(_LENGTH,),
        output_shape=(None, 768),
        description="DistilBERT-base uncased encoder (6 layers, 768 units, 12 heads), no "
        "token types; BERT WordPiece tokenizer, at most 512 tokens",
        license="Apache-2.0",
        paper="https://arxiv.org/abs/1910.01108",
        tags=("bert", "distilbert", "transformer", "wordpiece", "max_length:512"),
    ),
    "gpt2_117m": dict(
        _GPT2,
        factory=f"{_MODELS}.gpt2:gpt2_117m",
        description="GPT-2 small language model (12 layers, 768 units, 12 heads), returns "
        "next-token scores and the per-layer keys/values for incremental decoding; "
        "byte-level BPE tokenizer, at most 1024 tokens",
    ),
    "gpt2_345m": dict(
        _GPT2,
        factory=f"{_MODELS}.gpt2:gpt2_345m",
        description="GPT-2 medium language model (24 layers, 1024 units, 16 heads), returns "
        "next-token scores and the per-layer keys/values for incremental decoding; "
        "byte-level BPE tokenizer, at most 1024 tokens",
    ),
    "standard_lstm_lm_200": dict(
        _LM,
        factory=f"{_MODELS}.language_model:standard_lstm_lm_200",
        description="2-layer LSTM language model, 200 units, tied weights; whitespace tokens",
        paper=_STANDARD_LM_PAPER,
        tags=("lstm", "rnn", "word-level"),
    ),
    "standard_lstm_lm_650": dict(
        _LM,
        factory=f"{_MODELS}.language_model:standard_lstm_lm_650",
        description="2-layer LSTM language model, 650 units, tied weights; whitespace tokens",
        paper=_STANDARD_LM_PAPER,
        tags=("lstm", "rnn", "word-level"),
    ),
    "standard_lstm_lm_1500": dict(
        _LM,
        factory=f"{_MODELS}.language_model:standard_lstm_lm_1500",
        description="2-layer LSTM language model, 1500 units, tied weights; whitespace tokens",
        paper=_STANDARD_LM_PAPER,
        tags=("lstm", "rnn", "word-level"),
    ),
    "awd_lstm_lm_600": dict(
        _LM,
        factory=f"{_MODELS}.language_model:awd_lstm_lm_600",
        description="3-layer AWD-LSTM language model, embedding 200, hidden 600; "
        "whitespace tokens",
        paper=_AWD_LM_PAPER,
        tags=("lstm", "rnn", "awd", "word-level"),
    ),
    "awd_lstm_lm_1150": dict(
        _LM,
        factory=f"{_MODELS}.language_model:awd_lstm_lm_1150",
        description="3-layer AWD-LSTM language model, embedding 400, hidden 1150; "
        "whitespace tokens",
        paper=_AWD_LM_PAPER,
        tags=("lstm", "rnn", "awd", "word-level"),
    ),
    **{
        f"elmo_2x{hidden}_{projection}_2048cnn_{highway}xhighway": dict(
            _ELMO,
            factory=f"{_MODELS}.elmo:elmo_2x{hidden}_{projection}_2048cnn_{highway}xhighway",
            # the first output: the character encoder's word vectors, both directions
            output_shape=(None, 2 * projection),
            description=f"ELMo: character CNN (2048 filters, {highway} highway layer"
            f"{'s' if highway > 1 else ''}), then 2 bidirectional LSTM layers of {hidden} units "
            f"projected to {projection}; returns every layer's states",
            tags=("elmo", "lstm", "character-cnn"),
        )
        for hidden, projection, highway in ((1024, 128, 1), (2048, 256, 1), (4096, 512, 2))
    },
    "big_rnn_lm_2048_512": dict(
        _LM,
        factory=f"{_MODELS}.big_rnn:big_rnn_lm_2048_512",
        output_shape=(None, 793471),
        description="2-layer LSTM language model of 2048 units projected to 512 (Google "
        "Billion Words vocabulary, 793471 tokens); whitespace tokens",
        paper="https://arxiv.org/abs/1602.02410",
        tags=("lstm", "rnn", "word-level"),
    ),
    "transformer_en_de_512": dict(
        task="machine-translation",
        factory=f"{_MODELS}.transformer:transformer_en_de_512",
        export_graphs=f"{_GRAPHS}:transformer_graphs",
        runner="gluon_nlp_core.onnx_runner:Translator",
        input=_TOKENS,
        extra_inputs=(_TOKENS,),  # teacher-forced target; valid lengths are optional
        output_shape=(None, _WMT2014_VOCAB),
        description="Transformer-base English-German translation (6+6 layers, 512 units), "
        "shared source/target BPE vocabulary; at most 530 source, 549 target tokens",
        license="Apache-2.0",
        paper="https://arxiv.org/abs/1706.03762",
        tags=("transformer", "seq2seq", "bpe", "max_length:530"),
    ),
}


#: The BERT heads a published file may lack, by the factory argument that leaves them out.
_HEADS = {"use_decoder": "masked-LM decoder", "use_classifier": "next-sentence classifier",
          "use_pooler": "pooler"}


def _load_data() -> dict:
    text = resources.files("gluon_nlp_core").joinpath("_model_data.json").read_text("utf-8")
    return json.loads(text)


def _variant(name: str, entry: dict, sources: dict[str, str],
             default_vocab_size: int) -> WeightVariant:
    sha1 = entry["sha1"]
    stem = f"{name}_{entry['tag']}-{sha1[:8]}"
    size = entry.get("vocab_size")
    how = (f"vocabulary {entry['vocab']!r} ({size} tokens)" if "vocab" in entry
           else "character ids, no vocabulary (gluon_nlp_core.text.elmo_chars.elmo_char_ids)")
    if "lower" in entry:
        how += "; lower-case the text" if entry["lower"] else "; keep the case"
    heads = entry.get("kwargs", {})
    if heads:  # the file lacks these heads: the variant builds the model without them
        how += "; the file holds no " + " and no ".join(
            _HEADS[key] for key, on in heads.items() if not on)
    kwargs = {} if size == default_vocab_size else {"vocab_size": size}
    return WeightVariant(
        tag=entry["tag"],
        file=FileRef(hash=f"sha1:{sha1}", filename=f"gluon/models/{stem}.zip",
                     extract=f"{stem}.params"),
        metrics=tuple(Metric(metric, value, dataset, split, sources[source])
                      for metric, value, dataset, split, source in entry.get("metrics", ())),
        description=how,
        kwargs={**kwargs, **heads},
    )


def model_specs() -> list[ModelSpec]:
    """The specs of every model this plugin provides."""
    data = _load_data()
    specs = []
    for name, arch in _ARCHITECTURES.items():
        entry = data["models"][name]
        # The factories default to the first variant's vocabulary (a test checks this).
        default = entry["weights"][0].get("vocab_size")
        weights = tuple(_variant(name, w, data["sources"], default) for w in entry["weights"])
        specs.append(ModelSpec(name=name, weights=weights, num_params=entry["num_params"],
                               **arch))
    return specs
