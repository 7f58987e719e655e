"""Sparse edges held to TensorFlow's behaviour: SparseAdd/SparseReorder do not check indices
against dense_shape; sparse_merge of SparseTensorValues and its static shape; reset_shape's
empty bounding box, int32 shapes and rank check; run-time errors of SparseSparseMaximum,
SparseReduceSum and SparseSoftmax (bad axes, shapes overflowing int64); `dense * sparse`,
`sparse_dense_cwise_add` and true division of integer values (float64)."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.framework import errors
from tensorflux.ops.sparse import arithmetic, cwise


@pytest.fixture(autouse=True)
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


def _run(fetch, feed=None):
    with tf.Session() as sess:
        return sess.run(fetch, feed)


def test_sparse_add_matches_rows_outside_dense_shape():
    a = tf.SparseTensor([[4], [0]], [1.5, 2.0], [2])
    b = tf.SparseTensor([[4]], [0.25], [2])
    out = _run(tf.sparse_add(a, b))
    np.testing.assert_array_equal(out.indices, [[0], [4]])
    np.testing.assert_allclose(out.values, [2.0, 1.75])


def test_sparse_merge_accepts_values_and_keeps_static_vocab_dim():
    ids = tf.SparseTensorValue(np.array([[0, 0], [1, 0], [1, 1]]), np.array([7, 2, 0], np.int32),
                               np.array([2, 2]))
    vals = tf.SparseTensorValue(np.array([[0, 0], [1, 0], [1, 1]]),
                                np.array([0.5, -1.0, 4.0], np.float32), np.array([2, 2]))
    out = _run(tf.sparse_merge(ids, vals, 9))
    np.testing.assert_array_equal(out.indices, [[0, 7], [1, 0], [1, 2]])
    np.testing.assert_allclose(out.values, [0.5, 4.0, -1.0])
    np.testing.assert_array_equal(out.dense_shape, [2, 9])
    dynamic = tf.placeholder_with_default(np.array([2, 2], np.int64), [2])
    merged = tf.sparse_merge(tf.SparseTensor(ids.indices, ids.values, dynamic),
                             tf.SparseTensor(vals.indices, vals.values, dynamic), 9)
    assert merged.get_shape().as_list() == [None, 9]


def test_reset_shape_empty_input_and_int32_shape():
    empty = tf.SparseTensor(np.zeros([0, 3], np.int64), np.zeros([0], np.float32), [4, 5, 6])
    np.testing.assert_array_equal(_run(tf.sparse_reset_shape(empty).dense_shape), [0, 0, 0])
    st = tf.SparseTensor([[1, 2]], [3.0], [2, 3])
    new_shape = tf.placeholder(tf.int32)
    out = tf.sparse_reset_shape(st, new_shape)
    np.testing.assert_array_equal(_run(out.dense_shape, {new_shape: [4, 4]}), [4, 4])
    with pytest.raises(errors.InvalidArgumentError, match="x <= y did not hold"):
        _run(out.dense_shape, {new_shape: [4, 2]})
    with pytest.raises(errors.InvalidArgumentError, match="x == y did not hold"):
        _run(out.dense_shape, {new_shape: [4, 4, 4]})


def test_sparse_maximum_shape_mismatch_fails_when_run():
    a = tf.SparseTensor([[0, 0]], [1.0], [1, 1])
    with pytest.raises(errors.InvalidArgumentError, match="do not have the same ranks"):
        _run(tf.sparse_maximum(a, tf.SparseTensor([[0]], [2.0], [2])).values)
    with pytest.raises(errors.InvalidArgumentError,
                       match="shapes do not match: got 1 and 3 for dimension 1"):
        _run(tf.sparse_minimum(a, tf.SparseTensor([[0, 2]], [2.0], [1, 3])).values)


def test_reduce_and_softmax_reject_unrepresentable_shapes():
    big = [2 ** 32, 2 ** 31]
    reduce = arithmetic.SparseReduceSum([[1, 2]], [1.0], big, [0])
    softmax = arithmetic.SparseSoftmax([[1, 1]], [2.0], big)
    negative = arithmetic.SparseSoftmax([[1, 1]], [2.0], [-1, 1])
    for op in (reduce, softmax, negative):
        with pytest.raises(errors.InvalidArgumentError, match="must fit in int64|>= 0"):
            _run(op)


def test_dense_times_sparse_and_cwise_add():
    st = tf.SparseTensor([[0, 1], [1, 0]], [2.0, -3.0], [2, 2])
    dense = tf.constant([[10.0, 20.0], [30.0, 40.0]])
    product = dense * st
    assert isinstance(product, tf.SparseTensor)
    np.testing.assert_allclose(_run(product.values), [40.0, -90.0])
    added = cwise.sparse_dense_cwise_add(st, tf.constant([1.0, 5.0]))
    np.testing.assert_allclose(_run(added.values), [7.0, -2.0])
    with pytest.raises(errors.InvalidArgumentError, match="broadcasts dense to sparse only"):
        _run((tf.ones([3, 2, 2]) * st).values)


@pytest.mark.parametrize("dtype,wide", [(np.int8, tf.float32), (np.int32, tf.float64),
                                        (np.int64, tf.float64), (np.float32, tf.float32)])
def test_true_division_dtypes(dtype, wide):
    st = tf.SparseTensor([[0], [2]], np.array([-7, 5], dtype), [3])
    out = (st / np.array(2, dtype)).values
    assert out.dtype == wide
    np.testing.assert_allclose(_run(out), [-3.5, 2.5])
