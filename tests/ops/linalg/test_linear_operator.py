"""tf.linalg.LinearOperator*: every method against the dense matrix in NumPy."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorflux as tf

RNG = np.random.RandomState(7)


def _well_conditioned(*shape):
    n = shape[-1]
    return RNG.randn(*shape) + 3 * n ** 0.5 * np.eye(n)


def _circulant(h):
    n = h.shape[-1]
    return np.array([[h[(i - j) % n] for j in range(n)] for i in range(n)])


def _cases():
    a = _well_conditioned(2, 3, 3)
    d = RNG.rand(2, 3) + 0.5
    b, c = _well_conditioned(2, 2), _well_conditioned(3, 3)
    u, du = RNG.randn(3, 2), np.array([0.5, 2.0])
    v = RNG.randn(3)
    col, row = RNG.randn(4), RNG.randn(4)
    h = RNG.randn(4)
    h2 = RNG.randn(2, 3)
    diag = np.stack([np.diag(r) for r in d])
    full = tf.linalg.LinearOperatorFullMatrix
    return {
        "full": (lambda: full(a), a),
        "diag": (lambda: tf.linalg.LinearOperatorDiag(d), diag),
        "tril": (lambda: tf.linalg.LinearOperatorLowerTriangular(a), np.tril(a)),
        "identity": (lambda: tf.linalg.LinearOperatorIdentity(3, batch_shape=[2],
                                                              dtype=tf.float64),
                     np.broadcast_to(np.eye(3), (2, 3, 3))),
        "scaled": (lambda: tf.linalg.LinearOperatorScaledIdentity(3, np.array([2.0, -3.0])),
                   np.array([2.0, -3.0])[:, None, None] * np.eye(3)),
        "adjoint": (lambda: tf.linalg.LinearOperatorAdjoint(full(a)), np.swapaxes(a, -1, -2)),
        "inversion": (lambda: tf.linalg.LinearOperatorInversion(full(a)), np.linalg.inv(a)),
        "composition": (lambda: tf.linalg.LinearOperatorComposition(
            [full(a), tf.linalg.LinearOperatorDiag(d)]), a @ diag),
        "kronecker": (lambda: tf.linalg.LinearOperatorKronecker([full(b), full(c)]),
                      np.kron(b, c)),
        "kronecker3": (lambda: tf.linalg.LinearOperatorKronecker([full(b), full(c), full(b)]),
                       np.kron(np.kron(b, c), b)),
        "block_diag": (lambda: tf.linalg.LinearOperatorBlockDiag([full(b), full(c)]),
                       np.block([[b, np.zeros((2, 3))], [np.zeros((3, 2)), c]])),
        "low_rank": (lambda: tf.linalg.LinearOperatorLowRankUpdate(full(a[0]), u,
                                                                   diag_update=du),
                     a[0] + u @ np.diag(du) @ u.T),
        "low_rank_uv": (lambda: tf.linalg.LinearOperatorLowRankUpdate(
            tf.linalg.LinearOperatorDiag(d[0]), u, v=u[::-1] * 0.5),
            diag[0] + u @ (0.5 * u[::-1]).T),
        "householder": (lambda: tf.linalg.LinearOperatorHouseholder(v),
                        np.eye(3) - 2 * np.outer(v, v) / v.dot(v)),
        "toeplitz": (lambda: tf.linalg.LinearOperatorToeplitz(col, row),
                     np.array([[col[i - j] if i >= j else row[j - i] for j in range(4)]
                               for i in range(4)])),
        "circulant": (lambda: tf.linalg.LinearOperatorCirculant(
            np.fft.fft(h), input_output_dtype=tf.complex128), _circulant(h).astype(complex)),
        "circulant_real": (lambda: tf.linalg.LinearOperatorCirculant(
            np.fft.fft(h).astype(np.complex64), input_output_dtype=tf.float32),
            _circulant(h).astype(np.float32)),
        "circulant2d": (lambda: tf.linalg.LinearOperatorCirculant2D(
            np.fft.fft2(h2), input_output_dtype=tf.complex128), _block_circulant(h2)),
        "complex_full": (lambda: full(a + 1j * RNG.randn(2, 3, 3)), None),
    }


def _block_circulant(h2):
    """The dense matrix of x -> ifft2(fft2(h2) * fft2(x)) on row-major flattened x."""
    n0, n1 = h2.shape
    cols = []
    for k in range(n0 * n1):
        e = np.zeros(n0 * n1)
        e[k] = 1
        y = np.fft.ifft2(np.fft.fft2(h2) * np.fft.fft2(e.reshape(n0, n1)))
        cols.append(y.reshape(-1))
    return np.stack(cols, axis=1)


CASES = _cases()


@pytest.mark.parametrize("name", sorted(CASES))
def test_methods_equal_the_dense_matrix(name):
    make, dense = CASES[name]
    with tf.Graph().as_default():
        op = make()
        if dense is None:
            dense = tf.Session().run(op.to_dense())
        n = dense.shape[-1]
        x = RNG.randn(*dense.shape[:-2], n, 2).astype(dense.dtype)
        if np.iscomplexobj(dense):
            x = x + 1j * RNG.randn(*x.shape)
        vec = x[..., 0]
        fetches = {"dense": op.to_dense(), "matmul": op.matmul(x),
                   "matmul_adj": op.matmul(x, adjoint=True),
                   "matmul_adj_arg": op.matmul(np.conj(np.swapaxes(x, -1, -2)),
                                               adjoint_arg=True),
                   "matvec": op.matvec(vec), "det": op.determinant(),
                   "log_abs_det": op.log_abs_determinant(), "solve": op.solve(x),
                   "solve_adj": op.solve(x, adjoint=True), "solvevec": op.solvevec(vec),
                   "diag": op.diag_part(), "trace": op.trace(), "shape": op.shape_tensor(),
                   "add": op.add_to_tensor(np.ones(dense.shape, dense.dtype)),
                   "inverse": op.inverse().to_dense(), "H": op.H.to_dense()}
        with tf.Session() as sess:
            got = sess.run(fetches)
    adj = np.conj(np.swapaxes(dense, -1, -2))
    want = {"dense": dense, "matmul": dense @ x, "matmul_adj": adj @ x,
            "matmul_adj_arg": dense @ x, "matvec": (dense @ x)[..., 0],
            "det": np.linalg.det(dense), "log_abs_det": np.linalg.slogdet(dense)[1],
            "solve": np.linalg.solve(dense, x), "solve_adj": np.linalg.solve(adj, x),
            "solvevec": np.linalg.solve(dense, x)[..., 0],
            "diag": np.diagonal(dense, axis1=-2, axis2=-1),
            "trace": np.trace(dense, axis1=-2, axis2=-1), "shape": np.array(dense.shape),
            "add": dense + 1, "inverse": np.linalg.inv(dense), "H": adj}
    tol = 1e-4 if dense.dtype == np.float32 else 1e-8
    for key, value in want.items():
        np.testing.assert_allclose(got[key], value, rtol=tol, atol=tol, err_msg=key)
    assert op.shape.as_list() == list(dense.shape)
    assert op.domain_dimension.value == dense.shape[-1]
    assert op.range_dimension.value == dense.shape[-2]
    assert op.batch_shape.as_list() == list(dense.shape[:-2])
    assert op.tensor_rank == dense.ndim


def test_self_adjoint_hints_and_derived_methods():
    spd = np.array([[4.0, 1.0], [1.0, 3.0]])
    op = tf.linalg.LinearOperatorFullMatrix(spd, is_self_adjoint=True, is_positive_definite=True)
    assert op.is_non_singular and op.is_square
    assert op.adjoint() is op
    with tf.Session() as sess:
        chol, eig, cond = sess.run([op.cholesky().to_dense(), op.eigvals(), op.cond()])
    np.testing.assert_allclose(chol, np.linalg.cholesky(spd))
    np.testing.assert_allclose(eig, np.linalg.eigvalsh(spd))
    np.testing.assert_allclose(cond, np.linalg.cond(spd))
    assert isinstance(op.cholesky(), tf.linalg.LinearOperatorLowerTriangular)
    diag = tf.linalg.LinearOperatorDiag([4.0, 9.0], is_positive_definite=True)
    assert diag.is_self_adjoint
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(diag.cholesky().diag_part()), [2.0, 3.0])
        np.testing.assert_allclose(sess.run(diag.inverse().diag_part()), [0.25, 1 / 9.0])


def test_matmul_of_two_operators_is_a_composition():
    a = tf.linalg.LinearOperatorFullMatrix([[1.0, 2.0], [3.0, 4.0]])
    b = tf.linalg.LinearOperatorDiag([2.0, 5.0])
    prod = a.matmul(b)
    assert isinstance(prod, tf.linalg.LinearOperatorComposition)
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(prod.to_dense()), [[2.0, 10.0], [6.0, 20.0]])
    with pytest.raises(ValueError, match="incompatible"):
        a.matmul(tf.linalg.LinearOperatorIdentity(3))


def test_asserts_pass_and_fail_at_run_time():
    good = tf.linalg.LinearOperatorDiag([1.0, 2.0])
    bad = tf.linalg.LinearOperatorDiag([1.0, 0.0])
    not_pd = tf.linalg.LinearOperatorDiag([1.0, -2.0])
    asym = tf.linalg.LinearOperatorFullMatrix([[1.0, 2.0], [0.0, 1.0]])
    with tf.Session() as sess:
        sess.run([good.assert_non_singular(), good.assert_positive_definite(),
                  good.assert_self_adjoint()])
        with pytest.raises(tf.errors.InvalidArgumentError, match="zero values"):
            sess.run(bad.assert_non_singular())
        with pytest.raises(tf.errors.InvalidArgumentError, match="positive"):
            sess.run(not_pd.assert_positive_definite())
        with pytest.raises(tf.errors.InvalidArgumentError, match="adjoint"):
            sess.run(asym.assert_self_adjoint())
        with pytest.raises(tf.errors.InvalidArgumentError, match="Singular"):
            sess.run(tf.linalg.LinearOperatorFullMatrix([[1.0, 2.0], [2.0, 4.0]])
                     .assert_non_singular())


def test_bad_arguments_are_typed_errors():
    with pytest.raises(ValueError, match="always non-singular"):
        tf.linalg.LinearOperatorFullMatrix(np.eye(2), is_positive_definite=True,
                                           is_non_singular=False)
    with pytest.raises(TypeError, match="dtype"):
        tf.linalg.LinearOperatorFullMatrix(np.eye(2, dtype=np.int32))
    op = tf.linalg.LinearOperatorFullMatrix(np.eye(2, dtype=np.float32))
    with pytest.raises(TypeError, match="float32"):
        op.matmul(tf.ones((2, 1), tf.float64))
    with pytest.raises(ValueError, match="expected dimension 2 but got 3"):
        op.matmul(np.ones((3, 1), np.float32))
    with pytest.raises(ValueError, match="self adjoint"):
        tf.linalg.LinearOperatorDiag([1.0, 2.0], is_self_adjoint=False)
    with pytest.raises(ValueError, match="always non-singular"):
        tf.linalg.LinearOperatorIdentity(2, is_non_singular=False)
    with pytest.raises(ValueError, match="non-negative"):
        tf.linalg.LinearOperatorIdentity(-1)
    with pytest.raises(ValueError, match="non-empty"):
        tf.linalg.LinearOperatorComposition([])
    with pytest.raises(TypeError, match="same dtype"):
        tf.linalg.LinearOperatorComposition([op, tf.linalg.LinearOperatorIdentity(
            2, dtype=tf.float64)])
    singular = tf.linalg.LinearOperatorFullMatrix(np.eye(2), is_non_singular=False)
    with pytest.raises(NotImplementedError, match="singular"):
        singular.solve(np.ones((2, 1)))
    with pytest.raises(ValueError, match="singular"):
        singular.inverse()
    with pytest.raises(ValueError, match="positive definite"):
        op.cholesky()
    rect = tf.linalg.LinearOperatorFullMatrix(np.ones((2, 3)))
    assert rect.is_square is False
    with pytest.raises(NotImplementedError, match="not be square"):
        rect.determinant()


def test_zeros_operator():
    op = tf.linalg.LinearOperatorZeros(2, num_columns=3, batch_shape=[4], is_self_adjoint=False)
    assert op.shape.as_list() == [4, 2, 3]
    assert op.is_square is False
    x = np.ones((4, 3, 5), np.float32)
    with tf.Session() as sess:
        mm, dense, adj = sess.run([op.matmul(x), op.to_dense(),
                                   op.matmul(np.ones((4, 2, 1), np.float32), adjoint=True)])
    assert mm.shape == (4, 2, 5) and not mm.any()
    assert dense.shape == (4, 2, 3) and not dense.any()
    assert adj.shape == (4, 3, 1)
    with pytest.raises(ValueError, match="always singular"):
        tf.linalg.LinearOperatorZeros(2, is_non_singular=True)


def test_identity_without_batch_keeps_the_argument_batch():
    op = tf.linalg.LinearOperatorIdentity(3)
    x = RNG.randn(5, 3, 2).astype(np.float32)
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(op.matmul(x)), x)
        np.testing.assert_array_equal(sess.run(op.solve(x)), x)
    assert op.inverse() is op and op.cholesky() is op


@settings(max_examples=15, deadline=None)
@given(batch=st.lists(st.integers(1, 3), max_size=2), n=st.integers(1, 4),
       cols=st.integers(1, 3), seed=st.integers(0, 2 ** 16))
def test_full_and_diag_broadcast_against_numpy(batch, n, cols, seed):
    rng = np.random.RandomState(seed)
    matrix = rng.randn(*batch, n, n) + 3 * n * np.eye(n)
    diag = rng.rand(*batch, n) + 0.5
    x = rng.randn(n, cols)
    with tf.Graph().as_default(), tf.Session() as sess:
        full = tf.linalg.LinearOperatorFullMatrix(matrix)
        dg = tf.linalg.LinearOperatorDiag(diag)
        got = sess.run([full.matmul(x), full.solve(x), dg.matmul(x), dg.solve(x),
                        full.log_abs_determinant(), dg.log_abs_determinant()])
    dense_diag = diag[..., :, None] * np.eye(n)
    np.testing.assert_allclose(got[0], matrix @ x, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(got[1], np.linalg.solve(matrix, np.broadcast_to(
        x, matrix.shape[:-1] + (cols,))), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(got[2], dense_diag @ x, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(got[3], np.linalg.solve(dense_diag, np.broadcast_to(
        x, matrix.shape[:-1] + (cols,))), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(got[4], np.linalg.slogdet(matrix)[1], rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(got[5], np.linalg.slogdet(dense_diag)[1], rtol=1e-8,
                               atol=1e-10)


def test_gradients_flow_through_operator_methods():
    m = tf.constant([[3.0, 1.0], [0.5, 2.0]], dtype=tf.float64)
    op = tf.linalg.LinearOperatorFullMatrix(m)
    y = tf.reduce_sum(op.solve(tf.ones([2, 1], tf.float64))) + op.log_abs_determinant()
    with tf.Session():
        err = tf.test.compute_gradient_error(m, [2, 2], y, [], x_init_value=np.array(
            [[3.0, 1.0], [0.5, 2.0]]))
    assert err < 1e-6


def test_a_subclass_must_define_shape_and_matmul():
    class Partial(tf.linalg.LinearOperator):
        def _shape(self):
            return tf.TensorShape([2, 2])

    with pytest.raises(TypeError, match="abstract"):
        Partial(tf.float32)
