"""tf.test.compute_gradient without x_init_value: x is drawn from [0, 1) with NumPy's global
generator, as in TF1 (so np.random.seed makes the check reproducible)."""

import numpy as np

import tensorflux as tf


def _jacobians(seed):
    np.random.seed(seed)
    with tf.Graph().as_default(), tf.Session():
        x = tf.placeholder(tf.float64, [3, 2])
        y = tf.log(x) * x  # defined only for positive x
        return tf.test.compute_gradient(x, [3, 2], y, [3, 2])


def test_default_point_is_positive_and_seeded():
    theoretical, numerical = _jacobians(7)
    assert np.all(np.isfinite(theoretical)) and np.all(np.isfinite(numerical))
    np.testing.assert_allclose(theoretical, numerical, atol=1e-4)
    np.random.seed(7)
    point = np.random.random_sample([3, 2])
    # d(x log x)/dx = log x + 1 on the diagonal of the Jacobian
    np.testing.assert_allclose(np.diag(theoretical), np.log(point).ravel() + 1.0, rtol=1e-12)
    again, _ = _jacobians(7)
    np.testing.assert_array_equal(theoretical, again)
    other, _ = _jacobians(8)
    assert not np.array_equal(theoretical, other)

