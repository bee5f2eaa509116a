"""End-to-end runs of the fine-tuning and evaluation scripts on fixture data, tiny models.

The fixtures are in the published formats (GLUE TSVs, SQuAD 1.1 JSON, WikiText tokens);
scores are recomputed here from the files the scripts write, without the scripts' code.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest

import gluon_hub
from gluon_hub.compat import mx
from gluon_nlp_core import metrics
from gluon_nlp_core.models.bert import BERTClassifier
from gluon_nlp_core.models.roberta import RoBERTaClassifier
from gluon_nlp_core.scripts import evaluate_lm, finetune_classifier, finetune_squad
from gluon_nlp_core.text import (
    BERT_SPECIAL_TOKENS,
    BERTBasicTokenizer,
    BERTTokenizer,
    GPT2BPETokenizer,
    Vocab,
)

FIXTURES = Path(__file__).parent / "fixtures"
TINY_BERT = {"num_layers": 1, "units": 32, "hidden_size": 64, "num_heads": 2,
             "max_length": 64, "dropout": 0.0}
BERT_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def _tsv_rows(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8-sig", newline="") as f:
        return list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))


def _write_bert_vocab(path: Path, texts: list[str], pieces: dict[str, list[str]]) -> Vocab:
    """A vocabulary of the texts' basic tokens; each key of ``pieces`` is replaced by its
    word pieces, and "[UNK]" covers one word left out."""
    words = set()
    for text in texts:
        words.update(BERTBasicTokenizer(lower=True)(text))
    words -= set(pieces)
    words.discard(sorted(words)[-1])  # one word left for [UNK]
    extra = [p for split in pieces.values() for p in split]
    vocab = Vocab.from_tokens(BERT_SPECIALS + sorted(words | set(extra)), **BERT_SPECIAL_TOKENS)
    path.write_text(vocab.to_json(), encoding="utf-8")
    return vocab


def _falls(losses: list[float], factor: float) -> bool:
    return np.mean(losses[-5:]) < factor * np.mean(losses[:5])


# -- classification -------------------------------------------------------------------

def test_encode_pair_truncates_the_longer_sentence_and_sets_segments():
    vocab = Vocab.from_tokens(BERT_SPECIALS + ["a", "b", "c"], **BERT_SPECIAL_TOKENS)
    tokenizer = BERTTokenizer(vocab)
    ids, segments, length = finetune_classifier.encode_pair(tokenizer, "a a", "b b b b c", 8)
    tokens = vocab.to_tokens(ids)
    assert tokens == ["[CLS]", "a", "a", "[SEP]", "b", "b", "b", "[SEP]"]
    assert segments == [0, 0, 0, 0, 1, 1, 1, 1] and length == 8
    ids, segments, length = finetune_classifier.encode_pair(tokenizer, "c a b", None, 4)
    assert vocab.to_tokens(ids) == ["[CLS]", "c", "a", "[SEP]"] and segments == [0] * 4


@pytest.mark.parametrize("task, int8", [("sst2", False), ("sst2", True), ("mrpc", True)])
def test_finetune_classifier_learns_and_scores_dev(task, int8, tmp_path, capsys):
    data = FIXTURES / f"scripts_{task}"
    columns = ["sentence"] if task == "sst2" else ["#1 String", "#2 String"]
    label_column = "label" if task == "sst2" else "Quality"
    train_rows, dev_rows = _tsv_rows(data / "train.tsv"), _tsv_rows(data / "dev.tsv")
    texts = [row[c] for row in train_rows + dev_rows for c in columns]
    vocab = _write_bert_vocab(tmp_path / "vocab.json", texts,
                              {"good": ["go", "##od"], "police": ["pol", "##ice"]})
    out = tmp_path / "out"
    argv = ["--task", task, "--data-dir", str(data), "--output-dir", str(out),
            "--pretrained", "none", "--vocab-file", str(tmp_path / "vocab.json"),
            "--model-kwargs", json.dumps(TINY_BERT), "--max-len", "64", "--dropout", "0",
            "--epochs", "30", "--batch-size", "8", "--lr", "1e-3", "--log-interval", "10"]
    if int8:
        argv += ["--int8", "--calib-batches", "2"]
    assert finetune_classifier.main(argv) == 0

    results = json.loads((out / "results.json").read_text())
    assert len(results["train_loss"]) == 30  # 8 samples, one batch per epoch
    assert _falls(results["train_loss"], 0.25), results["train_loss"]

    predictions = json.loads((out / "dev_predictions.json").read_text())
    labels = [row[label_column] for row in dev_rows]
    assert len(predictions) == len(labels)
    expected = _glue_scores(task, predictions, labels)
    assert results["dev"] == pytest.approx(expected)
    printed = json.loads(capsys.readouterr().out)
    assert printed.pop("int8", None) == results.get("int8")
    assert printed == pytest.approx({"task": task, **expected})

    if int8:
        report = results["int8"]
        # Both models scored the dev segment: fp32 in the int8 run's batches (padded to
        # --max-len) as in the ordinary ones, int8 as its predictions file says.
        assert report["fp32"]["dev"] == pytest.approx(expected)
        int8_predictions = json.loads((out / "dev_predictions_int8.json").read_text())
        assert report["int8"]["dev"] == pytest.approx(
            _glue_scores(task, int8_predictions, labels))
        fp32_acc, int8_acc = expected["accuracy"], report["int8"]["dev"]["accuracy"]
        assert report["accuracy_drop"] == pytest.approx(fp32_acc - int8_acc)
        # Four dev sentences: int8 may change at most one answer of the trained model.
        assert int8_acc >= fp32_acc - 0.25, report
        assert sum(a == b for a, b in zip(int8_predictions, predictions)) >= len(labels) - 1
        assert report["calibration"] == {"batches": 1, "mode": "naive"}  # 8 samples, batch 8
        assert report["latency_ratio"] == pytest.approx(
            report["int8"]["dev_seconds"] / report["fp32"]["dev_seconds"])
    else:
        assert "int8" not in results and not (out / "dev_predictions_int8.json").exists()

    # The saved parameters are the trained classifier: reloaded strictly, it predicts the same.
    bert = gluon_hub.load("bert_12_768_12", use_decoder=False, use_classifier=False,
                          vocab_size=len(vocab), **TINY_BERT)
    net = BERTClassifier(bert, num_classes=2)
    net.load_parameters(str(out / "model.params"))
    tokenizer = BERTTokenizer(vocab)
    again = []
    for row in dev_rows:
        pair = [row[c] for c in columns] + [None] * (2 - len(columns))
        ids, segments, length = finetune_classifier.encode_pair(tokenizer, *pair, 64)
        scores = net(mx.nd.array([ids]), mx.nd.array([segments]), mx.nd.array([length]))
        again.append(str(int(scores.argmax(axis=-1).asscalar())))
    assert again == predictions


def _glue_scores(task: str, predictions: list[str], labels: list[str]) -> dict[str, float]:
    """GLUE's accuracy, and for MRPC the F1 of class "1", computed here from scratch."""
    scores = {"accuracy": sum(p == t for p, t in zip(predictions, labels)) / len(labels)}
    if task == "mrpc":
        tp = sum(p == t == "1" for p, t in zip(predictions, labels))
        fp = sum(p == "1" != t for p, t in zip(predictions, labels))
        fn = sum(t == "1" != p for p, t in zip(predictions, labels))
        scores["f1"] = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
    return scores


