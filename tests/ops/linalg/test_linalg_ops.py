"""Linear-algebra ops (inverse, determinants, Cholesky, QR, SVD, eigh, solvers, Cross) and the
composites tf.norm / tf.trace / tf.linalg.*: values against NumPy, static shapes, errors and
finite-difference gradients."""

import collections

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from op_helpers import gradient_case as _case
from op_helpers import graph, run  # noqa: F401 (graph: autouse fixture)

import tensorflux as tf
from tensorflux.framework import errors

Row = collections.namedtuple("Row", "op build expected")
RNG = np.random.RandomState(7)
SQ = RNG.randn(2, 3, 3) + 3 * np.eye(3)            # well-conditioned batch
SPD = np.matmul(SQ, np.swapaxes(SQ, -1, -2)) + np.eye(3)
TALL = RNG.randn(2, 4, 3)
WIDE = RNG.randn(3, 5)
RHS = RNG.randn(2, 3, 2)
CPLX = RNG.randn(3, 3) + 1j * RNG.randn(3, 3) + 3 * np.eye(3)


def _adj(m):
    return np.conj(np.swapaxes(m, -1, -2))


def _qr_check(x, full):
    def check(outs):
        q, r = outs
        np.testing.assert_allclose(q @ r, x, atol=1e-5)
        eye = np.broadcast_to(np.eye(q.shape[-1]), q.shape[:-2] + (q.shape[-1],) * 2)
        np.testing.assert_allclose(_adj(q) @ q, eye, atol=1e-5)
        np.testing.assert_allclose(np.tril(r, -1), 0, atol=1e-6)
        k = x.shape[-2] if full else min(x.shape[-2:])
        assert q.shape == x.shape[:-2] + (x.shape[-2], k)
    return check


def _svd_check(x, full):
    def check(outs):
        s, u, v = outs
        np.testing.assert_allclose(s, np.linalg.svd(x, compute_uv=False), rtol=1e-5, atol=1e-5)
        k = min(x.shape[-2:])
        rebuilt = (u[..., :, :k] * s[..., None, :]) @ _adj(v[..., :, :k])
        np.testing.assert_allclose(rebuilt, x, atol=1e-5)
        if full:
            assert u.shape[-1] == x.shape[-2] and v.shape[-1] == x.shape[-1]
    return check


def _eig_check(x):
    def check(outs):
        e, v = outs
        sym = np.tril(x) + np.swapaxes(np.tril(x, -1), -1, -2)
        np.testing.assert_allclose(e, np.linalg.eigvalsh(sym), atol=1e-5)
        np.testing.assert_allclose(v @ (e[..., None] * _adj(v)), sym, atol=1e-5)
    return check


def _lstsq(a, b, lam):
    n = a.shape[-1]
    return np.linalg.solve(_adj(a) @ a + lam * np.eye(n), _adj(a) @ b)


