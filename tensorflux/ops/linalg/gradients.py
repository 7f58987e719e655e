"""Gradients of the linear-algebra ops (matrix calculus on batches of matrices).

Each rule is written with public ops on the innermost two dimensions, so it batches like the
forward op, and follows TensorFlow's complex convention (the gradient of a real loss L with
respect to z is dL/dRe(z) + i dL/dIm(z)); real-valued outputs of complex ops (singular values,
log|det|) use only the real part of their incoming gradient. Ops that read only one triangle of
their input (Cholesky, SelfAdjointEigV2, MatrixTriangularSolve) return a gradient supported on
that triangle or, for Cholesky, the symmetrised one, as TensorFlow does.
"""

from __future__ import annotations

from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.linalg import decompositions as lo
from tensorflux.ops.math.broadcast_gradient import unbroadcast


def _adj(x):
    return array_ops.matrix_transpose(x, conjugate=True)


def _or_zeros(grad, like):
    return array_ops.zeros_like(like) if grad is None else grad


def _static_matrix_dims(op, a, what):
    """(rows, columns) of the matrices in `a`; the `what` gradient needs them static."""
    dims = a.shape.dims
    if dims is None or dims[-2] is None or dims[-1] is None:
        raise ValueError(f"{what} gradient of '{op.name}' needs static matrix dimensions, got "
                         f"{a.shape}")
    return dims[-2:]


def _expand2(x):
    return array_ops.expand_dims(array_ops.expand_dims(x, -1), -1)


@lo.MatrixInverse.gradient
def _matrix_inverse_grad(op, grad):
    ainv = op.outputs[0]
    if op.get_attr("adjoint"):
        # y = inv(a^H): the gradient with respect to a^H is -y^H g y^H; adjoint it back.
        return -math_ops.matmul(ainv, math_ops.matmul(grad, ainv, adjoint_a=True))
    return -math_ops.matmul(ainv, math_ops.matmul(grad, ainv, adjoint_b=True), adjoint_a=True)


@lo.MatrixDeterminant.gradient
def _matrix_determinant_grad(op, grad):
    det = op.outputs[0]
    scale = grad * math_ops.conj(det) if det.dtype.is_complex else grad * det
    return _expand2(scale) * lo.matrix_inverse(op.inputs[0], adjoint=True)


@lo.LogMatrixDeterminant.gradient
def _log_matrix_determinant_grad(op, _grad_sign, grad_logdet):
    if grad_logdet is None:
        return None
    if grad_logdet.dtype.is_complex:  # log|det| is real: only the real part of its grad counts
        grad_logdet = math_ops.cast(math_ops.real(grad_logdet), grad_logdet.dtype)
    return _expand2(grad_logdet) * lo.matrix_inverse(op.inputs[0], adjoint=True)


@lo.Cholesky.gradient
def _cholesky_grad(op, grad):
    # With P = Phi(L^H G) (lower triangle, halved diagonal) and S = L^-H P L^-1, the gradient
    # of the symmetric input is (S + S^H) / 2.
    chol = op.outputs[0]
    middle = math_ops.matmul(chol, grad, adjoint_a=True)
    middle = array_ops.matrix_band_part(middle, -1, 0)
    middle = array_ops.matrix_set_diag(middle, 0.5 * array_ops.matrix_diag_part(middle))
    left = lo.matrix_triangular_solve(chol, middle, lower=True, adjoint=True)  # L^-H P
    s_adj = lo.matrix_triangular_solve(chol, _adj(left), lower=True, adjoint=True)  # S^H
    return 0.5 * (s_adj + _adj(s_adj))


def _right_solve_r_adjoint(x, r):
    """x @ r^-H for an upper-triangular r."""
    return _adj(lo.matrix_triangular_solve(r, _adj(x), lower=False, adjoint=False))


def _qr_grad_tall(q, r, dq, dr):
    qdq = math_ops.matmul(q, dq, adjoint_a=True)
    rdr = math_ops.matmul(r, dr, adjoint_b=True)
    tril = array_ops.matrix_band_part(qdq - _adj(qdq) + rdr - _adj(rdr), -1, 0)
    if q.dtype.is_complex:
        tril = array_ops.matrix_set_diag(tril, 0.5 * array_ops.matrix_diag_part(tril))
    grad_a = math_ops.matmul(q, dr + _right_solve_r_adjoint(tril, r))
    grad_b = _right_solve_r_adjoint(dq - math_ops.matmul(q, qdq), r)
    return grad_a + grad_b


@lo.Qr.gradient
def _qr_grad(op, dq, dr):
    a = op.inputs[0]
    q, r = op.outputs
    m, n = _static_matrix_dims(op, a, "Qr")
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


