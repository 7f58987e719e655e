"""Matrix functions: the exponential (`tf.linalg.expm`, built from other ops, so it has a
gradient) and the MatrixLogarithm op (`tf.linalg.logm`, complex matrices); the square root is
in square_root.py.

expm: scaling and squaring with diagonal Pade approximants (Higham, "The scaling and squaring
method for the matrix exponential revisited", 2005). Per matrix of a batch the 1-norm picks the
lowest approximant degree that is accurate for the dtype; above the last threshold the matrix is
divided by 2^s, approximated, and squared s times.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops import math as math_ops
from tensorflux.ops.array import shapes as shape_ops
from tensorflux.ops.array.concat_split import concat
from tensorflux.ops.array.diagonal import eye
from tensorflux.ops.control_flow.while_loop import while_loop
from tensorflux.ops.linalg.batch_matrix import check_square, square_batch
from tensorflux.ops.linalg.solvers import matrix_solve
from tensorflux.ops.math.casting import cast
from tensorflux.ops.math.matrix_product import matmul
from tensorflux.ops.math.select import where

__all__ = ["matrix_exponential", "matrix_logarithm"]

# Pade numerator coefficients b_0..b_m of the [m/m] approximant of exp.
_PADE = {
    3: (120.0, 60.0, 12.0, 1.0),
    5: (30240.0, 15120.0, 3360.0, 420.0, 30.0, 1.0),
    7: (17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0, 1.0),
    9: (17643225600.0, 8821612800.0, 2075673600.0, 302702400.0, 30270240.0, 2162160.0,
        110880.0, 3960.0, 90.0, 1.0),
    13: (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
         129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
         40840800.0, 960960.0, 16380.0, 182.0, 1.0),
}
# 1-norm bounds up to which each degree is accurate; the last degree takes the scaling.
_SINGLE = ((3, 4.258730016922831e-1), (5, 1.880152677804762), (7, 3.925724783138660))
_DOUBLE = ((3, 1.495585217958292e-2), (5, 2.539398330063230e-1), (7, 9.504178996162932e-1),
           (9, 2.097847961257068), (13, 5.371920351148152))


def _pade(matrix, degree, ident):
    """U (odd part) and V (even part) of the degree-`degree` approximant: exp ~ (V-U)^-1 (V+U)."""
    b = _PADE[degree]
    square = matmul(matrix, matrix)
    powers = [ident, square]
    while len(powers) <= degree // 2:
        powers.append(matmul(powers[-1], square))
    odd = sum(b[2 * j + 1] * powers[j] for j in range(len(powers)) if 2 * j + 1 <= degree)
    even = sum(b[2 * j] * powers[j] for j in range(len(powers)) if 2 * j <= degree)
    return matmul(matrix, odd), even


def matrix_exponential(input, name=None):  # noqa: A002 - TF's argument name
    """exp of each innermost square matrix (`tf.linalg.expm`).

    Args:
        input: a float16/32/64 or complex64/128 tensor of shape [..., n, n].
        name: name scope, default "matrix_exponential".

    Returns:
        A tensor of the same shape and dtype.

    Raises:
        ValueError: a static rank below 2, or non-square innermost dimensions.
    """
    graph = graph_mod.get_default_graph()
    with graph.name_scope(name or "matrix_exponential"):
        matrix = convert_to_tensor(input, name="input")
        static = matrix.get_shape()
        if static.ndims is not None:
            if static.ndims < 2:
                raise ValueError(f"matrix_exponential needs a tensor of rank >= 2, got shape "
                                 f"{static}")
            rows, cols = static.as_list()[-2:]
            if rows is not None and cols is not None and rows != cols:
                raise ValueError(f"matrix_exponential needs square matrices, got shape {static}")
            if rows == 0:
                return matrix
        dtype = matrix.dtype.base_dtype
        if dtype not in (dtypes.float16, dtypes.float32, dtypes.float64, dtypes.complex64,
                         dtypes.complex128):
            raise TypeError(f"matrix_exponential needs a floating or complex tensor, got {dtype}")
        if dtype == dtypes.float16:  # the Pade coefficients overflow half precision
            wide = matrix_exponential(cast(matrix, dtypes.float32), name="float32")
            return cast(wide, dtypes.float16)
        full_shape = shape_ops.shape(matrix)
        flat = shape_ops.reshape(matrix, concat([[-1], full_shape[-2:]], 0))
        l1_norm = math_ops.reduce_max(math_ops.reduce_sum(math_ops.abs(flat), axis=-2), axis=-1)
        real = l1_norm.dtype.base_dtype
        ident = eye(full_shape[-1], batch_shape=[1], dtype=dtype)
        degrees = _DOUBLE if dtype in (dtypes.float64, dtypes.complex128) else _SINGLE
        top_degree, top_norm = degrees[-1]
        squarings = math_ops.maximum(
            math_ops.floor(math_ops.log(l1_norm / top_norm) / np.log(2.0)), 0.0)
        scale = math_ops.pow(convert_to_tensor(2.0, dtype=real), squarings)
        scaled = flat / cast(scale, dtype)[:, None, None]
        u, v = _pade(scaled, top_degree, ident)
        for degree, bound in reversed(degrees[:-1]):  # lower degrees where the norm allows
            u_d, v_d = _pade(flat, degree, ident)
            small = math_ops.less(l1_norm, bound)
            u, v = where(small, u_d, u), where(small, v_d, v)
        result = matrix_solve(v - u, v + u)

        def keep_squaring(i, _):
            return math_ops.less(i, math_ops.reduce_max(squarings))

        def square_once(i, r):
            return i + 1.0, where(math_ops.less(i, squarings), matmul(r, r), r)

        _, result = while_loop(keep_squaring, square_once,
                               [convert_to_tensor(0.0, dtype=real), result])
        result = shape_ops.reshape(result, full_shape)
        result.set_shape(static)
        return result


# -- MatrixLogarithm ----------------------------------------------------------------------

MatrixLogarithm = define_op("MatrixLogarithm", inputs=["input: T"], outputs=["output: T"],
                            attrs=["T: {complex64, complex128}"], differentiable=False)


@MatrixLogarithm.shape_fn
def _matrix_logarithm_shape(input):  # noqa: A002
    batch, n = square_batch(input)
    if batch is None:
        return TensorShape(None)
    return TensorShape(batch + [n, n])


_GAUSS_NODES, _GAUSS_WEIGHTS = np.polynomial.legendre.leggauss(12)
_GAUSS_NODES = (_GAUSS_NODES + 1.0) / 2.0
_GAUSS_WEIGHTS = _GAUSS_WEIGHTS / 2.0


def _sqrtm(a, ident):
    """Principal square root by the Denman-Beavers iteration (eigenvalues off R-)."""
    y, z = a, ident
    for _ in range(100):
        y_next = (y + np.linalg.inv(z)) / 2.0
        z = (z + np.linalg.inv(y)) / 2.0
        done = np.linalg.norm(y_next - y, 1) <= 1e-15 * np.linalg.norm(y_next, 1)
        y = y_next
        if done:
            break
    return y


def _logm_one(a):
    """Principal logarithm of one complex128 matrix."""
    n = a.shape[0]
    ident = np.eye(n, dtype=a.dtype)
    values, vectors = np.linalg.eig(a)
    if np.linalg.cond(vectors) < 1e6:  # diagonalizable and well conditioned
        return (vectors * np.log(values)) @ np.linalg.inv(vectors)
    # Inverse scaling and squaring: take square roots until close to I, then log(I + Y) by
    # Gauss-Legendre quadrature of Y (I + tY)^-1 over t in [0, 1].
    doublings = 0
    while np.linalg.norm(a - ident, 1) > 0.25 and doublings < 64:
        a = _sqrtm(a, ident)
        doublings += 1
    y = a - ident
    log = sum(w * np.linalg.solve((ident + t * y).T, y.T).T
              for t, w in zip(_GAUSS_NODES, _GAUSS_WEIGHTS))
    return log * 2.0 ** doublings


@MatrixLogarithm.kernel
def _matrix_logarithm_kernel(x):
    check_square(x)
    if x.size == 0:
        return x.copy()
    work = x.astype(np.complex128).reshape((-1,) + x.shape[-2:])
    out = np.stack([_logm_one(m) for m in work])
    return out.reshape(x.shape).astype(x.dtype)


def matrix_logarithm(input, name=None):  # noqa: A002 - TF's argument name
    """Principal logarithm of each innermost square complex matrix (`tf.linalg.logm`)."""
    return MatrixLogarithm(input, name=name)

