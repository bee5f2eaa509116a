"""Registry entries of the text models equal GluonNLP 0.10's tables: every weight file
(name and sha1) of the models registered here, every vocabulary they name, and the heads
that GluonNLP says some files lack."""

from __future__ import annotations

import re

import pytest

import gluon_hub
import gluon_hub.compat  # noqa: F401  (numpy aliases before gluonnlp imports mxnet)
from gluon_nlp_core.text import pretrained
from gluon_nlp_core.text.pretrained import list_vocabs, load_vocab, vocab_file

import gluonnlp.model  # noqa: F401  (fills the model store's sha1 table)
from gluonnlp.data.utils import _vocab_sha1
from gluonnlp.model import bert as ref_bert
from mxnet.gluon.model_zoo import model_store

NAMES = gluon_hub.list_models(plugin="nlp")
#: GPT-2's hashes, published in GluonNLP 0.10's scripts/text_generation/model/gpt.py
#: (model_store._model_sha1.update there), which the installed package does not include.
GPT2_SHA1 = {
    "gpt2_117m_openai_webtext": "26416f2ec2ab0c5f37e74dcec801f3e659546e03",
    "gpt2_345m_openai_webtext": "29173e25d2f3b187745bea6689693bb771862f81",
}
PUBLISHED = {**model_store._model_sha1, **GPT2_SHA1}
#: Files lacking heads, from gluonnlp.model.bert_12_768_12's docstring ("Note that ... do
#: not include these parameters") under use_decoder and use_classifier.
MISSING_HEADS = {
    "biobert": {"use_decoder": False, "use_classifier": False},
    "clinicalbert": {"use_decoder": False},
}
VARIANTS = [(name, variant) for name in NAMES for variant in gluon_hub.info(name).weights]


def _vocab_of(variant):
    return re.match(r"vocabulary '([^']+)'", variant.description).group(1)


@pytest.mark.parametrize("name, variant", VARIANTS,
                         ids=[f"{name}-{v.tag}" for name, v in VARIANTS])
def test_weight_file_is_gluonnlps(name, variant):
    key = f"{name}_{variant.tag}"
    sha1 = PUBLISHED[key]
    assert variant.file.hash == f"sha1:{sha1}"
    assert variant.file.filename == f"gluon/models/{key}-{sha1[:8]}.zip"
    assert variant.file.extract == f"{key}-{sha1[:8]}.params"


def test_every_published_file_of_these_models_is_registered():
    # Every model store entry of a model name registered here (GluonNLP's BERT family
    # included, whose names are bert_hparams' keys), so no variant is missing.
    assert set(ref_bert.bert_hparams) <= set(NAMES)
    registered = {f"{name}_{variant.tag}" for name, variant in VARIANTS}
    published = {key for key in PUBLISHED if any(key.startswith(f"{n}_") for n in NAMES)}
    assert published == registered


@pytest.mark.parametrize("name, variant", [(n, v) for n, v in VARIANTS if not n.startswith("elmo_")],
                         ids=[f"{name}-{v.tag}" for name, v in VARIANTS if not name.startswith("elmo_")])
def test_vocabulary_is_the_one_gluonnlp_loads_with_its_file(name, variant):  # ELMo reads characters
    vocab = _vocab_of(variant)
    # GluonNLP loads the vocabulary of the dataset name the weights are published under;
    # the translation model's source side is WMT2014_src.
    assert vocab == {"WMT2014": "WMT2014_src"}.get(variant.tag, variant.tag)
    sha1, suffix, _ = _vocab_sha1[vocab]
    ref = vocab_file(vocab)
    assert ref.hash == f"sha1:{sha1}"
    assert ref.filename == f"gluon/dataset/vocab/{vocab}-{sha1[:8]}.zip"
    assert ref.extract == f"{vocab}-{sha1[:8]}{suffix}"


def test_every_published_vocabulary_is_registered_with_gluonnlps_hash():
    # Token lists load as vocabularies; KoBERT's SentencePiece model is only a file here.
    spiece = sorted(name for name, (_, suffix, _) in _vocab_sha1.items() if suffix == ".spiece")
    assert spiece == ["kobert_news_wiki_ko_cased"]
    assert list_vocabs() == sorted(set(_vocab_sha1) - set(spiece))
    for name, (sha1, suffix, _) in _vocab_sha1.items():
        assert vocab_file(name).hash == f"sha1:{sha1}" and vocab_file(name).extract.endswith(suffix)


def test_sentencepiece_vocabulary_is_refused_as_a_token_list_with_what_to_do():
    with pytest.raises(ValueError, match="SentencePiece model.*pip install sentencepiece"):
        load_vocab("kobert_news_wiki_ko_cased")
    assert "kobert_news_wiki_ko_cased" not in pretrained._hashes()


@pytest.mark.parametrize("name, variant", VARIANTS,
                         ids=[f"{name}-{v.tag}" for name, v in VARIANTS])
def test_files_without_some_heads_build_without_them(name, variant):
    heads = next((h for prefix, h in MISSING_HEADS.items() if variant.tag.startswith(prefix)), {})
    assert {k: v for k, v in variant.kwargs.items() if k != "vocab_size"} == heads
