"""Fine-tune BERT for SQuAD 1.1 question answering and score the dev set (official EM/F1).

Each question becomes one or more features ``[CLS] question [SEP] passage window [SEP]``:
the question is cut to ``--max-query-length`` tokens and the tokenized passage is covered
by windows that start ``--doc-stride`` tokens apart and fill ``--max-seq-length``. A
training window that does not hold the whole answer points at ``[CLS]``. ``BERTForQA``
scores every token as answer start and end; a prediction is the best-scoring span
(start + end score) among the ``--n-best-size`` best starts and ends of each window, no
longer than ``--max-answer-length`` tokens, starting where its window sees the most
context. Spans map back to the original passage text through character offsets kept for
every word piece, and are scored against all gold answers with
:func:`gluon_nlp_core.metrics.squad_evaluate` (version 1.1).

Example::

    python -m gluon_nlp_core.scripts.finetune_squad --data-dir squad1.1 --output-dir out/squad \\
        --epochs 2 --batch-size 12 --lr 3e-5
"""

from __future__ import annotations

import argparse
import json
import math
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

import gluon_hub
from gluon_hub.compat import mx
from gluon_hub.data import Pad, Stack, Tuple

from .. import metrics
from ..models.bert import BERTForQA, BERTForQALoss
from ..text import BERTBasicTokenizer, BERTTokenizer
from . import _common

__all__ = ["Feature", "PassageTokens", "decode", "make_features", "main", "tokenize_passage"]

# SQuAD's own definition of the spaces between passage words.
_WORD = re.compile("[^ \t\r\n\u202f]+")


@dataclass(frozen=True)
class PassageTokens:
    """A passage as word pieces, with the ``[start, end)`` characters each piece came from."""

    pieces: list[str]
    spans: list[tuple[int, int]]


@dataclass(frozen=True)
class Feature:
    """One window of one question: model inputs, training targets, and what decoding needs.

    ``doc_offset`` is the position of the first passage piece in ``ids``; ``char_spans`` and
    ``max_context`` describe the window's passage pieces in order.
    """

    example: int
    ids: list[int]
    segments: list[int]
    start: int
    end: int
    doc_offset: int
    char_spans: list[tuple[int, int]]
    max_context: list[bool]


def _normalized(word: str, lower: bool) -> tuple[str, list[int]]:
    """``word`` as the basic tokenizer sees it, and the index in ``word`` of each character.

    Lower-casing, NFD and the dropped marks and control characters may change lengths;
    keeping the origin of every character is what lets pieces map back to the passage.
    """
    chars: list[str] = []
    origin: list[int] = []
    for i, char in enumerate(word):
        for out in unicodedata.normalize("NFD", char.lower() if lower else char):
            category = unicodedata.category(out)
            if category in ("Mn", "Cc", "Cf", "Zs") or out == "\ufffd":
                continue
            chars.append(out)
            origin.append(i)
    return "".join(chars), origin


def tokenize_passage(tokenizer: BERTTokenizer, passage: str) -> PassageTokens:
    """Word pieces of ``passage``, word by word, with their character spans in it.

    A piece's span is exact when the basic tokenizer's text can be found in the word;
    otherwise (rare case changes such as a final sigma) every piece of the word spans the
    whole word.
    """
    basic = BERTBasicTokenizer(tokenizer.lower)
    unknown = tokenizer.vocab.unknown_token
    pieces: list[str] = []
    spans: list[tuple[int, int]] = []
    for match in _WORD.finditer(passage):
        word, offset = match.group(), match.start()
        normalized, origin = _normalized(word, tokenizer.lower)
        cursor = 0
        word_pieces: list[str] = []
        word_spans: list[tuple[int, int]] = []
        for part in basic(word):
            found = normalized.find(part, cursor)
            if found < 0:
                word_pieces = tokenizer(word)
                word_spans = [(match.start(), match.end())] * len(word_pieces)
                break
            cursor, at = found + len(part), found
            for sub in tokenizer(part):
                if sub == unknown:
                    width = len(part)
                else:
                    width = len(sub) - 2 if at > found else len(sub)
                last = min(at + width, found + len(part)) - 1
                word_pieces.append(sub)
                word_spans.append((offset + origin[at], offset + origin[last] + 1))
                at += width
        pieces += word_pieces
        spans += word_spans
    return PassageTokens(pieces, spans)


def _windows(length: int, size: int, stride: int) -> list[tuple[int, int]]:
    """``(start, length)`` of the windows covering ``length`` pieces."""
    windows = []
    start = 0
    while True:
        windows.append((start, min(size, length - start)))
        if start + size >= length:
            return windows
        start += min(size, stride)


