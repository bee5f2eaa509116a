"""BERT-base CPU inference: gluon_nlp_core against GluonNLP 0.10, and int8 against fp32.

Both fp32 models are the sentence classifier over ``bert_12_768_12`` with the same
weights, hybridized, run on batch 8 x sequence length 128. Runs are interleaved and
medians compared. Then the gluon_nlp_core classifier is quantized (calibrated on a few
batches) and its latency compared with fp32.

What the int8 numbers are: the int8/fp32 ratio of median latencies on one batch, and how
often the two models predict the same class on held-out random inputs. The weights are
random (no download), so that agreement is a sanity check of the quantized graph, NOT an
accuracy drop: for that, fine-tune on a real task and compare dev accuracies with
``python -m gluon_nlp_core.scripts.finetune_classifier ... --int8``.

    .venv/bin/python bench/bench_bert.py [--repeats 20] [--batch 8] [--length 128]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import numpy as np

import gluon_hub.compat  # noqa: F401  (numpy aliases before gluonnlp imports mxnet)
from gluon_hub.compat import mx
from gluon_nlp_core.models.bert import BERTClassifier, bert_12_768_12
from gluon_nlp_core.quantize import agreement, quantize_classifier

import gluonnlp
from gluonnlp.model import bert as ref_bert

VOCAB_SIZE = 30522


def _reference():
    vocab = gluonnlp.vocab.BERTVocab(gluonnlp.data.count_tokens(
        f"w{i}" for i in range(VOCAB_SIZE - 5)))
    bert, _ = ref_bert.get_bert_model("bert_12_768_12", vocab=vocab, pretrained=False,
                                      use_decoder=False, use_classifier=False)
    net = ref_bert.BERTClassifier(bert, num_classes=2)
    net.initialize(mx.init.Normal(0.02))
    return net, len(vocab)


def _time(net, batch) -> float:
    start = time.perf_counter()
    net(*batch).wait_to_read()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--length", type=int, default=128)
    args = parser.parse_args()

    reference, vocab_size = _reference()
    ours = BERTClassifier(bert_12_768_12(vocab_size=vocab_size, use_decoder=False,
                                         use_classifier=False), num_classes=2)
    rng = np.random.RandomState(0)

    def batch():
        return (mx.nd.array(rng.randint(0, vocab_size, (args.batch, args.length))),
                mx.nd.array(rng.randint(0, 2, (args.batch, args.length))),
                mx.nd.array(rng.randint(args.length // 2, args.length + 1, (args.batch,))))

    data = batch()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "bert.params")
        reference(*data)
        reference.save_parameters(path)
        ours.load_parameters(path)
    for net in (reference, ours):
        net.hybridize(static_alloc=True, static_shape=True)
        for _ in range(3):
            _time(net, data)
    expected = reference(*data).asnumpy()
    diff = np.abs(expected - ours(*data).asnumpy()).max()
    if diff > 1e-4 * max(1.0, np.abs(expected).max()):  # same weights, same graph: float noise only
        raise SystemExit(f"outputs differ from GluonNLP's: max |diff| {diff:.2e}")

    times: dict[str, list[float]] = {"gluonnlp": [], "ours": []}
    for i in range(args.repeats):
        order = [("gluonnlp", reference), ("ours", ours)]
        for name, net in order if i % 2 == 0 else order[::-1]:
            times[name].append(_time(net, data))
    ref_ms = statistics.median(times["gluonnlp"]) * 1e3
    ours_ms = statistics.median(times["ours"]) * 1e3
    print(f"BERT-base classifier, batch {args.batch} x length {args.length}, CPU, "
          f"fp32; max |diff| {diff:.2e}", flush=True)
    print(f"  gluonnlp 0.10     median {ref_ms:8.2f} ms", flush=True)
    print(f"  gluon_nlp_core    median {ours_ms:8.2f} ms   ratio ours/gluonnlp = "
          f"{ours_ms / ref_ms:.3f}", flush=True)

    calib = [batch() for _ in range(4)]
    int8 = quantize_classifier(ours, calib)
    for _ in range(3):
        _time(int8, data)
    int8_times, fp32_times = [], []
    for i in range(args.repeats):
        pair = [(int8_times, int8), (fp32_times, ours)]
        for bucket, net in pair if i % 2 == 0 else pair[::-1]:
            bucket.append(_time(net, data))
    int8_ms = statistics.median(int8_times) * 1e3
    fp32_ms = statistics.median(fp32_times) * 1e3
    held_out = [batch() for _ in range(4)]
    print(f"  int8 (oneDNN)     median {int8_ms:8.2f} ms   ratio int8/fp32 latency = "
          f"{int8_ms / fp32_ms:.3f} ({(int8_ms / fp32_ms - 1) * 100:+.1f}%), calibrated on "
          f"{len(calib)} random batches", flush=True)
    print(f"  int8 predicts the class fp32 predicts on {agreement(ours, int8, held_out):.1%} "
          f"of {len(held_out) * args.batch} random inputs (random weights: a sanity check, "
          "not an accuracy drop; finetune_classifier --int8 reports that on a dev set)")


if __name__ == "__main__":
    main()
