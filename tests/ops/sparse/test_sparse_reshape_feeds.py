"""sparse_reshape with an int32 target shape (tf.shape's) and with two -1s on an input whose
shape is only known when run (then the kernel rejects it)."""

import numpy as np
import pytest
from op_helpers import graph, run  # noqa: F401

import tensorflux as tf


def _placeholder_sparse():
    return tf.SparseTensor(tf.placeholder(tf.int64), tf.placeholder(tf.float32),
                           tf.placeholder(tf.int64))


VALUE = tf.SparseTensorValue(np.array([[0, 1], [2, 3]], np.int64),
                             np.array([5.0, 7.0], np.float32), np.array([3, 4], np.int64))


def test_int32_target_shape_is_accepted():
    sp = _placeholder_sparse()
    out = tf.sparse_reshape(sp, tf.constant([2, 6], tf.int32))
    got = run(out, {sp: VALUE})
    dense = np.zeros((3, 4), np.float32)
    dense[0, 1], dense[2, 3] = 5.0, 7.0
    expected = np.argwhere(dense.reshape(2, 6))
    np.testing.assert_array_equal(got.indices, expected)
    np.testing.assert_array_equal(got.dense_shape, [2, 6])


def test_two_inferred_dims_fail_when_run_if_the_input_shape_is_unknown():
    sp = _placeholder_sparse()
    out = tf.sparse_reshape(sp, [-1, 2, -1])
    with pytest.raises(tf.errors.InvalidArgumentError, match="only one output dimension"):
        run(out, {sp: VALUE})
    known = tf.SparseTensor.from_value(VALUE)
    with pytest.raises(ValueError, match="At most one dimension can be inferred"):
        tf.sparse_reshape(known, [-1, 2, -1])
