"""The ONNX runners of the text models: BERT-family features and heads, GPT-2 generation.

``gluon_hub.runtime.load(name, "model.onnx")`` builds them from the graphs
``gluon_hub.export(name, "model.onnx", format="onnx")`` wrote beside that path
(``model-valid_length.onnx``; GPT-2's ``model-prompt.onnx`` and ``model-step.onnx``), as the
specs name them in ``runner``. Text becomes ids through the plugin's own tokenizers and the
encoding the fine-tuning script uses (:mod:`gluon_nlp_core.text.encoding`), so the graphs see
the ids the MXNet model sees. The vocabulary (and GPT-2's BPE merges) default to the published
ones of the model's first weights, fetched through the cache; ``vocab=`` (a ``Vocab`` or a
published name), ``lower=`` and ``merges=`` choose others, and ``max_length=`` the positions
of a model built with fewer than its spec's. Imports numpy and the tokenizers, never mxnet.
"""

from __future__ import annotations

import functools
import json
import os
from importlib import resources
from typing import Any, Callable, Sequence

import numpy as np

from gluon_hub.runtime import Session

from .text.bpe import GPT2BPEDetokenizer, GPT2BPETokenizer
from .text.encoding import encode_pair, encode_roberta_pair
from .text.pretrained import load_vocab
from .text.tokenizers import BERTTokenizer
from .text.vocab import Vocab

__all__ = ["LanguageModelScorer", "TextEncoder", "TextGenerator", "Translator"]


@functools.lru_cache(maxsize=1)
def _weights_data() -> dict[str, Any]:
    """Each model's weight variants as ``_model_data.json`` lists them (vocabulary, casing)."""
    text = resources.files("gluon_nlp_core").joinpath("_model_data.json").read_text("utf-8")
    return dict(json.loads(text)["models"])


def _published_text(spec: Any) -> tuple[str, bool]:
    """The vocabulary name and lower-casing of the model's first published weights."""
    variants = _weights_data().get(spec.name, {}).get("weights", [])
    if not variants or "vocab" not in variants[0]:
        raise ValueError(f"model {spec.qualified_name!r} has no published vocabulary; pass vocab=")
    return variants[0]["vocab"], bool(variants[0].get("lower", False))


def _vocabulary(spec: Any, vocab: Vocab | str | None) -> Vocab:
    if isinstance(vocab, Vocab):
        return vocab
    return load_vocab(vocab if vocab is not None else _published_text(spec)[0])


def _max_length(spec: Any, given: int | None) -> int:
    """The positions the model has: ``given`` (a model built smaller), else its ``max_length:N`` tag."""
    if given is not None:
        if given < 3:
            raise ValueError(f"max_length must be at least 3, got {given}")
        return given
    for tag in spec.tags:
        if tag.startswith("max_length:"):
            return int(tag.partition(":")[2])
    raise ValueError(f"model {spec.qualified_name!r} names no max_length tag")


def _session(sessions: dict[str, Session], graph: str, spec: Any) -> Session:
    if not isinstance(sessions, dict) or graph not in sessions:
        raise TypeError(f"the runner of {spec.qualified_name!r} takes {{graph: Session}} with graph {graph!r}, "
                        "as gluon_hub.runtime.load builds it")
    return sessions[graph]


def _keeping(tokenize: Callable[[str], list[str]], token: str | None) -> Callable[[str], list[str]]:
    """``tokenize`` that passes ``token`` (the mask token) through whole: the tokenizers
    would split ``[MASK]`` or ``<mask>`` at its brackets as any punctuation."""
    if not token:
        return tokenize

    def split(text: str) -> list[str]:
        first, *rest = text.split(token)
        tokens = tokenize(first)
        for part in rest:
            tokens += [token, *tokenize(part)]
        return tokens

    return split


class _MaskKeepingTokenizer(BERTTokenizer):
    """WordPiece that keeps the vocabulary's mask token whole."""

    def __call__(self, text: str) -> list[str]:
        return _keeping(super().__call__, getattr(self.vocab, "mask_token", None))(text)


