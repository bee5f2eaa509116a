"""Fine-tune BERT on any GLUE task: classification, and regression for STS-B.

Each sample becomes ``[CLS] A [SEP]`` (CoLA, SST-2) or ``[CLS] A [SEP] B [SEP]`` (the pair
tasks), with segment ids 0 for the first part and 1 for the second, truncated to
``--max-len`` by dropping tokens from the end of the longer sentence. The head is a dense
layer over BERT's pooled first token: class scores trained with softmax cross-entropy, or
for STS-B one similarity score trained with an L2 loss. After training, each dev segment
(MNLI: ``dev_matched`` and ``dev_mismatched``) is scored with GLUE's metrics: Matthews
correlation (``mcc``) for CoLA, accuracy and F1 of class "1" for MRPC and QQP, Pearson and
Spearman correlations for STS-B, accuracy otherwise. The parameters, the predictions of each
dev segment (``{segment}_predictions.json``) and the scores are written to ``--output-dir``.

``--model`` picks the encoder: BERT (default), DistilBERT (``distilbert_6_768_12``: BERT's
WordPiece input without segment ids) or RoBERTa (``roberta_12_768_12``, ``roberta_24_1024_16``:
byte-level BPE, ``<s> A </s></s> B </s>`` as RoBERTa was trained, no segment ids). BERT
classifies from its pooler; the other two through a dense + tanh layer over the first token
(:class:`~gluon_nlp_core.models.roberta.RoBERTaClassifier`).

With ``--int8`` the fine-tuned classifier is then quantized to int8 (MXNet's oneDNN
backend, calibrated on ``--calib-batches`` training batches) and both models score the dev
segment on the CPU, in the same batches padded to ``--max-len``: the report gives each
one's scores, the accuracy drop and the int8/fp32 latency ratio, measured, not assumed
(classification tasks only; MNLI's int8 run scores ``dev_matched``).

Example::

    python -m gluon_nlp_core.scripts.finetune_classifier --task mrpc --data-dir glue/MRPC \\
        --output-dir out/mrpc --epochs 3 --batch-size 32 --lr 2e-5
"""

from __future__ import annotations

import argparse
import functools
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

import gluon_hub
from gluon_hub.compat import mx
from gluon_hub.data import Pad, Stack, Tuple

from .. import metrics
from ..models.bert import BERTClassifier
from ..models.roberta import RoBERTaClassifier
from ..quantize import quantize_classifier
from ..text import BERTTokenizer, GPT2BPETokenizer, Vocab
from ..text.encoding import encode_pair, encode_roberta_pair
from . import _common

__all__ = ["TASKS", "Task", "encode_pair", "encode_roberta_pair", "main"]


@dataclass(frozen=True)
class Task:
    """A GLUE task: its hub dataset, whether it pairs sentences, its labels (none for a
    regression), its metrics and the dev segments they are reported on."""

    dataset: str
    pair: bool
    labels: tuple[str, ...]
    metrics: tuple[str, ...]
    dev_segments: tuple[str, ...] = ("dev",)

    @property
    def regression(self) -> bool:
        """Whether the label is a score to predict (STS-B), not a class."""
        return not self.labels


_BINARY = ("0", "1")
_ENTAILMENT = ("entailment", "not_entailment")

TASKS: dict[str, Task] = {
    "cola": Task("glue_cola", pair=False, labels=_BINARY, metrics=("mcc",)),
    "sst2": Task("glue_sst2", pair=False, labels=_BINARY, metrics=("accuracy",)),
    "mrpc": Task("glue_mrpc", pair=True, labels=_BINARY, metrics=("accuracy", "f1")),
    "stsb": Task("glue_stsb", pair=True, labels=(), metrics=("pearson", "spearman")),
    "qqp": Task("glue_qqp", pair=True, labels=_BINARY, metrics=("accuracy", "f1")),
    "mnli": Task("glue_mnli", pair=True, labels=("contradiction", "entailment", "neutral"),
                 metrics=("accuracy",), dev_segments=("dev_matched", "dev_mismatched")),
    "qnli": Task("glue_qnli", pair=True, labels=_ENTAILMENT, metrics=("accuracy",)),
    "rte": Task("glue_rte", pair=True, labels=_ENTAILMENT, metrics=("accuracy",)),
    "wnli": Task("glue_wnli", pair=True, labels=_BINARY, metrics=("accuracy",)),
}