ROWS = [
    Row("MatrixInverse", lambda: tf.matrix_inverse(SQ), np.linalg.inv(SQ)),
    Row("MatrixInverse", lambda: tf.matrix_inverse(SQ.astype(np.float32), adjoint=True),
        np.linalg.inv(_adj(SQ)).astype(np.float32)),
    Row("MatrixInverse", lambda: tf.linalg.inv(CPLX), np.linalg.inv(CPLX)),
    Row("MatrixInverse", lambda: tf.matrix_inverse(np.eye(2, dtype=np.float16) * 2),
        np.eye(2, dtype=np.float16) / 2),
    Row("MatrixDeterminant", lambda: tf.matrix_determinant(SQ), np.linalg.det(SQ)),
    Row("MatrixDeterminant", lambda: tf.linalg.det(np.zeros((0, 0))), np.float64(1.0)),
    Row("LogMatrixDeterminant", lambda: list(tf.log_matrix_determinant(-SQ)),
        list(np.linalg.slogdet(-SQ))),
    Row("LogMatrixDeterminant", lambda: list(tf.linalg.slogdet(np.zeros((2, 2)))),
        [np.float64(0.0), np.float64(-np.inf)]),
    Row("Cholesky", lambda: tf.cholesky(SPD), np.linalg.cholesky(SPD)),
    Row("Cholesky", lambda: tf.cholesky(np.tril(SPD[0]).astype(np.float32) + np.triu(
        np.full((3, 3), 99.0, np.float32), 1)), np.linalg.cholesky(SPD[0]).astype(np.float32)),
    Row("Qr", lambda: list(tf.qr(TALL)), _qr_check(TALL, False)),
    Row("Qr", lambda: list(tf.qr(TALL.astype(np.float32), full_matrices=True)),
        _qr_check(TALL, True)),
    Row("Qr", lambda: list(tf.linalg.qr(WIDE)), _qr_check(WIDE, False)),
    Row("Svd", lambda: list(tf.svd(TALL)), _svd_check(TALL, False)),
    Row("Svd", lambda: list(tf.svd(WIDE, full_matrices=True)), _svd_check(WIDE, True)),
    Row("Svd", lambda: tf.svd(TALL, compute_uv=False),
        np.linalg.svd(TALL, compute_uv=False)),
    Row("SelfAdjointEigV2", lambda: list(tf.self_adjoint_eig(TALL[:, :3])),
        _eig_check(TALL[:, :3])),
    Row("SelfAdjointEigV2", lambda: tf.self_adjoint_eigvals(SPD.astype(np.float32)),
        np.linalg.eigvalsh(SPD).astype(np.float32)),
    Row("MatrixSolve", lambda: tf.matrix_solve(SQ, RHS), np.linalg.solve(SQ, RHS)),
    Row("MatrixSolve", lambda: tf.linalg.solve(SQ, RHS, adjoint=True),
        np.linalg.solve(_adj(SQ), RHS)),
    Row("MatrixTriangularSolve", lambda: tf.matrix_triangular_solve(SQ, RHS),
        np.linalg.solve(np.tril(SQ), RHS)),
    Row("MatrixTriangularSolve", lambda: tf.linalg.triangular_solve(SQ, RHS, lower=False,
                                                                    adjoint=True),
        np.linalg.solve(_adj(np.triu(SQ)), RHS)),
    Row("MatrixTriangularSolve", lambda: tf.matrix_triangular_solve(SQ[0], RHS),
        np.linalg.solve(np.tril(SQ[0]), RHS)),
    Row("MatrixTriangularSolve", lambda: tf.cholesky_solve(tf.cholesky(SPD), RHS),
        np.linalg.solve(SPD, RHS)),
    Row("MatrixSolveLs", lambda: tf.matrix_solve_ls(TALL, TALL[..., :2] + 1),
        _lstsq(TALL, TALL[..., :2] + 1, 0.0)),
    Row("MatrixSolveLs", lambda: tf.matrix_solve_ls(WIDE, np.ones((3, 1)), l2_regularizer=0.5),
        _adj(WIDE) @ np.linalg.solve(WIDE @ _adj(WIDE) + 0.5 * np.eye(3), np.ones((3, 1)))),
    Row("MatrixSolveLs", lambda: tf.linalg.lstsq(WIDE, np.ones((3, 1)), fast=False),
        np.linalg.lstsq(WIDE, np.ones((3, 1)), rcond=None)[0]),
    Row("Cross", lambda: tf.cross(TALL, TALL[:, ::-1]), np.cross(TALL, TALL[:, ::-1])),
    Row("Cross", lambda: tf.linalg.cross([1, 2, 3], [4, 5, 6]), np.array([-3, 6, -3], np.int32)),
]

COVERED_OPS = {row.op for row in ROWS}


