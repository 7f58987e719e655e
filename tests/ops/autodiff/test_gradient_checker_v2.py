"""gradient_checker_v2.compute_gradient in graph mode: Jacobians with one row per element of y,
for array, Python and tensor arguments; max_error; and the argument errors."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.ops.autodiff import gradient_checker_v2


def test_jacobians_of_products_and_python_values():
    a = np.arange(6.0).reshape(2, 3)
    b = np.arange(12.0).reshape(3, 4) / 10
    with tf.Graph().as_default(), tf.Session().as_default():
        theoretical, numerical = gradient_checker_v2.compute_gradient(tf.matmul, [a, b])
        # d(ab)_ij / d a_ik = b_kj: row = flat index of y, column = flat index of a
        want_a = np.zeros((8, 6))
        for i in range(2):
            for j in range(4):
                for k in range(3):
                    want_a[i * 4 + j, i * 3 + k] = b[k, j]
        np.testing.assert_allclose(theoretical[0], want_a)
        assert theoretical[1].shape == (8, 12)
        assert gradient_checker_v2.max_error(theoretical, numerical) < 1e-6
        sin_t, sin_n = gradient_checker_v2.compute_gradient(tf.sin, [1.0])
        np.testing.assert_allclose(sin_t[0], [[np.cos(np.float32(1.0))]], rtol=1e-6)
        np.testing.assert_allclose(sin_n[0], sin_t[0], rtol=1e-3)
        const_t, _ = gradient_checker_v2.compute_gradient(lambda x: 3 * x, [tf.constant([2.0])])
        np.testing.assert_allclose(const_t[0], [[3.0]])


def test_argument_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="default session"):
            gradient_checker_v2.compute_gradient(tf.sin, [1.0])
        with tf.Session().as_default():
            with pytest.raises(ValueError, match="list or tuple"):
                gradient_checker_v2.compute_gradient(tf.sin, 1.0)
