"""SparseTensor: construction checks, fetch and feed through Session.run, SparseToDense."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorflux as tf
from tensorflux.ops.sparse import core as sparse_ops

COVERED_OPS = {"SparseToDense", "AddSparseToTensorsMap", "AddManySparseToTensorsMap",
               "TakeManySparseFromTensorsMap"}


def _sparse_to_dense_case(tf):
    values = tf.placeholder(tf.float64, [3])
    default = tf.placeholder(tf.float64, [])
    y = tf.sparse_to_dense([[0, 1], [1, 0], [2, 2]], [3, 3], values, default)
    return y, [values, default], [np.array([1.5, -2.0, 0.5]), np.array(0.25)]


def _sparse_to_dense_scalar_case(tf):
    value = tf.placeholder(tf.float64, [])
    y = tf.sparse_to_dense([0, 3], [5], value, 0.0)
    return y, [value], [np.array(2.0)]


GRADIENT_CASES = [("SparseToDense", _sparse_to_dense_case),
                  ("SparseToDense", _sparse_to_dense_scalar_case)]


@pytest.fixture
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


def test_construction_and_static_shape(graph):
    st_ = tf.SparseTensor(indices=[[0, 0], [1, 2]], values=[1.0, 2.0], dense_shape=[3, 4])
    assert st_.indices.dtype == tf.int64 and st_.dense_shape.dtype == tf.int64
    assert st_.dtype == tf.float32 and st_.values.dtype == tf.float32
    assert st_.shape.as_list() == [3, 4] and st_.get_shape().as_list() == [3, 4]
    assert st_.graph is graph and st_.op is st_.values.op
    with pytest.raises(ValueError):
        tf.SparseTensor(indices=[[0, 0]], values=[1.0, 2.0], dense_shape=[3, 4])
    with pytest.raises(ValueError):
        tf.SparseTensor(indices=[[0, 0, 0]], values=[1.0], dense_shape=[3, 4])
    with pytest.raises(TypeError):
        tf.SparseTensor(tf.constant([[0]], tf.int32), [1.0], [3])


def test_fetch_gives_sparse_tensor_value(graph):
    st_ = tf.SparseTensor([[0, 1], [2, 0]], [5, 6], [3, 2])
    with tf.Session() as sess:
        value = sess.run(st_)
        assert isinstance(value, tf.SparseTensorValue)
        np.testing.assert_array_equal(value.indices, [[0, 1], [2, 0]])
        np.testing.assert_array_equal(value.values, [5, 6])
        np.testing.assert_array_equal(value.dense_shape, [3, 2])
        nested = sess.run({"a": [st_, st_.values]})
        assert isinstance(nested["a"][0], tf.SparseTensorValue)
        assert st_.eval(session=sess).values.tolist() == [5, 6]


def test_feed_sparse_placeholder(graph):
    sp = tf.sparse_placeholder(tf.float32, shape=[None, 3])
    dense = tf.sparse_tensor_to_dense(sp)
    fixed = tf.sparse.placeholder(tf.float32, shape=[2, 2])
    with tf.Session() as sess:
        value = tf.SparseTensorValue([[0, 2], [1, 1]], [1.5, 2.5], [2, 3])
        np.testing.assert_array_equal(sess.run(dense, {sp: value}),
                                      [[0, 0, 1.5], [0, 2.5, 0]])
        out = sess.run(sp, {sp: ([[1, 0]], [7.0], [4, 3])})
        np.testing.assert_array_equal(out.values, [7.0])
        np.testing.assert_array_equal(out.dense_shape, [4, 3])
        got = sess.run(tf.sparse.to_dense(fixed), {fixed: ([[1, 1]], [3.0], [2, 2])})
        np.testing.assert_array_equal(got, [[0, 0], [0, 3.0]])


def test_sparse_to_dense_forms_and_defaults(graph):
    with tf.Session() as sess:
        assert sess.run(tf.sparse_to_dense(2, [4], 7)).tolist() == [0, 0, 7, 0]
        assert sess.run(tf.sparse_to_dense([0, 3], [5], 1.5, -1.0)).tolist() == \
            [1.5, -1, -1, 1.5, -1]
        strings = tf.SparseTensor([[1]], [b"x"], [3])
        assert sess.run(tf.sparse_tensor_to_dense(strings)).tolist() == [b"", b"x", b""]
        out = tf.sparse_to_dense(tf.constant([[0, 0]], tf.int64), tf.constant([2, 2], tf.int64),
                                 [9], default_value=1)
        assert out.shape.as_list() == [2, 2] and out.op.type == "SparseToDense"
        np.testing.assert_array_equal(sess.run(out), [[9, 1], [1, 1]])


def test_sparse_to_dense_validation(graph):
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="out of bounds"):
            sess.run(tf.sparse_to_dense([[0, 5]], [2, 2], [1]))
        with pytest.raises(tf.errors.InvalidArgumentError, match="out of order"):
            sess.run(tf.sparse_to_dense([[1, 0], [0, 0]], [2, 2], [1, 2]))
        with pytest.raises(tf.errors.InvalidArgumentError, match="repeated"):
            sess.run(tf.sparse_to_dense([[1, 0], [1, 0]], [2, 2], [1, 2]))
        loose = tf.sparse_to_dense([[1, 0], [0, 0]], [2, 2], [1, 2], validate_indices=False)
        np.testing.assert_array_equal(sess.run(loose), [[2, 0], [1, 0]])


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 4)), max_size=8, unique=True),
       st.integers(-3, 3))
def test_sparse_to_dense_matches_numpy(cells, default):
    cells = sorted(cells)
    reference = np.full((4, 5), default, np.int32)
    values = np.arange(1, len(cells) + 1, dtype=np.int32) * 10
    for (r, c), v in zip(cells, values):
        reference[r, c] = v
    with tf.Graph().as_default():
        indices = np.array(cells, np.int64).reshape(-1, 2)
        sparse = tf.SparseTensor(indices, values, [4, 5])
        with tf.Session() as sess:
            out = sess.run(tf.sparse_tensor_to_dense(sparse, default_value=default))
    np.testing.assert_array_equal(out, reference)


def test_sparse_tensors_map_round_trip(graph):
    one = tf.SparseTensor([[0, 1], [2, 0]], [1.0, 2.0], [3, 2])
    batch = tf.SparseTensor([[0, 0], [1, 2], [1, 3]], [5.0, 6.0, 7.0], [2, 4])
    handle = sparse_ops.add_sparse_to_tensors_map(one)
    handles = sparse_ops.AddManySparseToTensorsMap(batch.indices, batch.values,
                                                    batch.dense_shape,
                                                    shared_name=handle.op.name)
    assert handle.op.type == "AddSparseToTensorsMap" and handle.shape.as_list() == []
    all_handles = tf.placeholder(tf.int64, [None])
    taken = sparse_ops.take_many_sparse_from_tensors_map(handle.op, all_handles, rank=2)
    assert taken.indices.shape.as_list() == [None, 3]
    rows = sparse_ops.take_many_sparse_from_tensors_map(handles.op, all_handles, rank=1)
    with tf.Session() as sess:
        h1 = sess.run(handle)
        h2 = sess.run(handle)
        value = sess.run(taken, {all_handles: [h1, h2]})
        np.testing.assert_array_equal(value.indices, [[0, 0, 1], [0, 2, 0], [1, 0, 1],
                                                      [1, 2, 0]])
        np.testing.assert_array_equal(value.values, [1, 2, 1, 2])
        np.testing.assert_array_equal(value.dense_shape, [2, 3, 2])
        with pytest.raises(tf.errors.InvalidArgumentError, match="Unable to find SparseTensor"):
            sess.run(taken, {all_handles: [h1]})  # each value is taken once
        many = sess.run(handles)
        assert many.shape == (2,)
        out = sess.run(rows, {all_handles: many[::-1]})
        np.testing.assert_array_equal(out.indices, [[0, 2], [0, 3], [1, 0]])
        np.testing.assert_array_equal(out.values, [6, 7, 5])
        np.testing.assert_array_equal(out.dense_shape, [2, 4])