@pytest.mark.parametrize("row", ROWS, ids=[f"{r.op}-{i}" for i, r in enumerate(ROWS)])
def test_row(row):
    outputs = row.build()
    values = run(outputs)
    outs = outputs if isinstance(outputs, list) else [outputs]
    vals = values if isinstance(outputs, list) else [values]
    for tensor, value in zip(outs, vals):
        value = np.asarray(value)
        assert tensor.shape.is_compatible_with(value.shape), (tensor.shape, value.shape)
        assert value.dtype == tensor.dtype.base_dtype.as_numpy_dtype, (value.dtype, tensor.dtype)
    if callable(row.expected):
        row.expected(vals)
        return
    exps = row.expected if isinstance(outputs, list) else [row.expected]
    for value, exp in zip(vals, exps):
        exp = np.asarray(exp)
        assert np.shape(value) == exp.shape
        tol = 1e-2 if exp.dtype == np.float16 else 1e-4 if exp.dtype == np.float32 else 1e-9
        np.testing.assert_allclose(value, exp, rtol=tol, atol=tol)


def test_static_shapes():
    p = tf.placeholder(tf.float32, [None, 5, 3])
    assert tf.matrix_inverse(tf.placeholder(tf.float32, [None, 4, None])).shape.as_list() == \
        [None, 4, 4]
    assert tf.matrix_determinant(tf.placeholder(tf.float32, [7, 2, 2])).shape.as_list() == [7]
    q, r = tf.qr(p)
    assert (q.shape.as_list(), r.shape.as_list()) == ([None, 5, 3], [None, 3, 3])
    q, r = tf.qr(p, full_matrices=True)
    assert (q.shape.as_list(), r.shape.as_list()) == ([None, 5, 5], [None, 5, 3])
    s, u, v = tf.svd(p)
    assert [t.shape.as_list() for t in (s, u, v)] == [[None, 3], [None, 5, 3], [None, 3, 3]]
    s, u, v = tf.svd(p, full_matrices=True)
    assert [t.shape.as_list() for t in (s, u, v)] == [[None, 3], [None, 5, 5], [None, 3, 3]]
    raw = tf.linalg.svd(p, compute_uv=False)
    assert raw.shape.as_list() == [None, 3]
    assert raw.op.outputs[1].shape.as_list() == [0]
    e, v = tf.self_adjoint_eig(tf.placeholder(tf.float64, [2, None, 4]))
    assert (e.shape.as_list(), v.shape.as_list()) == ([2, 4], [2, 4, 4])
    x = tf.matrix_solve_ls(p, tf.placeholder(tf.float32, [2, 5, 7]))
    assert x.shape.as_list() == [2, 3, 7]
    x = tf.matrix_triangular_solve(tf.placeholder(tf.float32, [3, 3]),
                                   tf.placeholder(tf.float32, [4, 3, 2]))
    assert x.shape.as_list() == [4, 3, 2]
    assert tf.log_matrix_determinant(tf.placeholder(tf.float32))[0].shape.ndims is None
    assert tf.cross(tf.placeholder(tf.float32, [None, 3]), tf.zeros([4, 3])).shape.as_list() == \
        [4, 3]


def test_graph_construction_errors_name_the_op():
    for fn, op in [(tf.matrix_inverse, "MatrixInverse"), (tf.cholesky, "Cholesky"),
                   (tf.matrix_determinant, "MatrixDeterminant"),
                   (tf.self_adjoint_eig, "SelfAdjointEigV2")]:
        with pytest.raises(ValueError, match=f"{op}.*Dimensions must be equal, but are 2 and 3"):
            fn(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="MatrixInverse.*at least rank 2 but is rank 1"):
        tf.matrix_inverse(np.zeros(3))
    # TF's shape-function wording, which TF1 programs and tests match on.
    for fn in (tf.qr, tf.svd, tf.cholesky, tf.self_adjoint_eigvals):
        for value, rank in ((2.0, 0), ([1.0, 2.0], 1)):
            with pytest.raises(ValueError, match=f"Shape must be at least rank 2 but is rank "
                                                 f"{rank}"):
                fn(tf.constant(value))
    with pytest.raises(ValueError, match="MatrixSolve.*Dimensions must be equal"):
        tf.matrix_solve(np.eye(2), np.ones((3, 1)))
    with pytest.raises(ValueError, match="equal rank"):
        tf.matrix_solve(SQ, np.ones((3, 1)))
    with pytest.raises(ValueError, match="Dimension must be 3 but is 4"):
        tf.cross(np.ones((2, 4)), np.ones((2, 4)))
    with pytest.raises(ValueError, match="equal rank"):
        tf.cross(np.ones((2, 3)), np.ones(3))
    with pytest.raises(TypeError):
        tf.matrix_inverse(np.eye(2, dtype=np.int32))


