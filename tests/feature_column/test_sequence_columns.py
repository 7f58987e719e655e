"""Sequence feature columns and tf.contrib.feature_column.sequence_input_layer: per-step
embeddings / one-hots / numeric values and sequence lengths against NumPy."""

import numpy as np
import pytest

import tensorflux as tf

fc = tf.feature_column
sfc = tf.contrib.feature_column


@pytest.fixture(autouse=True)
def graph():
    with tf.Graph().as_default() as g:
        yield g


def _run(fetches):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(tf.tables_initializer())
        return sess.run(fetches)


def _sparse(indices, values, shape, dtype=tf.int64):
    return tf.SparseTensor(tf.constant(indices, tf.int64), tf.constant(values, dtype),
                           tf.constant(shape, tf.int64))


# ids of 3 examples: [2, 0, 1], [3], [] (lengths 3, 1, 0)
_IDS = ([[0, 0], [0, 1], [0, 2], [1, 0]], [2, 0, 1, 3], [3, 3])


def test_sequence_embedding_and_indicator_per_step():
    ids = sfc.sequence_categorical_column_with_identity("w", 4)
    table = np.arange(8, dtype=np.float32).reshape(4, 2)
    emb = fc.embedding_column(ids, 2, initializer=tf.constant_initializer(table))
    ind = fc.indicator_column(ids)
    features = {"w": _sparse(*_IDS)}
    out, length = sfc.sequence_input_layer(features, [emb, ind])
    got, got_len = _run([out, length])
    assert got.shape == (3, 3, 6) and got_len.tolist() == [3, 1, 0]
    want = np.zeros((3, 3, 6), np.float32)  # columns by name: w_embedding, then w_indicator
    for (row, step), i in zip(_IDS[0], _IDS[1]):
        want[row, step, :2] = table[i]
        want[row, step, 2 + i] = 1.0
    np.testing.assert_allclose(got, want)
    names = [v.name for v in tf.global_variables()]
    assert names == ["sequence_input_layer/w_embedding/embedding_weights:0"]


def test_sequence_numeric_column_and_string_vocabulary():
    num = sfc.sequence_numeric_column("x", shape=(2,))
    # 2 values per step: row 0 has 2 steps, row 1 has 1 step.
    x = _sparse([[0, 0], [0, 1], [0, 2], [0, 3], [1, 0], [1, 1]], [1., 2., 3., 4., 5., 6.],
                [2, 4], tf.float32)
    words = fc.sequence_categorical_column_with_vocabulary_list("t", ["a", "b"])
    t = _sparse([[0, 0], [0, 1], [1, 0]], ["b", "a", "b"], [2, 2], tf.string)
    out, length = sfc.sequence_input_layer({"x": x, "t": t},
                                           [num, fc.indicator_column(words)])
    got, got_len = _run([out, length])
    assert got_len.tolist() == [2, 1]
    np.testing.assert_allclose(got, [[[0, 1, 1, 2], [1, 0, 3, 4]],
                                     [[0, 1, 5, 6], [0, 0, 0, 0]]])
    assert fc.make_parse_example_spec([num]) == {"x": tf.VarLenFeature(tf.float32)}


def test_sequence_columns_errors():
    ids = fc.sequence_categorical_column_with_identity("w", 4)
    features = {"w": _sparse(*_IDS)}
    with pytest.raises(ValueError, match="sequence_input_layer"):
        fc.input_layer(features, [fc.indicator_column(ids)])
    with pytest.raises(ValueError, match="sequence dense columns"):
        sfc.sequence_input_layer(features, [fc.indicator_column(
            fc.categorical_column_with_identity("w", 4))])
    with pytest.raises(ValueError, match="sequence columns"):
        fc.linear_model(features, [ids])
    with pytest.raises(ValueError, match="sequence_input_layer"):
        fc.input_layer({"x": _IDS}, [fc.sequence_numeric_column("x")])
    other = fc.sequence_categorical_column_with_identity("v", 4)
    out, length = sfc.sequence_input_layer(
        {"w": _sparse(*_IDS), "v": _sparse([[0, 0]], [1], [3, 3])},
        [fc.indicator_column(ids), fc.indicator_column(other)])
    with pytest.raises(tf.errors.InvalidArgumentError, match="sequence_length"):
        _run(length)
    with pytest.raises(ValueError, match="SparseTensor"):
        sfc.sequence_input_layer({"x": tf.constant([[1.0]])},
                                 [fc.sequence_numeric_column("x")])
