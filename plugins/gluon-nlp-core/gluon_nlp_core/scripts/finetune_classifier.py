"""Fine-tune BERT for GLUE sentence (pair) classification: SST-2 and MRPC.

Each sample becomes ``[CLS] A [SEP]`` (SST-2) or ``[CLS] A [SEP] B [SEP]`` (MRPC), with
segment ids 0 for the first part and 1 for the second, truncated to ``--max-len`` by
dropping tokens from the end of the longer sentence. The classifier is a dense layer over
BERT's pooled first token. After training, the dev segment is scored with GLUE's metrics
(accuracy for SST-2; accuracy and F1 of the positive class for MRPC), and the parameters,
the dev predictions and the scores are written to ``--output-dir``.

With ``--int8`` the fine-tuned classifier is then quantized to int8 (MXNet's oneDNN
backend, calibrated on ``--calib-batches`` training batches) and both models score the dev
segment on the CPU, in the same batches padded to ``--max-len``: the report gives each
one's scores, the accuracy drop and the int8/fp32 latency ratio, measured, not assumed.

Example::

    python -m gluon_nlp_core.scripts.finetune_classifier --task mrpc --data-dir glue/MRPC \\
        --output-dir out/mrpc --epochs 3 --batch-size 32 --lr 2e-5
"""

from __future__ import annotations

import argparse
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
from ..quantize import quantize_classifier
from ..text import BERTTokenizer, Vocab
from . import _common

__all__ = ["TASKS", "Task", "encode_pair", "main"]


@dataclass(frozen=True)
class Task:
    """A GLUE task: its hub dataset, whether it pairs sentences, its labels and metrics."""

    dataset: str
    pair: bool
    labels: tuple[str, ...]
    metrics: tuple[str, ...]


TASKS: dict[str, Task] = {
    "sst2": Task("glue_sst2", pair=False, labels=("0", "1"), metrics=("accuracy",)),
    "mrpc": Task("glue_mrpc", pair=True, labels=("0", "1"), metrics=("accuracy", "f1")),
}


def encode_pair(tokenizer: BERTTokenizer, first: str, second: str | None,
                max_len: int) -> tuple[list[int], list[int], int]:
    """Token ids, segment ids and valid length of ``[CLS] first [SEP] (second [SEP])``.

    Tokens are dropped from the end of the longer sentence until the whole fits in
    ``max_len``, as BERT's own preprocessing does.

    Examples
    --------
    >>> from gluon_nlp_core.text import Vocab, BERT_SPECIAL_TOKENS
    >>> vocab = Vocab.from_tokens(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b"],
    ...                           **BERT_SPECIAL_TOKENS)
    >>> encode_pair(BERTTokenizer(vocab), "a a a", "b", max_len=6)
    ([2, 5, 5, 3, 6, 3], [0, 0, 0, 0, 1, 1], 6)
    """
    vocab = tokenizer.vocab
    tokens_a = tokenizer(first)
    tokens_b = tokenizer(second) if second is not None else []
    room = max_len - (3 if second is not None else 2)
    if room < 1:
        raise ValueError(f"max_len {max_len} leaves no room for the sentences")
    while len(tokens_a) + len(tokens_b) > room:
        longer = tokens_a if len(tokens_a) > len(tokens_b) else tokens_b
        longer.pop()
    tokens = [vocab.cls_token, *tokens_a, vocab.sep_token]
    segments = [0] * len(tokens)
    if second is not None:
        tokens += [*tokens_b, vocab.sep_token]
        segments += [1] * (len(tokens_b) + 1)
    return vocab[tokens], segments, len(tokens)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m gluon_nlp_core.scripts.finetune_classifier",
        description="Fine-tune BERT on GLUE SST-2 or MRPC and score the dev segment.")
    parser.add_argument("--task", required=True, choices=sorted(TASKS),
                        help="sst2: single-sentence sentiment; mrpc: sentence-pair paraphrase")
    parser.add_argument("--data-dir", type=Path,
                        help="folder holding the task's GLUE files (train.tsv, dev.tsv); "
                        "default: download through the hub's cache")
    parser.add_argument("--output-dir", type=Path, required=True,
                        help="where to write model.params, dev_predictions.json and results.json")
    parser.add_argument("--max-len", type=int, default=128,
                        help="most tokens per sample, [CLS] and [SEP] included (default: 128)")
    parser.add_argument("--lower", action=argparse.BooleanOptionalAction, default=None,
                        help="lower-case the text (default: as the --pretrained weights, "
                        "lower-cased when there are none)")
    parser.add_argument("--dropout", type=float, default=0.1,
                        help="dropout before the classification layer (default: 0.1)")
    _common.add_model_arguments(
        parser, "bert_12_768_12", "book_corpus_wiki_en_uncased",
        '{"num_layers": 2, "units": 128, "hidden_size": 512, "num_heads": 2}')
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