# Every GLUE task on its fixture: the metric names GLUE reports, values recomputed with
# scikit-learn / scipy from the written predictions; CoLA and STS-B train long enough to
# show the loss falling (classification and regression), the others a few steps.
GLUE_RUNS = {"cola": 30, "stsb": 60, "qqp": 2, "mnli": 2, "qnli": 2, "rte": 2, "wnli": 2}


def _reference_scores(task: str, predictions: list, labels: list) -> dict[str, float]:
    from scipy import stats
    from sklearn import metrics as sk

    if task == "stsb":
        gold = [float(label) for label in labels]
        return {"pearson": stats.pearsonr(predictions, gold)[0],
                "spearman": stats.spearmanr(predictions, gold)[0]}
    if task == "cola":
        return {"mcc": sk.matthews_corrcoef(labels, predictions)}
    scores = {"accuracy": sk.accuracy_score(labels, predictions)}
    if task == "qqp":
        scores["f1"] = sk.f1_score(labels, predictions, pos_label="1", zero_division=0.0)
    return scores


@pytest.mark.filterwarnings("ignore:.*incomplete row")  # QQP's dev fixture, on purpose
@pytest.mark.parametrize("task", sorted(GLUE_RUNS))
def test_finetune_every_glue_task_end_to_end(task, tmp_path, capsys):
    data = FIXTURES / ("glue_mnli" if task == "mnli" else f"glue_{task}")
    spec = finetune_classifier.TASKS[task]
    segments = ("train", *spec.dev_segments)
    rows = {seg: list(gluon_hub.load_dataset(spec.dataset, segment=seg, root=str(data)))
            for seg in segments}
    texts = [text for seg in segments for row in rows[seg] for text in row[:-1]]
    _write_bert_vocab(tmp_path / "vocab.json", texts, {})
    out = tmp_path / "out"
    epochs = GLUE_RUNS[task]
    argv = ["--task", task, "--data-dir", str(data), "--output-dir", str(out),
            "--pretrained", "none", "--vocab-file", str(tmp_path / "vocab.json"),
            "--model-kwargs", json.dumps(TINY_BERT), "--max-len", "48", "--dropout", "0",
            "--epochs", str(epochs), "--batch-size", "8", "--lr", "1e-3",
            "--log-interval", "100"]
    assert finetune_classifier.main(argv) == 0

    results = json.loads((out / "results.json").read_text())
    assert len(results["train_loss"]) == epochs  # 8 training samples, one batch per epoch
    if epochs > 2:
        assert _falls(results["train_loss"], 0.25), results["train_loss"]
    if task == "stsb":
        # Below the L2 loss (half the squared error) of always predicting the mean score:
        # the regression learned more than the average.
        scores = np.array([float(row[-1]) for row in rows["train"]])
        assert np.mean(results["train_loss"][-5:]) < 0.5 * np.var(scores), results["train_loss"]
    expected = {}
    for seg in spec.dev_segments:
        predictions = json.loads((out / f"{seg}_predictions.json").read_text())
        labels = [row[-1] for row in rows[seg]]
        assert len(predictions) == len(labels)
        if task == "stsb":
            assert all(isinstance(p, float) for p in predictions)
        else:
            assert set(predictions) <= set(spec.labels)
        expected[seg] = _reference_scores(task, predictions, labels)
        assert list(expected[seg]) == list(spec.metrics)
    if spec.dev_segments == ("dev",):
        expected = expected["dev"]
    else:
        assert list(expected) == ["dev_matched", "dev_mismatched"]
    _same_scores(results["dev"], expected)
    printed = json.loads(capsys.readouterr().out)
    assert printed.pop("task") == task
    _same_scores(printed, expected)


