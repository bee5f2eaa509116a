"""Vocabularies and tokenizers; the API the models and fine-tuning scripts build on.

Stable API (keep in step with :mod:`gluon_nlp_core.models`)::

    Vocab(counter=None, max_size=None, min_freq=1, unknown_token="<unk>",
          reserved_tokens=None, token_to_idx=None, *, padding_token="<pad>",
          bos_token="<bos>", eos_token="<eos>", **other_special_tokens)
        vocab[token] -> int, vocab[[tokens]] -> [int], vocab.to_tokens(ids), len(vocab),
        token in vocab, vocab.idx_to_token, vocab.token_to_idx, vocab.unknown_token,
        vocab.padding_token / .cls_token / .sep_token / .mask_token ... (named specials),
        vocab.reserved_tokens, vocab.to_json(), Vocab.from_json(text),
        Vocab.from_tokens(tokens, unknown_token=..., **special_tokens)
    BERT_SPECIAL_TOKENS         keyword arguments that make a BERT vocabulary
    count_tokens(tokens, to_lower=False, counter=None) -> Counter
    load_vocab(name, root=None) -> Vocab      published vocab, e.g. "book_corpus_wiki_en_uncased"
    vocab_file(name) -> FileRef, list_vocabs() -> list[str]

    read_word_vectors(path, words=None) -> dict[str, ndarray]   GloVe / word2vec text files
    embedding_matrix(path, vocab_or_tokens, scale=0.25, seed=0) -> (matrix, found)
        row i is the vector of vocab.idx_to_token[i]; tokens not in the file ~ U[-scale, scale]

    WhitespaceTokenizer()(text) -> list[str]
    BERTBasicTokenizer(lower=True)(text) -> list[str]
    BERTTokenizer(vocab, lower=True, max_input_chars_per_word=200)
        tokenizer(text) -> list[str] word pieces; tokenizer.tokenize_batch(texts);
        tokenizer.convert_tokens_to_ids(tokens); BERTTokenizer.is_first_subword(piece);
        tokenizer.vocab, tokenizer.lower

Vocab JSON is GluonNLP 0.10's format both ways, and the BERT tokenizers give GluonNLP
0.10's ``BERTTokenizer`` / ``BERTBasicTokenizer`` tokens. Nothing here imports mxnet (word
vectors come as numpy arrays).

Examples
--------
>>> from gluon_nlp_core.text import BERTTokenizer, Vocab, BERT_SPECIAL_TOKENS
>>> vocab = Vocab.from_tokens(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "##s"],
...                           **BERT_SPECIAL_TOKENS)
>>> BERTTokenizer(vocab, lower=True)("Hellos, WORLD")
['hello', '##s', '[UNK]', '[UNK]']
"""

from __future__ import annotations

from .embedding import embedding_matrix, read_word_vectors
from .pretrained import list_vocabs, load_vocab, vocab_file
from .tokenizers import BERTBasicTokenizer, BERTTokenizer, WhitespaceTokenizer
from .vocab import BERT_SPECIAL_TOKENS, Vocab, count_tokens

__all__ = [
    "BERTBasicTokenizer",
    "BERTTokenizer",
    "BERT_SPECIAL_TOKENS",
    "Vocab",
    "WhitespaceTokenizer",
    "count_tokens",
    "embedding_matrix",
    "list_vocabs",
    "load_vocab",
    "read_word_vectors",
    "vocab_file",
]