def test_run_time_errors():
    with pytest.raises(errors.InvalidArgumentError, match="Input is not invertible."):
        run(tf.matrix_inverse(np.stack([np.eye(2), np.zeros((2, 2))])))
    with pytest.raises(errors.InvalidArgumentError, match="Cholesky decomposition was not "):
        run(tf.cholesky(-np.eye(2)))
    with pytest.raises(errors.InvalidArgumentError, match="not invertible"):
        run(tf.matrix_solve(np.zeros((2, 2)), np.ones((2, 1))))
    p = tf.placeholder(tf.float64, [None, None])
    with pytest.raises(errors.InvalidArgumentError, match="square"):
        run(tf.matrix_inverse(p), {p: np.zeros((2, 3))})
    # Triangular solves do not check: a zero pivot gives inf/nan, as in TensorFlow.
    out = run(tf.matrix_triangular_solve(np.zeros((2, 2)), np.ones((2, 1))))
    assert np.isinf(out[0, 0]) and np.isnan(out[1, 0])


def test_norm_matches_numpy():
    x = RNG.randn(2, 3, 4)
    m = x[0]
    cases = [
        (tf.norm(x), np.linalg.norm(x.ravel())),
        (tf.norm(x, axis=-1), np.linalg.norm(x, axis=-1)),
        (tf.norm(x, ord=1, axis=1, keepdims=True), np.abs(x).sum(1, keepdims=True)),
        (tf.norm(x, ord=np.inf, axis=0), np.abs(x).max(0)),
        (tf.norm(x, ord=3), np.sum(np.abs(x) ** 3) ** (1 / 3)),
        (tf.norm(x, ord=0.5, axis=2), np.sum(np.abs(x) ** 0.5, axis=2) ** 2),
        (tf.norm(m, ord="fro", axis=[0, 1]), np.linalg.norm(m, "fro")),
        (tf.norm(m, ord=1, axis=[-2, -1]), np.linalg.norm(m, 1)),
        (tf.norm(m, ord=np.inf, axis=(0, 1)), np.linalg.norm(m, np.inf)),
        (tf.norm(m, ord=2, axis=[0, 1]), np.linalg.norm(m, 2)),
        (tf.norm(x, ord=2, axis=[2, 0]), np.linalg.norm(x, 2, axis=(2, 0))),
        (tf.norm(x, ord=1, axis=[0, 2], keepdims=True),
         np.linalg.norm(x, 1, axis=(0, 2), keepdims=True)),
        (tf.norm(x, keep_dims=True), np.linalg.norm(x.ravel()).reshape(1, 1, 1)),
        (tf.linalg.norm(np.array([3 + 4j, 0j])), np.complex128(5)),
    ]
    values = run([c[0] for c in cases])
    for (tensor, expected), value in zip(cases, values):
        assert tensor.shape.as_list() == list(np.shape(expected))
        np.testing.assert_allclose(value, expected, rtol=1e-10)
    assert tf.norm(np.ones(2)).op.name.startswith("norm")


def test_norm_argument_errors():
    with pytest.raises(ValueError, match="supported vector norm, got fro"):
        tf.norm(np.ones(3), ord="fro")
    with pytest.raises(ValueError, match="supported vector norm, got -1"):
        tf.norm(np.ones(3), ord=-1)
    with pytest.raises(ValueError, match="supported matrix norm"):
        tf.norm(np.ones((2, 2)), ord=3, axis=[0, 1])
    with pytest.raises(ValueError, match="tuple of 2 unique integers"):
        tf.norm(np.ones((2, 2)), axis=[1, 1])
    with pytest.raises(ValueError, match="tuple of 2 unique integers"):
        tf.norm(np.ones((2, 2, 2)), axis=[0, 1, 2])
    with pytest.raises(TypeError, match="floating"):
        tf.norm(np.ones(3, np.int32))