def _same_scores(actual: dict, expected: dict) -> None:
    """Equal scores, nested by dev segment or not (``pytest.approx`` takes flat dicts)."""
    assert list(actual) == list(expected)
    for key, value in expected.items():
        if isinstance(value, dict):
            _same_scores(actual[key], value)
        else:
            assert actual[key] == pytest.approx(value, nan_ok=True), key


def test_finetune_stsb_regression_refuses_int8_and_bad_scores(tmp_path, capsys):
    base = ["--task", "stsb", "--output-dir", str(tmp_path / "out"), "--pretrained", "none",
            "--vocab-file", str(tmp_path / "vocab.json")]
    with pytest.raises(SystemExit) as exc:
        finetune_classifier.main([*base, "--data-dir", str(FIXTURES / "glue_stsb"), "--int8"])
    assert exc.value.code == 2 and "regression" in capsys.readouterr().err
    header = ["index", "genre", "filename", "year", "old_index", "source1", "source2",
              "sentence1", "sentence2", "score"]
    (tmp_path / "train.tsv").write_text("\t".join(header) + "\n" + "\t".join(
        ["0", "g", "f", "y", "0", "s", "s", "A b .", "A c .", "n/a"]) + "\n", encoding="utf-8")
    _write_bert_vocab(tmp_path / "vocab.json", ["a b c d"], {})
    with pytest.raises(SystemExit) as exc:
        finetune_classifier.main([*base, "--data-dir", str(tmp_path)])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and f"{tmp_path / 'train.tsv'}:2:" in err and "'n/a'" in err