def _max_context(windows: Sequence[tuple[int, int]], index: int, position: int) -> bool:
    """Whether window ``index`` sees piece ``position`` with the most context around it."""
    best, best_score = None, -1.0
    for i, (start, length) in enumerate(windows):
        if not start <= position < start + length:
            continue
        around = min(position - start, start + length - 1 - position)
        score = around + 0.01 * length
        if score > best_score:
            best, best_score = i, score
    return best == index


def make_features(tokenizer: BERTTokenizer, record: Any, example: int, max_seq_length: int,
                  doc_stride: int, max_query_length: int,
                  passage: PassageTokens | None = None) -> list[Feature]:
    """The windows of one SQuAD record, with the first gold answer as target.

    ``passage`` may pass the already tokenized context (questions share passages).
    """
    vocab = tokenizer.vocab
    passage = passage or tokenize_passage(tokenizer, record.context)
    query = tokenizer(record.question)[:max_query_length]
    room = max_seq_length - len(query) - 3
    if room < 1:
        raise ValueError(f"--max-seq-length {max_seq_length} leaves no room for the passage "
                         f"after a {len(query)}-token question")
    answer = None
    if record.answers:
        begin = record.answer_starts[0]
        finish = begin + len(record.answers[0])
        inside = [i for i, (s, e) in enumerate(passage.spans) if s < finish and e > begin]
        if inside:
            answer = (inside[0], inside[-1])
    windows = _windows(len(passage.pieces), room, doc_stride)
    prefix = [vocab.cls_token, *query, vocab.sep_token]
    features = []
    for index, (start, length) in enumerate(windows):
        tokens = prefix + passage.pieces[start:start + length] + [vocab.sep_token]
        segments = [0] * len(prefix) + [1] * (length + 1)
        target = (0, 0)
        if answer is not None and start <= answer[0] and answer[1] < start + length:
            target = (len(prefix) + answer[0] - start, len(prefix) + answer[1] - start)
        features.append(Feature(
            example=example, ids=vocab[tokens], segments=segments, start=target[0],
            end=target[1], doc_offset=len(prefix),
            char_spans=passage.spans[start:start + length],
            max_context=[_max_context(windows, index, p) for p in range(start, start + length)]))
    return features


def decode(feature_scores: Sequence[tuple[Feature, np.ndarray]], context: str, n_best: int,
           max_answer_length: int) -> list[dict[str, Any]]:
    """The ``n_best`` best answer texts of one question, best first.

    ``feature_scores`` pairs each window of the question with its ``(length, 2)`` start
    and end scores. Each entry has ``text``, ``score`` (start + end score) and
    ``probability`` (softmax over the entries).
    """
    candidates = []
    for feature, scores in feature_scores:
        first, count = feature.doc_offset, len(feature.char_spans)
        starts = np.argsort(-scores[:, 0], kind="stable")[:n_best]
        ends = np.argsort(-scores[:, 1], kind="stable")[:n_best]
        for s in starts:
            if not first <= s < first + count or not feature.max_context[s - first]:
                continue
            for e in ends:
                if not s <= e < first + count or e - s + 1 > max_answer_length:
                    continue
                begin = feature.char_spans[s - first][0]
                finish = feature.char_spans[e - first][1]
                candidates.append((float(scores[s, 0] + scores[e, 1]), context[begin:finish]))
    candidates.sort(key=lambda c: -c[0])
    best: list[tuple[float, str]] = []
    seen = set()
    for score, text in candidates:
        if text not in seen:
            seen.add(text)
            best.append((score, text))
        if len(best) == n_best:
            break
    if not best:
        return [{"text": "", "score": 0.0, "probability": 1.0}]
    weights = np.exp(np.array([s for s, _ in best]) - best[0][0])
    weights /= weights.sum()
    return [{"text": t, "score": s, "probability": float(p)} for (s, t), p in zip(best, weights)]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m gluon_nlp_core.scripts.finetune_squad",
        description="Fine-tune BERT on SQuAD 1.1 and score the dev set with the official "
        "exact match and F1.")
    parser.add_argument("--data-dir", type=Path,
                        help="folder holding train-v1.1.json and dev-v1.1.json "
                        "(default: download through the hub's cache)")
    parser.add_argument("--output-dir", type=Path, required=True,
                        help="where to write model.params, predictions.json, "
                        "nbest_predictions.json and results.json")
    parser.add_argument("--max-seq-length", type=int, default=384,
                        help="tokens per feature, question and special tokens included "
                        "(default: 384)")
    parser.add_argument("--doc-stride", type=int, default=128,
                        help="pieces between the starts of a passage's windows (default: 128)")
    parser.add_argument("--max-query-length", type=int, default=64,
                        help="questions are cut to this many tokens (default: 64)")
    parser.add_argument("--n-best-size", type=int, default=20,
                        help="best starts and ends considered per window, and answers kept "
                        "in nbest_predictions.json (default: 20)")
    parser.add_argument("--max-answer-length", type=int, default=30,
                        help="longest answer in word pieces (default: 30)")
    parser.add_argument("--lower", action=argparse.BooleanOptionalAction, default=None,
                        help="lower-case the text (default: as the --pretrained weights, "
                        "lower-cased when there are none)")
    _common.add_model_arguments(
        parser, "bert_12_768_12", "book_corpus_wiki_en_uncased",
        '{"num_layers": 2, "units": 128, "hidden_size": 512, "num_heads": 2}')
    _common.add_training_arguments(parser, lr=3e-5, epochs=2, batch_size=12)
    return parser


