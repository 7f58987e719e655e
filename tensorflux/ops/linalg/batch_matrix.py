"""Shape and kernel helpers shared by the batched-matrix ops (decompositions.py, solvers.py).

Every linalg op works on the innermost two dimensions and is batched over the leading ones;
these helpers check and split such shapes, upcast float16 for `numpy.linalg`, and give the
gradients the static matrix dimensions they need.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import errors
from tensorflux.framework.tensor_shape import TensorShape

__all__ = ["LINALG_TYPES", "matrix_shape", "square_batch", "upcast", "check_square",
           "conj_transpose", "static_matrix_dims"]

LINALG_TYPES = "T: {float64, float32, float16, complex64, complex128}"


def matrix_shape(shape: TensorShape) -> TensorShape:
    """`shape` checked to be a (batch of) matrices (ValueError worded as TF's shape functions)."""
    if shape.ndims is not None and shape.ndims < 2:
        raise ValueError(f"Shape must be at least rank 2 but is rank {shape.ndims} "
                         f"(shape {shape})")
    return shape.with_rank_at_least(2)


def square_batch(shape: TensorShape):
    """(batch dims list or None, n) of a batch of square matrices."""
    shape = matrix_shape(shape)
    if shape.ndims is None:
        return None, None
    rows, cols = shape._dim_list[-2:]
    if rows is not None and cols is not None and rows != cols:
        raise ValueError(f"Dimensions must be equal, but are {rows} and {cols}: the input "
                         f"must be a (batch of) square matrices, got shape {shape}")
    return list(shape._dim_list[:-2]), rows if rows is not None else cols


def upcast(x: np.ndarray) -> np.ndarray:
    """float16 as float32 (numpy.linalg has no float16); other dtypes unchanged."""
    return x.astype(np.float32) if x.dtype == np.float16 else x


def check_square(x: np.ndarray, what: str = "input") -> None:
    """Raises InvalidArgumentError unless `x` is a (batch of) square matrices."""
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise errors.InvalidArgumentError(
            None, None, f"The {what} must be a (batch of) square matrices, got shape "
                        f"{list(x.shape)}")


def conj_transpose(m: np.ndarray) -> np.ndarray:
    """The adjoint (conjugate transpose) of each innermost matrix of `m`."""
    m = np.swapaxes(m, -1, -2)
    return np.conj(m) if np.iscomplexobj(m) else m


def static_matrix_dims(op, a, what):
    """(rows, columns) of the matrices in `a`; the `what` gradient needs them static."""
    dims = a.shape._dim_list
    if dims is None or dims[-2] is None or dims[-1] is None:
        raise ValueError(f"{what} gradient of '{op.name}' needs static matrix dimensions, got "
                         f"{a.shape}")
    return dims[-2:]
