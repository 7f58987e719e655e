"""Linear-algebra functions built on other ops (`tf.norm`, `tf.trace`, `tf.linalg.logdet`,
`tf.linalg.pinv`, `tf.linalg.matrix_rank`, ...) and the Cross op (cross product over the
innermost dimension of size 3)."""

from __future__ import annotations

import numbers

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops import math as math_ops
from tensorflux.ops.array import shapes as shape_ops
from tensorflux.ops.array.concat_split import concat
from tensorflux.ops.array.constants import constant, ones_like
from tensorflux.ops.array.diagonal import matrix_diag_part
from tensorflux.ops.array.shapes import expand_dims, matrix_transpose, shape, squeeze, transpose
from tensorflux.ops.array.sorting import setdiff1d
from tensorflux.ops.linalg import decompositions as linalg_ops
from tensorflux.ops.math import sequence as sequence_ops
from tensorflux.ops.math.casting import cast
from tensorflux.ops.math.matrix_product import matmul
from tensorflux.ops.math.reduction import reduce_max, reduce_sum
from tensorflux.ops.math.select import where
from tensorflux.ops.math.unary import abs as abs_op
from tensorflux.ops.math.unary import conj, log, real, sqrt, square

__all__ = ["norm", "trace", "cross"]

_AXIS_ERROR = "'axis' must be None, an integer, or a tuple of 2 unique integers, got {}"
_MATRIX_NORMS = ["euclidean", "fro", 1, 2, np.inf]


# -- Cross ------------------------------------------------------------------------------------

Cross = define_op("Cross", inputs=["a: T", "b: T"], outputs=["product: T"],
                  attrs=["T: {realnumbertype}"])


@Cross.shape_fn
def _cross_shape(a, b):
    if a.ndims is not None and b.ndims is not None and a.ndims != b.ndims:
        raise ValueError(f"Shapes must be equal rank, but are {a.ndims} and {b.ndims}: "
                         f"{a} vs {b}")
    shape = a.merge_with(b).with_rank_at_least(1)
    if shape.ndims is not None and shape._dim_list[-1] is not None and shape._dim_list[-1] != 3:
        raise ValueError(f"Dimension must be 3 but is {shape._dim_list[-1]} (shape {shape})")
    return shape


@Cross.kernel
def _cross_kernel(a, b):
    if a.shape != b.shape or a.ndim < 1 or a.shape[-1] != 3:
        raise errors.InvalidArgumentError(
            None, None, f"Both inputs must have the same shape with an innermost dimension of "
                        f"3, got {list(a.shape)} and {list(b.shape)}")
    return np.cross(a, b).astype(a.dtype, copy=False)


@Cross.gradient
def _cross_grad(op, grad):
    a, b = op.inputs
    return Cross(b, grad), Cross(grad, a)


def cross(a, b, name=None):
    """The pairwise cross product of the 3-vectors in the innermost dimension of `a` and `b`
    (same shape)."""
    return Cross(a, b, name=name)


# -- trace, norm ------------------------------------------------------------------------------

def trace(x, name=None):
    """The sum of the main diagonal of each innermost matrix: `[..., M, N] -> [...]`."""

    with graph_mod.get_default_graph().name_scope(name or "Trace") as scope:
        return reduce_sum(matrix_diag_part(convert_to_tensor(x, name="x")), [-1], name=scope)


def _is_int(value) -> bool:
    return isinstance(value, (numbers.Integral, np.integer)) and not isinstance(value, bool)


