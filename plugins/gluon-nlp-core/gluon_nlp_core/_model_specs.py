"""Model specs of gluon-nlp-core; imports only the stdlib and gluon_hub's specs.

The published weight hashes and the reported results live in ``_model_data.json``; this
module joins them with what is known about each architecture. The files are GluonNLP
0.10's: ``gluon/models/{name}_{tag}-{sha1[:8]}.zip`` holding a ``.params`` whose sha1 is
the one GluonNLP published.

A weight variant's description names the vocabulary it needs (fetch it with
``gluon_nlp_core.text.load_vocab(name)``) and the ``vocab_size`` to build the model with.
"""

from __future__ import annotations

import json
from importlib import resources

from gluon_hub.specs import FileRef, InputSpec, Metric, ModelSpec, WeightVariant

_MODELS = "gluon_nlp_core.models"

_BERT = dict(
    task="text-encoding",
    input=InputSpec(shape=(None,), layout="NT"),
    license="Apache-2.0",
    paper="https://arxiv.org/abs/1810.04805",
)
_LM = dict(
    task="language-modeling",
    input=InputSpec(shape=(None,), layout="TN"),
    license="Apache-2.0",
)
_STANDARD_LM_PAPER = "https://arxiv.org/abs/1409.2329"
_AWD_LM_PAPER = "https://arxiv.org/abs/1708.02182"

#: Everything about each model except its weights and results.
_ARCHITECTURES: dict[str, dict] = {
    "bert_12_768_12": dict(
        _BERT,
        factory=f"{_MODELS}.bert:bert_12_768_12",
        description="BERT-base encoder (12 layers, 768 units, 12 heads) with pooler, masked-LM "
        "and next-sentence heads; BERT WordPiece tokenizer, at most 512 tokens",
        tags=("bert", "transformer", "wordpiece", "max_length:512"),
    ),
    "bert_24_1024_16": dict(
        _BERT,
        factory=f"{_MODELS}.bert:bert_24_1024_16",
        description="BERT-large encoder (24 layers, 1024 units, 16 heads) with pooler, "
        "masked-LM and next-sentence heads; BERT WordPiece tokenizer, at most 512 tokens",
        tags=("bert", "transformer", "wordpiece", "max_length:512"),
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
    "transformer_en_de_512": dict(
        task="machine-translation",
        factory=f"{_MODELS}.transformer:transformer_en_de_512",
        input=InputSpec(shape=(None,), layout="NT"),
        description="Transformer-base English-German translation (6+6 layers, 512 units), "
        "shared source/target BPE vocabulary; at most 530 source, 549 target tokens",
        license="Apache-2.0",
        paper="https://arxiv.org/abs/1706.03762",
        tags=("transformer", "seq2seq", "bpe", "max_length:530"),
    ),
}


def _load_data() -> dict:
    text = resources.files("gluon_nlp_core").joinpath("_model_data.json").read_text("utf-8")
    return json.loads(text)


def _variant(name: str, entry: dict, sources: dict[str, str]) -> WeightVariant:
    sha1 = entry["sha1"]
    stem = f"{name}_{entry['tag']}-{sha1[:8]}"
    how = f"vocabulary {entry['vocab']!r} ({entry['vocab_size']} tokens, build with " \
          f"vocab_size={entry['vocab_size']})"
    if "lower" in entry:
        how += "; lower-case the text" if entry["lower"] else "; keep the case"
    return WeightVariant(
        tag=entry["tag"],
        file=FileRef(hash=f"sha1:{sha1}", filename=f"gluon/models/{stem}.zip",
                     extract=f"{stem}.params"),
        metrics=tuple(Metric(metric, value, dataset, split, sources[source])
                      for metric, value, dataset, split, source in entry.get("metrics", ())),
        description=how,
    )


def model_specs() -> list[ModelSpec]:
    """The specs of every model this plugin provides."""
    data = _load_data()
    specs = []
    for name, arch in _ARCHITECTURES.items():
        entry = data["models"][name]
        weights = tuple(_variant(name, w, data["sources"]) for w in entry["weights"])
        specs.append(ModelSpec(name=name, weights=weights, num_params=entry["num_params"],
                               **arch))
    return specs
