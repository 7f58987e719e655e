"""Linear algebra over batches of matrices: inverse, determinants, Cholesky, QR, SVD and the
symmetric eigendecomposition (the linear solvers are in solvers.py).

Every op works on the innermost two dimensions and is batched over the leading ones; the kernels
are single batched `numpy.linalg` calls (float16 is computed in float32 and cast back). The
shape functions reject non-square inputs where a square matrix is required, naming the op.
Each op's gradient follows its kernel; `tf.norm`, `tf.trace` and `tf.cross` are in functions.py.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.linalg import solvers as solver_ops
from tensorflux.ops.linalg.batch_matrix import (
    LINALG_TYPES,
    check_square,
    conj_transpose,
    matrix_shape,
    square_batch,
    static_matrix_dims,
    upcast,
)

__all__ = ["matrix_inverse", "matrix_determinant", "log_matrix_determinant", "cholesky", "qr",
           "svd", "self_adjoint_eig", "self_adjoint_eigvals"]


# -- shared shape and kernel helpers ----------------------------------------------------------

def _with_batch(batch, dims) -> TensorShape:
    return TensorShape(None) if batch is None else TensorShape(list(batch) + list(dims))


# -- MatrixInverse, MatrixDeterminant, LogMatrixDeterminant -----------------------------------

MatrixInverse = define_op("MatrixInverse", inputs=["input: T"], outputs=["output: T"],
                          attrs=["adjoint: bool = False", LINALG_TYPES])
MatrixDeterminant = define_op("MatrixDeterminant", inputs=["input: T"], outputs=["output: T"],
                              attrs=[LINALG_TYPES])
LogMatrixDeterminant = define_op("LogMatrixDeterminant", inputs=["input: T"],
                                 outputs=["sign: T", "log_abs_determinant: T"],
                                 attrs=[LINALG_TYPES])


def _square_matrices_shape(input):
    """Shape function of the ops mapping each square matrix to one of the same size."""
    batch, n = square_batch(input)
    return _with_batch(batch, [n, n])


MatrixInverse.shape_fn(_square_matrices_shape)


@MatrixInverse.kernel
def _matrix_inverse_kernel(x, *, adjoint):
    check_square(x)
    a = upcast(x)
    try:
        inv = np.linalg.inv(conj_transpose(a) if adjoint else a)
    except np.linalg.LinAlgError:
        raise errors.InvalidArgumentError(None, None, "Input is not invertible.") from None
    return inv.astype(x.dtype, copy=False)


def _adj(x):
    return array_ops.matrix_transpose(x, conjugate=True)


def _or_zeros(grad, like):
    return array_ops.zeros_like(like) if grad is None else grad


def _expand2(x):
    return array_ops.expand_dims(array_ops.expand_dims(x, -1), -1)


@MatrixInverse.gradient
def _matrix_inverse_grad(op, grad):
    ainv = op.outputs[0]
    if op.get_attr("adjoint"):
        # y = inv(a^H): the gradient with respect to a^H is -y^H g y^H; adjoint it back.
        return -math_ops.matmul(ainv, math_ops.matmul(grad, ainv, adjoint_a=True))
    return -math_ops.matmul(ainv, math_ops.matmul(grad, ainv, adjoint_b=True), adjoint_a=True)


@MatrixDeterminant.shape_fn
def _matrix_determinant_shape(input):
    batch, _ = square_batch(input)
    return _with_batch(batch, [])


@MatrixDeterminant.kernel
def _matrix_determinant_kernel(x):
    check_square(x)
    return np.asarray(np.linalg.det(upcast(x))).astype(x.dtype, copy=False)


@MatrixDeterminant.gradient
def _matrix_determinant_grad(op, grad):
    det = op.outputs[0]
    scale = grad * math_ops.conj(det) if det.dtype.is_complex else grad * det
    return _expand2(scale) * matrix_inverse(op.inputs[0], adjoint=True)


@LogMatrixDeterminant.shape_fn
def _log_matrix_determinant_shape(input):
    batch, _ = square_batch(input)
    return [_with_batch(batch, []), _with_batch(batch, [])]


@LogMatrixDeterminant.kernel
def _log_matrix_determinant_kernel(x):
    check_square(x)
    sign, logdet = np.linalg.slogdet(upcast(x))
    return (np.asarray(sign).astype(x.dtype, copy=False),
            np.asarray(logdet).astype(x.dtype, copy=False))


@LogMatrixDeterminant.gradient
def _log_matrix_determinant_grad(op, _grad_sign, grad_logdet):
    if grad_logdet is None:
        return None
    if grad_logdet.dtype.is_complex:  # log|det| is real: only the real part of its grad counts
        grad_logdet = math_ops.cast(math_ops.real(grad_logdet), grad_logdet.dtype)
    return _expand2(grad_logdet) * matrix_inverse(op.inputs[0], adjoint=True)


# -- Cholesky ---------------------------------------------------------------------------------

Cholesky = define_op("Cholesky", inputs=["input: T"], outputs=["output: T"],
                     attrs=[LINALG_TYPES])


Cholesky.shape_fn(_square_matrices_shape)


@Cholesky.kernel
def _cholesky_kernel(x):
    check_square(x)
    try:
        # NOTE: LAPACK's potrf with UPLO='L' reads only the lower triangle, as TensorFlow does.
        return np.linalg.cholesky(upcast(x)).astype(x.dtype, copy=False)
    except np.linalg.LinAlgError:
        raise errors.InvalidArgumentError(
            None, None, "Cholesky decomposition was not successful. The input might not be "
                        "valid (it must be symmetric/Hermitian positive definite).") from None


@Cholesky.gradient
def _cholesky_grad(op, grad):
    # With P = Phi(L^H G) (lower triangle, halved diagonal) and S = L^-H P L^-1, the gradient
    # of the symmetric input is (S + S^H) / 2.
    chol = op.outputs[0]
    middle = math_ops.matmul(chol, grad, adjoint_a=True)
    middle = array_ops.matrix_band_part(middle, -1, 0)
    middle = array_ops.matrix_set_diag(middle, 0.5 * array_ops.matrix_diag_part(middle))
    left = solver_ops.matrix_triangular_solve(chol, middle, lower=True, adjoint=True)  # L^-H P
    s_adj = solver_ops.matrix_triangular_solve(chol, _adj(left), lower=True, adjoint=True)  # S^H
    return 0.5 * (s_adj + _adj(s_adj))


# CholeskyGrad: the raw op TF1 programs may call directly (gen_linalg_ops.cholesky_grad). Given
# the factor L and dC/dL it returns the symmetrised dC/dA; only the lower triangles of both
# inputs are read, as TF's blocked kernel does.
CholeskyGrad = define_op("CholeskyGrad", inputs=["l: T", "grad: T"], outputs=["output: T"],
                         attrs=["T: {float64, float32, float16}"], differentiable=False)


@CholeskyGrad.shape_fn
def _cholesky_grad_shape(l, grad):
    return _square_matrices_shape(l.merge_with(grad) if l.is_compatible_with(grad) else l)


@CholeskyGrad.kernel
def _cholesky_grad_kernel(l, grad):
    check_square(l, "l")
    if l.shape != grad.shape:
        raise errors.InvalidArgumentError(
            None, None, f"CholeskyGrad: l and grad must have the same shape, got {l.shape} "
                        f"and {grad.shape}")
    low = np.tril(upcast(l))
    if low.shape[-1] == 0:
        return np.zeros(l.shape, l.dtype)
    middle = np.tril(np.swapaxes(low, -1, -2) @ np.tril(upcast(grad)))
    idx = np.arange(low.shape[-1])
    middle[..., idx, idx] *= 0.5
    left = np.linalg.solve(np.swapaxes(low, -1, -2), middle)          # L^-T P
    s_t = np.linalg.solve(np.swapaxes(low, -1, -2), np.swapaxes(left, -1, -2))  # (L^-T P L^-1)^T
    return (0.5 * (s_t + np.swapaxes(s_t, -1, -2))).astype(l.dtype, copy=False)


# -- Qr ---------------------------------------------------------------------------------------

Qr = define_op("Qr", inputs=["input: T"], outputs=["q: T", "r: T"],
               attrs=["full_matrices: bool = False", LINALG_TYPES])


def _min_dim(a, b):
    return None if a is None or b is None else min(a, b)


@Qr.shape_fn
def _qr_shape(input, *, full_matrices):
    input = matrix_shape(input)
    if input.ndims is None:
        return [TensorShape(None), TensorShape(None)]
    batch = list(input._dim_list[:-2])
    m, n = input._dim_list[-2:]
    if full_matrices:
        return [TensorShape(batch + [m, m]), TensorShape(batch + [m, n])]
    k = _min_dim(m, n)
    return [TensorShape(batch + [m, k]), TensorShape(batch + [k, n])]


@Qr.kernel
def _qr_kernel(x, *, full_matrices):
    if x.ndim < 2:
        raise errors.InvalidArgumentError(None, None, f"Qr needs rank >= 2, got {x.shape}")
    q, r = np.linalg.qr(upcast(x), mode="complete" if full_matrices else "reduced")
    return q.astype(x.dtype, copy=False), r.astype(x.dtype, copy=False)


def _right_solve_r_adjoint(x, r):
    """x @ r^-H for an upper-triangular r."""
    return _adj(solver_ops.matrix_triangular_solve(r, _adj(x), lower=False, adjoint=False))


def _qr_grad_tall(q, r, dq, dr):
    qdq = math_ops.matmul(q, dq, adjoint_a=True)
    rdr = math_ops.matmul(r, dr, adjoint_b=True)
    tril = array_ops.matrix_band_part(qdq - _adj(qdq) + rdr - _adj(rdr), -1, 0)
    if q.dtype.is_complex:
        tril = array_ops.matrix_set_diag(tril, 0.5 * array_ops.matrix_diag_part(tril))
    grad_a = math_ops.matmul(q, dr + _right_solve_r_adjoint(tril, r))
    grad_b = _right_solve_r_adjoint(dq - math_ops.matmul(q, qdq), r)
    return grad_a + grad_b


@Qr.gradient
def _qr_grad(op, dq, dr):
    a = op.inputs[0]
    q, r = op.outputs
    m, n = static_matrix_dims(op, a, "Qr")
    if op.get_attr("full_matrices") and m > n:
        raise ValueError(f"Qr gradient of '{op.name}' is not defined for full_matrices=True "
                         f"with more rows than columns, got {a.shape} (as in TensorFlow)")
    dq, dr = _or_zeros(dq, q), _or_zeros(dr, r)
    if m >= n:
        return _qr_grad_tall(q, r, dq, dr)
    # Wide input a = [x | y]: q r = [q u | q v] with x = q u square.
    y = a[..., :, m:]
    u = r[..., :, :m]
    dv = dr[..., :, m:]
    dx = _qr_grad_tall(q, u, dq + math_ops.matmul(y, dv, adjoint_b=True), dr[..., :, :m])
    return array_ops.concat([dx, math_ops.matmul(q, dv)], -1)


# -- Svd --------------------------------------------------------------------------------------

Svd = define_op("Svd", inputs=["input: T"], outputs=["s: T", "u: T", "v: T"],
                attrs=["compute_uv: bool = True", "full_matrices: bool = False", LINALG_TYPES])


@Svd.shape_fn
def _svd_shape(input, *, compute_uv, full_matrices):
    input = matrix_shape(input)
    if input.ndims is None:
        s = u = v = TensorShape(None)
    else:
        batch = list(input._dim_list[:-2])
        m, n = input._dim_list[-2:]
        k = _min_dim(m, n)
        s = TensorShape(batch + [k])
        if full_matrices:
            u, v = TensorShape(batch + [m, m]), TensorShape(batch + [n, n])
        else:
            u, v = TensorShape(batch + [m, k]), TensorShape(batch + [n, k])
    if not compute_uv:
        u = v = TensorShape([0])
    return [s, u, v]


def _real_dtype(dtype):
    return np.empty(0, dtype).real.dtype


@Svd.kernel
def _svd_kernel(x, *, compute_uv, full_matrices):
    if x.ndim < 2:
        raise errors.InvalidArgumentError(None, None, f"Svd needs rank >= 2, got {x.shape}")
    try:
        if not compute_uv:
            s = np.linalg.svd(upcast(x), compute_uv=False)
            empty = np.zeros([0], x.dtype)
            return s.astype(x.dtype), empty, empty.copy()
        u, s, vh = np.linalg.svd(upcast(x), full_matrices=full_matrices)
    except np.linalg.LinAlgError:
        raise errors.InvalidArgumentError(None, None, "SVD did not converge.") from None
    return (s.astype(x.dtype), u.astype(x.dtype, copy=False),
            conj_transpose(vh).astype(x.dtype, copy=False))


@Svd.gradient
def _svd_grad(op, grad_s, grad_u, grad_v):
    a = op.inputs[0]
    m, n = static_matrix_dims(op, a, "Svd")
    s = op.outputs[0]
    grad_s = _or_zeros(grad_s, s)
    if grad_s.dtype.is_complex:  # singular values are real: only the real part counts
        grad_s = math_ops.cast(math_ops.real(grad_s), grad_s.dtype)
    if not op.get_attr("compute_uv"):
        _, u, v = svd(a, compute_uv=True)
        return math_ops.matmul(u, math_ops.matmul(array_ops.matrix_diag(grad_s), v, adjoint_b=True))
    full = op.get_attr("full_matrices") and m != n
    if full and abs(m - n) > 1:
        raise NotImplementedError(
            f"Svd gradient of '{op.name}' is not implemented for abs(m - n) > 1 when "
            f"full_matrices is True (input {a.shape}), as in TensorFlow")
    u, v = op.outputs[1], op.outputs[2]
    grad_u, grad_v = _or_zeros(grad_u, u), _or_zeros(grad_v, v)
    if full:
        # One extra singular vector spans the null space of A (m < n) or of A^H (m > n); it
        # follows the others, so split it off and add its own term at the end.
        k = min(m, n)
        if m < n:
            extra, grad_extra, v, grad_v = v[..., k:], grad_v[..., k:], v[..., :k], grad_v[..., :k]
        else:
            extra, grad_extra, u, grad_u = u[..., k:], grad_u[..., k:], u[..., :k], grad_u[..., :k]
    s_mat = array_ops.matrix_diag(s)
    f = _safe_inverse_gap(math_ops.square(s))
    utgu = math_ops.matmul(u, grad_u, adjoint_a=True)
    vtgv = math_ops.matmul(v, grad_v, adjoint_a=True)
    inner = (math_ops.matmul(f * (utgu - _adj(utgu)), s_mat) + array_ops.matrix_diag(grad_s)
             + math_ops.matmul(s_mat, f * (vtgv - _adj(vtgv))))
    s_inv = array_ops.matrix_diag(1.0 / s)
    if a.dtype.is_complex:
        # The phase of each singular pair is free: a phase-invariant loss still has this term.
        gauge = array_ops.matrix_diag(array_ops.matrix_diag_part(vtgv))
        inner = inner + 0.5 * math_ops.matmul(s_inv, _adj(gauge) - gauge)
    grad_a = math_ops.matmul(u, math_ops.matmul(inner, v, adjoint_b=True))
    if m > n:
        gu_sinv = math_ops.matmul(grad_u, s_inv)
        proj = gu_sinv - math_ops.matmul(u, math_ops.matmul(u, gu_sinv, adjoint_a=True))
        grad_a = grad_a + math_ops.matmul(proj, v, adjoint_b=True)
    elif m < n:
        gv_sinv = math_ops.matmul(grad_v, s_inv)
        proj = gv_sinv - math_ops.matmul(v, math_ops.matmul(v, gv_sinv, adjoint_a=True))
        grad_a = grad_a + math_ops.matmul(u, proj, adjoint_b=True)
    if full and m < n:
        # A v_n = 0 gives dv_n = -V1 S^-1 U^H dA v_n, so dL/dA gains -U S^-1 V1^H g_n v_n^H.
        coupling = math_ops.matmul(math_ops.matmul(v, grad_extra, adjoint_a=True), extra,
                                   adjoint_b=True)
        grad_a = grad_a - math_ops.matmul(u, math_ops.matmul(s_inv, coupling))
    elif full:
        # The same for A^H: u_m spans the null space of A^H.
        coupling = math_ops.matmul(extra, math_ops.matmul(grad_extra, u, adjoint_a=True))
        grad_a = grad_a - math_ops.matmul(coupling, math_ops.matmul(s_inv, v, adjoint_b=True))
    return grad_a


# -- SelfAdjointEigV2 -------------------------------------------------------------------------

SelfAdjointEigV2 = define_op("SelfAdjointEigV2", inputs=["input: T"], outputs=["e: T", "v: T"],
                             attrs=["compute_v: bool = True", LINALG_TYPES])


@SelfAdjointEigV2.shape_fn
def _self_adjoint_eig_shape(input, *, compute_v):
    batch, n = square_batch(input)
    v = _with_batch(batch, [n, n]) if compute_v else TensorShape([0])
    return [_with_batch(batch, [n]), v]


@SelfAdjointEigV2.kernel
def _self_adjoint_eig_kernel(x, *, compute_v):
    check_square(x)
    try:
        # NOTE: like TensorFlow, only the lower triangle of the input is read.
        if not compute_v:
            e = np.linalg.eigvalsh(upcast(x), UPLO="L")
            return e.astype(x.dtype), np.zeros([0], x.dtype)
        e, v = np.linalg.eigh(upcast(x), UPLO="L")
    except np.linalg.LinAlgError:
        raise errors.InvalidArgumentError(
            None, None, "Self-adjoint eigen decomposition was not successful.") from None
    return e.astype(x.dtype), v.astype(x.dtype, copy=False)


def _safe_inverse_gap(e):
    """F with F[..., i, j] = 1 / (e_j - e_i) off the diagonal and 0 on it."""
    gap = array_ops.expand_dims(e, -2) - array_ops.expand_dims(e, -1)
    eye = math_ops.cast(array_ops.eye(array_ops.shape(e)[-1]), e.dtype)
    return (1.0 - eye) / (gap + eye)


@SelfAdjointEigV2.gradient
def _self_adjoint_eig_grad(op, grad_e, grad_v):
    e = op.outputs[0]
    grad_e = _or_zeros(grad_e, e)
    if op.get_attr("compute_v"):
        v = op.outputs[1]
        inner = array_ops.matrix_diag(math_ops.cast(grad_e, v.dtype))
        if grad_v is not None:
            f = math_ops.cast(_safe_inverse_gap(e), v.dtype)
            inner = inner + f * math_ops.matmul(v, grad_v, adjoint_a=True)
    else:
        _, v = self_adjoint_eig(op.inputs[0])
        inner = array_ops.matrix_diag(math_ops.cast(grad_e, v.dtype))
    grad_a = math_ops.matmul(v, math_ops.matmul(inner, v, adjoint_b=True))
    # The forward op reads only the lower triangle: fold the symmetric gradient onto it.
    grad_a = array_ops.matrix_band_part(grad_a + _adj(grad_a), -1, 0)
    return array_ops.matrix_set_diag(grad_a, 0.5 * array_ops.matrix_diag_part(grad_a))


# -- wrappers ---------------------------------------------------------------------------------

def matrix_inverse(input, adjoint=False, name=None):
    """The inverse (or with `adjoint=True` the inverse of the adjoint) of each innermost square
    matrix of `input`.

    Raises:
        ValueError: the innermost dimensions are not square (at graph construction).
        InvalidArgumentError: a matrix is not invertible (at run time).

    Example:
        >>> tf.matrix_inverse([[2.0, 0.0], [0.0, 4.0]])   # [[0.5, 0], [0, 0.25]]
    """
    return MatrixInverse(input, adjoint=adjoint, name=name)


def matrix_determinant(input, name=None):
    """The determinant of each innermost square matrix: `[..., M, M] -> [...]`."""
    return MatrixDeterminant(input, name=name)


def log_matrix_determinant(input, name=None):
    """`(sign, log_abs_determinant)` of each innermost square matrix (stable for large ones)."""
    return LogMatrixDeterminant(input, name=name)


def cholesky(input, name=None):
    """The lower-triangular Cholesky factor `L` (`input = L L^H`) of each innermost matrix.

    Only the lower triangle of `input` is read. A matrix that is not positive definite is an
    InvalidArgumentError at run time.
    """
    return Cholesky(input, name=name)


def qr(input, full_matrices=False, name=None):
    """The QR decomposition `(q, r)` of each innermost matrix (`input = q @ r`).

    Args:
        input: `[..., M, N]` tensor.
        full_matrices: q is `[..., M, M]` and r `[..., M, N]`; else `[..., M, P]` and
            `[..., P, N]` with `P = min(M, N)`.
        name: op name.
    """
    return Qr(input, full_matrices=full_matrices, name=name)


def svd(tensor, full_matrices=False, compute_uv=True, name=None):
    """The singular values (descending) and, with `compute_uv`, the singular vectors.

    Returns:
        `(s, u, v)` with `tensor = u @ diag(s) @ adjoint(v)`; only `s` when `compute_uv` is
        False.
    """
    result = Svd(tensor, compute_uv=compute_uv, full_matrices=full_matrices, name=name)
    if compute_uv:
        return result.s, result.u, result.v
    return result.s


def self_adjoint_eig(tensor, name=None):
    """`(e, v)`: eigenvalues (ascending) and eigenvectors (columns) of each self-adjoint matrix
    (only the lower triangle is read)."""
    e, v = SelfAdjointEigV2(tensor, compute_v=True, name=name)
    return e, v


def self_adjoint_eigvals(tensor, name=None):
    """The eigenvalues (ascending) of each self-adjoint innermost matrix."""
    return SelfAdjointEigV2(tensor, compute_v=False, name=name).e
