"""tf.feature_column: column values vs NumPy, variable names/shapes, training via input_layer."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorflux as tf

fc = tf.feature_column


@pytest.fixture(autouse=True)
def graph():
    with tf.Graph().as_default() as g:
        yield g


def _run(fetches, feed=None, init_vars=False):
    with tf.Session() as sess:
        if init_vars:
            sess.run(tf.global_variables_initializer())
        sess.run(tf.tables_initializer())
        return sess.run(fetches, feed)


def _sparse(indices, values, shape, dtype=tf.int64):
    return tf.SparseTensor(tf.constant(indices, tf.int64), tf.constant(values, dtype),
                           tf.constant(shape, tf.int64))


def _multi_hot(rows, depth):
    out = np.zeros((len(rows), depth), np.float32)
    for r, ids in enumerate(rows):
        np.add.at(out[r], np.asarray(ids, np.int64), 1.0)
    return out


# ---------------------------------------------------------------- numeric_column

def test_numeric_column_shape_dtype_normalizer():
    x = np.array([[1, 2], [3, -4], [5, 6]], np.int32)
    col = fc.numeric_column("x", shape=(2,), dtype=tf.int32, normalizer_fn=lambda t: t * 3)
    assert col.shape == (2,) and col.name == "x"
    out = fc.input_layer({"x": tf.constant(x)}, [col])
    assert out.dtype == tf.float32 and out.shape.as_list() == [3, 2]
    np.testing.assert_array_equal(_run(out), (x * 3).astype(np.float32))


def test_numeric_column_rank1_input_and_multidim_shape():
    a = np.array([1.5, -2.0, 0.25], np.float32)
    m = np.arange(12, dtype=np.float64).reshape(3, 2, 2)
    out = fc.input_layer({"a": tf.constant(a), "m": tf.constant(m)},
                         [fc.numeric_column("m", shape=[2, 2], dtype=tf.float64),
                          fc.numeric_column("a")])
    np.testing.assert_allclose(_run(out), np.concatenate([a[:, None], m.reshape(3, 4)], 1))


def test_numeric_column_default_value_and_errors():
    assert fc.numeric_column("x", shape=(2,), default_value=1.0).default_value == (1.0, 1.0)
    assert fc.numeric_column("x", shape=2, default_value=[1, 2]).default_value == (1.0, 2.0)
    with pytest.raises(ValueError, match="default_value"):
        fc.numeric_column("x", shape=(2,), default_value=[1, 2, 3])
    with pytest.raises(ValueError, match="shape"):
        fc.numeric_column("x", shape=(0,))
    with pytest.raises(ValueError, match="dtype"):
        fc.numeric_column("x", dtype=tf.string)
    with pytest.raises(TypeError, match="normalizer_fn"):
        fc.numeric_column("x", normalizer_fn=3)
    sp = _sparse([[0, 0]], [1.0], [1, 1], tf.float32)
    with pytest.raises(ValueError, match="SparseTensor is not supported"):
        fc.input_layer({"x": sp}, [fc.numeric_column("x")])


# ---------------------------------------------------------------- bucketized_column

@settings(max_examples=15, deadline=None)
@given(st.lists(st.floats(-5, 5, width=32), min_size=2, max_size=8))
def test_bucketized_column_matches_digitize(values):
    x = np.asarray(values, np.float32).reshape(-1, 1)
    bounds = [-1.0, 0.0, 2.5]
    with tf.Graph().as_default():
        col = fc.bucketized_column(fc.numeric_column("x"), bounds)
        out = _run(fc.input_layer({"x": tf.constant(x)}, [col]))
    expected = np.eye(4, dtype=np.float32)[np.digitize(x[:, 0], bounds)]
    np.testing.assert_array_equal(out, expected)


def test_bucketized_column_boundary_values_and_categorical_ids():
    x = np.array([[-1.0, 0.0], [1.0, 7.0]], np.float32)
    bounds = [0.0, 1.0]
    col = fc.bucketized_column(fc.numeric_column("x", shape=(2,)), bounds)
    assert col.name == "x_bucketized" and col._num_buckets == 6
    feats = {"x": tf.constant(x)}
    dense = fc.input_layer(feats, [col])
    ind = fc.input_layer(feats, [fc.indicator_column(col)])
    got_dense, got_ind = _run([dense, ind])
    buckets = np.digitize(x, bounds)  # a value equal to a boundary goes to the upper bucket
    np.testing.assert_array_equal(buckets, [[0, 1], [2, 2]])
    np.testing.assert_array_equal(got_dense, np.eye(3)[buckets].reshape(2, 6))
    ids = buckets + np.arange(2) * 3
    np.testing.assert_array_equal(got_ind, _multi_hot(ids, 6))


def test_bucketized_column_errors():
    with pytest.raises(ValueError, match="numeric_column"):
        fc.bucketized_column(fc.categorical_column_with_identity("a", 3), [0.0])
    with pytest.raises(ValueError, match="sorted"):
        fc.bucketized_column(fc.numeric_column("a"), [1.0, 0.0])


# ---------------------------------------------------------------- categorical columns

def test_identity_column_dense_ignores_minus_one_and_sparse_input():
    col = fc.indicator_column(fc.categorical_column_with_identity("i", 4))
    dense = fc.input_layer({"i": tf.constant([[1, -1], [3, 3], [-1, -1]], tf.int64)}, [col])
    sp = _sparse([[0, 0], [0, 1], [2, 0]], [2, 0, 1], [3, 2])
    sparse = fc.input_layer({"i": sp}, [col])
    got_dense, got_sparse = _run([dense, sparse])
    np.testing.assert_array_equal(got_dense, _multi_hot([[1], [3, 3], []], 4))
    np.testing.assert_array_equal(got_sparse, _multi_hot([[2, 0], [], [1]], 4))


def test_identity_column_default_value_and_out_of_range():
    ids = tf.constant([[0], [5], [2]], tf.int64)
    col = fc.categorical_column_with_identity("i", 3, default_value=1)
    out = fc.input_layer({"i": ids}, [fc.indicator_column(col)])
    np.testing.assert_array_equal(_run(out), _multi_hot([[0], [1], [2]], 3))
    fed = tf.placeholder(tf.int64, [None, 1])
    strict = fc.input_layer({"i": fed}, [fc.indicator_column(
        fc.categorical_column_with_identity("i", 3))])
    np.testing.assert_array_equal(_run(strict, {fed: [[2]]}), [[0, 0, 1]])
    with pytest.raises(tf.errors.InvalidArgumentError, match="num_buckets"):
        _run(strict, {fed: [[0], [5]]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="< 0"):
        _run(strict, {fed: [[-3]]})
    with pytest.raises(ValueError, match="default_value"):
        fc.categorical_column_with_identity("i", 3, default_value=3)
    with pytest.raises(ValueError, match="num_buckets"):
        fc.categorical_column_with_identity("i", 0)


def test_vocabulary_list_default_value_and_oov_buckets():
    s = tf.placeholder(tf.string, [None, 2])
    feed = {s: [["b", "zz"], ["", "c"], ["a", "a"]]}
    plain = fc.categorical_column_with_vocabulary_list("s", ["a", "b", "c"], default_value=3)
    assert plain._num_buckets == 3
    oov = fc.categorical_column_with_vocabulary_list("t", ["a", "b", "c"], num_oov_buckets=2)
    out_plain = fc.input_layer({"s": s}, [fc.indicator_column(
        fc.categorical_column_with_vocabulary_list("s", ["a", "b", "c", "d"], default_value=3))])
    ids = oov._get_sparse_tensors(fc.categorical._LazyBuilder({"t": s})).id_tensor
    got_plain, got_ids = _run([out_plain, ids], feed)
    np.testing.assert_array_equal(got_plain, _multi_hot([[1, 3], [2], [0, 0]], 4))
    np.testing.assert_array_equal(got_ids.indices, [[0, 0], [0, 1], [1, 1], [2, 0], [2, 1]])
    vals = got_ids.values
    np.testing.assert_array_equal(vals[[0, 2, 3, 4]], [1, 2, 0, 0])
    assert 3 <= vals[1] < 5
    again = _run(ids, feed).values  # hashing is deterministic
    np.testing.assert_array_equal(again, vals)


def test_vocabulary_list_integer_and_errors():
    col = fc.categorical_column_with_vocabulary_list("k", [10, 20, 30])
    assert col.dtype == tf.int64
    sp = _sparse([[0, 0], [1, 0], [1, 1]], [30, 99, 10], [2, 2])
    out = fc.input_layer({"k": sp}, [fc.indicator_column(col)])
    np.testing.assert_array_equal(_run(out), _multi_hot([[2], [0]], 3))  # -1 ids are dropped
    with pytest.raises(ValueError, match="Duplicate"):
        fc.categorical_column_with_vocabulary_list("k", ["a", "a"])
    with pytest.raises(ValueError, match="num_oov_buckets"):
        fc.categorical_column_with_vocabulary_list("k", ["a"], default_value=0, num_oov_buckets=1)
    with pytest.raises(ValueError, match="dtype"):
        fc.categorical_column_with_vocabulary_list("k", ["a"], dtype=tf.int64)


def test_hash_bucket_column_strings_and_ints():
    col = fc.categorical_column_with_hash_bucket("s", 7)
    s = tf.constant([["x", "y"], ["x", ""]])
    ids = col._get_sparse_tensors(fc.categorical._LazyBuilder({"s": s})).id_tensor
    icol = fc.categorical_column_with_hash_bucket("n", 7, dtype=tf.int64)
    n = tf.constant([[12], [-1]], tf.int64)
    iids = icol._get_sparse_tensors(fc.categorical._LazyBuilder({"n": n})).id_tensor
    ref = tf.string_to_hash_bucket_fast(tf.constant(["x", "y", "12"]), 7)
    got, got_int, want = _run([ids, iids, ref])
    np.testing.assert_array_equal(got.indices, [[0, 0], [0, 1], [1, 0]])
    np.testing.assert_array_equal(got.values, want[[0, 1, 0]])
    np.testing.assert_array_equal(got_int.indices, [[0, 0]])
    np.testing.assert_array_equal(got_int.values, want[[2]])
    assert ((0 <= got.values) & (got.values < 7)).all()
    with pytest.raises(ValueError, match="hash_bucket_size"):
        fc.categorical_column_with_hash_bucket("s", 0)
    with pytest.raises(ValueError, match="dtype"):
        fc.categorical_column_with_hash_bucket("s", 3, dtype=tf.float32)


# ---------------------------------------------------------------- embedding_column

@pytest.mark.parametrize("combiner", ["mean", "sum", "sqrtn"])
def test_embedding_column_combiners_vs_numpy(combiner):
    table = np.arange(15, dtype=np.float32).reshape(5, 3) / 7.0
    col = fc.embedding_column(fc.categorical_column_with_identity("i", 5), 3, combiner=combiner,
                              initializer=tf.constant_initializer(table))
    sp = _sparse([[0, 0], [0, 1], [0, 2], [2, 0]], [1, 4, 4, 2], [4, 3])
    out = fc.input_layer({"i": sp}, [col])
    rows = [[1, 4, 4], [], [2], []]
    expected = np.zeros((4, 3), np.float32)
    for r, ids in enumerate(rows):
        if ids:
            total = table[ids].sum(0)
            scale = {"sum": 1.0, "mean": len(ids), "sqrtn": np.sqrt(len(ids))}[combiner]
            expected[r] = total / scale
    np.testing.assert_allclose(_run(out, init_vars=True), expected, rtol=1e-6)


def test_embedding_variable_names_shapes_and_default_initializer():
    emb = fc.embedding_column(fc.categorical_column_with_hash_bucket("s", 20), 4)
    emb2 = fc.embedding_column(fc.categorical_column_with_identity("i", 6), 2)
    assert emb.name == "s_embedding"
    feats = {"s": tf.constant([["a"], ["b"]]), "i": tf.constant([[1], [2]], tf.int64)}
    fc.input_layer(feats, [emb, emb2])
    fc.input_layer(feats, [emb2])
    got = {v.name: v.shape.as_list() for v in tf.global_variables()}
    assert got == {"input_layer/s_embedding/embedding_weights:0": [20, 4],
                   "input_layer/i_embedding/embedding_weights:0": [6, 2],
                   "input_layer_1/i_embedding/embedding_weights:0": [6, 2]}
    assert len(tf.trainable_variables()) == 3
    big = fc.embedding_column(fc.categorical_column_with_identity("k", 2000), 16)
    fc.input_layer({"k": tf.constant([[0]], tf.int64)}, [big])
    var = [v for v in tf.global_variables() if v.name.startswith("input_layer_2/")][0]
    with tf.Session() as sess:
        sess.run(var.initializer)
        w = sess.run(var)
    assert np.abs(w).max() <= 2.0 / 4.0 + 1e-6  # truncated normal, stddev 1/sqrt(16)
    assert abs(w.std() - 0.25 * 0.88) < 0.02  # std of a 2-sigma truncated normal


def test_embedding_column_errors():
    cat = fc.categorical_column_with_identity("i", 3)
    with pytest.raises(ValueError, match="dimension"):
        fc.embedding_column(cat, 0)
    with pytest.raises(ValueError, match="combiner"):
        fc.embedding_column(cat, 2, combiner="max")
    with pytest.raises(ValueError, match="categorical"):
        fc.embedding_column(fc.numeric_column("x"), 2)
    with pytest.raises(ValueError, match="tensor_name_in_ckpt"):
        fc.embedding_column(cat, 2, ckpt_to_load_from="/tmp/x")


# ---------------------------------------------------------------- input_layer

def test_input_layer_sorted_order_and_shared_source():
    x = tf.placeholder(tf.float32, [None, 1])
    num = fc.numeric_column("x")
    cols = [fc.bucketized_column(num, [0.0]), num,
            fc.indicator_column(fc.categorical_column_with_identity("a", 2))]
    out = fc.input_layer({"x": x, "a": tf.constant([[1], [0]], tf.int64)}, cols)
    assert out.shape.as_list() == [2, 5]
    got = _run(out, {x: [[-2.0], [3.0]]})
    # Order by name: a_indicator, x, x_bucketized.
    np.testing.assert_array_equal(got, [[0, 1, -2, 1, 0], [1, 0, 3, 0, 1]])


def test_input_layer_rejects_categorical_and_missing_key():
    with pytest.raises(ValueError, match="_DenseColumn"):
        fc.input_layer({"a": tf.constant([[1]])}, [fc.categorical_column_with_identity("a", 2)])
    with pytest.raises(ValueError, match="'b'"):
        fc.input_layer({"a": tf.constant([[1.0]])}, [fc.numeric_column("b")])
    with pytest.raises(ValueError, match="Batch size"):
        fc.input_layer({"a": tf.zeros([2, 1]), "b": tf.zeros([3, 1])},
                       [fc.numeric_column("a"), fc.numeric_column("b")])


def test_input_layer_from_tf_data_dict():
    data = {"x": np.array([[1.0], [2.0], [3.0]], np.float32),
            "s": np.array([["p"], ["q"], ["p"]])}
    ds = tf.data.Dataset.from_tensor_slices(data).batch(3)
    feats = tf.data.make_one_shot_iterator(ds).get_next()
    cat = fc.categorical_column_with_vocabulary_list("s", ["p", "q"])
    out = fc.input_layer(feats, [fc.numeric_column("x"), fc.indicator_column(cat)])
    np.testing.assert_array_equal(_run(out), [[1, 0, 1], [0, 1, 2], [1, 0, 3]])


def test_tiny_model_trains_through_input_layer():
    rng = np.random.RandomState(0)
    n = 64
    xs = rng.uniform(-1, 1, (n, 1)).astype(np.float32)
    ids = rng.randint(0, 4, (n, 1)).astype(np.int64)
    offsets = np.array([0.5, -1.0, 2.0, 0.0], np.float32)
    ys = 1.5 * xs + offsets[ids]
    x = tf.placeholder(tf.float32, [None, 1])
    i = tf.placeholder(tf.int64, [None, 1])
    y = tf.placeholder(tf.float32, [None, 1])
    net = fc.input_layer({"x": x, "i": i}, [
        fc.numeric_column("x"),
        fc.embedding_column(fc.categorical_column_with_identity("i", 4), 2)])
    w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
    pred = tf.matmul(net, w)
    loss = tf.reduce_mean(tf.square(pred - y))
    train = tf.train.AdamOptimizer(0.1).minimize(loss)
    feed = {x: xs, i: ids, y: ys}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run(loss, feed)
        for _ in range(150):
            sess.run(train, feed)
        last = sess.run(loss, feed)
    assert first > 0.5 and last < 0.01 * first


def test_embedding_of_bucketized_and_sparse_string_vocabulary():
    # Expected values taken from TensorFlow 1.x on the same program.
    b = fc.bucketized_column(fc.numeric_column("x", shape=(2,)), [0.0, 1.0])
    table = np.arange(12, dtype=np.float32).reshape(6, 2)
    e = fc.embedding_column(b, 2, combiner="sum", initializer=tf.constant_initializer(table))
    sp = _sparse([[0, 0], [1, 0], [1, 1]], ["a", "b", "q"], [2, 2], tf.string)
    v = fc.indicator_column(fc.categorical_column_with_vocabulary_list("s", ["a", "b"]))
    out = fc.input_layer({"x": tf.constant([[-1.0, 0.5], [1.0, 2.0]]), "s": sp}, [e, v])
    np.testing.assert_array_equal(_run(out, init_vars=True), [[1, 0, 8, 10], [0, 1, 14, 16]])


def test_input_layer_single_column_cols_to_vars_and_trainable():
    emb = fc.embedding_column(fc.categorical_column_with_identity("i", 3), 2)
    num = fc.numeric_column("x")
    feats = {"i": tf.constant([[0]], tf.int64), "x": tf.constant([[1.0]])}
    cols_to_vars, cols_to_out = {}, {}
    out = fc.input_layer(feats, [emb, num], trainable=False, weight_collections=["my_w"],
                         cols_to_vars=cols_to_vars, cols_to_output_tensors=cols_to_out)
    assert out.shape.as_list() == [1, 3]
    assert [v.name for v in cols_to_vars[emb]] == ["input_layer/i_embedding/embedding_weights:0"]
    assert cols_to_vars[num] == []
    assert cols_to_out[num].shape.as_list() == [1, 1]
    assert tf.trainable_variables() == []
    assert tf.get_collection("my_w") == cols_to_vars[emb]
    single = fc.input_layer(feats, num)
    np.testing.assert_array_equal(_run(single), [[1.0]])
    with pytest.raises(ValueError, match="_DenseColumn"):
        fc.input_layer(feats, fc.categorical_column_with_identity("i", 3))


def _example(x=None, words=()):
    feature = {"w": tf.train.Feature(bytes_list=tf.train.BytesList(
        value=[w.encode() for w in words]))}
    if x is not None:
        feature["x"] = tf.train.Feature(float_list=tf.train.FloatList(value=x))
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


def test_make_parse_example_spec_feeds_input_layer():
    num = fc.numeric_column("x", shape=(2,), default_value=[7.0, 8.0])
    words = fc.categorical_column_with_vocabulary_list("w", ["hi", "yo"])
    cols = [fc.bucketized_column(num, [0.0]), num, fc.indicator_column(words)]
    spec = fc.make_parse_example_spec(cols)
    assert spec == {"x": tf.FixedLenFeature((2,), tf.float32, (7.0, 8.0)),
                    "w": tf.VarLenFeature(tf.string)}
    serialized = [_example([-1.0, 2.0], ["yo", "yo"]), _example(None, ["hi", "zz"])]
    feats = tf.parse_example(tf.constant(serialized), spec)
    out = fc.input_layer(feats, cols)
    # Order by name: w_indicator (2), x (2), x_bucketized (2 x 2).
    np.testing.assert_array_equal(_run(out), [[0, 2, -1, 2, 1, 0, 0, 1],
                                              [1, 0, 7, 8, 0, 1, 0, 1]])
    with pytest.raises(ValueError, match="different parse_spec"):
        fc.make_parse_example_spec([num, fc.numeric_column("x")])
    with pytest.raises(ValueError, match="_FeatureColumn"):
        fc.make_parse_example_spec(["x"])