@pytest.mark.parametrize("model", ["distilbert_6_768_12", "roberta_12_768_12"])
def test_finetune_with_distilbert_and_roberta_backbones(model, tmp_path, capsys):
    data = FIXTURES / "glue_rte"
    rows = {seg: list(gluon_hub.load_dataset("glue_rte", segment=seg, root=str(data)))
            for seg in ("train", "dev")}
    texts = [text for seg in rows for row in rows[seg] for text in row[:2]]
    argv = ["--task", "rte", "--model", model, "--data-dir", str(data), "--pretrained", "none",
            "--output-dir", str(tmp_path / "out"), "--vocab-file", str(tmp_path / "vocab.json"),
            "--model-kwargs", json.dumps(TINY_BERT), "--max-len", "48", "--dropout", "0",
            "--epochs", "30", "--batch-size", "8", "--lr", "1e-3", "--log-interval", "100"]
    if model.startswith("roberta"):
        merges = tmp_path / "merges.txt"
        merges.write_text("#version: 0.2\nt h\nth e\nĠ the\ni n\n", encoding="utf-8")
        bpe = GPT2BPETokenizer(merges)
        specials = ["<s>", "<pad>", "</s>", "<unk>"]
        pieces = sorted({piece for text in texts for piece in bpe(text)})
        vocab = Vocab.from_tokens(specials + pieces, bos_token="<s>", eos_token="</s>",
                                  padding_token="<pad>")
        (tmp_path / "vocab.json").write_text(vocab.to_json(), encoding="utf-8")
        argv += ["--bpe-merges", str(merges)]
        # RoBERTa's pair layout: <s> A </s></s> B </s>, every piece in the vocabulary.
        ids, segments, length = finetune_classifier.encode_roberta_pair(
            bpe, vocab, "cat the", "in", 48)
        assert vocab.to_tokens(ids) == ["<s>", "c", "a", "t", "Ġthe", "</s>", "</s>", "in",
                                        "</s>"]
        assert segments == [0] * 9 and length == 9
    else:
        vocab = _write_bert_vocab(tmp_path / "vocab.json", texts, {})
    assert finetune_classifier.main(argv) == 0
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert _falls(results["train_loss"], 0.25), results["train_loss"]
    assert list(results["dev"]) == ["accuracy"]
    assert json.loads(capsys.readouterr().out)["task"] == "rte"

    # The saved classifier is the hub's encoder under a first-token head, reloaded strictly.
    heads = {"use_decoder": False} if model.startswith("roberta") else {}
    encoder = gluon_hub.load(model, vocab_size=len(vocab), **heads, **TINY_BERT)
    net = RoBERTaClassifier(encoder, num_classes=2)
    net.load_parameters(str(tmp_path / "out" / "model.params"))
    assert not hasattr(encoder, "token_type_embed")

    with pytest.raises(SystemExit) as exc:
        finetune_classifier.main([*argv, "--int8"])
    assert exc.value.code == 2 and "--int8 quantizes BERT" in capsys.readouterr().err
    if not model.startswith("roberta"):
        with pytest.raises(SystemExit) as exc:
            finetune_classifier.main([*argv, "--bpe-merges", str(tmp_path / "merges.txt")])
        assert exc.value.code == 2 and "uses WordPiece" in capsys.readouterr().err


def test_scripts_refuse_bad_options_with_a_usage_error(tmp_path, capsys):
    data = str(FIXTURES / "scripts_sst2")
    with pytest.raises(SystemExit) as exc:
        finetune_classifier.main(["--task", "sst2", "--data-dir", data, "--output-dir",
                                  str(tmp_path), "--pretrained", "none"])
    assert exc.value.code == 2 and "--vocab-file" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        finetune_squad.main(["--output-dir", str(tmp_path), "--model-kwargs", "[1]"])
    assert exc.value.code == 2 and "JSON object" in capsys.readouterr().err


# -- SQuAD ------------------------------------------------------------------------------

