"""tf.math.approximate_equal: |x - y| < tolerance on equal shapes (no broadcasting)."""

import numpy as np
import pytest

import tensorflux as tf

COVERED_OPS = {"ApproximateEqual"}


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_matches_numpy_reference(dtype):
    rng = np.random.RandomState(4)
    x = (rng.rand(3, 5) * 10).astype(dtype)
    y = (x + rng.choice([0, 1, 3], size=x.shape)).astype(dtype)
    for tolerance in (0.5, 2.0):
        out = tf.math.approximate_equal(x, y, tolerance=tolerance)
        with tf.Session() as sess:
            got = sess.run(out)
        assert got.dtype == np.bool_
        np.testing.assert_array_equal(got, np.abs(x.astype(np.float64) - y) < tolerance)


def test_default_tolerance_and_nan():
    x = tf.constant([1.0, 1.0, np.nan], tf.float64)
    y = tf.constant([1.000002, 1.00002, np.nan], tf.float64)
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(tf.math.approximate_equal(x, y)),
                                      [True, False, False])


def test_shapes_must_match():
    with pytest.raises(ValueError, match="Shapes must be equal rank, but are 1 and 2"):
        tf.math.approximate_equal(tf.ones([2]), tf.ones([1, 2]))
    with pytest.raises(ValueError, match="must be equal"):
        tf.math.approximate_equal(tf.ones([2]), tf.ones([3]))
    a = tf.placeholder(tf.float32, [None])
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="same shape"):
        sess.run(tf.math.approximate_equal(a, tf.ones([2])), {a: np.ones(3)})