def _encode_segment(args: argparse.Namespace, task: Task, segment: str,
                    tokenizer: BERTTokenizer) -> list[tuple[list[int], list[int], int, int]]:
    dataset = gluon_hub.load_dataset(task.dataset, segment=segment,
                                     root=None if args.data_dir is None else str(args.data_dir))
    samples = []
    for row in dataset:
        *texts, label = row
        if label not in task.labels:
            raise ValueError(f"{task.dataset} {segment}: label {label!r} is none of {task.labels}")
        first, second = (texts[0], texts[1]) if task.pair else (texts[0], None)
        ids, segments, length = encode_pair(tokenizer, first, second, args.max_len)
        samples.append((ids, segments, length, task.labels.index(label)))
    if not samples:
        raise ValueError(f"the {segment} segment of {task.dataset} is empty")
    return samples


def _batchify(vocab: Vocab, length: int | None = None) -> Callable[[Sequence[Any]], Any]:
    """(ids, segments, valid length, label) samples -> padded int32 batch arrays; padded to
    the longest sample, or to ``length`` (at least as long as any sample) when given."""
    return Tuple(Pad(pad_val=vocab[vocab.padding_token], dtype="int32", round_to=length),
                 Pad(pad_val=0, dtype="int32", round_to=length), Stack("float32"),
                 Stack("int32"))


def _predict(net: Any, samples: Sequence[Any], batchify: Callable, batch_size: int,
             ctx: Any) -> list[int]:
    predictions: list[int] = []
    for chunk in _common.batches(range(len(samples)), batch_size):
        ids, segments, lengths, _ = batchify([samples[i] for i in chunk])
        scores = net(ids.as_in_context(ctx), segments.as_in_context(ctx),
                     lengths.as_in_context(ctx))
        predictions += scores.argmax(axis=-1).asnumpy().astype(int).tolist()
    return predictions


def score(task: Task, predictions: Sequence[int], labels: Sequence[int]) -> dict[str, float]:
    """The task's GLUE metrics; F1 is that of class ``"1"`` (MRPC's "is a paraphrase")."""
    result = {"accuracy": metrics.accuracy(predictions, labels)}
    if "f1" in task.metrics:
        result["f1"] = metrics.binary_f1(predictions, labels, positive=task.labels.index("1"))
    return result


def main(argv: Sequence[str] | None = None) -> int:
    """Fine-tune, score the dev segment, save; returns the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        _common.check_training_arguments(args)
        _common.positive("--max-len", args.max_len)
        _common.positive("--calib-batches", args.calib_batches)
        return _run(args)
    except (ValueError, KeyError, FileNotFoundError) as exc:
        parser.error(str(exc))
    return 2


def _run(args: argparse.Namespace) -> int:
    task = TASKS[args.task]
    _common.seed_everything(args.seed)
    ctx = _common.context(args)
    vocab = _common.bert_vocab(args)
    tokenizer = BERTTokenizer(vocab, lower=_common.lower_case(args))
    train = _encode_segment(args, task, "train", tokenizer)
    dev = _encode_segment(args, task, "dev", tokenizer)
    _common.log(f"{args.task}: {len(train)} training and {len(dev)} dev samples")

    bert = _common.build_bert(args, vocab, use_pooler=True, ctx=ctx)
    max_length = bert.encoder.position_weight.shape[0]
    if args.max_len > max_length:
        raise ValueError(f"--max-len {args.max_len} exceeds the model's max_length {max_length}")
    net = BERTClassifier(bert, num_classes=len(task.labels), dropout=args.dropout)
    net.classifier.initialize(mx.init.Normal(0.02), ctx=ctx)
    net.hybridize()

    batchify = _batchify(vocab)
    steps_per_epoch = -(-len(train) // args.batch_size)

    def epoch_batches():
        for chunk in _common.batches(np.random.permutation(len(train)), args.batch_size):
            ids, segments, lengths, labels = batchify([train[i] for i in chunk])
            yield (ids, segments, lengths), (labels,)

    losses = _common.train(net, mx.gluon.loss.SoftmaxCELoss(), epoch_batches, steps_per_epoch,
                           args, ctx)

    predictions = _predict(net, dev, batchify, args.dev_batch_size, ctx)
    labels = [sample[3] for sample in dev]
    dev_scores = score(task, predictions, labels)
    args.output_dir.mkdir(parents=True, exist_ok=True)
    net.save_parameters(str(args.output_dir / "model.params"))
    _common.write_json(args.output_dir / "dev_predictions.json",
                       [task.labels[p] for p in predictions])
    results = {"task": args.task, "dev": dev_scores, "train_loss": losses}
    summary = {"task": args.task, **dev_scores}
    if args.int8:
        results["int8"] = summary["int8"] = _int8_report(args, task, net, train, dev, vocab)
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
    fp32_acc, int8_acc = report["fp32"]["dev"]["accuracy"], report["int8"]["dev"]["accuracy"]
    report["accuracy_drop"] = fp32_acc - int8_acc
    report["latency_ratio"] = seconds["int8"] / seconds["fp32"]
    _common.log(f"dev accuracy: fp32 {fp32_acc:.2%}, int8 {int8_acc:.2%} (drop "
                f"{100 * report['accuracy_drop']:.2f} points); latency int8/fp32 "
                f"{report['latency_ratio']:.3f}")
    return report


if __name__ == "__main__":
    raise SystemExit(main())