def _backbone(model: str) -> str:
    """``"bert"``, ``"roberta"`` or ``"distilbert"``: the input format and head of ``model``."""
    for kind in ("roberta", "distilbert"):
        if model.startswith(kind):
            return kind
    return "bert"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m gluon_nlp_core.scripts.finetune_classifier",
        description="Fine-tune BERT on a GLUE task and score its dev segment(s).")
    parser.add_argument("--task", required=True, choices=sorted(TASKS),
                        help="the GLUE task: cola and sst2 classify one sentence, stsb "
                        "scores the similarity of a pair, the others classify pairs")
    parser.add_argument("--data-dir", type=Path,
                        help="folder holding the task's GLUE files (train.tsv, dev.tsv); "
                        "default: download through the hub's cache")
    parser.add_argument("--output-dir", type=Path, required=True,
                        help="where to write model.params, {segment}_predictions.json and "
                        "results.json")
    parser.add_argument("--max-len", type=int, default=128,
                        help="most tokens per sample, [CLS] and [SEP] included (default: 128)")
    parser.add_argument("--lower", action=argparse.BooleanOptionalAction, default=None,
                        help="lower-case the text for BERT and DistilBERT (default: as the "
                        "--pretrained weights, lower-cased when there are none)")
    parser.add_argument("--dropout", type=float, default=0.1,
                        help="dropout before the classification layer (default: 0.1)")
    _common.add_model_arguments(
        parser, "bert_12_768_12", "book_corpus_wiki_en_uncased",
        '{"num_layers": 2, "units": 128, "hidden_size": 512, "num_heads": 2}')
    parser.add_argument("--bpe-merges", type=Path, metavar="FILE",
                        help="RoBERTa only: a byte-level BPE merges file (default: the "
                        "published GPT-2/RoBERTa merges, through the hub's cache)")
    _common.add_training_arguments(parser, lr=5e-5, epochs=3, batch_size=32)
    group = parser.add_argument_group("int8")
    group.add_argument("--int8", action="store_true",
                       help="after fine-tuning, quantize the classifier to int8 and report "
                       "the dev scores of both models, the accuracy drop and the latency ratio")
    group.add_argument("--calib-batches", type=int, default=4,
                       help="training batches (of --batch-size, padded to --max-len) that "
                       "calibrate the int8 ranges (default: 4)")
    group.add_argument("--calib-mode", choices=("naive", "entropy"), default="naive",
                       help="naive: min/max of the calibration outputs; entropy: KL "
                       "thresholds, slower (default: naive)")
    return parser


def _target(task: Task, segment: str, label: str) -> int | float:
    """The class index of ``label``, or for a regression its score."""
    if task.regression:
        try:
            return float(label)
        except ValueError:
            raise ValueError(f"{task.dataset} {segment}: score {label!r} is not a number") from None
    if label not in task.labels:
        raise ValueError(f"{task.dataset} {segment}: label {label!r} is none of {task.labels}")
    return task.labels.index(label)


Encode = Callable[[str, "str | None"], tuple[list[int], list[int], int]]


def _encode_segment(args: argparse.Namespace, task: Task, segment: str,
                    encode: Encode) -> list[tuple[list[int], list[int], int, Any]]:
    dataset = gluon_hub.load_dataset(task.dataset, segment=segment,
                                     root=None if args.data_dir is None else str(args.data_dir))
    samples = []
    for row in dataset:
        *texts, label = row
        first, second = (texts[0], texts[1]) if task.pair else (texts[0], None)
        ids, segments, length = encode(first, second)
        samples.append((ids, segments, length, _target(task, segment, label)))
    if not samples:
        raise ValueError(f"the {segment} segment of {task.dataset} is empty")
    return samples


def _batchify(vocab: Vocab, length: int | None = None,
              regression: bool = False) -> Callable[[Sequence[Any]], Any]:
    """(ids, segments, valid length, label) samples -> padded int32 batch arrays (float32
    labels for a regression); padded to the longest sample, or to ``length`` (at least as
    long as any sample) when given."""
    return Tuple(Pad(pad_val=vocab[vocab.padding_token], dtype="int32", round_to=length),
                 Pad(pad_val=0, dtype="int32", round_to=length), Stack("float32"),
                 Stack("float32" if regression else "int32"))


