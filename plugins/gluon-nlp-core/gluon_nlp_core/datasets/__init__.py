"""Text datasets: parsers of the published files, each a list-like, picklable dataset.

Load them by name through the hub, from the cache or from a directory of your own files::

    gluon_hub.load_dataset("squad", segment="dev", version="2.0")
    gluon_hub.load_dataset("glue_sst2", segment="train", root="~/data/SST-2")

=============  =======================================  ========================================
name           segments                                 sample
=============  =======================================  ========================================
squad          train, dev (``version="1.1"``/``"2.0"``)  :class:`SQuADRecord` / :class:`SQuAD2Record`
glue_cola      train, dev, test                         ``[sentence, label]``
glue_sst2      train, dev, test                         ``[sentence, label]``
glue_stsb      train, dev, test                         ``[sentence1, sentence2, score]``
glue_qqp       train, dev, test                         ``[question1, question2, label]``
glue_qnli      train, dev, test                         ``[question, sentence, label]``
glue_rte       train, dev, test                         ``[sentence1, sentence2, label]``
glue_wnli      train, dev, test                         ``[sentence1, sentence2, label]``
glue_mrpc      train, dev, test                         ``[sentence1, sentence2, label]``
glue_mnli      train, dev_matched, dev_mismatched,      ``[sentence1, sentence2, label]``
               test_matched, test_mismatched
trec           train, test                              ``[question, coarse_label_index]``
iwslt2015      train, val, test                         ``(source, target)``
wikitext2      train, val, test                         a token (``flatten=False``: a token list)
wikitext103    train, val, test                         as wikitext2
=============  =======================================  ========================================

The groups each ``*_datasets.json`` describes are parsed by their own modules: ``superglue``
(``superglue_rte`` ... ``superglue_axg``), ``sentiment`` (``imdb``, ``mr``, ``subj``, ``cr``, ``mpqa``,
``sst_1``, ``sst_2``), ``wmt`` (``wmt2014``, ``wmt2016``, raw and ``_bpe``), ``tagging``
(``conll2000`` ... ``conll2004``, ``ud21``), ``intent_slot`` (``atis``, ``snips``), ``corpora``
(``gbw``, ``text8``, ``enwik8``) and ``word_evaluation`` (word similarity: ``wordsim353``, ``men``,
``simlex999`` ...; word analogy: ``google_analogy``, ``bigger_analogy``);
``gluon-hub list --kind datasets`` shows them all.
"""

from __future__ import annotations

from ._base import TextDataset
from .glue import (
    GlueCoLA,
    GlueMNLI,
    GlueMRPC,
    GlueQNLI,
    GlueQQP,
    GlueRTE,
    GlueSST2,
    GlueSTSB,
    GlueWNLI,
)
from .language_model import WikiText2, WikiText103
from .squad import SQuAD, SQuAD2Record, SQuADRecord
from .translation import IWSLT2015
from .trec import TREC, TREC_CLASSES

__all__ = [
    "IWSLT2015",
    "TREC",
    "TREC_CLASSES",
    "GlueCoLA",
    "GlueMNLI",
    "GlueMRPC",
    "GlueQNLI",
    "GlueQQP",
    "GlueRTE",
    "GlueSST2",
    "GlueSTSB",
    "GlueWNLI",
    "SQuAD",
    "SQuAD2Record",
    "SQuADRecord",
    "TextDataset",
    "WikiText103",
    "WikiText2",
]
