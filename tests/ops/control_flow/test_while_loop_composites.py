"""tf.while_loop over SparseTensor and IndexedSlices loop variables: values, gradients through
the components, default and explicit shape invariants (TF1: a SparseTensor's invariant is the
shape of its dense_shape vector) and the errors for incompatible invariants."""

import numpy as np
import pytest

import tensorflux as tf


@pytest.fixture(autouse=True)
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


def _sparse(idx, vals, shape):
    return tf.SparseTensor(tf.constant(idx, tf.int64), tf.constant(vals, tf.float32),
                           tf.constant(shape, tf.int64))


def test_sparse_values_scaled_each_iteration():
    st = _sparse([[1], [4]], [0.5, -3.0], [6])
    _, out = tf.while_loop(lambda i, _: i < 4,
                           lambda i, x: [i + 1, tf.SparseTensor(x.indices, x.values * 3.0,
                                                                x.dense_shape)],
                           [tf.constant(0), st])
    assert isinstance(out, tf.SparseTensor)
    # default invariant: the number of non-zeros may change, the rank may not
    assert out.indices.shape.as_list() == [None, 1]
    assert out.values.shape.as_list() == [None]
    with tf.Session() as sess:
        ind, val, shape = sess.run([out.indices, out.values, out.dense_shape])
    np.testing.assert_array_equal(ind, [[1], [4]])
    np.testing.assert_allclose(val, np.array([0.5, -3.0]) * 81.0)
    np.testing.assert_array_equal(shape, [6])


def test_sparse_growing_number_of_values():
    st = _sparse([[0]], [1.0], [5])

    def body(i, x):
        extra = tf.SparseTensor(tf.reshape(tf.cast(i, tf.int64), [1, 1]), [10.0], x.dense_shape)
        return [i + 1, tf.sparse_add(x, extra)]

    _, out = tf.while_loop(lambda i, _: i < 4, body, [tf.constant(1), st])
    with tf.Session() as sess:
        dense = sess.run(tf.sparse_tensor_to_dense(out))
    np.testing.assert_allclose(dense, [1.0, 10.0, 10.0, 10.0, 0.0])


def test_sparse_rank_may_change_with_unknown_rank_invariant():
    st = _sparse([[2]], [7.0], [4])

    def body(i, x):
        idx = tf.concat([x.indices, [[i]]], axis=1)
        return [i + 1, tf.SparseTensor(idx, x.values + 1.0, tf.concat([x.dense_shape, [3]], 0))]

    _, out = tf.while_loop(lambda i, _: i < 2, body, [tf.constant(0), st],
                           [tf.TensorShape([]), tf.TensorShape([None])])
    assert out.indices.shape.as_list() == [None, None]
    assert out.dense_shape.shape.as_list() == [None]
    with tf.Session() as sess:
        ind, val, shape = sess.run([out.indices, out.values, out.dense_shape])
    np.testing.assert_array_equal(ind, [[2, 0, 1]])
    np.testing.assert_allclose(val, [9.0])
    np.testing.assert_array_equal(shape, [4, 3, 3])


def test_sparse_rank_change_without_invariant_is_an_error():
    st = _sparse([[2]], [7.0], [4])

    def body(i, x):
        return [i + 1, tf.SparseTensor(tf.concat([x.indices, [[i]]], axis=1), x.values,
                                       tf.concat([x.dense_shape, [3]], 0))]

    with pytest.raises(ValueError, match="enters the loop with shape"):
        tf.while_loop(lambda i, _: i < 2, body, [tf.constant(0), st])


def test_sparse_invariant_of_another_rank_is_rejected():
    st = _sparse([[2]], [7.0], [4])
    with pytest.raises(ValueError, match="is not compatible with"):
        tf.while_loop(lambda i, _: i < 2, lambda i, x: [i + 1, x], [tf.constant(0), st],
                      [tf.TensorShape([]), tf.TensorShape([3])])


def test_indexed_slices_gradient_through_loop():
    values = tf.constant([[1.0, -2.0], [0.5, 4.0]])
    sl = tf.IndexedSlices(values, tf.constant([0, 2]), tf.constant([3, 2]))
    _, out = tf.while_loop(lambda i, _: i < 3,
                           lambda i, x: [i + 1, tf.IndexedSlices(x.values * x.values,
                                                                 x.indices, x.dense_shape)],
                           [tf.constant(0), sl])
    assert isinstance(out, tf.IndexedSlices)
    assert out.values.shape.as_list() == [2, 2]
    grad = tf.gradients(tf.reduce_sum(out.values), values)[0]
    with tf.Session() as sess:
        val, g = sess.run([out.values, grad])
    x = np.array([[1.0, -2.0], [0.5, 4.0]])
    np.testing.assert_allclose(val, x ** 8)
    np.testing.assert_allclose(g, 8.0 * x ** 7)


def test_indexed_slices_explicit_invariant_and_single_variable():
    sl = tf.IndexedSlices(tf.constant([[1.0, 2.0]]), tf.constant([1]), tf.constant([4, 2]))
    out = tf.while_loop(lambda x: tf.shape(x.values)[0] < 4,
                        lambda x: tf.IndexedSlices(tf.concat([x.values, x.values], 0),
                                                   tf.concat([x.indices, x.indices], 0),
                                                   x.dense_shape),
                        [sl], [tf.TensorShape([None, 2])])
    assert isinstance(out, tf.IndexedSlices)
    assert out.values.shape.as_list() == [None, 2]
    with tf.Session() as sess:
        val, ind = sess.run([out.values, out.indices])
    np.testing.assert_allclose(val, np.tile([[1.0, 2.0]], (4, 1)))
    np.testing.assert_array_equal(ind, [1, 1, 1, 1])
