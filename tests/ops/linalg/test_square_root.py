"""MatrixSquareRoot (`tf.linalg.sqrtm`): roots square back, batches, errors and the gradient."""

import numpy as np
import pytest

import tensorflux as tf

COVERED_OPS = {"MatrixSquareRoot"}


def _sqrtm_case(tf):
    x = tf.placeholder(tf.float64, [2, 3, 3])
    base = np.random.RandomState(3).uniform(-1.0, 1.0, (2, 3, 3))
    value = base @ np.swapaxes(base, -1, -2) + 2.0 * np.eye(3) + 0.3 * base  # not symmetric
    return tf.linalg.sqrtm(x), [x], [value]


GRADIENT_CASES = [("MatrixSquareRoot", _sqrtm_case)]


def _run(fetches):
    with tf.Session() as sess:
        return sess.run(fetches)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_root_squares_back_for_batches(dtype):
    rng = np.random.RandomState(7)
    base = rng.uniform(-1.0, 1.0, (3, 2, 4, 4))
    matrices = base @ np.swapaxes(base, -1, -2) + 4.0 * np.eye(4)  # eigenvalues > 0
    if np.issubdtype(dtype, np.complexfloating):
        matrices = matrices + 0.5j * rng.uniform(-1.0, 1.0, (3, 2, 4, 4))
    matrices = matrices.astype(dtype)
    root = _run(tf.linalg.sqrtm(matrices))
    assert root.dtype == dtype and root.shape == (3, 2, 4, 4)
    tol = 1e-4 if dtype in (np.float32, np.complex64) else 1e-10
    np.testing.assert_allclose(root @ root, matrices, rtol=tol, atol=tol)


def test_real_matrix_with_complex_eigenvalues_has_real_root():
    rotation = np.array([[0.0, -2.0], [2.0, 0.0]]) + 3.0 * np.eye(2)  # eigenvalues 3 +- 2i
    root = _run(tf.linalg.sqrtm(rotation))
    assert root.dtype == np.float64
    np.testing.assert_allclose(root @ root, rotation, atol=1e-12)
    # the principal root has eigenvalues with positive real part
    assert np.all(np.linalg.eigvals(root).real > 0)


def test_defective_matrix_uses_iteration():
    jordan = np.array([[4.0, 1.0], [0.0, 4.0]])  # one eigenvector only
    root = _run(tf.linalg.sqrtm(jordan))
    np.testing.assert_allclose(root, [[2.0, 0.25], [0.0, 2.0]], atol=1e-10)


def test_empty_batches_and_errors():
    assert _run(tf.linalg.sqrtm(np.zeros((0, 3, 3)))).shape == (0, 3, 3)
    assert _run(tf.linalg.sqrtm(np.zeros((2, 0, 0)))).shape == (2, 0, 0)
    with pytest.raises(ValueError, match="rank 2"):
        tf.linalg.sqrtm(tf.constant([1.0, 4.0]))
    with pytest.raises(ValueError, match="square"):
        tf.linalg.sqrtm(tf.zeros([2, 3]))


def test_gradient_matches_finite_differences():
    a = np.array([[5.0, 1.0, 0.5], [1.0, 4.0, 0.0], [0.5, 0.0, 3.0]])
    weights = np.arange(1.0, 10.0).reshape(3, 3)
    x = tf.placeholder(tf.float64, [3, 3])
    loss = tf.reduce_sum(tf.linalg.sqrtm(x) * weights)
    grad_op = tf.gradients(loss, x)[0]
    with tf.Session() as sess:
        grad = sess.run(grad_op, {x: a})
        eps = 1e-6
        numeric = np.zeros_like(a)
        for i in range(3):
            for j in range(3):
                step = np.zeros_like(a)
                step[i, j] = eps
                numeric[i, j] = (sess.run(loss, {x: a + step})
                                 - sess.run(loss, {x: a - step})) / (2 * eps)
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-7)