def test_trace_logdet_matvec_adjoint():
    x = RNG.randn(2, 3, 4)
    trace = tf.trace(x)
    assert trace.op.name == "Trace" and trace.shape.as_list() == [2]
    values = run([trace, tf.linalg.logdet(SPD), tf.linalg.matvec(SQ, RHS[..., 0]),
                   tf.linalg.adjoint(CPLX), tf.linalg.transpose(x),
                   tf.linalg.eigvalsh(SPD), tf.linalg.band_part(SQ, 0, 0)])
    np.testing.assert_allclose(values[0], np.trace(x, axis1=-2, axis2=-1))
    np.testing.assert_allclose(values[1], np.linalg.slogdet(SPD)[1])
    np.testing.assert_allclose(values[2], np.einsum("bij,bj->bi", SQ, RHS[..., 0]))
    np.testing.assert_array_equal(values[3], _adj(CPLX))
    np.testing.assert_array_equal(values[4], np.swapaxes(x, -1, -2))
    np.testing.assert_allclose(values[5], np.linalg.eigvalsh(SPD))
    np.testing.assert_array_equal(values[6], SQ * np.eye(3))


def test_pinv_and_matrix_rank():
    deficient = np.array([[1.0, 2.0], [2.0, 4.0], [0.0, 0.0]])
    batch = np.stack([TALL[0], np.concatenate([TALL[1][:, :2], TALL[1][:, :1]], 1)])
    p = tf.placeholder(tf.float32, [5, 3, 4])
    assert tf.linalg.pinv(p).shape.as_list() == [5, 4, 3]
    assert tf.linalg.matrix_rank(p).shape.as_list() == [5]
    pinv = tf.linalg.pinv(deficient)
    assert pinv.op.name.startswith("pinv")
    values = run([pinv, tf.linalg.pinv(batch), tf.linalg.pinv(CPLX),
                   tf.linalg.pinv(deficient.astype(np.float32), rcond=0.5),
                   tf.linalg.matrix_rank(deficient), tf.linalg.matrix_rank(batch),
                   tf.linalg.matrix_rank(deficient, tol=100.0),
                   tf.linalg.matrix_rank(tf.placeholder_with_default(batch, [None, None, 3]))])
    np.testing.assert_allclose(values[0], np.linalg.pinv(deficient), atol=1e-12)
    np.testing.assert_allclose(values[1], np.linalg.pinv(batch), atol=1e-10)
    np.testing.assert_allclose(values[2], np.linalg.inv(CPLX), atol=1e-10)
    np.testing.assert_allclose(values[3], np.linalg.pinv(deficient), atol=1e-6)
    assert values[4] == 1 and values[4].dtype == np.int32
    np.testing.assert_array_equal(values[5], [3, 2])
    assert values[6] == 0
    np.testing.assert_array_equal(values[7], [3, 2])


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2), st.integers(1, 4), st.integers(1, 4), st.booleans())
def test_decompositions_match_numpy(batch, m, n, full):
    x = np.random.RandomState(m * 10 + n).randn(*([2] * batch), m, n)
    with tf.Graph().as_default():
        q, r = tf.qr(x, full_matrices=full)
        s, u, v = tf.svd(x, full_matrices=full)
        outs = run([q, r, s, u, v])
    _qr_check(x, full)(outs[:2])
    _svd_check(x, full)(outs[2:])


# -- gradients -----------------------------------------------------------------------------------

def _shift(tf, x):
    return x + 3.0 * tf.eye(x.shape.as_list()[-1], dtype=tf.float64)


def _spd(tf, x):
    return tf.matmul(x, x, transpose_b=True) + 2.0 * tf.eye(x.shape.as_list()[-1],
                                                            dtype=tf.float64)


def _flat(tf, *tensors):
    return tf.concat([tf.reshape(t, [-1]) for t in tensors], 0)


