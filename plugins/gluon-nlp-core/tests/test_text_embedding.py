"""Word vectors from GloVe / word2vec text files, and matrices whose rows follow a Vocab."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

from gluon_nlp_core.text import Vocab, count_tokens, embedding, embedding_matrix, read_word_vectors


@pytest.fixture
def glove(tmp_path):
    path = tmp_path / "glove.txt"
    path.write_text("the 0.1 0.2 0.3\ncat 1 2 3\nsat -1 -2 -3\n")
    return path


def test_glove_keeps_only_the_words_asked_for(glove):
    assert sorted(read_word_vectors(glove, ["cat", "sat", "dog"])) == ["cat", "sat"]
    every = read_word_vectors(glove)
    assert sorted(every) == ["cat", "sat", "the"]
    assert every["cat"].dtype == np.float32
    np.testing.assert_allclose(every["the"], [0.1, 0.2, 0.3], rtol=1e-6)


def test_word2vec_header_is_detected_and_odd_words_are_read(tmp_path):
    path = tmp_path / "w2v.txt"
    # word2vec's C tool ends lines with a space; GloVe 840B has words containing spaces.
    path.write_text("3 2\n2 5 6 \n. . . 7 8\ncat 1 2\ncat 9 9\n")
    vectors = read_word_vectors(path)
    assert sorted(vectors) == [". . .", "2", "cat"]  # the header is no word "3"
    np.testing.assert_array_equal(vectors["2"], [5, 6])
    np.testing.assert_array_equal(vectors["cat"], [1, 2])  # the first of a repeated word


@pytest.mark.parametrize(
    "text, line, message",
    [
        ("the 0.1 0.2 0.3\ncat 1 x 3\n", 2, "not numeric"),
        ("the 0.1 0.2 0.3\n\ncat 1 2\n", 3, "expected a word and 3 numbers"),
        ("2 3\ncat 1 2\n", 2, "expected a word and 3 numbers"),
        ("lonely\n", 1, "expected a word and some numbers"),
    ],
)
def test_malformed_lines_name_the_file_and_line(tmp_path, text, line, message):
    path = tmp_path / "broken.txt"
    path.write_text(text)
    with pytest.raises(ValueError, match=f"broken.txt:{line}: .*{message}"):
        read_word_vectors(path)


def test_unreadable_inputs_are_refused(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        read_word_vectors(tmp_path / "absent.txt")
    for text in ("", "\n", "5 300\n"):
        (tmp_path / "empty.txt").write_text(text)
        with pytest.raises(ValueError, match="holds no word vectors"):
            read_word_vectors(tmp_path / "empty.txt")


def test_matrix_from_a_token_list(glove):
    matrix, found = embedding_matrix(glove, ["<unk>", "cat", "dog"])
    assert found == 1 and matrix.shape == (3, 3) and matrix.dtype == np.float32
    np.testing.assert_allclose(matrix[1], [1, 2, 3])
    assert np.abs(matrix[[0, 2]]).max() <= 0.25
    again, _ = embedding_matrix(glove, ["<unk>", "cat", "dog"])
    other, _ = embedding_matrix(glove, ["<unk>", "cat", "dog"], seed=1)
    np.testing.assert_array_equal(matrix, again)
    assert not np.array_equal(matrix[0], other[0])
    small, _ = embedding_matrix(glove, ["<unk>", "cat", "dog"], scale=0.01)
    assert np.abs(small[[0, 2]]).max() <= 0.01


def test_matrix_rows_line_up_with_vocab_indices(glove):
    # Counts order "sat" before "cat" before "the": rows must follow the vocabulary's
    # indices, not the file's order.
    vocab = Vocab(count_tokens("sat sat sat cat cat the dog".split()))
    matrix, found = embedding_matrix(glove, vocab)
    assert matrix.shape == (len(vocab), 3) and found == 3
    vectors = read_word_vectors(glove)
    for token, vector in vectors.items():
        np.testing.assert_array_equal(matrix[vocab[token]], vector)
    token_list, _ = embedding_matrix(glove, vocab.idx_to_token)
    np.testing.assert_array_equal(matrix, token_list)


def test_matrix_input_checks(glove):
    with pytest.raises(TypeError, match="sequence of tokens in row order"):
        embedding_matrix(glove, {"cat", "sat"})
    with pytest.raises(TypeError, match="got str"):
        embedding_matrix(glove, "cat")
    with pytest.raises(ValueError, match="empty"):
        embedding_matrix(glove, [])
    with pytest.raises(ValueError, match="non-negative"):
        embedding_matrix(glove, ["cat"], scale=-1)
    with pytest.raises(ValueError, match="none of the 2 tokens"):
        embedding_matrix(glove, ["Cat", "Sat"])


def test_docstring_examples_run():
    assert doctest.testmod(embedding).failed == 0
