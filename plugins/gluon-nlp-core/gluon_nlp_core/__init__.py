"""gluon-nlp-core: the text plugin of gluon_hub (vocabularies, tokenizers, BERT, LMs)."""

__version__ = "0.1.0"