def _svd_outputs(tf, x, full=False):
    s, u, v = tf.svd(x, full_matrices=full)
    # u v^H terms and squares are invariant to the sign choice of each singular pair.
    return _flat(tf, s, tf.matmul(u[..., :1], v[..., :1], adjoint_b=True), u * u, v * v)


GRADIENT_CASES = [
    ("MatrixInverse", _case(lambda tf, x: tf.matrix_inverse(_shift(tf, x)), [2, 3, 3])),
    ("MatrixInverse", _case(lambda tf, x: tf.matrix_inverse(_shift(tf, x), adjoint=True),
                            [3, 3])),
    ("MatrixDeterminant", _case(lambda tf, x: tf.matrix_determinant(x), [2, 3, 3])),
    ("LogMatrixDeterminant", _case(
        lambda tf, x: tf.log_matrix_determinant(_shift(tf, x) - 6.0 * tf.eye(
            3, dtype=tf.float64))[1], [2, 3, 3])),
    ("Cholesky", _case(lambda tf, x: tf.cholesky(_spd(tf, x)), [2, 3, 3])),
    ("Qr", _case(lambda tf, x: _flat(tf, *tf.qr(x)), [4, 3])),
    ("Qr", _case(lambda tf, x: _flat(tf, *tf.qr(x, full_matrices=True)), [2, 3, 3])),
    ("Qr", _case(lambda tf, x: _flat(tf, *tf.qr(x)), [2, 4])),
    ("Qr", _case(lambda tf, x: _flat(tf, *tf.qr(x, full_matrices=True)), [2, 3])),
    ("Svd", _case(lambda tf, x: _svd_outputs(tf, x), [4, 3])),
    ("Svd", _case(lambda tf, x: _svd_outputs(tf, x), [2, 3, 4])),
    ("Svd", _case(lambda tf, x: _svd_outputs(tf, x, full=True), [3, 3])),
    # Full matrices one row / column off square: the extra singular vector spans a null space.
    ("Svd", _case(lambda tf, x: _svd_outputs(tf, x, full=True), [3, 4])),
    ("Svd", _case(lambda tf, x: _svd_outputs(tf, x, full=True), [2, 4, 3])),
    ("Svd", _case(lambda tf, x: tf.svd(x, compute_uv=False), [3, 2])),
    ("Svd", _case(lambda tf, x: tf.linalg.pinv(x), [2, 3, 2])),
    ("SelfAdjointEigV2", _case(lambda tf, x: _flat(tf, *[
        t * t for t in tf.self_adjoint_eig(x)]), [2, 3, 3])),
    ("SelfAdjointEigV2", _case(lambda tf, x: tf.self_adjoint_eigvals(x), [3, 3])),
    ("MatrixSolve", _case(lambda tf, a, b: tf.matrix_solve(_shift(tf, a), b),
                          [2, 3, 3], [2, 3, 2])),
    ("MatrixSolve", _case(lambda tf, a, b: tf.matrix_solve(_shift(tf, a), b, adjoint=True),
                          [3, 3], [3, 1])),
    ("MatrixTriangularSolve", _case(
        lambda tf, a, b: tf.matrix_triangular_solve(_shift(tf, a), b), [2, 3, 3], [2, 3, 2])),
    ("MatrixTriangularSolve", _case(
        lambda tf, a, b: tf.matrix_triangular_solve(_shift(tf, a), b, lower=False,
                                                    adjoint=True), [3, 3], [2, 3, 1])),
    ("MatrixSolveLs", _case(lambda tf, a, b: tf.matrix_solve_ls(a, b, l2_regularizer=0.1),
                            [4, 2], [4, 2])),
    ("MatrixSolveLs", _case(lambda tf, a, b: tf.matrix_solve_ls(a, b, l2_regularizer=0.5),
                            [2, 2, 3], [2, 2, 1])),
    ("Cross", _case(lambda tf, a, b: tf.cross(a, b), [2, 3], [2, 3])),
]


