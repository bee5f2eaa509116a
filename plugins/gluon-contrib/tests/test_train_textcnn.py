"""The textCNN training script end to end on a learnable toy set, and its inputs."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from gluon_contrib import train_textcnn
from gluon_contrib.wordvectors import embedding_matrix, read_word_vectors

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


def test_static_keeps_the_pretrained_vectors(sst_files, word2vec_file, tmp_path):
    from gluon_hub.compat import mx
    from gluon_contrib.textcnn import TextCNN
    from gluon_nlp_core.text import Vocab

    _run(sst_files, tmp_path, "--mode", "static", "--embedding", str(word2vec_file), "--epochs", "2")
    config = json.loads((tmp_path / "config.json").read_text())
    net = TextCNN(config["vocab_size"], 2, embed_size=8, mode="static", num_filters=8)
    net.load_parameters(str(tmp_path / "textcnn.params"))
    vocab = Vocab.from_json((tmp_path / "vocab.json").read_text())
    vectors = read_word_vectors(word2vec_file)
    stored = net.embedding.weight.data()[vocab["great"]].asnumpy()
    np.testing.assert_allclose(stored, vectors["great"], rtol=1e-6)


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
    assert "pip install gluon-nlp-core" in result.stderr
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


def test_word_vectors_in_glove_format(tmp_path):
    glove = tmp_path / "glove.txt"
    glove.write_text("the 0.1 0.2 0.3\ncat 1 2 3\nsat -1 -2 -3\n")
    assert sorted(read_word_vectors(glove, ["cat", "sat", "dog"])) == ["cat", "sat"]
    matrix, found = embedding_matrix(glove, ["<unk>", "cat", "dog"])
    assert found == 1 and matrix.shape == (3, 3)
    np.testing.assert_allclose(matrix[1], [1, 2, 3])
    assert np.abs(matrix[[0, 2]]).max() <= 0.25
    broken = tmp_path / "broken.txt"
    broken.write_text("the 0.1 0.2 0.3\ncat 1 x 3\n")
    with pytest.raises(ValueError, match="broken.txt:2"):
        read_word_vectors(broken)
