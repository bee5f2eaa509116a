"""Train textCNN (Kim, 2014) for sentence classification.

    python -m gluon_contrib.train_textcnn --format trec --train train_5500.label \\
        --test TREC_10.label --mode non-static --embedding glove.840B.300d.txt --out run/

Data come from local files in the TREC format (``LABEL:fine question ...``) or an SST
format (Kim's ``stsa.binary.*`` files, ``label sentence``; or GLUE's ``sentence<TAB>label``
TSV with its header), or from a hub dataset (``--dataset trec`` or ``glue_sst2``, with
``--data-root DIR``, through ``gluon_hub.load_dataset``; GLUE withholds its test labels, so
``glue_sst2`` is evaluated on ``dev`` by default). The vocabulary and the word vectors
come from the text plugin (``pip install gluon-nlp-core``): its ``Vocab``, built from every
split as in the paper, and its ``embedding_matrix``, which ``static``, ``non-static`` and
``multichannel`` need a word-vector file for (GloVe or word2vec text).

Defaults are the paper's: windows 3, 4, 5 with 100 maps, dropout 0.5, max-norm 3 on the
output weights, Adadelta (rho 0.95), mini-batches of 50, 25 epochs. The run writes
``textcnn.params``, ``vocab.json``, ``config.json`` and ``history.json``.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Sequence

import numpy as np

import gluon_hub
from gluon_hub import HubError

TEXT_PLUGIN_MISSING = (
    "textCNN training takes its vocabulary and word vectors from the text plugin, which is "
    "not installed. It is not on a package index: install it from the gluon_hub checkout "
    "(pip install ./plugins/gluon-nlp-core) or from built wheels (bash scripts/build-wheels.sh "
    "gluon-nlp-core, then pip install dist/gluon_nlp_core-*.whl)"
)


class TextPluginMissingError(ImportError):
    """The text plugin (gluon-nlp-core), which provides the vocabulary and the word
    vectors, is not installed."""


def _text_api() -> tuple[Any, Any]:
    """The text plugin's ``Vocab`` and ``embedding_matrix``; imported on use so that this
    module, and contrib's other commands, work without the plugin."""
    try:
        from gluon_nlp_core.text import Vocab, embedding_matrix
    except ModuleNotFoundError as exc:
        if not (exc.name or "").startswith("gluon_nlp_core"):
            raise  # a dependency of the plugin is missing: its own error says which
        raise TextPluginMissingError(TEXT_PLUGIN_MISSING) from exc
    return Vocab, embedding_matrix


# -- data ------------------------------------------------------------------------------

_CONTRACTIONS = re.compile(r"('s|'ve|n't|'re|'d|'ll)\b")
_PUNCT = re.compile(r"([,!?()])")
_OTHER = re.compile(r"[^a-z0-9(),!?'`]")


def tokenize(text: str) -> list[str]:
    """Kim's preprocessing: lower-case, split contractions and punctuation, drop the rest."""
    text = _OTHER.sub(" ", text.lower())
    text = _PUNCT.sub(r" \1 ", _CONTRACTIONS.sub(r" \1", text))
    return text.split()


def read_trec(path: Path) -> list[tuple[str, str]]:
    """``(sentence, coarse label)`` pairs from a TREC file (``DESC:manner How did ...``)."""
    samples = []
    for number, line in enumerate(path.read_text(encoding="latin-1").splitlines(), 1):
        if not line.strip():
            continue
        label, _, rest = line.partition(" ")
        if ":" not in label or not rest:
            raise ValueError(f"{path}:{number}: not TREC format 'LABEL:fine question', got {line[:60]!r}")
        samples.append((rest, label.split(":", 1)[0]))
    return samples


def read_sst(path: Path) -> list[tuple[str, str]]:
    """``(sentence, label)`` pairs from Kim's ``label sentence`` files or GLUE's TSV."""
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if lines and lines[0].lower().split("\t")[:2] == ["sentence", "label"]:
        samples = []
        for number, line in enumerate(lines[1:], 2):
            sentence, sep, label = line.rpartition("\t")
            if not sep:
                raise ValueError(f"{path}:{number}: expected 'sentence<TAB>label'")
            samples.append((sentence, label.strip()))
        return samples
    samples = []
    for number, line in enumerate(lines, 1):
        label, _, sentence = line.partition(" ")
        if not label.isdigit() or not sentence:
            raise ValueError(f"{path}:{number}: expected 'label sentence', got {line[:60]!r}")
        samples.append((sentence, label))
    return samples


READERS = {"trec": read_trec, "sst": read_sst}


#: Registered single-sentence datasets this script trains on (the text plugin's names).
HUB_DATASETS = ("trec", "glue_sst2")


def _hub_rows(name: str, segment: str, root: str | None) -> list:
    return list(gluon_hub.load_dataset(name, segment=segment, root=root))


