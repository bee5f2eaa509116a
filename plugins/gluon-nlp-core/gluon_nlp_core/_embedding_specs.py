"""The word embeddings gluon-nlp-core registers: every source of ``text/embedding_sources.json``.

Imports only the hub's specs and the stdlib (listing must stay cheap): the table is read as
JSON, and the vectors' length, the paper and the license come from the source's name and
family. The loader, :func:`gluon_nlp_core.text.word_embeddings.load_from_spec`, is imported on
first load.
"""

from __future__ import annotations

import functools
import json
import re
from importlib import resources

from gluon_hub import EmbeddingSpec, FileRef

_FACTORY = "gluon_nlp_core.text.word_embeddings:load_from_spec"

# family -> (description prefix, paper, license), as the publishers state them.
_GLOVE = ("GloVe vectors", "Pennington et al., GloVe: Global Vectors for Word Representation, EMNLP 2014",
          "PDDL-1.0")
# GloVe's corpora, as its page describes them.
_GLOVE_CORPORA = {"6B": "Wikipedia 2014 + Gigaword 5, 6B tokens, uncased", "42B": "Common Crawl, 42B tokens, uncased",
                  "840B": "Common Crawl, 840B tokens, cased", "twitter.27B": "Twitter, 27B tokens, uncased"}
_FASTTEXT_WIKI = ("fastText vectors trained on Wikipedia",
                  "Bojanowski et al., Enriching Word Vectors with Subword Information, TACL 2017",
                  "CC-BY-SA-3.0")
_FASTTEXT_CC = ("fastText vectors trained on Common Crawl and Wikipedia",
                "Grave et al., Learning Word Vectors for 157 Languages, LREC 2018", "CC-BY-SA-3.0")
_FASTTEXT_EN = ("fastText English vectors",
                "Mikolov et al., Advances in Pre-Training Distributed Word Representations, LREC 2018",
                "CC-BY-SA-3.0")
_WORD2VEC = ("word2vec vectors", "Mikolov et al., Distributed Representations of Words and Phrases "
             "and their Compositionality, NIPS 2013", "")


def _dim(name: str, family: str) -> int | None:
    """The vector length the name states (``glove.6B.50d``, ``cc.de.300``, ``...-negative300``);
    fastText's ``wiki.*`` vectors have 300 (fastText's pretrained-vectors page)."""
    found = re.search(r"(\d+)d(?:-|$)|^cc\.[^.]+\.(\d+)$|(?:negative|skipgram)(\d+)", name)
    if found:
        return int(next(g for g in found.groups() if g))
    return 300 if family == "fasttext" and name.startswith("wiki.") else None


def _about(name: str, family: str) -> tuple[str, str, str, tuple[str, ...]]:
    """Description, paper, license and tags (family, language) of one source."""
    if family == "glove":
        corpus = _GLOVE_CORPORA.get(".".join(name.split(".")[1:-1]), name)
        return f"{_GLOVE[0]} ({corpus})", _GLOVE[1], _GLOVE[2], ("glove", "en")
    if family == "word2vec":
        return f"{_WORD2VEC[0]} ({name})", _WORD2VEC[1], _WORD2VEC[2], ("word2vec", "en")
    if name.startswith(("wiki.", "cc.")):
        language = name.split(".")[1]
        about = _FASTTEXT_WIKI if name.startswith("wiki.") else _FASTTEXT_CC
        return f"{about[0]}, language {language}", about[1], about[2], ("fasttext", language)
    subword = ", with subword information" if name.endswith("-subword") else ""
    return f"{_FASTTEXT_EN[0]} ({name}{subword})", _FASTTEXT_EN[1], _FASTTEXT_EN[2], ("fasttext", "en")


@functools.lru_cache(maxsize=1)
def embedding_specs() -> tuple[EmbeddingSpec, ...]:
    """One spec per published source, its file on GluonNLP's mirror under ``gluon/embeddings/``."""
    text = resources.files("gluon_nlp_core").joinpath("text").joinpath("embedding_sources.json").read_text("utf-8")
    table = json.loads(text)
    specs = []
    for name, entry in sorted(table["sources"].items()):
        family = entry["family"]
        path = f"gluon/embeddings/{family}/{entry['file']}"
        description, paper, license_, tags = _about(name, family)
        specs.append(EmbeddingSpec(
            name=name, factory=_FACTORY, description=description, family=family, dim=_dim(name, family),
            files=(FileRef(hash=f"sha1:{entry['sha1']}", filename=path, urls=(table["_mirror"] + path,)),),
            license=license_, paper=paper, tags=tags,
        ))
    return tuple(specs)
