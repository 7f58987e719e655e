"""tf.keras.preprocessing.text and .sequence against hand-computed values (the keras-
preprocessing 1.1 rules; checked against TF 2.21's tf_keras on the same inputs)."""

import random

import numpy as np
import pytest

import tensorflux as tf

text = tf.keras.preprocessing.text
sequence = tf.keras.preprocessing.sequence
TEXTS = ["The cat sat on the mat.", "The dog ate my homework!", "cat and dog, dog and cat"]


def test_word_sequence_hashing_and_one_hot():
    assert text.text_to_word_sequence("Hello, World! it's--me") == ["hello", "world", "it's",
                                                                    "me"]
    assert text.text_to_word_sequence("a-b c", filters="", lower=False, split="-") == ["a",
                                                                                       "b c"]
    hashed = text.hashing_trick("a b a", 7, hash_function="md5")
    assert hashed[0] == hashed[2] and all(1 <= h <= 6 for h in hashed)
    assert all(1 <= h < 5 for h in text.one_hot("x y z w", 5))
    with pytest.raises(ValueError, match="n >= 2"):
        text.hashing_trick("a", 1)


def test_tokenizer_index_sequences_and_matrices():
    tok = text.Tokenizer(num_words=6, oov_token="<unk>")
    tok.fit_on_texts(TEXTS)
    # counts: the 4, cat 3 ... (ties keep first-seen order); the OOV token comes first.
    assert tok.word_index == {"<unk>": 1, "the": 2, "cat": 3, "dog": 4, "and": 5, "sat": 6,
                              "on": 7, "mat": 8, "ate": 9, "my": 10, "homework": 11}
    assert tok.document_count == 3 and tok.word_docs["cat"] == 2
    seqs = tok.texts_to_sequences(TEXTS + ["unknown cat"])
    assert seqs[0] == [2, 3, 1, 1, 2, 1] and seqs[3] == [1, 3]
    assert tok.sequences_to_texts([[1, 2, 3, 9]]) == ["<unk> the cat <unk>"]
    counts = tok.texts_to_matrix(TEXTS, mode="count")
    np.testing.assert_array_equal(counts[2], [0, 0, 0, 2, 2, 2])
    np.testing.assert_array_equal(tok.texts_to_matrix(TEXTS, mode="binary")[2],
                                  [0, 0, 0, 1, 1, 1])
    np.testing.assert_allclose(tok.texts_to_matrix(TEXTS, mode="freq")[2],
                               np.array([0, 0, 0, 2, 2, 2]) / 6)
    tfidf = tok.texts_to_matrix(TEXTS, mode="tfidf")
    docs = {3: 2, 4: 2, 5: 1}
    want = [(1 + np.log(2)) * np.log(1 + 3 / (1 + docs[j])) for j in (3, 4, 5)]
    np.testing.assert_allclose(tfidf[2, 3:], want)
    again = text.tokenizer_from_json(tok.to_json())
    assert again.texts_to_sequences(TEXTS) == tok.texts_to_sequences(TEXTS)
    assert again.index_word[3] == "cat"


def test_tokenizer_char_level_lists_and_errors():
    tok = text.Tokenizer(char_level=True)
    tok.fit_on_texts(["abca"])
    assert tok.word_index == {"a": 1, "b": 2, "c": 3}
    assert tok.texts_to_sequences(["cab", ["a", "z"]]) == [[3, 1, 2], [1]]
    empty = text.Tokenizer()
    with pytest.raises(ValueError, match="Specify a dimension"):
        empty.sequences_to_matrix([[1]])
    with pytest.raises(ValueError, match="tfidf"):
        text.Tokenizer(num_words=4).sequences_to_matrix([[1]], mode="tfidf")
    with pytest.raises(ValueError, match="Unknown vectorization mode"):
        text.Tokenizer(num_words=4).sequences_to_matrix([[1]], mode="bits")
    with pytest.raises(TypeError, match="Unrecognized"):
        text.Tokenizer(bad=1)


def test_sampling_table_and_skipgrams():
    table = sequence.make_sampling_table(5, sampling_factor=1e-2)
    rank = np.array([1, 1, 2, 3, 4])
    f = 1e-2 * (rank * (np.log(rank) + 0.577) + 0.5 - 1.0 / (12.0 * rank))
    np.testing.assert_allclose(table, np.minimum(1.0, f / np.sqrt(f)))
    couples, labels = sequence.skipgrams([1, 2, 0, 3], 4, window_size=1, negative_samples=0,
                                         shuffle=False)
    assert couples == [[1, 2], [2, 1]] and labels == [1, 1]   # pairs with index 0 skipped
    random.seed(3)
    couples, labels = sequence.skipgrams([1, 2, 3, 4], 5, window_size=2, seed=9)
    positives = [c for c, label in zip(couples, labels) if label == 1]
    assert len(positives) == 10 and labels.count(0) == 10
    assert all(1 <= c[1] <= 4 for c, label in zip(couples, labels) if label == 0)
    cat_couples, cat_labels = sequence.skipgrams([1, 2], 3, window_size=1, categorical=True,
                                                 negative_samples=0, shuffle=False)
    assert cat_labels == [[0, 1], [0, 1]]


def test_timeseries_generator_windows():
    data = np.arange(20).reshape(10, 2)
    gen = sequence.TimeseriesGenerator(data, np.arange(10), length=3, stride=2, batch_size=2)
    assert len(gen) == 2
    samples, targets = gen[1]
    np.testing.assert_array_equal(targets, [7, 9])
    np.testing.assert_array_equal(samples[0], data[4:7])
    rev = sequence.TimeseriesGenerator(data, np.arange(10), length=2, reverse=True,
                                       batch_size=3, sampling_rate=2)
    np.testing.assert_array_equal(rev[0][0][0], data[0:2:2][::-1])
    with pytest.raises(ValueError, match="same length"):
        sequence.TimeseriesGenerator(data, np.arange(9), length=2)
    with pytest.raises(ValueError, match="is disallowed"):
        sequence.TimeseriesGenerator(data, np.arange(10), length=12)