def _inputs(kind: str, ids: Any, segments: Any, lengths: Any) -> tuple[Any, ...]:
    """The network's inputs: BERT takes segment ids, RoBERTa and DistilBERT do not."""
    return (ids, segments, lengths) if kind == "bert" else (ids, lengths)


def _predict(net: Any, samples: Sequence[Any], batchify: Callable, batch_size: int,
             ctx: Any, regression: bool = False, kind: str = "bert") -> list[Any]:
    """Predicted class indices, or for a regression the predicted scores."""
    predictions: list[Any] = []
    for chunk in _common.batches(range(len(samples)), batch_size):
        ids, segments, lengths, _ = batchify([samples[i] for i in chunk])
        scores = net(*(x.as_in_context(ctx) for x in _inputs(kind, ids, segments, lengths)))
        if regression:
            predictions += scores.reshape((-1,)).asnumpy().astype(float).tolist()
        else:
            predictions += scores.argmax(axis=-1).asnumpy().astype(int).tolist()
    return predictions


_METRICS: dict[str, Callable[[Sequence[Any], Sequence[Any]], float]] = {
    "accuracy": metrics.accuracy,
    "mcc": metrics.matthews_corrcoef,
    "pearson": metrics.pearson_corrcoef,
    "spearman": metrics.spearman_corrcoef,
}


def score(task: Task, predictions: Sequence[Any], labels: Sequence[Any]) -> dict[str, float]:
    """The task's GLUE metrics; F1 is that of class ``"1"`` (MRPC's and QQP's "same
    meaning")."""
    result = {}
    for name in task.metrics:
        if name == "f1":
            result[name] = metrics.binary_f1(predictions, labels,
                                             positive=task.labels.index("1"))
        else:
            result[name] = _METRICS[name](predictions, labels)
    return result


