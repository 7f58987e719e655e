"""LU factorization with partial pivoting (`tf.linalg.lu`, the Lu op) and tridiagonal systems
(`tf.linalg.tridiagonal_solve` / `tridiagonal_matmul`: the TridiagonalSolve and
TridiagonalMatMul ops, with gradients).

Both eliminations run one column at a time over the whole batch at once (a Python loop of
length M over vectorised NumPy steps); the tridiagonal solve is LAPACK gtsv's elimination:
at each step the larger of the pivot and the subdiagonal entry below it is the pivot row.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import errors
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops import math as math_ops
from tensorflux.ops.array import shapes as shape_ops
from tensorflux.ops.array.concat_split import stack, unstack
from tensorflux.ops.array.diagonal import matrix_diag_part
from tensorflux.ops.array.padding import pad
from tensorflux.ops.linalg.batch_matrix import LINALG_TYPES, check_square, square_batch, upcast

__all__ = ["lu", "tridiagonal_solve", "tridiagonal_matmul"]

# -- Lu ---------------------------------------------------------------------------------------

Lu = define_op("Lu", inputs=["input: T"], outputs=["lu: T", "p: output_idx_type"],
               attrs=[LINALG_TYPES, "output_idx_type: {int32, int64} = int32"],
               differentiable=False)


@Lu.shape_fn
def _lu_shape(input, *, output_idx_type):  # noqa: A002 - TF's argument name
    batch, n = square_batch(input)
    if batch is None:
        return [TensorShape(None), TensorShape(None)]
    return [TensorShape(batch + [n, n]), TensorShape(batch + [n])]


def lu_factor(a: np.ndarray):
    """(lu, perm) of each matrix of a batch `[B, n, n]`: `a[perm] = L @ U` (partial pivoting,
    the first largest entry of a column is its pivot). Raises if a pivot is zero."""
    lu = a.copy()
    batch, n = lu.shape[0], lu.shape[-1]
    perm = np.tile(np.arange(n), (batch, 1))
    rows = np.arange(batch)
    for k in range(n):
        pivot = k + np.argmax(np.abs(lu[:, k:, k]), axis=1)
        if k < n - 1:
            swap = pivot != k
            if swap.any():
                r = rows[swap]
                lu[r, k], lu[r, pivot[swap]] = lu[r, pivot[swap]].copy(), lu[r, k].copy()
                perm[r, k], perm[r, pivot[swap]] = perm[r, pivot[swap]], perm[r, k].copy()
        head = lu[:, k, k]
        if np.any(head == 0):
            raise errors.InvalidArgumentError(None, None, "Input is not invertible.")
        lu[:, k + 1:, k] /= head[:, None]
        lu[:, k + 1:, k + 1:] -= lu[:, k + 1:, k:k + 1] * lu[:, k:k + 1, k + 1:]
    return lu, perm


@Lu.kernel(factory=True)
def _lu_kernel(output_idx_type):
    np_idx = output_idx_type.as_numpy_dtype

    def lu_kernel(x):
        check_square(x)
        if x.size == 0:
            return x.copy(), np.zeros(x.shape[:-1], np_idx)
        work = upcast(x).reshape((-1,) + x.shape[-2:])
        lu_, perm = lu_factor(work)
        return (lu_.reshape(x.shape).astype(x.dtype, copy=False),
                perm.reshape(x.shape[:-1]).astype(np_idx))

    return lu_kernel


def lu(input, output_idx_type="int32", name=None):  # noqa: A002 - TF's argument name
    """The LU decomposition of each square matrix: `(lu, p)` with `input[p] = L @ U`.

    Args:
        input: `[..., M, M]` invertible matrices.
        output_idx_type: dtype of the permutation (int32 or int64).
        name: op name.

    Returns:
        `lu` (L's strict lower triangle, unit diagonal implied, and U's upper triangle) and the
        row permutation `p` (`[..., M]`).

    Raises:
        InvalidArgumentError (at run time): a matrix is singular.
    """
    return Lu(input, output_idx_type=output_idx_type, name=name)


# -- TridiagonalSolve -------------------------------------------------------------------------

TridiagonalSolve = define_op(
    "TridiagonalSolve", inputs=["diagonals: T", "rhs: T"], outputs=["output: T"],
    attrs=["partial_pivoting: bool = True", "T: {float64, float32, complex64, complex128}"])


@TridiagonalSolve.shape_fn
def _tridiagonal_solve_shape(diagonals, rhs, *, partial_pivoting):
    if diagonals.ndims is not None and diagonals.ndims < 2:
        raise ValueError(f"Shape must be at least rank 2 but is rank {diagonals.ndims} "
                         f"(diagonals {diagonals})")
    if rhs.ndims is not None and rhs.ndims < 2:
        raise ValueError(f"Shape must be at least rank 2 but is rank {rhs.ndims} (rhs {rhs})")
    if diagonals.ndims is not None:
        three = diagonals._dim_list[-2]
        if three is not None and three != 3:
            raise ValueError(f"Dimension must be 3 but is {three}: diagonals {diagonals} must "
                             f"be [..., 3, M]")
        m, rows = diagonals._dim_list[-1], (rhs._dim_list[-2] if rhs.ndims else None)
        if m is not None and rows is not None and m != rows:
            raise ValueError(f"Dimensions must be equal, but are {m} and {rows}: diagonals "
                             f"{diagonals} and rhs {rhs}")
    return rhs


def tridiagonal_eliminate(sup, main, sub, b, pivoting):
    """Solves each tridiagonal system `[B, M]` x 3 for `b` `[B, M, K]` (copies are modified)."""
    n = main.shape[-1]
    d, du, dl = main.copy(), sup.copy(), sub.copy()   # dl[i] is row i's entry left of the diag
    du2 = np.zeros_like(d)
    x = b.copy()
    rows = np.arange(d.shape[0])
    for i in range(n - 1):
        below = dl[:, i + 1]
        swap = (np.abs(below) > np.abs(d[:, i])) if pivoting else np.zeros(d.shape[0], bool)
        keep = ~swap
        if keep.any():
            r = rows[keep]
            fact = below[r] / d[r, i]
            d[r, i + 1] -= fact * du[r, i]
            x[r, i + 1] -= fact[:, None] * x[r, i]
        if swap.any():
            r = rows[swap]
            fact = d[r, i] / below[r]
            d[r, i] = below[r]
            temp = d[r, i + 1].copy()
            d[r, i + 1] = du[r, i] - fact * temp
            if i < n - 2:
                du2[r, i] = du[r, i + 1]
                du[r, i + 1] = -fact * du2[r, i]
            du[r, i] = temp
            upper = x[r, i].copy()
            x[r, i] = x[r, i + 1]
            x[r, i + 1] = upper - fact[:, None] * x[r, i + 1]
    if np.any(d == 0):
        raise errors.InvalidArgumentError(None, None, "The matrix is not invertible: a pivot of "
                                                      "the tridiagonal elimination is zero.")
    x[:, n - 1] /= d[:, n - 1, None]
    if n > 1:
        x[:, n - 2] = (x[:, n - 2] - du[:, n - 2, None] * x[:, n - 1]) / d[:, n - 2, None]
    for i in range(n - 3, -1, -1):
        x[:, i] = (x[:, i] - du[:, i, None] * x[:, i + 1] - du2[:, i, None] * x[:, i + 2]) \
            / d[:, i, None]
    return x


@TridiagonalSolve.kernel
def _tridiagonal_solve_kernel(diagonals, rhs, *, partial_pivoting):
    if diagonals.ndim < 2 or diagonals.shape[-2] != 3:
        raise errors.InvalidArgumentError(None, None, f"TridiagonalSolve: diagonals must be "
                                                      f"[..., 3, M], got {list(diagonals.shape)}")
    if rhs.ndim != diagonals.ndim or rhs.shape[:-2] != diagonals.shape[:-2] or \
            rhs.shape[-2] != diagonals.shape[-1]:
        raise errors.InvalidArgumentError(
            None, None, f"TridiagonalSolve: rhs {list(rhs.shape)} must be [..., M, K] with the "
                        f"batch shape and M of diagonals {list(diagonals.shape)}")
    m = diagonals.shape[-1]
    if m == 0 or rhs.size == 0:
        return np.zeros(rhs.shape, rhs.dtype)
    diags = diagonals.reshape((-1, 3, m))
    b = rhs.reshape((-1,) + rhs.shape[-2:])
    with np.errstate(divide="ignore", invalid="ignore"):   # a zero pivot raises below
        out = tridiagonal_eliminate(diags[:, 0], diags[:, 1], diags[:, 2], b, partial_pivoting)
    return out.reshape(rhs.shape).astype(rhs.dtype, copy=False)


def _shift(x, up):
    """x moved one place along the last axis (up: x[i+1] at i; else x[i-1] at i), zero filled."""
    rank = x.shape.ndims
    paddings = [[0, 0]] * (rank - 1) + ([[0, 1]] if up else [[1, 0]])
    body = x[..., 1:] if up else x[..., :-1]
    return pad(body, paddings)


@TridiagonalSolve.gradient
def _tridiagonal_solve_grad(op, grad):
    diags, rhs = op.inputs
    x = op.outputs[0]
    # The adjoint system: A^H has superdiagonal conj(sub) shifted, subdiagonal conj(sup).
    sup, main, sub = unstack(diags, axis=-2)
    conj = math_ops.conj if diags.dtype.is_complex else (lambda t: t)
    adj = stack([conj(_shift(sub, True)), conj(main), conj(_shift(sup, False))], axis=-2)
    grad_rhs = TridiagonalSolve(adj, grad,
                                partial_pivoting=op.get_attr("partial_pivoting"))
    # dA = -grad_rhs @ x^H restricted to the three diagonals.
    g_main = -math_ops.reduce_sum(grad_rhs * conj(x), axis=-1)
    g_sup = -math_ops.reduce_sum(grad_rhs[..., :-1, :] * conj(x[..., 1:, :]), axis=-1)
    g_sub = -math_ops.reduce_sum(grad_rhs[..., 1:, :] * conj(x[..., :-1, :]), axis=-1)
    rank = g_main.shape.ndims
    g_sup = pad(g_sup, [[0, 0]] * (rank - 1) + [[0, 1]])
    g_sub = pad(g_sub, [[0, 0]] * (rank - 1) + [[1, 0]])
    return stack([g_sup, g_main, g_sub], axis=-2), grad_rhs


# -- TridiagonalMatMul ------------------------------------------------------------------------

TridiagonalMatMul = define_op(
    "TridiagonalMatMul", inputs=["superdiag: T", "maindiag: T", "subdiag: T", "rhs: T"],
    outputs=["output: T"], attrs=["T: {float64, float32, complex64, complex128}"])


@TridiagonalMatMul.shape_fn
def _tridiagonal_matmul_shape(superdiag, maindiag, subdiag, rhs):
    for what, s in (("superdiag", superdiag), ("maindiag", maindiag), ("subdiag", subdiag)):
        if s.ndims is not None and s.ndims < 2:
            raise ValueError(f"Shape must be at least rank 2 but is rank {s.ndims} ({what} "
                             f"{s}: expected [..., 1, M])")
    return rhs


@TridiagonalMatMul.kernel
def _tridiagonal_matmul_kernel(superdiag, maindiag, subdiag, rhs):
    for what, d in (("superdiag", superdiag), ("maindiag", maindiag), ("subdiag", subdiag)):
        if d.ndim != rhs.ndim or d.shape[-2] != 1 or d.shape[-1] != rhs.shape[-2]:
            raise errors.InvalidArgumentError(
                None, None, f"TridiagonalMatMul: {what} must be [..., 1, M] with M = "
                            f"{rhs.shape[-2]} (rhs {list(rhs.shape)}), got {list(d.shape)}")
    sup, main, sub = (np.swapaxes(d, -1, -2) for d in (superdiag, maindiag, subdiag))
    out = main * rhs
    out[..., :-1, :] += sup[..., :-1, :] * rhs[..., 1:, :]
    out[..., 1:, :] += sub[..., 1:, :] * rhs[..., :-1, :]
    return out.astype(rhs.dtype, copy=False)


@TridiagonalMatMul.gradient
def _tridiagonal_matmul_grad(op, grad):
    sup, main, sub, rhs = op.inputs
    conj = math_ops.conj if rhs.dtype.is_complex else (lambda t: t)
    rank = rhs.shape.ndims - 1   # of the per-diagonal sums
    pad_end = [[0, 0]] * (rank - 1) + [[0, 1]]
    pad_start = [[0, 0]] * (rank - 1) + [[1, 0]]
    g_main = math_ops.reduce_sum(grad * conj(rhs), axis=-1)
    g_sup = pad(math_ops.reduce_sum(grad[..., :-1, :] * conj(rhs[..., 1:, :]), axis=-1),
                pad_end)
    g_sub = pad(math_ops.reduce_sum(grad[..., 1:, :] * conj(rhs[..., :-1, :]), axis=-1),
                pad_start)
    # rhs gradient: A^H @ grad (superdiag of A^H is conj(sub) shifted up, and so on).
    adj_sup = conj(_shift(sub, True))
    adj_sub = conj(_shift(sup, False))
    grad_rhs = TridiagonalMatMul(adj_sup, conj(main), adj_sub, grad)
    return (shape_ops.expand_dims(g_sup, -2), shape_ops.expand_dims(g_main, -2),
            shape_ops.expand_dims(g_sub, -2), grad_rhs)


# -- wrappers ---------------------------------------------------------------------------------

_FORMATS = ("compact", "sequence", "matrix")


def _compact(diagonals, diagonals_format, what):
    """[..., 3, M] compact diagonals from TF's three formats (ValueError naming the bad one)."""
    if diagonals_format not in _FORMATS:
        raise ValueError(f"Unrecognized diagonals_format: {diagonals_format!r}")
    if diagonals_format == "sequence":
        if not isinstance(diagonals, (list, tuple)) or len(diagonals) != 3:
            raise ValueError(f"Expected diagonals to be a sequence of length 3 for {what}, "
                             f"got {diagonals!r}")
        sup, main, sub = (convert_to_tensor(d) for d in diagonals)
        return stack([sup, main, sub], axis=-2)
    diagonals = convert_to_tensor(diagonals, name="diagonals")
    if diagonals_format == "compact":
        return diagonals
    if diagonals.shape.ndims is not None and diagonals.shape.ndims < 2:
        raise ValueError(f"Expected diagonals to have rank at least 2 for the matrix format, "
                         f"got {diagonals.shape}")
    square_batch(diagonals.shape)
    main = matrix_diag_part(diagonals)
    rank = main.shape.ndims
    # superdiag[i] = A[i, i+1] (last entry 0); subdiag[i] = A[i, i-1] (first entry 0).
    sup = pad(matrix_diag_part(diagonals[..., :-1, 1:]), [[0, 0]] * (rank - 1) + [[0, 1]])
    sub = pad(matrix_diag_part(diagonals[..., 1:, :-1]), [[0, 0]] * (rank - 1) + [[1, 0]])
    return stack([sup, main, sub], axis=-2)


