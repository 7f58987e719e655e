"""Fill and Range kernels accept TF's legacy scalars (a one-element vector for a scalar, a
scalar for Fill's one-element dims) when shapes are only known at run time; shape inference
stays strict."""

import numpy as np
import pytest

import tensorflux as tf


def test_fill_with_scalar_dims_and_vector_value():
    dims = tf.placeholder(tf.int32)
    value = tf.placeholder(tf.float32)
    out = tf.fill(dims, value)
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(out, {dims: 3, value: [2.5]}), [2.5, 2.5, 2.5])
        np.testing.assert_array_equal(sess.run(out, {dims: [2, 1], value: 4.0}),
                                      [[4.0], [4.0]])
        with pytest.raises(tf.errors.InvalidArgumentError, match="value must be a scalar"):
            sess.run(out, {dims: [2], value: [1.0, 2.0]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="dims must be a vector"):
            sess.run(out, {dims: [[2]], value: 1.0})


def test_range_with_one_element_vectors():
    start, limit = tf.placeholder(tf.int32), tf.placeholder(tf.int32)
    out = tf.range(start, limit, 3)
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(out, {start: [1], limit: [10]}),
                                      np.arange(1, 10, 3))
        with pytest.raises(tf.errors.InvalidArgumentError, match="start must be a scalar"):
            sess.run(out, {start: [1, 2], limit: 10})


def test_shape_inference_stays_strict():
    with pytest.raises(ValueError):
        tf.range(tf.constant([0]), 5)
    with pytest.raises(ValueError):
        tf.fill([2], tf.constant([1.0]))