def _check_norm_args(ord, axis):
    """(is matrix norm, axis tuple or None) after TF's validation of `ord` and `axis`."""
    if isinstance(axis, (list, tuple)) and len(axis) == 2:
        if not (_is_int(axis[0]) and _is_int(axis[1])) or axis[0] == axis[1]:
            raise ValueError(_AXIS_ERROR.format(tuple(axis)))
        if isinstance(ord, str) and ord not in ("euclidean", "fro") or \
                not isinstance(ord, str) and ord not in _MATRIX_NORMS:
            raise ValueError(f"'ord' must be a supported matrix norm in "
                             f"{['euclidean', 'fro', 1, 2, 'inf']}, got {ord}")
        return True, (int(axis[0]), int(axis[1]))
    if not (axis is None or _is_int(axis)):
        raise ValueError(_AXIS_ERROR.format(axis))
    valid = ord == "euclidean" if isinstance(ord, str) else (
        isinstance(ord, numbers.Real) and not isinstance(ord, bool) and ord > 0)
    if not valid:
        raise ValueError(f"'ord' must be a supported vector norm, got {ord}")
    return False, None if axis is None else (int(axis),)


def _matrix_two_norm(x, axis):
    """The largest singular value over the two `axis` dimensions (kept with size 1); the
    permutation moving them last is computed at run time when x's rank is unknown."""
    rank = x.shape.ndims
    if rank is not None:
        rows, cols = (a % rank for a in axis)
        perm = [i for i in range(rank) if i not in (rows, cols)] + [rows, cols]
        inverse = [int(i) for i in np.argsort(perm)]
    else:
        dynamic_rank = shape_ops.rank(x)
        pair = convert_to_tensor(np.array(axis, np.int32))
        pair = where(pair < 0, pair + dynamic_rank, pair)
        rest, _ = setdiff1d(sequence_ops.range(dynamic_rank), pair)
        perm = concat([rest, pair], 0)
        inverse = shape_ops.invert_permutation(perm)
    s = linalg_ops.svd(transpose(x, perm), compute_uv=False)
    if s.dtype.is_complex:  # singular values are real; a complex SVD returns them as complex
        s = real(s)
    largest = expand_dims(reduce_max(s, axis=-1, keepdims=True), -1)
    return transpose(largest, inverse)


def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None, keep_dims=None):
    """Vector or matrix norm of `tensor`.

    Args:
        tensor: a float or complex tensor.
        ord: 'euclidean', 'fro', 1, 2, np.inf or (vector norms) any positive real p.
        axis: None (the whole tensor as a vector), an int (vector norms along it) or a pair
            of ints (matrix norms over those two axes).
        keepdims: keep the reduced axes with size 1.
        name: name scope (default "norm").
        keep_dims: deprecated alias of `keepdims`.

    Returns:
        The norms, of `tensor`'s dtype.

    Raises:
        ValueError: an unsupported `ord` or `axis`, or both keepdims and keep_dims given.

    Example:
        >>> tf.norm([[1.0, -2.0], [3.0, 4.0]], ord=1, axis=[-2, -1])   # 6.0
    """

    if keepdims is not None and keep_dims is not None:
        raise ValueError("Cannot specify both 'keepdims' and 'keep_dims'")
    keepdims = bool(keep_dims if keepdims is None else keepdims)
    is_matrix, axis = _check_norm_args(ord, axis)
    with graph_mod.get_default_graph().name_scope(name or "norm"):
        x = convert_to_tensor(tensor, name="tensor")
        if not (x.dtype.is_floating or x.dtype.is_complex):
            raise TypeError(f"norm needs a floating or complex tensor, got {x.dtype.name}")
        axis_list = None if axis is None else list(axis)
        if is_matrix and ord == 2:
            result = _matrix_two_norm(x, axis)
        elif ord in ("euclidean", "fro", 2):
            squares = x * conj(x) if x.dtype.is_complex else square(x)
            result = sqrt(reduce_sum(squares, axis_list, keepdims=True))
        elif ord == 1:
            result = reduce_sum(abs_op(x), None if axis is None else axis[0], keepdims=True)
            if is_matrix:
                result = reduce_max(result, axis[1], keepdims=True)
        elif ord == np.inf:
            result = abs_op(x)
            if is_matrix:
                result = reduce_sum(result, axis[1], keepdims=True)
            result = reduce_max(result, None if axis is None else axis[0], keepdims=True)
        else:
            powered = math_ops.pow(abs_op(x), constant(ord, x.dtype.real_dtype))
            result = math_ops.pow(reduce_sum(powered, axis_list, keepdims=True),
                                  constant(1.0 / ord, x.dtype.real_dtype))
        if not keepdims:
            result = squeeze(result, axis_list)
        return result


