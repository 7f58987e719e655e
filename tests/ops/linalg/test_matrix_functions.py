"""tf.linalg.expm (scaling and squaring, a composite with a gradient) and tf.linalg.logm
(MatrixLogarithm) against NumPy references: eigen-decompositions of symmetric matrices, a
long Taylor series, closed forms for Jordan blocks, and finite differences."""

import itertools

import numpy as np
import pytest

import tensorflux as tf

COVERED_OPS = {"MatrixLogarithm"}


def _run(fetch, feed=None):
    with tf.Session() as sess:
        return sess.run(fetch, feed)


def _taylor_expm(m):
    out, term = np.zeros_like(m), np.eye(m.shape[0], dtype=m.dtype)
    for k in range(1, 120):
        out = out + term
        term = term @ m / k
    return out


@pytest.mark.parametrize("dtype, tol", [(np.float32, 2e-6), (np.float64, 1e-13),
                                        (np.complex64, 2e-6), (np.complex128, 1e-13)])
def test_expm_matches_references_across_norms(dtype, tol):
    rng = np.random.RandomState(7)
    for scale in (1e-3, 0.2, 1.0, 3.0, 12.0, 40.0):  # crosses every Pade degree and squaring
        a = rng.uniform(-1, 1, (3, 5, 5)) * scale / 5
        if np.iscomplexobj(np.zeros(0, dtype)):
            a = a + 1j * rng.uniform(-1, 1, a.shape) * scale / 5
        with tf.Graph().as_default():
            got = _run(tf.linalg.expm(a.astype(dtype)))
        want = np.stack([_taylor_expm(m.astype(np.complex128)) for m in a])
        assert got.dtype == dtype
        np.testing.assert_allclose(got, want, rtol=tol * 50, atol=tol * np.abs(want).max())


def test_expm_symmetric_via_eigenvalues_and_special_cases():
    rng = np.random.RandomState(3)
    b = rng.normal(size=(6, 6))
    sym = (b + b.T) / 2
    w, v = np.linalg.eigh(sym)
    with tf.Graph().as_default():
        ph = tf.placeholder(tf.float64)  # shape unknown until run time
        got = _run(tf.linalg.expm(ph), {ph: sym})
        np.testing.assert_allclose(got, (v * np.exp(w)) @ v.T, rtol=1e-12)
        np.testing.assert_array_equal(_run(tf.linalg.expm(np.zeros([2, 3, 3]))),
                                      np.broadcast_to(np.eye(3), [2, 3, 3]))
        assert _run(tf.linalg.expm(np.zeros([0, 2, 2]))).shape == (0, 2, 2)
        assert tf.linalg.expm(np.zeros([2, 0, 0])).get_shape().as_list() == [2, 0, 0]
        half = _run(tf.linalg.expm(np.diag([0.5, -1.0, 2.0]).astype(np.float16)))
        assert half.dtype == np.float16
        np.testing.assert_allclose(np.diag(half), np.exp([0.5, -1.0, 2.0]), rtol=2e-3)


def test_expm_gradient_matches_finite_differences():
    x0 = np.array([[0.3, 2.2, -0.4], [-0.1, 0.4, 1.5], [0.7, -1.3, 0.2]])
    weights = np.arange(9.0).reshape(3, 3) / 7
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [3, 3])
        loss = tf.reduce_sum(tf.linalg.expm(x) * weights)
        grad = _run(tf.gradients(loss, x)[0], {x: x0})
    numeric = np.zeros((3, 3))
    for i, j in itertools.product(range(3), range(3)):
        d = np.zeros((3, 3))
        d[i, j] = 1e-6
        numeric[i, j] = ((_taylor_expm(x0 + d) - _taylor_expm(x0 - d)) * weights).sum() / 2e-6
    np.testing.assert_allclose(grad, numeric, rtol=1e-6)


def test_expm_rejects_bad_shapes_and_dtypes():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="rank >= 2"):
            tf.linalg.expm(tf.constant([1.0, 2.0]))
        with pytest.raises(ValueError, match="square matrices"):
            tf.linalg.expm(np.ones([2, 3]))
        with pytest.raises(TypeError, match="floating or complex"):
            tf.linalg.expm(tf.constant([[1, 2], [3, 4]]))


def test_logm_inverts_expm_and_closed_forms():
    rng = np.random.RandomState(11)
    a = rng.uniform(-1, 1, (2, 7, 7)).astype(np.complex128)  # real: negative eigenvalues too
    jordan = np.array([[3.0, 1.0, 0.0], [0.0, 3.0, 1.0], [0.0, 0.0, 3.0]], np.complex64)
    with tf.Graph().as_default():
        back = _run(tf.linalg.expm(tf.linalg.logm(a)))
        np.testing.assert_allclose(back, a, atol=1e-11)
        log_j = _run(tf.linalg.logm(jordan))
        # log of a Jordan block: log(3) on the diagonal, 1/3 and -1/18 above it.
        want = np.array([[np.log(3), 1 / 3, -1 / 18], [0, np.log(3), 1 / 3], [0, 0, np.log(3)]])
        np.testing.assert_allclose(log_j, want, atol=1e-6)
        assert log_j.dtype == np.complex64
        neg = _run(tf.linalg.logm(np.diag([-1.0, 4.0]).astype(np.complex128)))
        np.testing.assert_allclose(np.diag(neg), [1j * np.pi, np.log(4.0)], atol=1e-14)
        assert _run(tf.linalg.logm(np.zeros([2, 0, 0], np.complex64))).shape == (2, 0, 0)
        with pytest.raises(TypeError, match="has DataType float32 not in list"):
            tf.linalg.logm(np.eye(2, dtype=np.float32))
        with pytest.raises(ValueError, match="must be at least rank 2"):
            tf.linalg.logm(np.ones([3], np.complex64))
        with pytest.raises(ValueError, match="square matrices"):
            tf.linalg.logm(np.ones([2, 3], np.complex64))
