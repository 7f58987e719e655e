"""MatrixSquareRoot (`tf.linalg.sqrtm`): the principal square root of each innermost matrix.

Kernel: a diagonalizable, well-conditioned matrix takes V sqrt(L) V^-1 from its eigenvectors;
any other (defective, or nearly so) falls back to the Denman-Beavers iteration. Real input whose
principal root is real returns the real part (the imaginary rounding of complex-conjugate
eigenpairs dropped); a real matrix with eigenvalues on the negative real axis has no real
principal root, and its entries come out NaN as in TF.

Gradient: with S = sqrtm(A), dA = S dS + dS S, so the gradient X with respect to A solves the
adjoint Sylvester equation S^H X + X S^H = G; it is solved as one linear system in vec(X)
(row-major vec: (M X) -> M kron I, (X N) -> I kron N^T).
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops import math as math_ops
from tensorflux.ops.array import shapes as shape_ops
from tensorflux.ops.array.concat_split import concat
from tensorflux.ops.array.diagonal import eye
from tensorflux.ops.linalg.batch_matrix import check_square, square_batch
from tensorflux.ops.linalg.solvers import matrix_solve

__all__ = ["matrix_square_root"]

MatrixSquareRoot = define_op("MatrixSquareRoot", inputs=["input: T"], outputs=["output: T"],
                             attrs=["T: {float64, float32, half, complex64, complex128}"])


@MatrixSquareRoot.shape_fn
def _matrix_square_root_shape(input):  # noqa: A002 - TF's input name
    batch, n = square_batch(input)
    if batch is None:
        return TensorShape(None)
    return TensorShape(batch + [n, n])


def _denman_beavers(a: np.ndarray) -> np.ndarray:
    """Principal square root of one matrix by the Denman-Beavers iteration."""
    y, z = a, np.eye(a.shape[0], dtype=a.dtype)
    for _ in range(100):
        y_next = (y + np.linalg.inv(z)) / 2.0
        z = (z + np.linalg.inv(y)) / 2.0
        done = np.linalg.norm(y_next - y, 1) <= 1e-15 * np.linalg.norm(y_next, 1)
        y = y_next
        if done:
            break
    return y


def _sqrtm_one(a: np.ndarray) -> np.ndarray:
    """Principal square root of one complex128 matrix."""
    values, vectors = np.linalg.eig(a)
    if np.linalg.cond(vectors) < 1e6:
        return (vectors * np.sqrt(values)) @ np.linalg.inv(vectors)
    with np.errstate(all="ignore"):
        try:
            return _denman_beavers(a)
        except np.linalg.LinAlgError:  # singular and defective: no iteration converges
            return np.full_like(a, np.nan)


@MatrixSquareRoot.kernel
def _matrix_square_root_kernel(input):  # noqa: A002
    check_square(input)
    if input.size == 0:
        return input.copy()
    work = input.astype(np.complex128).reshape((-1,) + input.shape[-2:])
    roots = []
    for matrix in work:
        root = _sqrtm_one(matrix)
        if not np.iscomplexobj(input):
            scale = max(np.abs(root).max(), 1.0)
            real = bool(np.all(np.abs(root.imag) <= 1e-6 * scale))
            root = root.real if real else np.full(root.shape, np.nan)
        roots.append(root)
    return np.stack(roots).reshape(input.shape).astype(input.dtype)


def _kron(a, b, n):
    """kron(a, b) of each pair of innermost n x n matrices: shape [..., n*n, n*n]."""
    product = a[..., :, None, :, None] * b[..., None, :, None, :]
    return shape_ops.reshape(product, concat([shape_ops.shape(a)[:-2], [n * n, n * n]], 0))


@MatrixSquareRoot.gradient
def _matrix_square_root_grad(op, grad):
    root = op.outputs[0]
    shape = shape_ops.shape(root)
    n = shape[-1]
    root_h = shape_ops.matrix_transpose(root, conjugate=True)
    ident = eye(n, batch_shape=shape[:-2], dtype=root.dtype)
    system = _kron(root_h, ident, n) + _kron(ident, math_ops.conj(root), n)
    rhs = shape_ops.reshape(grad, concat([shape[:-2], [n * n, 1]], 0))
    return shape_ops.reshape(matrix_solve(system, rhs), shape)


def matrix_square_root(input, name=None):  # noqa: A002 - TF's argument name
    """Principal square root of each innermost square matrix (`tf.linalg.sqrtm`).

    Args:
        input: a float or complex tensor of shape [..., n, n].
        name: optional op name.

    Returns:
        A tensor of the same shape and dtype whose matrices square to the input's.

    Raises:
        ValueError: a static rank below 2, or non-square innermost dimensions.
    """
    return MatrixSquareRoot(input, name=name)
