"""The raw CholeskyGrad op: dC/dA from the factor L and dC/dL, checked against central finite
differences of a scalar loss through NumPy's Cholesky, and against tf.gradients of tf.cholesky."""

import numpy as np
import pytest
from op_helpers import graph, run  # noqa: F401 (graph: autouse fixture)

import tensorflux as tf
from tensorflux.framework import errors
from tensorflux.raw_ops import CholeskyGrad

COVERED_OPS = {"CholeskyGrad"}


def _spd(rng, batch, n):
    m = rng.randn(*batch, n, n)
    return m @ np.swapaxes(m, -1, -2) + n * np.eye(n)


def _numeric_grad(a, weights, eps=1e-6):
    """d/dA of sum(weights * tril(chol(A))), perturbing A symmetrically (as a symmetric input)."""
    n = a.shape[-1]
    out = np.zeros_like(a)
    for i in range(n):
        for j in range(i + 1):
            step = np.zeros_like(a)
            step[..., i, j] = step[..., j, i] = eps
            up = np.sum(weights * np.linalg.cholesky(a + step), axis=(-2, -1))
            down = np.sum(weights * np.linalg.cholesky(a - step), axis=(-2, -1))
            d = (up - down) / (2 * eps)
            # A symmetric step moves two entries; split the derivative between them.
            out[..., i, j] = d if i == j else d / 2
            out[..., j, i] = out[..., i, j]
    return out


@pytest.mark.parametrize("batch,n", [((), 1), ((), 4), ((2,), 3)])
def test_matches_finite_differences(batch, n):
    rng = np.random.RandomState(n)
    a = _spd(rng, batch, n)
    weights = rng.randn(*batch, n, n)
    low = np.linalg.cholesky(a)
    got = run(CholeskyGrad(l=tf.constant(low), grad=tf.constant(weights)))
    np.testing.assert_allclose(got, _numeric_grad(a, np.tril(weights)), rtol=1e-5, atol=1e-6)


def test_reads_only_lower_triangles_and_agrees_with_tf_gradients():
    rng = np.random.RandomState(3)
    a = _spd(rng, (), 5).astype(np.float32)
    weights = rng.randn(5, 5).astype(np.float32)
    x = tf.constant(a)
    chol = tf.cholesky(x)
    composite = tf.gradients(chol, x, tf.constant(weights))[0]
    raw = CholeskyGrad(l=chol, grad=tf.constant(weights))
    # Junk above the diagonal of both inputs must not change the result.
    junk = CholeskyGrad(l=chol + tf.constant(np.triu(np.full((5, 5), 9.0, np.float32), 1)),
                        grad=tf.constant(weights + np.triu(np.ones((5, 5), np.float32), 1)))
    c, r, j = run([composite, raw, junk])
    assert r.dtype == np.float32 and r.shape == (5, 5)
    np.testing.assert_allclose(r, c, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(j, r, rtol=1e-6)
    np.testing.assert_allclose(r, r.T, rtol=1e-6)


def test_empty_and_shape_errors():
    empty = run(CholeskyGrad(l=tf.zeros([2, 0, 0]), grad=tf.zeros([2, 0, 0])))
    assert empty.shape == (2, 0, 0)
    with pytest.raises(ValueError):
        CholeskyGrad(l=tf.zeros([2, 3]), grad=tf.zeros([2, 3]))
    lp = tf.placeholder(tf.float64, [None, None])
    out = CholeskyGrad(l=lp, grad=tf.zeros([3, 3], tf.float64))
    assert out.shape.as_list() == [3, 3]
    with pytest.raises(errors.InvalidArgumentError, match="CholeskyGrad"):
        run(out, {lp: np.eye(2)})