def _squad_vocab(path: Path) -> Vocab:
    document = json.loads((FIXTURES / "scripts_squad" / "dev-v1.1.json").read_text("utf-8"))
    texts = []
    for article in document["data"]:
        for paragraph in article["paragraphs"]:
            texts += [paragraph["context"]] + [qa["question"] for qa in paragraph["qas"]]
    return _write_bert_vocab(path, texts, {"denver": ["den", "##ver"],
                                           "photosynthesis": ["photo", "##syn", "##thesis"]})


def test_squad_features_map_answers_back_to_the_passage_text(tmp_path):
    tokenizer = BERTTokenizer(_squad_vocab(tmp_path / "vocab.json"))
    records = gluon_hub.load_dataset("squad", segment="train", version="1.1",
                                     root=str(FIXTURES / "scripts_squad"))
    for i, record in enumerate(records):
        passage = finetune_squad.tokenize_passage(tokenizer, record.context)
        assert passage.pieces == tokenizer(record.context)
        features = finetune_squad.make_features(tokenizer, record, i, max_seq_length=32,
                                                doc_stride=6, max_query_length=6)
        assert len(features) > 1
        hits = [f for f in features if f.start]
        assert hits, record.question_id
        for f in hits:
            begin = f.char_spans[f.start - f.doc_offset][0]
            end = f.char_spans[f.end - f.doc_offset][1]
            assert record.context[begin:end] == record.answers[0]
        for f in features:
            assert len(f.ids) <= 32 and len(f.ids) == len(f.segments)
            assert f.segments[f.doc_offset - 1] == 0 and f.segments[f.doc_offset] == 1
        # Each passage piece is "max context" in exactly one window.
        seen = {}
        for f in features:
            for span, best in zip(f.char_spans, f.max_context):
                seen.setdefault(span, []).append(best)
        assert all(sum(flags) == 1 for flags in seen.values())


def test_squad_decode_keeps_valid_spans_only():
    context = "alpha beta gamma delta"
    spans = [(0, 5), (6, 10), (11, 16), (17, 22)]
    feature = finetune_squad.Feature(example=0, ids=[0] * 7, segments=[0] * 2 + [1] * 5,
                                     start=0, end=0, doc_offset=2, char_spans=spans,
                                     max_context=[True, True, True, False])
    scores = np.zeros((7, 2), dtype=np.float32)
    scores[0] = [9, 9]     # [CLS]: not in the passage
    scores[5, 0] = 8       # "delta" starts best, but this window lacks its max context
    scores[3, 0] = 5       # "beta"
    scores[2, 1] = 7       # "alpha" ends before "beta" starts
    scores[4, 1] = 4       # "gamma"
    best = finetune_squad.decode([(feature, scores)], context, n_best=7, max_answer_length=2)
    texts = [b["text"] for b in best]
    assert texts[:2] == ["beta gamma", "alpha"]
    assert [b["score"] for b in best[:2]] == pytest.approx([9.0, 7.0])
    assert len(texts) == len(set(texts)) <= 7
    assert all(len(t.split()) <= 2 and not t.startswith("delta") for t in texts)
    assert sum(b["probability"] for b in best) == pytest.approx(1.0)
    assert finetune_squad.decode([], context, 4, 2)[0]["text"] == ""


def test_finetune_squad_learns_and_scores_with_official_em_f1(tmp_path, capsys):
    _squad_vocab(tmp_path / "vocab.json")
    data = FIXTURES / "scripts_squad"
    out = tmp_path / "out"
    argv = ["--data-dir", str(data), "--output-dir", str(out), "--pretrained", "none",
            "--vocab-file", str(tmp_path / "vocab.json"),
            "--model-kwargs", json.dumps(TINY_BERT), "--max-seq-length", "40",
            "--doc-stride", "8", "--max-query-length", "10", "--n-best-size", "5",
            "--max-answer-length", "8", "--epochs", "30", "--batch-size", "32",
            "--lr", "3e-3", "--log-interval", "10"]
    assert finetune_squad.main(argv) == 0

    results = json.loads((out / "results.json").read_text())
    assert len(results["train_loss"]) == 30
    assert _falls(results["train_loss"], 0.5), results["train_loss"]

    document = json.loads((data / "dev-v1.1.json").read_text("utf-8"))
    references, contexts = {}, {}
    for article in document["data"]:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                references[qa["id"]] = [a["text"] for a in qa["answers"]]
                contexts[qa["id"]] = paragraph["context"]
    predictions = json.loads((out / "predictions.json").read_text("utf-8"))
    assert predictions.keys() == references.keys()
    assert all(text and text in contexts[qid] for qid, text in predictions.items())
    expected = metrics.squad_evaluate(references, predictions, version="1.1")
    assert results["dev"] == pytest.approx(expected)
    assert json.loads(capsys.readouterr().out) == pytest.approx(expected)
    nbest = json.loads((out / "nbest_predictions.json").read_text("utf-8"))
    assert {qid: answers[0]["text"] for qid, answers in nbest.items()} == predictions
    # The fixture is learnable: most answers come back exactly.
    assert expected["exact_match"] >= 50.0