class TextEncoder:
    """BERT, ERNIE, RoBERTa or DistilBERT exported as its ``valid_length`` graph.

    :meth:`features` gives each text's sequence encoding (and BERT's pooled first token);
    :meth:`next_sentence` the next-sentence classifier's probabilities, :meth:`fill_mask`
    the masked-LM head's best tokens at each mask, where the exported model has those heads.
    """

    #: The graph files ``gluon_hub.runtime.load`` opens (of those ``bert_graphs`` exports).
    graphs = ("valid_length",)

    def __init__(self, sessions: dict[str, Session], spec: Any, *, vocab: Vocab | str | None = None,
                 lower: bool | None = None, merges: str | os.PathLike[str] | None = None,
                 max_length: int | None = None) -> None:
        self.session = _session(sessions, "valid_length", spec)
        self.spec = spec
        self.roberta = "roberta" in spec.tags
        self.token_types = "roberta" not in spec.tags and "distilbert" not in spec.tags
        self.vocab = _vocabulary(spec, vocab)
        self.max_length = _max_length(spec, max_length)
        self._encode: Callable[[str, str | None, int], tuple[list[int], list[int], int]]
        if self.roberta:
            bpe = _keeping(GPT2BPETokenizer(merges), getattr(self.vocab, "mask_token", None))
            self._encode = functools.partial(encode_roberta_pair, bpe, self.vocab)
        else:
            if lower is None:  # a named vocabulary says its casing, as the fine-tuning script reads it
                lower = "uncased" in vocab if isinstance(vocab, str) else _published_text(spec)[1]
            self.tokenizer = _MaskKeepingTokenizer(self.vocab, lower=lower)
            self._encode = functools.partial(encode_pair, self.tokenizer)
        inputs = len(self.session.inputs)
        fixed = 2 + self.token_types  # ids, (token types), valid length
        if inputs not in (fixed, fixed + 1):
            found = ", ".join(i.name for i in self.session.inputs)
            raise ValueError(f"{str(self.session.path)!r} takes {inputs} inputs ({found}); "
                             f"{spec.qualified_name!r}'s valid_length graph takes {fixed} (or {fixed + 1} with "
                             "the masked-LM head): export the graphs from this model again")
        #: Whether the graph holds the masked-LM head (it then takes the masked positions).
        self.masked_lm = inputs == fixed + 1
        heads = len(self.session.session.get_outputs()) - 1 - self.masked_lm
        #: BERT's pooler and next-sentence classifier, as far as the exported model has them.
        self.pooler, self.classifier = heads >= 1, heads >= 2

    def encode(self, texts: Sequence[str], pairs: Sequence[str] | None = None,
               max_length: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Token ids and segment ids ``(batch, length)``, padded, and the valid lengths."""
        if isinstance(texts, str):
            raise TypeError("texts is a sequence of strings; wrap one text in a list")
        if not texts:
            raise ValueError("give at least one text")
        if pairs is not None and len(pairs) != len(texts):
            raise ValueError(f"{len(pairs)} second sentences for {len(texts)} texts; give one per text")
        limit = self.max_length if max_length is None else max_length
        if not 2 < limit <= self.max_length:
            raise ValueError(f"max_length must be between 3 and the model's {self.max_length}, got {limit}")
        rows = [self._encode(text, pairs[i] if pairs is not None else None, limit)
                for i, text in enumerate(texts)]
        width = max(length for _, _, length in rows)
        pad = self.vocab[self.vocab.padding_token]
        ids = np.full((len(rows), width), pad, np.int32)
        segments = np.zeros((len(rows), width), np.int32)
        for row, (token_ids, segment_ids, length) in enumerate(rows):
            ids[row, :length], segments[row, :length] = token_ids, segment_ids
        return ids, segments, np.array([length for _, _, length in rows], np.int32)

    def __call__(self, ids: np.ndarray, segments: np.ndarray, valid_length: np.ndarray,
                 masked_positions: np.ndarray | None = None) -> list[np.ndarray]:
        """The graph's outputs for encoded inputs, in the MXNet model's output order."""
        arrays = [np.asarray(ids, np.int32)]
        if self.token_types:
            arrays.append(np.asarray(segments, np.int32))
        arrays.append(np.asarray(valid_length, np.int32))
        if self.masked_lm:
            positions = np.zeros((len(arrays[0]), 1), np.int32) if masked_positions is None else masked_positions
            arrays.append(np.asarray(positions, np.int32))
        return self.session.run(*arrays)

    def features(self, texts: Sequence[str], pairs: Sequence[str] | None = None,
                 max_length: int | None = None) -> list[dict[str, np.ndarray]]:
        """Each text's ``sequence`` encoding ``(tokens, units)`` over its own tokens and, with
        BERT's pooler, its ``pooled`` first token ``(units,)``."""
        ids, segments, lengths = self.encode(texts, pairs, max_length)
        outputs = self(ids, segments, lengths)
        found = []
        for row, length in enumerate(lengths):
            entry = {"sequence": outputs[0][row, :length]}
            if self.pooler:
                entry["pooled"] = outputs[1][row]
            found.append(entry)
        return found

    def next_sentence(self, texts: Sequence[str], pairs: Sequence[str]) -> np.ndarray:
        """The next-sentence head's softmax ``(batch, 2)``: column 0 is "``pairs[i]`` follows"."""
        if not self.classifier:
            raise ValueError(f"{self.spec.qualified_name!r} was exported without the next-sentence classifier")
        logits = self(*self.encode(texts, pairs))[2].astype(np.float64)
        probs = np.exp(logits - logits.max(axis=1, keepdims=True))
        return probs / probs.sum(axis=1, keepdims=True)

    def fill_mask(self, texts: Sequence[str], topk: int = 5) -> list[list[list[tuple[str, float]]]]:
        """Per text, per mask token in it, the masked-LM head's ``topk`` (token, probability)."""
        if not self.masked_lm:
            raise ValueError(f"{self.spec.qualified_name!r} was exported without the masked-LM head")
        if topk < 1:
            raise ValueError(f"topk must be at least 1, got {topk}")
        mask_token = self.vocab.mask_token
        ids, segments, lengths = self.encode(texts)
        where = [np.flatnonzero(row == self.vocab[mask_token]) for row in ids]
        if not all(len(w) for w in where):
            raise ValueError(f"every text needs a mask token {mask_token!r} for the masked-LM head")
        positions = np.zeros((len(ids), max(len(w) for w in where)), np.int32)
        for row, found in enumerate(where):
            positions[row, : len(found)] = found
        logits = self(ids, segments, lengths, positions)[-1].astype(np.float64)
        probs = np.exp(logits - logits.max(axis=2, keepdims=True))
        probs /= probs.sum(axis=2, keepdims=True)
        return [[[(self.vocab.idx_to_token[i], float(probs[row, k, i])) for i in probs[row, k].argsort()[::-1][:topk]]
                 for k in range(len(found))] for row, found in enumerate(where)]


class TextGenerator:
    """GPT-2 exported as its ``prompt`` and ``step`` graphs: the prompt once, then one token
    at a time over the key/value cache the graphs return, as the MXNet model decodes."""

    graphs = ("prompt", "step")

    def __init__(self, sessions: dict[str, Session], spec: Any, *, vocab: Vocab | str | None = None,
                 merges: str | os.PathLike[str] | None = None, max_length: int | None = None) -> None:
        self.prompt_session = _session(sessions, "prompt", spec)
        self.step_session = _session(sessions, "step", spec)
        self.session = self.prompt_session
        self.spec = spec
        self.vocab = _vocabulary(spec, vocab)
        self.tokenizer = GPT2BPETokenizer(merges)
        self.detokenizer = GPT2BPEDetokenizer()
        self.max_length = _max_length(spec, max_length)
        eos = self.vocab.eos_token
        #: The end-of-text id generation stops at, where the vocabulary has one.
        self.eos_id: int | None = self.vocab[eos] if eos is not None and eos in self.vocab else None

    def encode(self, text: str) -> list[int]:
        """The token ids of ``text``."""
        ids = self.vocab[self.tokenizer(text)]
        if not ids:
            raise ValueError("the prompt has no tokens; give some text")
        return ids

    def decode(self, ids: Sequence[int]) -> str:
        """The text of token ids."""
        return self.detokenizer(self.vocab.to_tokens([int(i) for i in ids]))

    def generate_ids(self, ids: Sequence[int], max_new_tokens: int = 20, *, top_k: int | None = None,
                     temperature: float = 1.0, seed: int | None = None) -> list[int]:
        """The tokens after ``ids``: greedy (the best token each step) by default, else drawn
        from the softmax of the ``top_k`` best scores divided by ``temperature`` with numpy's
        generator seeded by ``seed``. Stops after the end-of-text token or ``max_new_tokens``,
        or when the positions run out."""
        if max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be at least 1, got {max_new_tokens}")
        if top_k is not None and top_k < 1:
            raise ValueError(f"top_k must be at least 1 (or None for greedy), got {top_k}")
        if temperature <= 0:
            raise ValueError(f"temperature must be positive, got {temperature}")
        if not 0 < len(ids) < self.max_length:
            raise ValueError(f"the prompt has {len(ids)} tokens; the model takes 1 to {self.max_length - 1}")
        rng = np.random.default_rng(seed)
        scores, *cache = self.prompt_session.run(np.asarray([ids], np.int32))
        new: list[int] = []
        while True:
            token = self._choose(scores[0, -1], top_k, temperature, rng)
            new.append(token)
            if token == self.eos_id or len(new) == max_new_tokens or len(ids) + len(new) >= self.max_length:
                return new
            scores, *cache = self.step_session.run(np.asarray([[token]], np.int32), *cache)

    @staticmethod
    def _choose(scores: np.ndarray, top_k: int | None, temperature: float, rng: np.random.Generator) -> int:
        if top_k is None:
            return int(np.argmax(scores))
        best = np.argsort(scores)[::-1][:top_k]
        logits = scores[best].astype(np.float64) / temperature
        probs = np.exp(logits - logits.max())
        return int(best[rng.choice(len(best), p=probs / probs.sum())])

    def generate(self, prompt: str, max_new_tokens: int = 20, *, top_k: int | None = None,
                 temperature: float = 1.0, seed: int | None = None) -> str:
        """The text GPT-2 continues ``prompt`` with (the prompt not repeated); see
        :meth:`generate_ids`."""
        new = self.generate_ids(self.encode(prompt), max_new_tokens, top_k=top_k, temperature=temperature,
                                seed=seed)
        return self.decode(new[:-1] if new[-1] == self.eos_id else new)


#: The score of a candidate that must never be chosen, as the MXNet beam search uses it.
_NEVER = np.float32(-1e18)


def _log_softmax(scores: np.ndarray) -> np.ndarray:
    """``log_softmax`` over the last axis in float32, as MXNet computes the step's scores."""
    shifted = scores.astype(np.float32) - scores.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


class Translator:
    """The Transformer exported as its ``encoder`` and ``decoder_step`` graphs: greedy or
    beam-search translation that gives the tokens ``TransformerNMT.translate`` gives.

    The decoder step reruns over the whole target prefix, as the MXNet model's beam search
    does; beam 1 is greedy, a larger beam keeps the ``beam_size`` best hypotheses under
    GNMT's length penalty ``((K + t) / (K + 1)) ** alpha`` (GluonNLP 0.10's
    ``BeamSearchTranslator``), ending at EOS or after ``max_length`` tokens.
    """

    graphs = ("encoder", "decoder_step")

    def __init__(self, sessions: dict[str, Session], spec: Any, *, vocab: Vocab | str | None = None,
                 max_length: int | None = None) -> None:
        from .translate import special_ids

        self.encoder_session = _session(sessions, "encoder", spec)
        self.step_session = _session(sessions, "decoder_step", spec)
        self.session = self.encoder_session
        self.spec = spec
        self.vocab = _vocabulary(spec, vocab)
        self.bos_id, self.eos_id, self.pad_id = special_ids(self.vocab)
        #: The source positions the encoder has (the spec's ``max_length:N`` tag, or ``max_length=``).
        self.max_source = _max_length(spec, max_length)

    def translate_ids(self, sources: Sequence[Sequence[int]], beam_size: int = 4, alpha: float = 0.6,
                      K: float = 5.0, max_length: int = 100) -> np.ndarray:
        """Translations of a batch of source ids (each ending with EOS) as ``(batch, <= max_length)``
        ids, each row ended by EOS (and padded with it) once the model emits it."""
        if beam_size < 1 or max_length < 1:
            raise ValueError(f"beam_size and max_length must be at least 1, got {beam_size} and {max_length}")
        if not sources:
            raise ValueError("give at least one source sentence")
        width = max(len(row) for row in sources)
        if width > self.max_source:
            raise ValueError(f"a source has {width} ids; the model reads at most {self.max_source}")
        src = np.full((len(sources), width), self.pad_id, np.int32)
        for row, ids in enumerate(sources):
            src[row, :len(ids)] = ids
        lengths = np.array([len(row) for row in sources], np.float32)
        (memory,) = self.encoder_session.run(src, lengths)
        if beam_size == 1:
            return self._greedy(memory, lengths, max_length)
        return self._beam_search(memory, lengths, beam_size, alpha, K, max_length)

    def _greedy(self, memory: np.ndarray, lengths: np.ndarray, max_length: int) -> np.ndarray:
        tokens = np.full((len(memory), 1), self.bos_id, np.int32)
        done = np.zeros(len(memory), bool)
        for _ in range(max_length):
            (scores,) = self.step_session.run(tokens, memory, lengths)
            step = np.where(done, self.eos_id, scores.argmax(axis=-1)).astype(np.int32)
            tokens = np.concatenate([tokens, step[:, None]], axis=1)
            done |= step == self.eos_id
            if done.all():
                break
        return tokens[:, 1:]

    def _beam_search(self, memory: np.ndarray, lengths: np.ndarray, beam: int, alpha: float, K: float,
                     max_length: int) -> np.ndarray:
        """The best beam of each row, as the plugin's ``BeamSearchSampler`` ranks them: a
        finished beam competes with its final score against every live continuation."""
        batch = len(memory)
        memory, lengths = np.repeat(memory, beam, axis=0), np.repeat(lengths, beam, axis=0)
        step_input = np.full(batch * beam, self.bos_id, np.int32)
        seen = step_input[:, None]  # a placeholder first column, as the MXNet decoder's state
        samples = step_input.reshape(batch, beam, 1)
        valid_length = np.ones((batch, beam), np.int32)
        alive = np.ones((batch, beam), bool)
        scores = np.zeros((batch, beam), np.float32)
        scores[:, 1:] = _NEVER  # one live copy of the start, not beam copies of it
        row_base = np.arange(0, batch * beam, beam)[:, None]
        for step in range(1, max_length + 1):
            seen = np.concatenate([seen, step_input[:, None]], axis=1)
            (out,) = self.step_session.run(np.ascontiguousarray(seen[:, 1:]), memory, lengths)
            vocab = out.shape[-1]
            # the scores are kept divided by the last step's penalty: multiplied back first
            previous = scores * self._penalty(step - 1, alpha, K) if step > 1 else scores
            candidates = (_log_softmax(out).reshape(batch, beam, vocab) + previous[:, :, None]) / self._penalty(
                step, alpha, K)
            candidates = np.where(alive[:, :, None], candidates, _NEVER)
            finished = np.where(alive, _NEVER, scores)
            pool = np.concatenate([candidates.reshape(batch, beam * vocab), finished], axis=1)
            index = np.argsort(-pool, axis=1, kind="stable")[:, :beam]
            scores = np.take_along_axis(pool, index, axis=1)
            kept = index >= beam * vocab
            word = index % vocab
            rows = (np.where(kept, index - beam * vocab, index // vocab) + row_base).reshape(-1)
            chosen = np.where(kept, -1, word).astype(np.int32)
            samples = np.concatenate([samples.reshape(batch * beam, -1)[rows], chosen.reshape(-1, 1)],
                                     axis=1).reshape(batch, beam, -1)
            valid_length = valid_length.reshape(-1)[rows].reshape(batch, beam) + 1 - kept
            seen, memory, lengths = seen[rows], memory[rows], lengths[rows]
            alive = alive.reshape(-1)[rows].reshape(batch, beam) & (chosen != self.eos_id)
            step_input = np.maximum(chosen, 0).reshape(-1)
            if not alive.any():
                break
        else:  # beams still open at the limit end with EOS
            samples = np.concatenate([samples, np.where(alive, self.eos_id, -1)[:, :, None]], axis=2)
            valid_length = valid_length + alive
        width = min(int(valid_length[:, 0].max()) - 1, max_length)
        best = samples[:, 0, 1:1 + width]
        return np.where(best < 0, self.eos_id, best).astype(np.int32)

    @staticmethod
    def _penalty(step: int, alpha: float, K: float) -> np.float32:
        """GNMT's length penalty in float32, in the MXNet scorer's order of operations."""
        return np.float32(np.float32(np.float32(K) + np.float32(step)) ** np.float32(alpha)
                          / np.float32((K + 1) ** alpha))

    def translate_subwords(self, lines: Sequence[str], beam_size: int = 4, alpha: float = 0.6, K: float = 5.0,
                           max_length: int = 100, batch_size: int = 16) -> list[list[str]]:
        """The subwords of each BPE-tokenized line's translation, batched as the MXNet command batches."""
        from .translate import source_batch, target_subwords

        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        found: list[list[str]] = []
        for start in range(0, len(lines), batch_size):
            ids, _ = source_batch(self.vocab, lines[start:start + batch_size], self.max_source, start + 1)
            tokens = self.translate_ids(ids, beam_size, alpha, K, max_length)
            found += [target_subwords(self.vocab, row) for row in tokens]
        return found

    def translate(self, lines: Sequence[str], beam_size: int = 4, alpha: float = 0.6, K: float = 5.0,
                  max_length: int = 100, batch_size: int = 16) -> list[str]:
        """Each BPE-tokenized line translated, its subwords joined (``gluon-hub translate-text``)."""
        from .translate import detokenize

        if isinstance(lines, str):
            raise TypeError("lines is a sequence of strings; wrap one sentence in a list")
        return [detokenize(s) for s in self.translate_subwords(lines, beam_size, alpha, K, max_length, batch_size)]


class LanguageModelScorer:
    """An LSTM language model (standard, AWD, big RNN) exported as its ``step`` graph:
    per-token log-probabilities and perplexity of text, run in chunks with the states
    carried from one chunk to the next as the MXNet model runs a long sequence.

    The graph maps ``(tokens (T, B), *states)`` to ``(scores (T, B, V), *states)``; a graph
    whose length was fixed at export (the big RNN's unrolled loop) runs chunks of that length,
    the last one padded (what follows a position never changes its score).
    """

    def __init__(self, session: Session, spec: Any, *, vocab: Vocab | str | None = None) -> None:
        self.session = session
        self.spec = spec
        self.vocab = _vocabulary(spec, vocab)
        names = [i.name for i in session.inputs]
        if len(names) < 2:
            raise ValueError(f"{str(session.path)!r} takes {len(names)} input ({', '.join(names)}); "
                             f"{spec.qualified_name!r}'s step graph takes the tokens and the LSTM states: "
                             "export it again with gluon_hub.export(name, path, format='onnx')")
        length = session.inputs[0].shape[0]
        #: The chunk length the graph was exported for, or None where it takes any.
        self.fixed_length: int | None = length if isinstance(length, int) else None

    def begin_state(self, batch_size: int = 1) -> list[np.ndarray]:
        """Zero states for ``batch_size`` sequences, in the graph's input order."""
        return [np.zeros([batch_size if not isinstance(d, int) else d for d in i.shape], np.float32)
                for i in self.session.inputs[1:]]

    def __call__(self, tokens: np.ndarray, states: Sequence[np.ndarray]) -> tuple[np.ndarray, list[np.ndarray]]:
        """The next-token scores ``(T, B, V)`` of time-major ``tokens`` and the states after them."""
        scores, *after = self.session.run(np.asarray(tokens, np.int32), *states)
        return scores, after

    def log_probs(self, ids: Sequence[int], chunk: int = 35) -> np.ndarray:
        """The log-probability (float64) of each of ``ids[1:]`` after the ids before it,
        running ``chunk`` tokens at a time (the graph's own length where it is fixed)."""
        if len(ids) < 2:
            raise ValueError(f"give at least two tokens to score (the first is only context), got {len(ids)}")
        step = self.fixed_length or chunk
        if step < 1:
            raise ValueError(f"chunk must be at least 1, got {chunk}")
        inputs, targets = np.asarray(ids[:-1], np.int64), np.asarray(ids[1:], np.int64)
        states = self.begin_state(1)
        found = []
        for start in range(0, len(inputs), step):
            part = inputs[start:start + step]
            padded = np.zeros((step if self.fixed_length else len(part), 1), np.int32)
            padded[:len(part), 0] = part
            scores, states = self(padded, states)
            logits = scores[:len(part), 0].astype(np.float64)
            logits -= logits.max(axis=1, keepdims=True)
            log_softmax = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
            found.append(log_softmax[np.arange(len(part)), targets[start:start + len(part)]])
        return np.concatenate(found)

    def encode(self, text: str) -> list[int]:
        """The ids of whitespace-split ``text`` with the end-of-sentence token after each line
        (as the LM corpora are read), starting with one (the context of the first word)."""
        eos = self.vocab.eos_token
        if eos is None:
            raise ValueError("the vocabulary has no eos_token; the language models end each line with it")
        tokens = [eos]
        for line in text.splitlines():
            if line.split():
                tokens += [*line.split(), eos]
        if len(tokens) < 2:
            raise ValueError("the text has no tokens; give some words")
        return self.vocab[tokens]

    def score(self, text: str, chunk: int = 35) -> dict[str, Any]:
        """``text``'s tokens, their log-probabilities and the perplexity ``exp(-mean)``."""
        ids = self.encode(text)
        found = self.log_probs(ids, chunk)
        return {"tokens": self.vocab.to_tokens(ids[1:]), "log_probs": found.tolist(),
                "perplexity": float(np.exp(-found.mean()))}
