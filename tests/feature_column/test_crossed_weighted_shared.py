"""crossed_column, categorical_column_with_vocabulary_file, weighted_categorical_column and
shared_embedding_columns: ids equal to TensorFlow 2.21's tf.compat.v1.feature_column for the
same inputs (numbers computed there once), values against NumPy, names as TF 1.15's."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.feature_column.categorical import _LazyBuilder

fc = tf.feature_column


@pytest.fixture(autouse=True)
def graph():
    with tf.Graph().as_default() as g:
        yield g


def _run(fetches, init_vars=False):
    with tf.Session() as sess:
        if init_vars:
            sess.run(tf.global_variables_initializer())
        sess.run(tf.tables_initializer())
        return sess.run(fetches)


def _features():
    return {"a": tf.constant([["x", "y"], ["z", ""]]),
            "b": tf.constant([[3], [4]], tf.int64),
            "age": tf.constant([[25.0], [61.0]]),
            "fruit": tf.constant([["banana", "kiwi"], ["cherry", "plum"]]),
            "num": tf.constant([[20], [99]], tf.int64),
            "w": tf.constant([[0.5, 2.0], [3.0, 0.0]])}


def _ids(column, features):
    return column._get_sparse_tensors(_LazyBuilder(features)).id_tensor


def test_crossed_column_ids_match_tensorflow():
    age = fc.bucketized_column(fc.numeric_column("age"), [30, 50])
    cross = fc.crossed_column(["a", age], 20)
    cross2 = fc.crossed_column(["a", "b"], 1000, hash_key=5)
    nested = fc.crossed_column([cross2, "b"], 50)
    assert (cross.name, cross2.name, nested.name) == ("a_X_age_bucketized", "a_X_b",
                                                      "a_X_b_X_b")
    assert cross._num_buckets == 20
    features = _features()
    got = _run([_ids(c, features) for c in (cross, cross2, nested)])
    for value in got:  # dense "" is crossed too, as in TF
        np.testing.assert_array_equal(value.indices, [[0, 0], [0, 1], [1, 0], [1, 1]])
        np.testing.assert_array_equal(value.dense_shape, [2, 2])
    assert got[0].values.tolist() == [3, 11, 13, 9]
    assert got[1].values.tolist() == [331, 976, 798, 383]
    assert got[2].values.tolist() == [4, 37, 6, 40]
    spec = fc.make_parse_example_spec([cross])
    assert spec["a"] == tf.VarLenFeature(tf.string)
    assert spec["age"] == tf.FixedLenFeature((1,), tf.float32)


def test_crossed_column_errors():
    with pytest.raises(ValueError, match="hash_bucket_size"):
        fc.crossed_column(["a", "b"], 0)
    with pytest.raises(ValueError, match="length > 1"):
        fc.crossed_column(["a"], 10)
    with pytest.raises(ValueError, match="Unsupported key type"):
        fc.crossed_column(["a", fc.numeric_column("n")], 10)
    with pytest.raises(ValueError, match="hash_bucket is not supported"):
        fc.crossed_column(["a", fc.categorical_column_with_hash_bucket("b", 5)], 10)
    weighted = fc.weighted_categorical_column(fc.categorical_column_with_identity("b", 5), "w")
    cross = fc.crossed_column(["a", weighted], 10)
    with pytest.raises(ValueError, match="weight_tensor"):
        _ids(cross, {"a": tf.constant([["x"]]), "b": tf.constant([[1]], tf.int64),
                     "w": tf.constant([[1.0]])})


def test_hash_and_vocabulary_oov_ids_match_tensorflow():
    features = _features()
    hashed = _ids(fc.categorical_column_with_hash_bucket("a", 13), features)
    listed = _ids(fc.categorical_column_with_vocabulary_list("fruit", ["banana", "cherry"],
                                                             num_oov_buckets=3), features)
    got_hashed, got_listed = _run([hashed, listed])
    assert got_hashed.values.tolist() == [8, 0, 4]
    assert got_listed.values.tolist() == [0, 4, 1, 3]


def test_vocabulary_file_column(tmp_path):
    words = tmp_path / "vocab.txt"
    words.write_text("apple\nbanana\ncherry\n")
    numbers = tmp_path / "ivocab.txt"
    numbers.write_text("10\n20\n30\n")
    strings = fc.categorical_column_with_vocabulary_file("fruit", str(words), num_oov_buckets=4)
    ints = fc.categorical_column_with_vocabulary_file("num", str(numbers), vocabulary_size=3,
                                                      default_value=7, dtype=tf.int64)
    assert (strings._num_buckets, ints._num_buckets) == (7, 3)
    assert strings.vocabulary_size == 3  # counted from the file
    features = _features()
    got_s, got_i = _run([_ids(strings, features), _ids(ints, features)])
    assert got_s.values.tolist() == [1, 4, 2, 5]  # TF: kiwi -> 3 + 1, plum -> 3 + 2
    np.testing.assert_array_equal(got_i.indices, [[0, 0], [1, 0]])
    assert got_i.values.tolist() == [1, 7]
    dense = fc.input_layer(features, [fc.indicator_column(
        fc.categorical_column_with_vocabulary_file("fruit", str(words)))])
    np.testing.assert_array_equal(_run(dense), [[0, 1, 0], [0, 0, 1]])
    with pytest.raises(ValueError, match="does not exist"):
        fc.categorical_column_with_vocabulary_file("f", str(tmp_path / "missing.txt"))
    with pytest.raises(ValueError, match="Missing vocabulary_file"):
        fc.categorical_column_with_vocabulary_file("f", "")
    with pytest.raises(ValueError, match="Invalid vocabulary_size"):
        fc.categorical_column_with_vocabulary_file("f", str(words), vocabulary_size=0)
    with pytest.raises(ValueError, match="both num_oov_buckets and default_value"):
        fc.categorical_column_with_vocabulary_file("f", str(words), num_oov_buckets=1,
                                                   default_value=0)
    with pytest.raises(ValueError, match="string or integer"):
        fc.categorical_column_with_vocabulary_file("f", str(words), dtype=tf.float32)


def test_weighted_categorical_column_indicator_linear_embedding():
    ids = fc.categorical_column_with_vocabulary_list("a", ["x", "y", "z"])
    weighted = fc.weighted_categorical_column(ids, "w")
    assert weighted.name == "a_weighted_by_w"
    spec = fc.make_parse_example_spec([weighted])
    assert spec == {"a": tf.VarLenFeature(tf.string), "w": tf.VarLenFeature(tf.float32)}
    features = _features()
    indicator = fc.input_layer(features, [fc.indicator_column(weighted)])
    table = np.arange(6, dtype=np.float32).reshape(3, 2)
    embedded = fc.input_layer(features, [fc.embedding_column(
        weighted, 2, combiner="sum", initializer=tf.constant_initializer(table))])
    cols = {}
    linear = fc.linear_model(features, [weighted], cols_to_vars=cols)
    assign = tf.assign(cols[weighted][0], [[1.0], [10.0], [100.0]])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(tf.tables_initializer())
        sess.run(assign)
        got_ind, got_emb, got_lin = sess.run([indicator, embedded, linear])
    np.testing.assert_allclose(got_ind, [[0.5, 2.0, 0.0], [0.0, 0.0, 3.0]])  # TF's values
    np.testing.assert_allclose(got_emb, np.stack([0.5 * table[0] + 2 * table[1], 3 * table[2]]),
                               rtol=1e-6)
    np.testing.assert_allclose(got_lin, [[0.5 + 20.0], [300.0]], rtol=1e-6)
    with pytest.raises(ValueError, match="not convertible to float"):
        fc.weighted_categorical_column(ids, "w", dtype=tf.string)
    with pytest.raises(ValueError, match="Bad dtype"):
        _ids(fc.weighted_categorical_column(ids, "w", dtype=tf.int64), features)
    with pytest.raises(ValueError, match="already exists"):
        fc.make_parse_example_spec([fc.weighted_categorical_column(ids, "a")])


def test_shared_embedding_columns_share_one_table():
    p = fc.categorical_column_with_identity("p", 5)
    q = fc.categorical_column_with_identity("q", 5)
    table = np.arange(15, dtype=np.float32).reshape(5, 3)
    shared = fc.shared_embedding_columns([q, p], 3, initializer=tf.constant_initializer(table))
    assert [c.name for c in shared] == ["q_shared_embedding", "p_shared_embedding"]
    features = {"p": tf.constant([[1], [2]], tf.int64), "q": tf.constant([[3, 4], [0, 0]],
                                                                          tf.int64)}
    out = fc.input_layer(features, shared)
    names = [v.name for v in tf.global_variables()]
    assert names == ["input_layer/p_q_shared_embedding/embedding_weights:0"]  # as TF 1.15
    assert tf.get_collection("p_q_shared_embedding")[0].name == names[0]
    # columns are laid out by name: p_shared_embedding, then q_shared_embedding (mean).
    want = np.concatenate([table[[1, 2]], np.stack([(table[3] + table[4]) / 2, table[0]])], 1)
    np.testing.assert_allclose(_run(out, init_vars=True), want, rtol=1e-6)
    # a second input_layer reuses the same variable; gradients reach it from both columns.
    fc.input_layer(features, shared)
    assert len(tf.global_variables()) == 1
    grads = tf.gradients(out, tf.global_variables())
    assert grads[0] is not None


def test_shared_embedding_columns_errors():
    p = fc.categorical_column_with_identity("p", 5)
    with pytest.raises(ValueError, match="same number of buckets"):
        fc.shared_embedding_columns([p, fc.categorical_column_with_identity("q", 6)], 2)
    with pytest.raises(ValueError, match="same type"):
        fc.shared_embedding_columns([p, fc.categorical_column_with_vocabulary_list(
            "q", ["a", "b", "c", "d", "e"])], 2)
    with pytest.raises(ValueError, match="Invalid dimension"):
        fc.shared_embedding_columns([p], 0)
    with pytest.raises(ValueError, match="combiner"):
        fc.shared_embedding_columns([p], 2, combiner="max")
    cols = fc.shared_embedding_columns([p], 2, shared_embedding_collection_name="mine")
    tf.add_to_collection("mine", tf.Variable(np.zeros((4, 2), np.float32)))
    with pytest.raises(ValueError, match="unexpected shape"):
        fc.input_layer({"p": tf.constant([[1]], tf.int64)}, cols)