def main(argv: Sequence[str] | None = None) -> int:
    """Fine-tune, score the dev segment, save; returns the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        _common.check_training_arguments(args)
        _common.positive("--max-len", args.max_len)
        _common.positive("--calib-batches", args.calib_batches)
        if args.int8 and TASKS[args.task].regression:
            raise ValueError(f"--int8 scores classifiers; {args.task} is a regression task")
        if args.int8 and _backbone(args.model) != "bert":
            raise ValueError(f"--int8 quantizes BERT classifiers; {args.model} is not one")
        if args.bpe_merges is not None and _backbone(args.model) != "roberta":
            raise ValueError(f"--bpe-merges is for RoBERTa; {args.model} uses WordPiece")
        return _run(args)
    except (ValueError, KeyError, FileNotFoundError) as exc:
        parser.error(str(exc))
    return 2


def _run(args: argparse.Namespace) -> int:
    task = TASKS[args.task]
    _common.seed_everything(args.seed)
    ctx = _common.context(args)
    kind = _backbone(args.model)
    vocab = _common.bert_vocab(args)
    encode: Encode
    if kind == "roberta":  # byte-level BPE keeps case: --lower does not apply
        encode = functools.partial(encode_roberta_pair, GPT2BPETokenizer(args.bpe_merges), vocab,
                                   max_len=args.max_len)
    else:
        wordpiece = BERTTokenizer(vocab, lower=_common.lower_case(args))
        encode = functools.partial(encode_pair, wordpiece, max_len=args.max_len)
    train = _encode_segment(args, task, "train", encode)
    devs = {segment: _encode_segment(args, task, segment, encode)
            for segment in task.dev_segments}
    _common.log(f"{args.task}: {len(train)} training and "
                f"{' + '.join(str(len(d)) for d in devs.values())} dev samples")

    # A regression predicts one score: a one-unit head.
    num_outputs = len(task.labels) or 1
    if kind == "bert":
        encoder = _common.build_bert(args, vocab, use_pooler=True, ctx=ctx)
        net = BERTClassifier(encoder, num_classes=num_outputs, dropout=args.dropout)
    else:
        heads = {"use_decoder": False} if kind == "roberta" else {}
        encoder = _common.build_encoder(args, vocab, ctx, **heads)
        net = RoBERTaClassifier(encoder, num_classes=num_outputs, dropout=args.dropout)
    max_length = encoder.encoder.position_weight.shape[0]
    if args.max_len > max_length:
        raise ValueError(f"--max-len {args.max_len} exceeds the model's max_length {max_length}")
    net.classifier.initialize(mx.init.Normal(0.02), ctx=ctx)
    net.hybridize()

    batchify = _batchify(vocab, regression=task.regression)
    steps_per_epoch = -(-len(train) // args.batch_size)

    def epoch_batches():
        for chunk in _common.batches(np.random.permutation(len(train)), args.batch_size):
            ids, segments, lengths, labels = batchify([train[i] for i in chunk])
            yield _inputs(kind, ids, segments, lengths), (labels,)

    loss_fn = mx.gluon.loss.L2Loss() if task.regression else mx.gluon.loss.SoftmaxCELoss()
    losses = _common.train(net, loss_fn, epoch_batches, steps_per_epoch, args, ctx)

    args.output_dir.mkdir(parents=True, exist_ok=True)
    net.save_parameters(str(args.output_dir / "model.params"))
    scores: dict[str, dict[str, float]] = {}
    for segment, dev in devs.items():
        predictions = _predict(net, dev, batchify, args.dev_batch_size, ctx, task.regression,
                               kind)
        scores[segment] = score(task, predictions, [sample[3] for sample in dev])
        _common.write_json(args.output_dir / f"{segment}_predictions.json",
                           predictions if task.regression
                           else [task.labels[p] for p in predictions])
    # One dev segment: its scores directly; MNLI's two: the scores of each, by segment.
    dev_scores: dict[str, Any] = scores["dev"] if list(scores) == ["dev"] else scores
    results = {"task": args.task, "dev": dev_scores, "train_loss": losses}
    summary = {"task": args.task, **dev_scores}
    if args.int8:
        first = devs[task.dev_segments[0]]
        results["int8"] = summary["int8"] = _int8_report(args, task, net, train, first, vocab)
    _common.write_json(args.output_dir / "results.json", results)
    print(json.dumps(summary))
    return 0


def _int8_report(args: argparse.Namespace, task: Task, net: Any, train: Sequence[Any],
                 dev: Sequence[Any], vocab: Vocab) -> dict[str, Any]:
    """Quantize ``net``, score fp32 and int8 on dev in the same batches, write the int8
    predictions, and return both scores, the accuracy drop and the latency ratio."""
    cpu = mx.cpu()  # oneDNN's int8 kernels run on the CPU only
    net.collect_params().reset_ctx(cpu)
    batchify = _batchify(vocab, length=args.max_len)  # one shape, as calibration needs
    order = np.random.permutation(len(train))
    chunks = _common.batches(order, args.batch_size)
    full = [c for c in chunks if len(c) == args.batch_size] or chunks[:1]
    calib = [batchify([train[i] for i in chunk])[:3] for chunk in full[:args.calib_batches]]
    int8 = quantize_classifier(net, calib, calib_mode=args.calib_mode)
    _common.log(f"int8: calibrated on {len(calib)} batch(es) of {len(calib[0][0])} training "
                f"samples ({args.calib_mode})")

    predictions: dict[str, list[int]] = {}
    seconds: dict[str, float] = {}
    for name, model in (("fp32", net), ("int8", int8)):
        # The first call builds the graph: keep it out of the timing.
        _predict(model, dev[:args.dev_batch_size], batchify, args.dev_batch_size, cpu)
        start = time.perf_counter()
        predictions[name] = _predict(model, dev, batchify, args.dev_batch_size, cpu)
        seconds[name] = time.perf_counter() - start
    _common.write_json(args.output_dir / "dev_predictions_int8.json",
                       [task.labels[p] for p in predictions["int8"]])
    labels = [sample[3] for sample in dev]
    report: dict[str, Any] = {
        name: {"dev": score(task, predictions[name], labels), "dev_seconds": seconds[name]}
        for name in seconds}
    report["calibration"] = {"batches": len(calib), "mode": args.calib_mode}
    # Accuracy, whatever the task's own metrics: the drop compares the two models alike.
    fp32_acc, int8_acc = (metrics.accuracy(predictions[name], labels) for name in ("fp32", "int8"))
    report["accuracy_drop"] = fp32_acc - int8_acc
    report["latency_ratio"] = seconds["int8"] / seconds["fp32"]
    _common.log(f"dev accuracy: fp32 {fp32_acc:.2%}, int8 {int8_acc:.2%} (drop "
                f"{100 * report['accuracy_drop']:.2f} points); latency int8/fp32 "
                f"{report['latency_ratio']:.3f}")
    return report


if __name__ == "__main__":
    raise SystemExit(main())