def _featurize(args: argparse.Namespace, tokenizer: BERTTokenizer, segment: str
               ) -> tuple[Any, list[Feature]]:
    records = gluon_hub.load_dataset("squad", segment=segment, version="1.1",
                                     root=None if args.data_dir is None else str(args.data_dir))
    if len(records) == 0:
        raise ValueError(f"the SQuAD 1.1 {segment} set holds no questions")
    passages: dict[str, PassageTokens] = {}
    features = []
    for i, record in enumerate(records):
        if record.context not in passages:
            passages[record.context] = tokenize_passage(tokenizer, record.context)
        features += make_features(tokenizer, record, i, args.max_seq_length, args.doc_stride,
                                  args.max_query_length, passages[record.context])
    return records, features


def main(argv: Sequence[str] | None = None) -> int:
    """Fine-tune, predict and score the dev set, save; returns the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        _common.check_training_arguments(args)
        for name in ("max_seq_length", "doc_stride", "max_query_length", "n_best_size",
                     "max_answer_length"):
            _common.positive("--" + name.replace("_", "-"), getattr(args, name))
        return _run(args)
    except (ValueError, KeyError, FileNotFoundError) as exc:
        parser.error(str(exc))
    return 2


def _run(args: argparse.Namespace) -> int:
    _common.seed_everything(args.seed)
    ctx = _common.context(args)
    vocab = _common.bert_vocab(args)
    tokenizer = BERTTokenizer(vocab, lower=_common.lower_case(args))
    _, train = _featurize(args, tokenizer, "train")
    dev_records, dev = _featurize(args, tokenizer, "dev")
    _common.log(f"squad: {len(train)} training and {len(dev)} dev features")

    bert = _common.build_bert(args, vocab, use_pooler=False, ctx=ctx)
    max_length = bert.encoder.position_weight.shape[0]
    if args.max_seq_length > max_length:
        raise ValueError(f"--max-seq-length {args.max_seq_length} exceeds the model's "
                         f"max_length {max_length}")
    net = BERTForQA(bert)
    net.span_classifier.initialize(mx.init.Normal(0.02), ctx=ctx)
    net.hybridize()

    pad = vocab[vocab.padding_token]
    batchify = Tuple(Pad(pad_val=pad, dtype="int32"), Pad(pad_val=0, dtype="int32"),
                     Stack("float32"), Stack("float32"), Stack("float32"))

    def epoch_batches():
        for chunk in _common.batches(np.random.permutation(len(train)), args.batch_size):
            ids, segments, lengths, starts, ends = batchify(
                [(f.ids, f.segments, len(f.ids), f.start, f.end) for f in (train[i] for i in chunk)])
            yield (ids, segments, lengths), (starts, ends)

    losses = _common.train(net, BERTForQALoss(), epoch_batches,
                           math.ceil(len(train) / args.batch_size), args, ctx)

    per_question: dict[int, list[tuple[Feature, np.ndarray]]] = {}
    inputs = Tuple(Pad(pad_val=pad, dtype="int32"), Pad(pad_val=0, dtype="int32"),
                   Stack("float32"))
    for chunk in _common.batches(dev, args.dev_batch_size):
        ids, segments, lengths = inputs([(f.ids, f.segments, len(f.ids)) for f in chunk])
        scores = net(ids.as_in_context(ctx), segments.as_in_context(ctx),
                     lengths.as_in_context(ctx)).asnumpy()
        for feature, feature_scores in zip(chunk, scores):
            per_question.setdefault(feature.example, []).append(
                (feature, feature_scores[:len(feature.ids)]))
    nbest = {}
    for i, record in enumerate(dev_records):
        nbest[record.question_id] = decode(per_question.get(i, []), record.context,
                                           args.n_best_size, args.max_answer_length)
    predictions = {qid: answers[0]["text"] for qid, answers in nbest.items()}
    references = {record.question_id: list(record.answers) for record in dev_records}
    scores = metrics.squad_evaluate(references, predictions, version="1.1")

    args.output_dir.mkdir(parents=True, exist_ok=True)
    net.save_parameters(str(args.output_dir / "model.params"))
    _common.write_json(args.output_dir / "predictions.json", predictions)
    _common.write_json(args.output_dir / "nbest_predictions.json", nbest)
    _common.write_json(args.output_dir / "results.json", {"dev": scores, "train_loss": losses})
    print(json.dumps(scores))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