def _as_samples(rows: list) -> list[tuple[str, str]]:
    return [(" ".join(text) if isinstance(text, (list, tuple)) else str(text), str(label))
            for text, label in rows]


def _eval_segment(segments: Sequence[str], segment: str | None) -> str:
    """``segment``, else ``dev`` where the dataset has one, else ``test``: GLUE withholds
    its test labels, so its ``dev`` is the segment papers report."""
    if segment is not None:
        return segment
    return "dev" if "dev" in segments else "test"


def load_hub_splits(name: str, segment: str | None, root: str | None) -> tuple[list, list]:
    """Train and evaluation samples of hub dataset ``name``, checked to be labelled
    single sentences (rows of ``(sentence, label)``)."""
    train_rows = _hub_rows(name, "train", root)
    if any(len(row) != 2 for row in train_rows):
        raise ValueError(f"dataset {name!r} does not hold (sentence, label) rows (sentence "
                         f"pairs?); textCNN classifies single sentences, e.g. "
                         f"{' or '.join(HUB_DATASETS)}")
    segments = gluon_hub.dataset_info(name).segments
    segment = _eval_segment(segments, segment)
    test_rows = _hub_rows(name, segment, root)
    # A row shorter than the training rows is a sentence without its label.
    if any(len(row) < 2 for row in test_rows):
        others = [s for s in segments if s not in ("train", segment)]
        hint = f"--test-segment {' or '.join(others)}" if others else "another segment"
        raise ValueError(f"segment {segment!r} of {name!r} has no labels (GLUE withholds its "
                         f"test labels), so it cannot be scored: evaluate on {hint}")
    return _as_samples(train_rows), _as_samples(test_rows)


def load_splits(args: argparse.Namespace) -> tuple[list, list]:
    """Train and test samples, each a list of ``(sentence, label)``."""
    if args.dataset:
        return load_hub_splits(args.dataset, args.test_segment, args.data_root)
    if not (args.train and args.test and args.format):
        raise ValueError("give --dataset NAME, or --format with --train and --test files")
    read = READERS[args.format]
    for path in (args.train, args.test):
        if not path.is_file():
            raise FileNotFoundError(f"no such data file: {str(path)!r}")
    return read(args.train), read(args.test)


# -- training ----------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m gluon_contrib.train_textcnn",
                                description="Train textCNN (Kim, 2014) for sentence classification.")
    p.add_argument("--mode", choices=("rand", "static", "non-static", "multichannel"), default="rand")
    p.add_argument("--format", choices=sorted(READERS), help="format of --train and --test")
    p.add_argument("--train", type=Path, help="training file")
    p.add_argument("--test", type=Path, help="test file")
    p.add_argument("--dataset", help="a hub dataset instead of files: "
                                     f"{' or '.join(HUB_DATASETS)} (needs gluon-nlp-core)")
    p.add_argument("--data-root", help="where the hub dataset's files are")
    p.add_argument("--test-segment", help="segment of --dataset to evaluate on (default: dev "
                                          "where the dataset has one, else test)")
    p.add_argument("--embedding", type=Path, help="word vectors (GloVe or word2vec text format)")
    p.add_argument("--embed-size", type=int, default=300, help="vector size for --mode rand")
    p.add_argument("--windows", default="3,4,5", help="filter widths, comma-separated")
    p.add_argument("--num-filters", type=int, default=100, help="feature maps per width")
    p.add_argument("--dropout", type=float, default=0.5)
    p.add_argument("--max-norm", type=float, default=3.0,
                   help="l2 bound on each output weight vector (0 turns it off)")
    p.add_argument("--optimizer", default="adadelta")
    p.add_argument("--lr", type=float, default=1.0)
    p.add_argument("--batch-size", type=int, default=50)
    p.add_argument("--epochs", type=int, default=25)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, required=True, help="folder for parameters and logs")
    return p


def _encode(samples, vocab, labels, min_len: int):
    ids = [vocab[tokenize(text)] for text, _ in samples]
    pad = vocab[vocab.padding_token]
    width = max(min_len, max(len(x) for x in ids))
    data = np.full((len(ids), width), pad, dtype=np.float32)
    for row, tokens in enumerate(ids):
        data[row, : len(tokens)] = tokens
    return data, np.array([labels[label] for _, label in samples], dtype=np.float32)


def _batches(data, target, batch_size: int, rng: random.Random | None):
    order = list(range(len(data)))
    if rng is not None:
        rng.shuffle(order)
    for start in range(0, len(order), batch_size):
        index = order[start:start + batch_size]
        yield data[index], target[index]


