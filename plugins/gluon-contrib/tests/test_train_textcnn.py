"""The textCNN training script end to end on learnable toy sets, and its inputs."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import gluon_hub
from gluon_contrib import train_textcnn

SMALL = ["--num-filters", "8", "--batch-size", "10", "--format", "sst"]


def _run(sst_files, out, *extra):
    train, test = sst_files
    code = train_textcnn.main(["--train", str(train), "--test", str(test), "--out", str(out),
                               *SMALL, *extra])
    assert code == 0
    return json.loads((out / "history.json").read_text())


def test_rand_loss_goes_down_and_the_set_is_learnt(sst_files, tmp_path):
    history = _run(sst_files, tmp_path, "--mode", "rand", "--embed-size", "16", "--epochs", "8")
    loss = history["train_loss"]
    assert loss[-1] < 0.5 * loss[0]
    assert history["test_accuracy"][-1] >= 0.8
    config = json.loads((tmp_path / "config.json").read_text())
    assert config["labels"] == ["0", "1"] and config["embed_size"] == 16
    assert (tmp_path / "textcnn.params").stat().st_size > 0


def test_multichannel_trains_from_a_word2vec_file(sst_files, word2vec_file, tmp_path):
    history = _run(sst_files, tmp_path, "--mode", "multichannel", "--embedding",
                   str(word2vec_file), "--epochs", "4")
    assert history["train_loss"][-1] < history["train_loss"][0]
    assert json.loads((tmp_path / "config.json").read_text())["embed_size"] == 8


def _trained_net(out):
    """The network, vocabulary and config a run wrote to ``out``."""
    from gluon_contrib.textcnn import TextCNN
    from gluon_nlp_core.text import Vocab

    config = json.loads((out / "config.json").read_text())
    net = TextCNN(config["vocab_size"], config["num_classes"], embed_size=config["embed_size"],
                  mode=config["mode"], windows=config["windows"], num_filters=config["num_filters"])
    net.load_parameters(str(out / "textcnn.params"))
    return net, Vocab.from_json((out / "vocab.json").read_text()), config


@pytest.mark.parametrize("mode", ["rand", "static", "non-static", "multichannel"])
def test_every_variant_learns_trec_and_tunes_only_its_non_static_vectors(
        mode, trec_files, trec_vectors, tmp_path):
    train, test = trec_files
    vectors = ["--embed-size", "8"] if mode == "rand" else ["--embedding", str(trec_vectors)]
    code = train_textcnn.main(["--format", "trec", "--train", str(train), "--test", str(test),
                               "--out", str(tmp_path), "--mode", mode, "--num-filters", "8",
                               "--batch-size", "10", "--epochs", "10", *vectors])
    assert code == 0
    loss = json.loads((tmp_path / "history.json").read_text())["train_loss"]
    assert loss[-1] < 0.6 * loss[0]
    net, vocab, config = _trained_net(tmp_path)
    assert config["labels"] == ["HUM", "LOC", "NUM"] and config["embed_size"] == 8
    if mode == "rand":
        return
    from gluon_nlp_core.text import read_word_vectors

    pretrained = read_word_vectors(trec_vectors)
    rows = vocab[sorted(pretrained)]
    expected = np.stack([pretrained[word] for word in sorted(pretrained)])
    trained = net.embedding.weight.data().asnumpy()[rows]
    if mode == "static":
        np.testing.assert_array_equal(trained, expected)
    else:  # every word occurs in training, so each of its vectors was tuned
        assert (np.abs(trained - expected).max(axis=1) > 1e-4).all()
    if mode == "multichannel":
        np.testing.assert_array_equal(net.static_embedding.weight.data().asnumpy()[rows], expected)


def _train_on_hub_dataset(out, *args):
    return train_textcnn.main(["--embed-size", "8", "--num-filters", "4", "--epochs", "2",
                               "--out", str(out), *args])


def test_an_unlabelled_glue_test_segment_is_refused_with_the_fix(nlp_fixtures, tmp_path, capsys):
    code = _train_on_hub_dataset(tmp_path, "--dataset", "glue_sst2", "--data-root",
                                 str(nlp_fixtures / "glue_sst2"), "--test-segment", "test")
    assert code == 1
    err = capsys.readouterr().err
    assert "'test' of 'glue_sst2' has no labels" in err and "--test-segment dev" in err


def test_glue_sst2_is_evaluated_on_dev_and_trec_on_test_by_default(nlp_fixtures, tmp_path, capsys):
    assert _train_on_hub_dataset(tmp_path / "sst2", "--dataset", "glue_sst2", "--data-root",
                                 str(nlp_fixtures / "scripts_sst2")) == 0
    assert "8 train / 4 test sentences, 2 classes" in capsys.readouterr().out  # dev.tsv's 4
    assert _train_on_hub_dataset(tmp_path / "trec", "--dataset", "trec", "--data-root",
                                 str(nlp_fixtures / "trec")) == 0
    assert "6 train / 2 test sentences, 6 classes" in capsys.readouterr().out


def test_hub_dataset_names_are_real_and_misnames_are_explained(nlp_fixtures, tmp_path, capsys):
    assert set(train_textcnn.HUB_DATASETS) <= set(gluon_hub.list_datasets())
    assert "trec or glue_sst2" in train_textcnn.build_parser().format_help()
    assert _train_on_hub_dataset(tmp_path, "--dataset", "sst2") == 1
    hint = capsys.readouterr().err
    assert "did you mean: " in hint and "glue_sst2" in hint.split("did you mean: ")[1]
    assert _train_on_hub_dataset(tmp_path, "--dataset", "glue_mrpc", "--data-root",
                                 str(nlp_fixtures / "glue_mrpc")) == 1
    assert "textCNN classifies single sentences" in capsys.readouterr().err


def test_pretrained_modes_need_a_vector_file(sst_files, tmp_path, capsys):
    train, test = sst_files
    code = train_textcnn.main(["--train", str(train), "--test", str(test), "--out", str(tmp_path),
                               "--format", "sst", "--mode", "non-static"])
    assert code == 1
    assert "--embedding" in capsys.readouterr().err


def test_missing_text_plugin_is_explained(sst_files, tmp_path):
    """With gluon_nlp_core hidden, the script says which distribution to install."""
    train, test = sst_files
    code = (
        "import sys\n"
        "sys.modules['gluon_nlp_core'] = None\n"
        "from gluon_contrib.train_textcnn import main\n"
        f"sys.exit(main(['--format', 'sst', '--train', {str(train)!r}, '--test', {str(test)!r}, "
        f"'--out', {str(tmp_path)!r}]))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 1
    assert "pip install ./plugins/gluon-nlp-core" in result.stderr
    assert "not on a package index" in result.stderr
    assert "Traceback" not in result.stderr


def test_trec_and_glue_formats_are_read(tmp_path):
    trec = tmp_path / "train.label"
    trec.write_text("DESC:manner How did serfdom develop in and then leave Russia ?\n"
                    "NUM:date When was Ozzy Osbourne born ?\n")
    assert train_textcnn.read_trec(trec) == [
        ("How did serfdom develop in and then leave Russia ?", "DESC"),
        ("When was Ozzy Osbourne born ?", "NUM")]
    glue = tmp_path / "train.tsv"
    glue.write_text("sentence\tlabel\nit 's a charming journey \t1\nbland \t0\n")
    assert train_textcnn.read_sst(glue) == [("it 's a charming journey ", "1"), ("bland ", "0")]
    bad = tmp_path / "bad.label"
    bad.write_text("no label here\n")
    with pytest.raises(ValueError, match="bad.label:1"):
        train_textcnn.read_trec(bad)


def test_tokenize_splits_contractions_and_punctuation():
    assert train_textcnn.tokenize("It's NOT bad, isn't it?!") == [
        "it", "'s", "not", "bad", ",", "is", "n't", "it", "?", "!"]