def tridiagonal_solve(diagonals, rhs, diagonals_format="compact", transpose_rhs=False,
                      conjugate_rhs=False, name=None, partial_pivoting=True):
    """Solves tridiagonal systems `A x = rhs` (`tf.linalg.tridiagonal_solve`).

    Args:
        diagonals: "compact": `[..., 3, M]` (superdiagonal, main diagonal, subdiagonal; the
            superdiagonal's last and the subdiagonal's first entries are ignored); "sequence":
            a list of the three `[..., M]` tensors; "matrix": the `[..., M, M]` matrix (entries
            off the three diagonals ignored).
        rhs: `[..., M, K]`, or `[..., M]` (a vector per system: the result is one too).
        transpose_rhs: use `rhs`'s transpose (`[..., K, M]` given).
        conjugate_rhs: use `rhs`'s complex conjugate.
        partial_pivoting: pivot on the larger entry (as LAPACK gtsv); False: no pivoting.

    Raises:
        ValueError: a bad format or shapes. InvalidArgumentError (run time): a singular system.
    """
    with graph_mod.get_default_graph().name_scope(name or "linalg_tridiagonal_solve"):
        diags = _compact(diagonals, diagonals_format, "tridiagonal_solve")
        rhs = convert_to_tensor(rhs, name="rhs", dtype=diags.dtype.base_dtype)
        vector = (rhs.shape.ndims is not None and diags.shape.ndims is not None
                  and rhs.shape.ndims == diags.shape.ndims - 1)
        if vector:
            if transpose_rhs:
                raise ValueError("transpose_rhs=True is not supported for a vector rhs")
            rhs = shape_ops.expand_dims(rhs, -1)
        elif transpose_rhs:
            rhs = shape_ops.matrix_transpose(rhs)
        if conjugate_rhs and rhs.dtype.is_complex:
            rhs = math_ops.conj(rhs)
        out = TridiagonalSolve(diags, rhs, partial_pivoting=partial_pivoting)
        return shape_ops.squeeze(out, [-1]) if vector else out


def tridiagonal_matmul(diagonals, rhs, diagonals_format="compact", name=None):
    """`A @ rhs` for tridiagonal `A` given in one of the three formats of `tridiagonal_solve`."""
    with graph_mod.get_default_graph().name_scope(name or "tridiagonal_matmul"):
        diags = _compact(diagonals, diagonals_format, "tridiagonal_matmul")
        rhs = convert_to_tensor(rhs, name="rhs", dtype=diags.dtype.base_dtype)
        sup, main, sub = (shape_ops.expand_dims(d, -2) for d in unstack(diags, axis=-2))
        return TridiagonalMatMul(sup, main, sub, rhs)

