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
    load_embedding(name, unknown_token="<unk>", init_unknown_vec=np.zeros,
                   lower_fallback=False, root=None) -> WordEmbedding
        every GluonNLP 0.10 source by name ("glove.6B.50d", "wiki.en", ...), hash-verified,
        converted once and memory-mapped; load_embedding_file(path, ...) for text files
    list_embedding_sources(family=None), embedding_source(name) -> EmbeddingSource
    WordEmbedding: emb[token(s)] -> vector(s), emb.matrix(vocab) -> (len(vocab), dim),
        emb.idx_to_token / idx_to_vec / token_to_idx / unknown_token / dim

    WhitespaceTokenizer()(text) -> list[str]
    BERTBasicTokenizer(lower=True)(text) -> list[str]
    BERTTokenizer(vocab, lower=True, max_input_chars_per_word=200)
        tokenizer(text) -> list[str] word pieces; tokenizer.tokenize_batch(texts);
        tokenizer.convert_tokens_to_ids(tokens); BERTTokenizer.is_first_subword(piece);
        tokenizer.vocab, tokenizer.lower
    GPT2BPETokenizer(merges=None, *, root=None)(text) -> list[str]   GPT-2 / RoBERTa byte-level
        BPE (published merges by default: bpe_ranks_file()); GPT2BPEDetokenizer()(tokens) -> str
    SentencepieceTokenizer(path, num_best=0, alpha=1.0), SentencepieceDetokenizer(path),
    SacreMosesTokenizer(lang="en"), SacreMosesDetokenizer(return_str=True), JiebaTokenizer()
        thin wrappers over sentencepiece / sacremoses / jieba (imported on first use)

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

from .bpe import GPT2BPEDetokenizer, GPT2BPETokenizer, bpe_ranks_file
from .embedding import embedding_matrix, read_word_vectors
from .pretrained import list_vocabs, load_vocab, vocab_file
from .tokenizers import BERTBasicTokenizer, BERTTokenizer, WhitespaceTokenizer
from .vocab import BERT_SPECIAL_TOKENS, Vocab, count_tokens
from .word_embeddings import (
    EmbeddingSource,
    WordEmbedding,
    embedding_source,
    list_embedding_sources,
    load_embedding,
    load_embedding_file,
)
from .wrappers import (
    JiebaTokenizer,
    SacreMosesDetokenizer,
    SacreMosesTokenizer,
    SentencepieceDetokenizer,
    SentencepieceTokenizer,
)

__all__ = [
    "BERTBasicTokenizer",
    "BERTTokenizer",
    "BERT_SPECIAL_TOKENS",
    "EmbeddingSource",
    "GPT2BPEDetokenizer",
    "GPT2BPETokenizer",
    "JiebaTokenizer",
    "SacreMosesDetokenizer",
    "SacreMosesTokenizer",
    "SentencepieceDetokenizer",
    "SentencepieceTokenizer",
    "Vocab",
    "WhitespaceTokenizer",
    "WordEmbedding",
    "bpe_ranks_file",
    "count_tokens",
    "embedding_matrix",
    "embedding_source",
    "list_embedding_sources",
    "list_vocabs",
    "load_embedding",
    "load_embedding_file",
    "load_vocab",
    "read_word_vectors",
    "vocab_file",
]