def _safe_inverse_gap(e):
    """F with F[..., i, j] = 1 / (e_j - e_i) off the diagonal and 0 on it."""
    gap = array_ops.expand_dims(e, -2) - array_ops.expand_dims(e, -1)
    eye = math_ops.cast(array_ops.eye(array_ops.shape(e)[-1]), e.dtype)
    return (1.0 - eye) / (gap + eye)


@lo.SelfAdjointEigV2.gradient
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
        _, v = lo.self_adjoint_eig(op.inputs[0])
        inner = array_ops.matrix_diag(math_ops.cast(grad_e, v.dtype))
    grad_a = math_ops.matmul(v, math_ops.matmul(inner, v, adjoint_b=True))
    # The forward op reads only the lower triangle: fold the symmetric gradient onto it.
    grad_a = array_ops.matrix_band_part(grad_a + _adj(grad_a), -1, 0)
    return array_ops.matrix_set_diag(grad_a, 0.5 * array_ops.matrix_diag_part(grad_a))


@lo.Svd.gradient
def _svd_grad(op, grad_s, grad_u, grad_v):
    a = op.inputs[0]
    m, n = _static_matrix_dims(op, a, "Svd")
    s = op.outputs[0]
    grad_s = _or_zeros(grad_s, s)
    if grad_s.dtype.is_complex:  # singular values are real: only the real part counts
        grad_s = math_ops.cast(math_ops.real(grad_s), grad_s.dtype)
    if not op.get_attr("compute_uv"):
        _, u, v = lo.svd(a, compute_uv=True)
        return math_ops.matmul(u, math_ops.matmul(array_ops.matrix_diag(grad_s), v, adjoint_b=True))
    if op.get_attr("full_matrices") and m != n:
        raise ValueError(f"Svd gradient of '{op.name}' is not defined for full_matrices=True "
                         f"with a non-square input {a.shape} (as in TensorFlow)")
    u, v = op.outputs[1], op.outputs[2]
    grad_u, grad_v = _or_zeros(grad_u, u), _or_zeros(grad_v, v)
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
    return grad_a


@lo.MatrixSolve.gradient
def _matrix_solve_grad(op, grad):
    adjoint = op.get_attr("adjoint")
    x = op.outputs[0]
    grad_b = lo.matrix_solve(op.inputs[0], grad, adjoint=not adjoint)
    if adjoint:
        return -math_ops.matmul(x, grad_b, adjoint_b=True), grad_b
    return -math_ops.matmul(grad_b, x, adjoint_b=True), grad_b


@lo.MatrixTriangularSolve.gradient
def _matrix_triangular_solve_grad(op, grad):
    lower = op.get_attr("lower")
    adjoint = op.get_attr("adjoint")
    matrix, rhs = op.inputs
    x = op.outputs[0]
    grad_b = lo.matrix_triangular_solve(matrix, grad, lower=lower, adjoint=not adjoint)
    if adjoint:
        grad_a = -math_ops.matmul(x, grad_b, adjoint_b=True)
    else:
        grad_a = -math_ops.matmul(grad_b, x, adjoint_b=True)
    grad_a = array_ops.matrix_band_part(grad_a, -1,
                                        0) if lower else array_ops.matrix_band_part(grad_a, 0, -1)
    return unbroadcast(grad_a, matrix), unbroadcast(grad_b, rhs)


@lo.MatrixSolveLs.gradient
def _matrix_solve_ls_grad(op, grad):
    if not op.get_attr("fast"):
        raise ValueError(f"MatrixSolveLs gradient of '{op.name}' is only defined for fast=True "
                         f"(as in TensorFlow)")
    a, b, l2 = op.inputs
    x = op.outputs[0]
    m, n = _static_matrix_dims(op, a, "MatrixSolveLs")
    lam = math_ops.cast(l2, a.dtype)
    if m >= n:
        gram = math_ops.matmul(a, a, adjoint_a=True) + lam * array_ops.eye(n, dtype=a.dtype)
        z = lo.matrix_solve(gram, grad)
        grad_a = (math_ops.matmul(b, z, adjoint_b=True) - math_ops.matmul(a,
                                                                          math_ops.matmul(x, z,
                                                                                          adjoint_b=True))
                  - math_ops.matmul(a, math_ops.matmul(z, x, adjoint_b=True)))
        return grad_a, math_ops.matmul(a, z), None
    gram = math_ops.matmul(a, a, adjoint_b=True) + lam * array_ops.eye(m, dtype=a.dtype)
    y = lo.matrix_solve(gram, b)
    z = lo.matrix_solve(gram, math_ops.matmul(a, grad))
    grad_a = (math_ops.matmul(y, grad, adjoint_b=True) - math_ops.matmul(z, x, adjoint_b=True)
              - math_ops.matmul(y, math_ops.matmul(z, a, adjoint_a=True)))
    return grad_a, z, None