# -- tf.linalg-only helpers -------------------------------------------------------------------

def adjoint(matrix, name=None):
    """The conjugate transpose of the innermost two dimensions."""

    return matrix_transpose(matrix, name=name or "adjoint", conjugate=True)


def logdet(matrix, name=None):
    """log(det(matrix)) of Hermitian positive-definite matrices, via the Cholesky factor."""

    with graph_mod.get_default_graph().name_scope(name or "logdet"):
        chol = linalg_ops.cholesky(matrix)
        diag = matrix_diag_part(chol)
        if chol.dtype.is_complex:
            diag = real(diag)
        return 2.0 * reduce_sum(log(diag), axis=[-1])


def matvec(a, b, transpose_a=False, adjoint_a=False, a_is_sparse=False, b_is_sparse=False,
           name=None):
    """Matrix-vector product `a @ b` with `b`'s innermost dimension as the vector."""

    with graph_mod.get_default_graph().name_scope(name or "MatVec"):
        product = matmul(a, expand_dims(b, -1), transpose_a=transpose_a, adjoint_a=adjoint_a,
                         a_is_sparse=a_is_sparse, b_is_sparse=b_is_sparse)
        return squeeze(product, [-1])


def _svd_scale(a, eps_factor):
    """max(rows, cols) * eps(dtype) * eps_factor as a real scalar tensor (static when known)."""

    real = a.dtype.real_dtype
    eps = float(np.finfo(real.as_numpy_dtype).eps) * eps_factor
    dims = a.shape._dim_list[-2:] if a.shape.ndims is not None else (None, None)
    if None not in dims:
        return convert_to_tensor(max(dims) * eps, dtype=real)
    return cast(reduce_max(shape(a)[-2:]), real) * eps


def _real_singular_values(s):
    return real(s) if s.dtype.is_complex else s


def pinv(a, rcond=None, validate_args=False, name=None):
    """The Moore-Penrose pseudo-inverse of each innermost matrix, via the SVD.

    Singular values at or below `rcond * max(s)` count as zero; the default `rcond` is
    `10 * max(rows, cols) * eps`.
    """

    del validate_args
    with graph_mod.get_default_graph().name_scope(name or "pinv"):
        a = convert_to_tensor(a, name="a")
        real = a.dtype.real_dtype
        rcond = _svd_scale(a, 10.0) if rcond is None else convert_to_tensor(rcond, dtype=real)
        s, u, v = linalg_ops.svd(a, full_matrices=False, compute_uv=True)
        s_real = _real_singular_values(s)
        cutoff = expand_dims(rcond * reduce_max(s_real, axis=-1), -1)
        kept = where(s_real > cutoff, s_real, np.inf * ones_like(s_real))
        if a.dtype.is_complex:
            kept = cast(kept, a.dtype)
        return matmul(v / expand_dims(kept, -2), u, adjoint_b=True)


def matrix_rank(a, tol=None, validate_args=False, name=None):
    """The number of singular values above `tol` (default `max(s) * max(rows, cols) * eps`)
    of each innermost matrix, as int32."""

    del validate_args
    with graph_mod.get_default_graph().name_scope(name or "matrix_rank"):
        a = convert_to_tensor(a, name="a")
        s = _real_singular_values(linalg_ops.svd(a, compute_uv=False))
        if tol is None:
            tol = _svd_scale(a, 1.0) * reduce_max(s, axis=-1, keepdims=True)
        else:
            tol = expand_dims(convert_to_tensor(tol, dtype=a.dtype.real_dtype, name="tol"), -1)
        return reduce_sum(cast(s > tol, dtypes.int32), axis=-1)
