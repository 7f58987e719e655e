"""tf.linalg.lu, tridiagonal_solve / tridiagonal_matmul and sqrtm against NumPy, with
gradients against finite differences."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorflux as tf

COVERED_OPS = {"Lu", "TridiagonalSolve", "TridiagonalMatMul", "MatrixSquareRoot"}


def _tridiagonal_solve_case(tf):
    diagonals = tf.placeholder(tf.float64, [2, 3, 4])
    rhs = tf.placeholder(tf.float64, [2, 4, 2])
    rng = np.random.RandomState(4)
    values = rng.uniform(-1, 1, (2, 3, 4))
    values[:, 1] += 3.0   # diagonally dominant: well conditioned
    return tf.linalg.tridiagonal_solve(diagonals, rhs), [diagonals, rhs], [
        values, rng.uniform(-1, 1, (2, 4, 2))]


def _tridiagonal_matmul_case(tf):
    diagonals = tf.placeholder(tf.float64, [3, 5])
    rhs = tf.placeholder(tf.float64, [5, 2])
    rng = np.random.RandomState(5)
    return tf.linalg.tridiagonal_matmul(diagonals, rhs), [diagonals, rhs], [
        rng.uniform(-1, 1, (3, 5)), rng.uniform(-1, 1, (5, 2))]


GRADIENT_CASES = [("TridiagonalSolve", _tridiagonal_solve_case),
                  ("TridiagonalMatMul", _tridiagonal_matmul_case)]


def _dense(sup, main, sub):
    n = main.shape[-1]
    out = np.zeros(main.shape + (n,), main.dtype)
    idx = np.arange(n)
    out[..., idx, idx] = main
    out[..., idx[:-1], idx[1:]] = sup[..., :-1]
    out[..., idx[1:], idx[:-1]] = sub[..., 1:]
    return out


def _run(fetches):
    with tf.Session() as sess:
        return sess.run(fetches)


@pytest.mark.parametrize("idx_type", [tf.int32, tf.int64])
def test_lu_reconstructs_the_permuted_matrix(idx_type):
    a = np.random.RandomState(3).randn(2, 3, 5, 5).astype(np.float32)
    lu, perm = _run(tf.linalg.lu(a, output_idx_type=idx_type))
    assert perm.dtype == idx_type.as_numpy_dtype and perm.shape == (2, 3, 5)
    lower = np.tril(lu, -1) + np.eye(5)
    upper = np.triu(lu)
    np.testing.assert_allclose(lower @ upper, np.take_along_axis(a, perm[..., None], -2),
                               rtol=1e-5, atol=1e-5)
    assert np.all(np.abs(np.tril(lu, -1)) <= 1 + 1e-6)   # partial pivoting bounds L


def test_lu_pivots_on_the_first_largest_entry_and_rejects_singular_input():
    lu, perm = _run(tf.linalg.lu(np.array([[1.0, 2.0], [3.0, 4.0]])))
    np.testing.assert_array_equal(perm, [1, 0])
    np.testing.assert_allclose(lu, [[3.0, 4.0], [1 / 3.0, 2 - 4 / 3.0]])
    with pytest.raises(tf.errors.InvalidArgumentError, match="not invertible"):
        _run(tf.linalg.lu(np.array([[1.0, 2.0], [2.0, 4.0]])))
    with pytest.raises(ValueError, match="square"):
        tf.linalg.lu(np.ones((2, 3)))


@settings(max_examples=25, deadline=None)
@given(batch=st.integers(1, 3), n=st.integers(1, 7), k=st.integers(1, 3),
       pivoting=st.booleans(), seed=st.integers(0, 2 ** 16))
def test_tridiagonal_solve_equals_a_dense_solve(batch, n, k, pivoting, seed):
    rng = np.random.RandomState(seed)
    sup, sub = rng.randn(batch, n), rng.randn(batch, n)
    main = rng.randn(batch, n) + (0 if pivoting else 4.0)
    dense = _dense(sup, main, sub)
    if np.any(np.abs(np.linalg.det(dense)) < 1e-3):
        return
    rhs = rng.randn(batch, n, k)
    got = _run(tf.linalg.tridiagonal_solve(np.stack([sup, main, sub], -2), rhs,
                                           partial_pivoting=pivoting))
    np.testing.assert_allclose(got, np.linalg.solve(dense, rhs), rtol=1e-6, atol=1e-8)


def test_tridiagonal_formats_vectors_transpose_and_conjugate():
    rng = np.random.RandomState(5)
    sup, main, sub = rng.randn(4), rng.randn(4) + 3, rng.randn(4)
    dense = _dense(sup, main, sub)
    rhs = rng.randn(4, 2) + 1j * rng.randn(4, 2)
    c = [d.astype(np.complex128) for d in (sup, main, sub)]
    got = _run({
        "compact": tf.linalg.tridiagonal_solve(np.stack(c, -2), rhs),
        "sequence": tf.linalg.tridiagonal_solve(c, rhs, diagonals_format="sequence"),
        "matrix": tf.linalg.tridiagonal_solve(dense.astype(np.complex128), rhs,
                                              diagonals_format="matrix"),
        "vector": tf.linalg.tridiagonal_solve(c, rhs[:, 0], diagonals_format="sequence"),
        "transposed": tf.linalg.tridiagonal_solve(c, rhs.T, diagonals_format="sequence",
                                                  transpose_rhs=True, conjugate_rhs=True),
        "matmul": tf.linalg.tridiagonal_matmul(dense.astype(np.complex128), rhs,
                                               diagonals_format="matrix"),
    })
    want = np.linalg.solve(dense, rhs)
    for key in ("compact", "sequence", "matrix"):
        np.testing.assert_allclose(got[key], want, err_msg=key)
    np.testing.assert_allclose(got["vector"], want[:, 0])
    np.testing.assert_allclose(got["transposed"], np.linalg.solve(dense, np.conj(rhs)))
    np.testing.assert_allclose(got["matmul"], dense @ rhs)


def test_tridiagonal_errors_are_typed():
    with pytest.raises(ValueError, match="diagonals_format"):
        tf.linalg.tridiagonal_solve(np.ones((3, 4)), np.ones((4, 1)), diagonals_format="band")
    with pytest.raises(ValueError, match="sequence of length 3"):
        tf.linalg.tridiagonal_solve([np.ones(4)], np.ones((4, 1)), diagonals_format="sequence")
    with pytest.raises(ValueError, match="Dimension must be 3"):
        tf.linalg.tridiagonal_solve(np.ones((2, 4)), np.ones((4, 1)))
    zero = np.zeros((3, 3))
    with pytest.raises(tf.errors.InvalidArgumentError, match="not invertible"):
        _run(tf.linalg.tridiagonal_solve(zero, np.ones((3, 1))))


def _grad_error(build, shapes, seed=0):
    rng = np.random.RandomState(seed)
    with tf.Graph().as_default(), tf.Session():
        xs = [tf.constant(rng.randn(*s) + (3.0 if i == 0 else 0.0), tf.float64)
              for i, s in enumerate(shapes)]
        y = build(*xs)
        return tf.test.compute_gradient_error(xs, shapes, y, y.shape.as_list())


def test_tridiagonal_gradients_match_finite_differences():
    def solve(d, rhs):
        return tf.linalg.tridiagonal_solve(d, rhs)

    def solve_mat(d, rhs):
        return tf.linalg.tridiagonal_matmul(d, rhs)

    assert _grad_error(lambda m, d, r: solve(tf.stack([d[0], m[0] + 3, d[1]]), r),
                       [(1, 4), (2, 4), (4, 2)]) < 1e-6
    assert _grad_error(lambda m, d, r: solve_mat(tf.stack([d[0], m[0], d[1]]), r),
                       [(1, 4), (2, 4), (4, 2)]) < 1e-6


def test_sqrtm_values_and_gradient():
    rng = np.random.RandomState(2)
    a = rng.randn(2, 3, 3)
    spd = a @ np.swapaxes(a, -1, -2) + np.eye(3)
    general = rng.randn(3, 3) + 4 * np.eye(3)
    neg = np.diag([-1.0, 2.0])
    root, root2, bad, croot = _run([tf.linalg.sqrtm(spd), tf.linalg.sqrtm(general),
                                    tf.linalg.sqrtm(neg),
                                    tf.linalg.sqrtm(neg.astype(np.complex128))])
    np.testing.assert_allclose(root @ root, spd, atol=1e-10)
    np.testing.assert_allclose(root, np.swapaxes(root, -1, -2), atol=1e-10)
    assert np.all(np.linalg.eigvalsh(root) > 0)       # the principal root
    np.testing.assert_allclose(root2 @ root2, general, atol=1e-10)
    assert np.isnan(bad).all()                         # a real matrix without a real root
    np.testing.assert_allclose(croot @ croot, neg, atol=1e-12)
    assert _grad_error(lambda x: tf.linalg.sqrtm(x + tf.transpose(x)), [(3, 3)]) < 1e-5


def test_root_alias():
    assert tf.matrix_square_root is tf.linalg.sqrtm
