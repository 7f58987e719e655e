"""Linear algebra over batches of matrices: inverse, determinants, Cholesky, QR, SVD, symmetric
eigendecomposition and the linear solvers.

Every op works on the innermost two dimensions and is batched over the leading ones; the kernels
are single batched `numpy.linalg` calls (float16 is computed in float32 and cast back). The
shape functions reject non-square inputs where a square matrix is required, naming the op.
Gradients live in `linalg_grad.py`; `tf.norm`, `tf.trace` and `tf.cross` in `linalg_impl.py`.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import errors
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.common_shapes import broadcast_shape
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape

__all__ = ["matrix_inverse", "matrix_determinant", "log_matrix_determinant", "cholesky",
           "cholesky_solve", "qr", "svd", "self_adjoint_eig", "self_adjoint_eigvals",
           "matrix_solve", "matrix_triangular_solve", "matrix_solve_ls"]

_LINALG_TYPES = "T: {float64, float32, float16, complex64, complex128}"


# -- shared shape and kernel helpers ----------------------------------------------------------

def _matrix(shape: TensorShape) -> TensorShape:
    return shape.with_rank_at_least(2)


def _square(shape: TensorShape):
    """(batch dims list or None, n) of a batch of square matrices."""
    shape = _matrix(shape)
    if shape.ndims is None:
        return None, None
    rows, cols = shape.dims[-2:]
    if rows is not None and cols is not None and rows != cols:
        raise ValueError(f"Dimensions must be equal, but are {rows} and {cols}: the input "
                         f"must be a (batch of) square matrices, got shape {shape}")
    return list(shape.dims[:-2]), rows if rows is not None else cols


def _with_batch(batch, dims) -> TensorShape:
    return TensorShape(None) if batch is None else TensorShape(list(batch) + list(dims))


def _upcast(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float32) if x.dtype == np.float16 else x


def _check_square(x: np.ndarray, what: str = "input") -> None:
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise errors.InvalidArgumentError(
            None, None, f"The {what} must be a (batch of) square matrices, got shape "
                        f"{list(x.shape)}")


def _adjoint(m: np.ndarray) -> np.ndarray:
    m = np.swapaxes(m, -1, -2)
    return np.conj(m) if np.iscomplexobj(m) else m


# -- MatrixInverse, MatrixDeterminant, LogMatrixDeterminant -----------------------------------

MatrixInverse = define_op("MatrixInverse", inputs=["input: T"], outputs=["output: T"],
                          attrs=["adjoint: bool = False", _LINALG_TYPES])
MatrixDeterminant = define_op("MatrixDeterminant", inputs=["input: T"], outputs=["output: T"],
                              attrs=[_LINALG_TYPES])
LogMatrixDeterminant = define_op("LogMatrixDeterminant", inputs=["input: T"],
                                 outputs=["sign: T", "log_abs_determinant: T"],
                                 attrs=[_LINALG_TYPES])


def _square_matrices_shape(input):
    """Shape function of the ops mapping each square matrix to one of the same size."""
    batch, n = _square(input)
    return _with_batch(batch, [n, n])


MatrixInverse.shape_fn(_square_matrices_shape)


@MatrixInverse.kernel
def _matrix_inverse_kernel(x, *, adjoint):
    _check_square(x)
    a = _upcast(x)
    try:
        inv = np.linalg.inv(_adjoint(a) if adjoint else a)
    except np.linalg.LinAlgError:
        raise errors.InvalidArgumentError(None, None, "Input is not invertible.") from None
    return inv.astype(x.dtype, copy=False)


@MatrixDeterminant.shape_fn
def _matrix_determinant_shape(input):
    batch, _ = _square(input)
    return _with_batch(batch, [])


@MatrixDeterminant.kernel
def _matrix_determinant_kernel(x):
    _check_square(x)
    return np.asarray(np.linalg.det(_upcast(x))).astype(x.dtype, copy=False)


@LogMatrixDeterminant.shape_fn
def _log_matrix_determinant_shape(input):
    batch, _ = _square(input)
    return [_with_batch(batch, []), _with_batch(batch, [])]


@LogMatrixDeterminant.kernel
def _log_matrix_determinant_kernel(x):
    _check_square(x)
    sign, logdet = np.linalg.slogdet(_upcast(x))
    return (np.asarray(sign).astype(x.dtype, copy=False),
            np.asarray(logdet).astype(x.dtype, copy=False))


# -- Cholesky ---------------------------------------------------------------------------------

Cholesky = define_op("Cholesky", inputs=["input: T"], outputs=["output: T"],
                     attrs=[_LINALG_TYPES])


Cholesky.shape_fn(_square_matrices_shape)


@Cholesky.kernel
def _cholesky_kernel(x):
    _check_square(x)
    try:
        # NOTE: LAPACK's potrf with UPLO='L' reads only the lower triangle, as TensorFlow does.
        return np.linalg.cholesky(_upcast(x)).astype(x.dtype, copy=False)
    except np.linalg.LinAlgError:
        raise errors.InvalidArgumentError(
            None, None, "Cholesky decomposition was not successful. The input might not be "
                        "valid (it must be symmetric/Hermitian positive definite).") from None


# -- Qr ---------------------------------------------------------------------------------------

Qr = define_op("Qr", inputs=["input: T"], outputs=["q: T", "r: T"],
               attrs=["full_matrices: bool = False", _LINALG_TYPES])


def _min_dim(a, b):
    return None if a is None or b is None else min(a, b)


@Qr.shape_fn
def _qr_shape(input, *, full_matrices):
    input = _matrix(input)
    if input.ndims is None:
        return [TensorShape(None), TensorShape(None)]
    batch = list(input.dims[:-2])
    m, n = input.dims[-2:]
    if full_matrices:
        return [TensorShape(batch + [m, m]), TensorShape(batch + [m, n])]
    k = _min_dim(m, n)
    return [TensorShape(batch + [m, k]), TensorShape(batch + [k, n])]


@Qr.kernel
def _qr_kernel(x, *, full_matrices):
    if x.ndim < 2:
        raise errors.InvalidArgumentError(None, None, f"Qr needs rank >= 2, got {x.shape}")
    q, r = np.linalg.qr(_upcast(x), mode="complete" if full_matrices else "reduced")
    return q.astype(x.dtype, copy=False), r.astype(x.dtype, copy=False)


# -- Svd --------------------------------------------------------------------------------------

Svd = define_op("Svd", inputs=["input: T"], outputs=["s: T", "u: T", "v: T"],
                attrs=["compute_uv: bool = True", "full_matrices: bool = False", _LINALG_TYPES])


@Svd.shape_fn
def _svd_shape(input, *, compute_uv, full_matrices):
    input = _matrix(input)
    if input.ndims is None:
        s = u = v = TensorShape(None)
    else:
        batch = list(input.dims[:-2])
        m, n = input.dims[-2:]
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
            s = np.linalg.svd(_upcast(x), compute_uv=False)
            empty = np.zeros([0], x.dtype)
            return s.astype(x.dtype), empty, empty.copy()
        u, s, vh = np.linalg.svd(_upcast(x), full_matrices=full_matrices)
    except np.linalg.LinAlgError:
        raise errors.InvalidArgumentError(None, None, "SVD did not converge.") from None
    return (s.astype(x.dtype), u.astype(x.dtype, copy=False),
            _adjoint(vh).astype(x.dtype, copy=False))


# -- SelfAdjointEigV2 -------------------------------------------------------------------------

SelfAdjointEigV2 = define_op("SelfAdjointEigV2", inputs=["input: T"], outputs=["e: T", "v: T"],
                             attrs=["compute_v: bool = True", _LINALG_TYPES])


@SelfAdjointEigV2.shape_fn
def _self_adjoint_eig_shape(input, *, compute_v):
    batch, n = _square(input)
    v = _with_batch(batch, [n, n]) if compute_v else TensorShape([0])
    return [_with_batch(batch, [n]), v]


@SelfAdjointEigV2.kernel
def _self_adjoint_eig_kernel(x, *, compute_v):
    _check_square(x)
    try:
        # NOTE: like TensorFlow, only the lower triangle of the input is read.
        if not compute_v:
            e = np.linalg.eigvalsh(_upcast(x), UPLO="L")
            return e.astype(x.dtype), np.zeros([0], x.dtype)
        e, v = np.linalg.eigh(_upcast(x), UPLO="L")
    except np.linalg.LinAlgError:
        raise errors.InvalidArgumentError(
            None, None, "Self-adjoint eigen decomposition was not successful.") from None
    return e.astype(x.dtype), v.astype(x.dtype, copy=False)


# -- MatrixSolve, MatrixTriangularSolve, MatrixSolveLs ----------------------------------------

MatrixSolve = define_op("MatrixSolve", inputs=["matrix: T", "rhs: T"], outputs=["output: T"],
                        attrs=["adjoint: bool = False", _LINALG_TYPES])
MatrixTriangularSolve = define_op(
    "MatrixTriangularSolve", inputs=["matrix: T", "rhs: T"], outputs=["output: T"],
    attrs=["lower: bool = True", "adjoint: bool = False",
           "T: {float64, float32, float16, complex64, complex128}"])
MatrixSolveLs = define_op(
    "MatrixSolveLs", inputs=["matrix: T", "rhs: T", "l2_regularizer: float64"],
    outputs=["output: T"], attrs=[_LINALG_TYPES, "fast: bool = True"])


def _rows_match(n, rows, matrix, rhs):
    if n is not None and rows is not None and n != rows:
        raise ValueError(f"Dimensions must be equal, but are {n} and {rows}: the matrix "
                         f"{matrix} and the right-hand side {rhs} need the same number of rows")


@MatrixSolve.shape_fn
def _matrix_solve_shape(matrix, rhs, *, adjoint):
    batch, n = _square(matrix)
    rhs = _matrix(rhs)
    if batch is None or rhs.ndims is None:
        return TensorShape(None)
    if rhs.ndims != matrix.ndims:
        raise ValueError(f"Shapes must be equal rank, but are {matrix.ndims} and {rhs.ndims}: "
                         f"matrix {matrix} vs rhs {rhs}")
    merged = TensorShape(batch).merge_with(TensorShape(rhs.dims[:-2]))
    _rows_match(n, rhs.dims[-2], matrix, rhs)
    return TensorShape(list(merged.dims) + [n if n is not None else rhs.dims[-2],
                                            rhs.dims[-1]])


def _solve(a, b, singular_message):
    try:
        return np.linalg.solve(a, b)
    except np.linalg.LinAlgError:
        raise errors.InvalidArgumentError(None, None, singular_message) from None


@MatrixSolve.kernel
def _matrix_solve_kernel(matrix, rhs, *, adjoint):
    _check_square(matrix, "matrix")
    if rhs.ndim != matrix.ndim or rhs.shape[:-2] != matrix.shape[:-2] \
            or rhs.shape[-2] != matrix.shape[-1]:
        raise errors.InvalidArgumentError(
            None, None, f"Input matrix and right-hand side must have the same batch "
                        f"dimensions and number of rows: {list(matrix.shape)} vs "
                        f"{list(rhs.shape)}")
    a = _upcast(matrix)
    x = _solve(_adjoint(a) if adjoint else a, _upcast(rhs), "Input matrix is not invertible.")
    return x.astype(matrix.dtype, copy=False)


@MatrixTriangularSolve.shape_fn
def _matrix_triangular_solve_shape(matrix, rhs, *, lower, adjoint):
    batch, n = _square(matrix)
    rhs = _matrix(rhs)
    if batch is None or rhs.ndims is None:
        return TensorShape(None)
    out_batch = broadcast_shape(TensorShape(batch), TensorShape(rhs.dims[:-2]))
    _rows_match(n, rhs.dims[-2], matrix, rhs)
    return TensorShape(list(out_batch.dims) + [n if n is not None else rhs.dims[-2],
                                               rhs.dims[-1]])


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
    _check_square(matrix, "matrix")
    if rhs.ndim < 2 or rhs.shape[-2] != matrix.shape[-1]:
        raise errors.InvalidArgumentError(
            None, None, f"Input matrix and right-hand side must have the same number of rows: "
                        f"{list(matrix.shape)} vs {list(rhs.shape)}")
    a = _upcast(matrix)
    a = np.tril(a) if lower else np.triu(a)
    if adjoint:
        a, lower = _adjoint(a), not lower
    b = _upcast(rhs)
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


@MatrixSolveLs.shape_fn
def _matrix_solve_ls_shape(matrix, rhs, l2_regularizer, *, fast):
    matrix = _matrix(matrix)
    rhs = _matrix(rhs)
    l2_regularizer.with_rank(0)
    if matrix.ndims is None or rhs.ndims is None:
        return TensorShape(None)
    if rhs.ndims != matrix.ndims:
        raise ValueError(f"Shapes must be equal rank, but are {matrix.ndims} and {rhs.ndims}: "
                         f"matrix {matrix} vs rhs {rhs}")
    batch = TensorShape(matrix.dims[:-2]).merge_with(TensorShape(rhs.dims[:-2]))
    _rows_match(matrix.dims[-2], rhs.dims[-2], matrix, rhs)
    return TensorShape(list(batch.dims) + [matrix.dims[-1], rhs.dims[-1]])


@MatrixSolveLs.kernel
def _matrix_solve_ls_kernel(matrix, rhs, l2_regularizer, *, fast):
    if matrix.ndim < 2 or rhs.ndim != matrix.ndim or matrix.shape[:-2] != rhs.shape[:-2] \
            or matrix.shape[-2] != rhs.shape[-2]:
        raise errors.InvalidArgumentError(
            None, None, f"Input matrix and right-hand side must have the same batch dimensions "
                        f"and number of rows: {list(matrix.shape)} vs {list(rhs.shape)}")
    a, b = _upcast(matrix), _upcast(rhs)
    m, n = a.shape[-2:]
    if not fast:
        # Complete orthogonal decomposition == the minimum-norm least-squares solution; as in
        # TensorFlow the regularizer only applies to the fast path.
        return np.matmul(np.linalg.pinv(a), b).astype(matrix.dtype, copy=False)
    lam = np.asarray(l2_regularizer, a.dtype)
    ah = _adjoint(a)
    message = ("Input matrix is rank deficient (the normal equations are not positive "
               "definite); use a positive l2_regularizer or fast=False.")
    if m >= n:
        gram = np.matmul(ah, a) + lam * np.eye(n, dtype=a.dtype)
        x = _solve(gram, np.matmul(ah, b), message)
    else:
        gram = np.matmul(a, ah) + lam * np.eye(m, dtype=a.dtype)
        x = np.matmul(ah, _solve(gram, b, message))
    return x.astype(matrix.dtype, copy=False)


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


def cholesky_solve(chol, rhs, name=None):
    """Solves `A X = rhs` given `chol`, the Cholesky factor of `A` (two triangular solves)."""
    with graph_mod.get_default_graph().name_scope(name or "cholesky_solve"):
        y = MatrixTriangularSolve(chol, rhs, lower=True, adjoint=False)
        return MatrixTriangularSolve(chol, y, lower=True, adjoint=True)


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


from tensorflux.ops.linalg import gradients as _linalg_grad  # noqa: E402,F401 - registers gradients
