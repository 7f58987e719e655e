"""contrib.layers' old feature columns (TF 1.0-1.4) over tf.feature_column: values against
NumPy references, the "" column of an x array, and the errors."""

import numpy as np
import pytest

import tensorflux as tf

layers = tf.contrib.layers


def _run(fetches):
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
        return sess.run(fetches)


def test_real_valued_column_empty_name_reads_x_array_and_normalizes():
    x = np.arange(8, dtype=np.float64).reshape(2, 4)
    with tf.Graph().as_default():
        plain = layers.real_valued_column("", dimension=4)
        scaled = layers.real_valued_column("", dimension=4, normalizer=lambda t: (t - 1.0) * 2)
        a = layers.input_from_feature_columns({"": tf.constant(x)}, [plain])
        b = layers.input_from_feature_columns(tf.constant(x), [scaled])
        got_a, got_b = _run([a, b])
    np.testing.assert_array_equal(got_a, x.astype(np.float32))
    np.testing.assert_array_equal(got_b, ((x - 1.0) * 2).astype(np.float32))
    assert plain.key == "" and plain.shape == (4,)


def test_real_valued_column_errors():
    with pytest.raises(ValueError, match="dimension=None"):
        layers.real_valued_column("v", dimension=None)
    with pytest.raises(ValueError, match="greater than 0"):
        layers.real_valued_column("v", dimension=0)
    with pytest.raises(TypeError, match="column_name"):
        layers.real_valued_column(3)


def test_integerized_feature_takes_ids_mod_bucket_size():
    values = np.array([[7, 2], [11, -1]], np.int64)  # -1: no id in a dense input
    with tf.Graph().as_default():
        col = layers.sparse_column_with_integerized_feature("i", bucket_size=5)
        out = tf.feature_column.input_layer({"i": tf.constant(values)},
                                            [layers.one_hot_column(col)])
        got = _run(out)
    expected = np.zeros((2, 5), np.float32)
    for row, ids in enumerate(values):
        for v in ids[ids >= 0]:
            expected[row, v % 5] += 1
    np.testing.assert_array_equal(got, expected)
    with pytest.raises(ValueError, match="bucket_size"):
        layers.sparse_column_with_integerized_feature("i", bucket_size=0)
    with pytest.raises(ValueError, match="integer"):
        layers.sparse_column_with_integerized_feature("i", 4, dtype=tf.string)


def test_keys_column_one_hot_and_weighted_sparse_column():
    words = np.array([["b", "zz"], ["a", "b"]])
    weights = np.array([[2.0, 5.0], [0.5, 3.0]], np.float32)
    with tf.Graph().as_default():
        col = layers.sparse_column_with_keys("w", keys=["a", "b", "c"])
        hot = layers.one_hot_column(col)
        weighted = layers.one_hot_column(layers.weighted_sparse_column(col, "f"))
        feats = {"w": tf.constant(words), "f": tf.constant(weights)}
        got_hot, got_weighted = _run([tf.feature_column.input_layer(feats, [hot]),
                                      tf.feature_column.input_layer(feats, [weighted])])
    np.testing.assert_array_equal(got_hot, [[0, 1, 0], [1, 1, 0]])  # "zz" is unknown: dropped
    np.testing.assert_allclose(got_weighted, [[0, 2.0, 0], [0.5, 3.0, 0]])
    with pytest.raises(ValueError, match="combiner"):
        layers.sparse_column_with_keys("w", ["a"], combiner="max")


def test_bucketized_column_matches_digitize():
    x = np.array([[-1.0], [0.0], [0.5], [3.0], [10.0]], np.float32)
    boundaries = [0.0, 1.0, 5.0]
    with tf.Graph().as_default():
        col = layers.bucketized_column(layers.real_valued_column("x"), boundaries)
        got = _run(tf.feature_column.input_layer({"x": tf.constant(x)}, [col]))
    expected = np.eye(4, dtype=np.float32)[np.digitize(x[:, 0], boundaries)]
    np.testing.assert_array_equal(got, expected)


def test_crossed_column_accepts_hashed_columns_as_their_raw_keys():
    a = np.array([["x"], ["y"], ["x"]])
    b = np.array([[0.2], [3.0], [7.0]], np.float32)
    with tf.Graph().as_default():
        hashed = layers.sparse_column_with_hash_bucket("a", 10)
        bucket = layers.bucketized_column(layers.real_valued_column("b"), [1.0, 5.0])
        old = layers.crossed_column([hashed, bucket], hash_bucket_size=50)
        new = tf.feature_column.crossed_column(["a", bucket], hash_bucket_size=50)
        feats = {"a": tf.constant(a), "b": tf.constant(b)}
        got_old, got_new = _run([tf.feature_column.input_layer(
            feats, [layers.one_hot_column(old)]), tf.feature_column.input_layer(
            feats, [tf.feature_column.indicator_column(new)])])
    np.testing.assert_array_equal(got_old, got_new)
    assert got_old.shape == (3, 50) and np.all(got_old.sum(axis=1) == 1)
    with pytest.raises(ValueError, match="ckpt_to_load_from"):
        layers.crossed_column([hashed, bucket], 5, ckpt_to_load_from="/tmp/x",
                              tensor_name_in_ckpt="w")


def test_embedding_column_mean_of_rows():
    ids = np.array([[1, 3], [2, -1]], np.int64)
    with tf.Graph().as_default():
        col = layers.embedding_column(layers.sparse_column_with_integerized_feature("i", 4), 3,
                                      initializer=tf.random_normal_initializer(seed=1))
        out = tf.feature_column.input_layer({"i": tf.constant(ids)}, [col])
        (table,) = tf.global_variables()
        got, table_value = _run([out, table])
    expected = np.stack([table_value[[1, 3]].mean(0), table_value[2]])
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_weighted_sum_from_feature_columns_is_linear_model():
    x = np.array([[1.0, 2.0], [3.0, -1.0]], np.float32)
    with tf.Graph().as_default():
        col = layers.real_valued_column("", dimension=2)
        logits, cols_to_vars, bias = layers.weighted_sum_from_feature_columns(
            tf.constant(x), [col], num_outputs=3)
        (weights,) = cols_to_vars[col]
        w = np.arange(6, dtype=np.float32).reshape(2, 3)
        assign = [weights.assign(w), bias.assign([0.5, -1.0, 2.0])]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(assign)
            got = sess.run(logits)
    np.testing.assert_allclose(got, x @ w + [0.5, -1.0, 2.0], rtol=1e-6)


def test_feature_spec_and_infer_columns():
    with tf.Graph().as_default():
        cols = layers.infer_real_valued_columns({"a": tf.zeros([2, 3, 2]), "b": tf.zeros([2])})
        spec = layers.create_feature_spec_for_parsing(cols)
        with pytest.raises(ValueError, match="not a number"):
            layers.infer_real_valued_columns(tf.constant(["s"]))
    assert [(c.key, c.shape) for c in cols] == [("a", (6,)), ("b", (1,))]
    assert spec["a"].shape == (6,) and spec["b"].dtype == tf.float32
    learn_cols = tf.contrib.learn.infer_real_valued_columns_from_input(
        np.zeros((5, 4), np.int32))
    assert learn_cols[0].key == "" and learn_cols[0].shape == (4,)
    assert learn_cols[0].dtype == tf.int64