def test_gradient_errors():
    x = tf.placeholder(tf.float64, [3, 2])
    q, _ = tf.qr(x, full_matrices=True)
    with pytest.raises(ValueError, match="full_matrices=True"):
        tf.gradients(q, x)
    _, u, _ = tf.svd(tf.placeholder(tf.float64, [2, 5]), full_matrices=True)
    with pytest.raises(NotImplementedError, match="abs\\(m - n\\) > 1"):
        tf.gradients(u, u.op.inputs[0])
    y = tf.matrix_solve_ls(x, tf.ones([3, 1], tf.float64), fast=False)
    with pytest.raises(ValueError, match="fast=True"):
        tf.gradients(y, x)


def _complex_numeric_grad(f, z, eps=1e-6):
    """dL/dRe(z) + i dL/dIm(z) of a real function: TensorFlow's complex gradient convention."""
    grad = np.zeros_like(z)
    for k in range(z.size):
        for part in (1, 1j):
            step = np.zeros(z.size, complex)
            step[k] = eps * part
            step = step.reshape(z.shape)
            grad.flat[k] += part * (f(z + step) - f(z - step)) / (2 * eps)
    return grad


def _hpd(z):
    return z @ _adj(z) + np.eye(z.shape[-1])


def _tf_svd_invariants(t):
    s, u, v = tf.svd(t[:, :2])
    return tf.concat([tf.reshape(s, [1, 2]), tf.matmul(u[:, :1], v[:, :1], adjoint_b=True),
                      u * tf.conj(u)], 0)


def _np_svd_invariants(z):
    u, s, vh = np.linalg.svd(z[:, :2], full_matrices=False)
    return np.concatenate([s.reshape(1, 2), np.outer(u[:, 0], vh[0]), np.abs(u) ** 2], 0)


COMPLEX_GRADS = {
    "svd": (_tf_svd_invariants, _np_svd_invariants),
    "inv": (lambda t: tf.matrix_inverse(t, adjoint=True), lambda z: np.linalg.inv(_adj(z))),
    "det": (lambda t: tf.matrix_determinant(t), np.linalg.det),
    "slogdet": (lambda t: tf.log_matrix_determinant(t)[1], lambda z: np.linalg.slogdet(z)[1]),
    "solve": (lambda t: tf.matrix_solve(t, np.ones((3, 2), complex)),
              lambda z: np.linalg.solve(z, np.ones((3, 2)))),
    "triangular_solve": (lambda t: tf.matrix_triangular_solve(t, np.ones((3, 2), complex)),
                         lambda z: np.linalg.solve(np.tril(z), np.ones((3, 2)))),
    "cholesky": (lambda t: tf.cholesky(tf.matmul(t, t, adjoint_b=True)
                                       + tf.eye(3, dtype=tf.complex128)),
                 lambda z: np.linalg.cholesky(_hpd(z))),
    "qr": (lambda t: tf.concat(tf.qr(t[:, :2]), 0), lambda z: np.concatenate(
        np.linalg.qr(z[:, :2]), 0)),
    "eigvalsh": (lambda t: tf.self_adjoint_eigvals(tf.matmul(t, t, adjoint_b=True)),
                 lambda z: np.linalg.eigvalsh(z @ _adj(z))),
}


@pytest.mark.parametrize("name", sorted(COMPLEX_GRADS))
def test_complex_gradients(name):
    build, reference = COMPLEX_GRADS[name]
    rng = np.random.RandomState(3)
    z0 = rng.randn(3, 3) + 1j * rng.randn(3, 3) + 3 * np.eye(3)
    x = tf.placeholder(tf.complex128, [3, 3])
    y = build(x)
    w = rng.randn(*y.shape.as_list()) + 1j * rng.randn(*y.shape.as_list())
    loss = tf.real(tf.reduce_sum(tf.cast(y, tf.complex128) * w))
    got = run(tf.gradients(loss, x)[0], {x: z0})
    expected = _complex_numeric_grad(lambda z: np.real(np.sum(reference(z) * w)), z0)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)