# -- language-model perplexity ------------------------------------------------------------

def _wikitext(path: Path) -> list[str]:
    tokens = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.split():
            tokens += line.split() + ["<eos>"]
    return tokens


@pytest.mark.parametrize("name, kwargs", [
    ("standard_lstm_lm_200", {"embed_size": 16, "hidden_size": 16, "num_layers": 2}),
    ("awd_lstm_lm_600", {"embed_size": 8, "hidden_size": 16, "num_layers": 2}),
])
def test_evaluate_lm_perplexity_is_exp_mean_nll(name, kwargs, tmp_path):
    data = FIXTURES / "scripts_wikitext"
    counts: dict[str, int] = {}
    for token in _wikitext(data / "wiki.train.tokens"):
        counts[token] = counts.get(token, 0) + 1
    ranked = sorted((t for t in counts if t not in ("<unk>", "<eos>")),
                    key=lambda t: (-counts[t], t))
    index = {t: i for i, t in enumerate(["<unk>", "<eos>"] + ranked)}

    mx.random.seed(0)
    model = gluon_hub.load(name, vocab_size=len(index), **kwargs)
    # Large weights make predictions depend on the recurrent state, so that a script that
    # dropped the state between BPTT chunks would be off by far more than the tolerance.
    model.initialize(mx.init.Normal(1.0), force_reinit=True)
    model.save_parameters(str(tmp_path / "lm.params"))
    batch_size, bptt = 3, 6
    argv = ["--model", name, "--data-dir", str(data), "--segment", "test",
            "--params", str(tmp_path / "lm.params"), "--model-kwargs", json.dumps(kwargs),
            "--batch-size", str(batch_size), "--bptt", str(bptt),
            "--output", str(tmp_path / "ppl.json")]
    assert evaluate_lm.main(argv) == 0
    result = json.loads((tmp_path / "ppl.json").read_text())

    ids = [index.get(t, 0) for t in _wikitext(data / "wiki.test.tokens")]
    rows = len(ids) // batch_size
    assert (rows - 1) % bptt, "the fixture should leave a short last BPTT chunk"
    columns = np.array(ids[:rows * batch_size]).reshape(batch_size, rows).T
    # One pass over whole columns: no chunking, so no state carrying to get wrong.
    scores, _ = model(mx.nd.array(columns[:-1]),
                      model.begin_state(batch_size=batch_size, ctx=mx.cpu()))
    logits = scores.asnumpy().astype(np.float64)
    top = logits.max(axis=-1, keepdims=True)
    log_probs = logits - top - np.log(np.exp(logits - top).sum(axis=-1, keepdims=True))
    nll = -np.take_along_axis(log_probs, columns[1:, :, None], axis=-1).mean()
    assert result["tokens"] == (rows - 1) * batch_size
    assert result["mean_nll"] == pytest.approx(nll, rel=1e-5)
    assert result["perplexity"] == pytest.approx(math.exp(nll), rel=1e-5)


def test_batchify_corpus_lays_out_contiguous_columns():
    data = evaluate_lm.batchify_corpus(list(range(11)), 3)
    assert data.tolist() == [[0, 3, 6], [1, 4, 7], [2, 5, 8]]
    with pytest.raises(ValueError, match="too few"):
        evaluate_lm.batchify_corpus([1, 2, 3], 2)