def train(args: argparse.Namespace) -> dict[str, list[float]]:
    """Run the training described by parsed ``args``; returns the per-epoch history."""
    Vocab, embedding_matrix = _text_api()
    from gluon_hub.compat import mx

    from .textcnn import TextCNN

    windows = tuple(int(w) for w in args.windows.split(","))
    if args.mode != "rand" and args.embedding is None:
        raise ValueError(f"--mode {args.mode} uses pretrained vectors: give --embedding FILE "
                         "(GloVe or word2vec text format), or use --mode rand")
    train_set, test_set = load_splits(args)
    if not train_set or not test_set:
        raise ValueError("the training and test sets must not be empty")
    counter = Counter(t for text, _ in train_set + test_set for t in tokenize(text))
    vocab = Vocab(counter, bos_token=None, eos_token=None)
    label_names = sorted({label for _, label in train_set})
    labels = {name: i for i, name in enumerate(label_names)}
    unknown = sorted({label for _, label in test_set} - set(labels))
    if unknown:
        raise ValueError(f"test labels {unknown} never occur in the training set")
    x_train, y_train = _encode(train_set, vocab, labels, max(windows))
    x_test, y_test = _encode(test_set, vocab, labels, max(windows))

    mx.random.seed(args.seed)
    rng = random.Random(args.seed)
    if args.mode == "rand":
        vectors = np.random.RandomState(args.seed).uniform(
            -0.25, 0.25, (len(vocab), args.embed_size)).astype(np.float32)
        found = 0
    else:
        vectors, found = embedding_matrix(args.embedding, vocab, seed=args.seed)
    vectors[vocab[vocab.padding_token]] = 0
    net = TextCNN(len(vocab), len(labels), embed_size=vectors.shape[1], mode=args.mode,
                  windows=windows, num_filters=args.num_filters, dropout=args.dropout)
    net.initialize(mx.init.Xavier())
    net.set_embedding(vectors)
    net.hybridize()
    trainer = mx.gluon.Trainer(net.collect_params(), args.optimizer, {"learning_rate": args.lr})
    loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    history: dict[str, list[float]] = {"train_loss": [], "train_accuracy": [], "test_accuracy": []}
    print(f"{len(train_set)} train / {len(test_set)} test sentences, {len(labels)} classes, "
          f"vocabulary {len(vocab)}" + (f", {found} pretrained vectors" if args.mode != "rand" else ""))
    for epoch in range(args.epochs):
        total, correct, count = 0.0, 0, 0
        for x, y in _batches(x_train, y_train, args.batch_size, rng):
            x, y = mx.nd.array(x), mx.nd.array(y)
            with mx.autograd.record():
                out = net(x)
                loss = loss_fn(out, y)
            loss.backward()
            trainer.step(len(x))
            _max_norm(net.output.weight, args.max_norm)
            total += float(loss.sum().asscalar())
            correct += int((out.argmax(axis=1) == y).sum().asscalar())
            count += len(x)
        history["train_loss"].append(total / count)
        history["train_accuracy"].append(correct / count)
        history["test_accuracy"].append(_accuracy(net, x_test, y_test, args.batch_size))
        print(f"epoch {epoch}: loss {history['train_loss'][-1]:.4f} train acc "
              f"{history['train_accuracy'][-1]:.3f} test acc {history['test_accuracy'][-1]:.3f}",
              flush=True)
    _save(args, net, vocab, label_names, windows, history)
    return history


def _max_norm(weight, bound: float) -> None:
    """Rescale each output unit's weight vector to l2 norm ``bound`` where it is larger."""
    if bound <= 0:
        return
    from gluon_hub.compat import mx

    data = weight.data()
    norms = mx.nd.sqrt(mx.nd.sum(mx.nd.square(data), axis=1, keepdims=True))
    weight.set_data(mx.nd.broadcast_mul(data, mx.nd.minimum(1.0, bound / (norms + 1e-12))))


def _accuracy(net, data, target, batch_size: int) -> float:
    from gluon_hub.compat import mx

    correct = 0
    for x, y in _batches(data, target, batch_size, None):
        correct += int((net(mx.nd.array(x)).argmax(axis=1) == mx.nd.array(y)).sum().asscalar())
    return correct / len(data)


def _save(args, net, vocab, label_names, windows, history) -> None:
    args.out.mkdir(parents=True, exist_ok=True)
    net.save_parameters(str(args.out / "textcnn.params"))
    (args.out / "vocab.json").write_text(vocab.to_json())
    config = {"mode": args.mode, "vocab_size": len(vocab), "num_classes": len(label_names),
              "embed_size": int(net.embedding.weight.shape[1]), "windows": list(windows),
              "num_filters": args.num_filters, "labels": label_names}
    (args.out / "config.json").write_text(json.dumps(config, indent=1))
    (args.out / "history.json").write_text(json.dumps(history))


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the exit code."""
    args = build_parser().parse_args(argv)
    try:
        train(args)
    except (TextPluginMissingError, ValueError, FileNotFoundError, HubError) as exc:
        print(f"train_textcnn: error: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
