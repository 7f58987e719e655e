"""Linear solvers over batches of matrices: MatrixSolve, MatrixTriangularSolve, MatrixSolveLs,
their gradients, and `cholesky_solve`.

As in decompositions.py, every op works on the innermost two dimensions and is batched over the
leading ones; the right-hand sides' batch dimensions broadcast against the matrices' (their
gradients sum over the broadcast axes).
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import errors
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.common_shapes import broadcast_shape
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.linalg.batch_matrix import (
    LINALG_TYPES,
    check_square,
    conj_transpose,
    matrix_shape,
    square_batch,
    static_matrix_dims,
    upcast,
)
from tensorflux.ops.math.broadcast_gradient import unbroadcast

__all__ = ["cholesky_solve", "matrix_solve", "matrix_triangular_solve", "matrix_solve_ls"]


# -- MatrixSolve, MatrixTriangularSolve, MatrixSolveLs ----------------------------------------

MatrixSolve = define_op("MatrixSolve", inputs=["matrix: T", "rhs: T"], outputs=["output: T"],
                        attrs=["adjoint: bool = False", LINALG_TYPES])
MatrixTriangularSolve = define_op(
    "MatrixTriangularSolve", inputs=["matrix: T", "rhs: T"], outputs=["output: T"],
    attrs=["lower: bool = True", "adjoint: bool = False",
           "T: {float64, float32, float16, complex64, complex128}"])
MatrixSolveLs = define_op(
    "MatrixSolveLs", inputs=["matrix: T", "rhs: T", "l2_regularizer: float64"],
    outputs=["output: T"], attrs=[LINALG_TYPES, "fast: bool = True"])


def _rows_match(n, rows, matrix, rhs):
    if n is not None and rows is not None and n != rows:
        raise ValueError(f"Dimensions must be equal, but are {n} and {rows}: the matrix "
                         f"{matrix} and the right-hand side {rhs} need the same number of rows")


@MatrixSolve.shape_fn
def _matrix_solve_shape(matrix, rhs, *, adjoint):
    batch, n = square_batch(matrix)
    rhs = matrix_shape(rhs)
    if batch is None or rhs.ndims is None:
        return TensorShape(None)
    if rhs.ndims != matrix.ndims:
        raise ValueError(f"Shapes must be equal rank, but are {matrix.ndims} and {rhs.ndims}: "
                         f"matrix {matrix} vs rhs {rhs}")
    merged = TensorShape(batch).merge_with(TensorShape(rhs._dim_list[:-2]))
    _rows_match(n, rhs._dim_list[-2], matrix, rhs)
    return TensorShape(list(merged._dim_list) + [n if n is not None else rhs._dim_list[-2],
                                            rhs._dim_list[-1]])


def _solve(a, b, singular_message):
    try:
        return np.linalg.solve(a, b)
    except np.linalg.LinAlgError:
        raise errors.InvalidArgumentError(None, None, singular_message) from None


@MatrixSolve.kernel
def _matrix_solve_kernel(matrix, rhs, *, adjoint):
    check_square(matrix, "matrix")
    if rhs.ndim != matrix.ndim or rhs.shape[:-2] != matrix.shape[:-2] \
            or rhs.shape[-2] != matrix.shape[-1]:
        raise errors.InvalidArgumentError(
            None, None, f"Input matrix and right-hand side must have the same batch "
                        f"dimensions and number of rows: {list(matrix.shape)} vs "
                        f"{list(rhs.shape)}")
    a = upcast(matrix)
    x = _solve(conj_transpose(a) if adjoint else a, upcast(rhs), "Input matrix is not invertible.")
    return x.astype(matrix.dtype, copy=False)


@MatrixSolve.gradient
def _matrix_solve_grad(op, grad):
    adjoint = op.get_attr("adjoint")
    x = op.outputs[0]
    grad_b = matrix_solve(op.inputs[0], grad, adjoint=not adjoint)
    if adjoint:
        return -math_ops.matmul(x, grad_b, adjoint_b=True), grad_b
    return -math_ops.matmul(grad_b, x, adjoint_b=True), grad_b


@MatrixTriangularSolve.shape_fn
def _matrix_triangular_solve_shape(matrix, rhs, *, lower, adjoint):
    batch, n = square_batch(matrix)
    rhs = matrix_shape(rhs)
    if batch is None or rhs.ndims is None:
        return TensorShape(None)
    out_batch = broadcast_shape(TensorShape(batch), TensorShape(rhs._dim_list[:-2]))
    _rows_match(n, rhs._dim_list[-2], matrix, rhs)
    return TensorShape(list(out_batch._dim_list) + [n if n is not None else rhs._dim_list[-2],
                                               rhs._dim_list[-1]])


def _substitute(a, b, lower):
    """Row-by-row substitution (vectorised over the batch); singular rows give inf/nan as in TF."""
    n = a.shape[-1]
    x = np.zeros(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + b.shape[-2:],
                 np.result_type(a, b))
    order = range(n) if lower else range(n - 1, -1, -1)
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in order:
            acc = np.matmul(a[..., i:i + 1, :], x)
            x[..., i, :] = (b[..., i, :] - acc[..., 0, :]) / a[..., i, i, None]
    return x


@MatrixTriangularSolve.kernel
def _matrix_triangular_solve_kernel(matrix, rhs, *, lower, adjoint):
    check_square(matrix, "matrix")
    if rhs.ndim < 2 or rhs.shape[-2] != matrix.shape[-1]:
        raise errors.InvalidArgumentError(
            None, None, f"Input matrix and right-hand side must have the same number of rows: "
                        f"{list(matrix.shape)} vs {list(rhs.shape)}")
    a = upcast(matrix)
    a = np.tril(a) if lower else np.triu(a)
    if adjoint:
        a, lower = conj_transpose(a), not lower
    b = upcast(rhs)
    try:
        x = np.linalg.solve(a, np.broadcast_to(b, np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
                                               + b.shape[-2:]))
    except np.linalg.LinAlgError:
        x = _substitute(a, b, lower)
    except ValueError:
        raise errors.InvalidArgumentError(
            None, None, f"Incompatible batch dimensions: matrix {list(matrix.shape)} vs rhs "
                        f"{list(rhs.shape)}") from None
    return x.astype(matrix.dtype, copy=False)


@MatrixTriangularSolve.gradient
def _matrix_triangular_solve_grad(op, grad):
    lower = op.get_attr("lower")
    adjoint = op.get_attr("adjoint")
    matrix, rhs = op.inputs
    x = op.outputs[0]
    grad_b = matrix_triangular_solve(matrix, grad, lower=lower, adjoint=not adjoint)
    if adjoint:
        grad_a = -math_ops.matmul(x, grad_b, adjoint_b=True)
    else:
        grad_a = -math_ops.matmul(grad_b, x, adjoint_b=True)
    band = (-1, 0) if lower else (0, -1)
    grad_a = array_ops.matrix_band_part(grad_a, *band)
    return unbroadcast(grad_a, matrix), unbroadcast(grad_b, rhs)


@MatrixSolveLs.shape_fn
def _matrix_solve_ls_shape(matrix, rhs, l2_regularizer, *, fast):
    matrix = matrix_shape(matrix)
    rhs = matrix_shape(rhs)
    l2_regularizer.with_rank(0)
    if matrix.ndims is None or rhs.ndims is None:
        return TensorShape(None)
    if rhs.ndims != matrix.ndims:
        raise ValueError(f"Shapes must be equal rank, but are {matrix.ndims} and {rhs.ndims}: "
                         f"matrix {matrix} vs rhs {rhs}")
    batch = TensorShape(matrix._dim_list[:-2]).merge_with(TensorShape(rhs._dim_list[:-2]))
    _rows_match(matrix._dim_list[-2], rhs._dim_list[-2], matrix, rhs)
    return TensorShape(list(batch._dim_list) + [matrix._dim_list[-1], rhs._dim_list[-1]])


@MatrixSolveLs.kernel
def _matrix_solve_ls_kernel(matrix, rhs, l2_regularizer, *, fast):
    if matrix.ndim < 2 or rhs.ndim != matrix.ndim or matrix.shape[:-2] != rhs.shape[:-2] \
            or matrix.shape[-2] != rhs.shape[-2]:
        raise errors.InvalidArgumentError(
            None, None, f"Input matrix and right-hand side must have the same batch dimensions "
                        f"and number of rows: {list(matrix.shape)} vs {list(rhs.shape)}")
    a, b = upcast(matrix), upcast(rhs)
    m, n = a.shape[-2:]
    if not fast:
        # Complete orthogonal decomposition == the minimum-norm least-squares solution; as in
        # TensorFlow the regularizer only applies to the fast path.
        return np.matmul(np.linalg.pinv(a), b).astype(matrix.dtype, copy=False)
    lam = np.asarray(l2_regularizer, a.dtype)
    ah = conj_transpose(a)
    message = ("Input matrix is rank deficient (the normal equations are not positive "
               "definite); use a positive l2_regularizer or fast=False.")
    if m >= n:
        gram = np.matmul(ah, a) + lam * np.eye(n, dtype=a.dtype)
        x = _solve(gram, np.matmul(ah, b), message)
    else:
        gram = np.matmul(a, ah) + lam * np.eye(m, dtype=a.dtype)
        x = np.matmul(ah, _solve(gram, b, message))
    return x.astype(matrix.dtype, copy=False)


@MatrixSolveLs.gradient
def _matrix_solve_ls_grad(op, grad):
    if not op.get_attr("fast"):
        raise ValueError(f"MatrixSolveLs gradient of '{op.name}' is only defined for fast=True "
                         f"(as in TensorFlow)")
    a, b, l2 = op.inputs
    x = op.outputs[0]
    m, n = static_matrix_dims(op, a, "MatrixSolveLs")
    lam = math_ops.cast(l2, a.dtype)
    if m >= n:
        gram = math_ops.matmul(a, a, adjoint_a=True) + lam * array_ops.eye(n, dtype=a.dtype)
        z = matrix_solve(gram, grad)
        grad_a = (math_ops.matmul(b, z, adjoint_b=True)
                  - math_ops.matmul(a, math_ops.matmul(x, z, adjoint_b=True))
                  - math_ops.matmul(a, math_ops.matmul(z, x, adjoint_b=True)))
        return grad_a, math_ops.matmul(a, z), None
    gram = math_ops.matmul(a, a, adjoint_b=True) + lam * array_ops.eye(m, dtype=a.dtype)
    y = matrix_solve(gram, b)
    z = matrix_solve(gram, math_ops.matmul(a, grad))
    grad_a = (math_ops.matmul(y, grad, adjoint_b=True) - math_ops.matmul(z, x, adjoint_b=True)
              - math_ops.matmul(y, math_ops.matmul(z, a, adjoint_a=True)))
    return grad_a, z, None


# -- wrappers ---------------------------------------------------------------------------------

def cholesky_solve(chol, rhs, name=None):
    """Solves `A X = rhs` given `chol`, the Cholesky factor of `A` (two triangular solves)."""
    with graph_mod.get_default_graph().name_scope(name or "cholesky_solve"):
        y = MatrixTriangularSolve(chol, rhs, lower=True, adjoint=False)
        return MatrixTriangularSolve(chol, y, lower=True, adjoint=True)


def matrix_solve(matrix, rhs, adjoint=False, name=None):
    """Solves `matrix @ X = rhs` (or `adjoint(matrix) @ X = rhs`) for each batch element."""
    return MatrixSolve(matrix, rhs, adjoint=adjoint, name=name)


def matrix_triangular_solve(matrix, rhs, lower=True, adjoint=False, name=None):
    """Solves a triangular system: only the lower (or upper) triangle of `matrix` is read."""
    return MatrixTriangularSolve(matrix, rhs, lower=lower, adjoint=adjoint, name=name)


def matrix_solve_ls(matrix, rhs, l2_regularizer=0.0, fast=True, name=None):
    """Least-squares solution of `matrix @ X = rhs`, with optional L2 (Tikhonov) regularizer.

    `fast=True` solves the (regularized) normal equations; `fast=False` gives the
    minimum-norm solution (the regularizer is then ignored, as in TensorFlow).
    """
    with graph_mod.get_default_graph().name_scope(name or "MatrixSolveLs") as scope:
        matrix = convert_to_tensor(matrix, name="matrix")
        rhs = convert_to_tensor(rhs, name="rhs", dtype=matrix.dtype.base_dtype)
        return MatrixSolveLs(matrix, rhs, l2_regularizer, fast=fast, name=scope)
