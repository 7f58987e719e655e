"""Orthogonal initializers for convolution kernels (TF 1.x `tf.contrib.framework` names).

A kernel of shape `[k_1, ..., k_d, in_filters, out_filters]` (`in_filters <= out_filters`):

- `convolutional_delta_orthogonal`: zero except the centre tap, which holds `gain` times a
  matrix with orthonormal rows (Xiao et al., 2018, algorithm 2).
- `convolutional_orthogonal_1d/2d/3d`: the taps are the coefficients of a paraunitary matrix
  polynomial `H * prod_i (P_i + (I - P_i) z)` per spatial axis, `H` orthogonal and each `P_i` a
  random symmetric projection of half rank (algorithm 1). A circularly padded convolution with
  such a kernel scales every input's 2-norm by exactly `gain`; the taps sum to `gain * H`.

Every random matrix comes from the graph's normal random op (seeded with `seed`, then
`seed + 1`, ... when given), so a seeded graph is repeatable and an unseeded one is not.
"""

from __future__ import annotations

from tensorflux.framework import dtypes
from tensorflux.framework.op_def import get_op_def
from tensorflux.ops import array as array_ops
from tensorflux.ops.array import diagonal as diag_ops
from tensorflux.ops.math import unary as unary_ops
from tensorflux.ops.math.matrix_product import matmul
from tensorflux.ops.random import stateful as random_ops
from tensorflux.ops.state.initializers import Initializer, _dims, _float_dtype

__all__ = ["convolutional_delta_orthogonal", "convolutional_orthogonal_1d",
           "convolutional_orthogonal_2d", "convolutional_orthogonal_3d"]


class _ConvolutionOrthogonalBase(Initializer):
    """Shared arguments, shape checks and random orthogonal matrices."""

    _ranks: tuple = ()

    def __init__(self, gain=1.0, seed=None, dtype=dtypes.float32):
        self.gain = gain
        self.seed = seed
        self.dtype = _float_dtype(dtype)
        self._draws = 0

    def get_config(self) -> dict:
        return {"gain": self.gain, "seed": self.seed, "dtype": self.dtype.name}

    def _check_shape(self, shape) -> list:
        dims = _dims(shape)
        if len(dims) not in self._ranks:
            ranks = " or ".join(str(r) for r in self._ranks)
            raise ValueError(f"The tensor to initialize must be of rank {ranks}, got shape "
                             f"{dims}.")
        if dims[-2] > dims[-1]:
            raise ValueError(f"In_filters ({dims[-2]}) cannot be greater than out_filters "
                             f"({dims[-1]}).")
        return dims

    def _next_seed(self):
        seed = None if self.seed is None else self.seed + self._draws
        self._draws += 1
        return seed

    def _orthogonal(self, n, dtype):
        """An n x n orthogonal matrix: Q of the QR of a normal matrix, signs fixed by R."""
        a = random_ops.random_normal([n, n], dtype=dtype, seed=self._next_seed())
        q, r = get_op_def("Qr")(a, full_matrices=False)
        return q * unary_ops.sign(diag_ops.diag_part(r))

    def _projection(self, n, dtype):
        """A symmetric projection of rank n // 2 onto random orthonormal columns."""
        half = self._orthogonal(n, dtype)[:, :n // 2]
        return matmul(half, half, transpose_b=True)

    def _polynomial(self, n, taps, dtype) -> list:
        """Coefficients [C_0, ..., C_{taps-1}] of prod_i (P_i + (I - P_i) z), n x n each."""
        eye = diag_ops.eye(n, dtype=dtype)
        coeffs = [eye]
        for _ in range(taps - 1):
            p = self._projection(n, dtype)
            q = eye - p
            grown = [matmul(coeffs[0], p)]
            for j in range(1, len(coeffs)):
                grown.append(matmul(coeffs[j], p) + matmul(coeffs[j - 1], q))
            grown.append(matmul(coeffs[-1], q))
            coeffs = grown
        return coeffs


class ConvolutionDeltaOrthogonal(_ConvolutionOrthogonalBase):
    """Delta-orthogonal kernel: only the centre tap is non-zero (shape rank 3, 4 or 5)."""

    _ranks = (3, 4, 5)

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = self.dtype if dtype is None else _float_dtype(dtype)
        dims = self._check_shape(shape)
        self._draws = 0
        cin, cout = dims[-2], dims[-1]
        centre = self._orthogonal(cout, dtype)[:cin, :] * self.gain
        spatial = dims[:-2]
        block = array_ops.reshape(centre, [1] * len(spatial) + [cin, cout])
        paddings = [[(k - 1) // 2, k - 1 - (k - 1) // 2] for k in spatial] + [[0, 0], [0, 0]]
        return array_ops.pad(block, paddings)


class _ConvolutionOrthogonalND(_ConvolutionOrthogonalBase):
    """Paraunitary kernel over `len(_ranks[0]) - 2` spatial axes."""

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = self.dtype if dtype is None else _float_dtype(dtype)
        dims = self._check_shape(shape)
        self._draws = 0
        cin, cout = dims[-2], dims[-1]
        spatial = dims[:-2]
        h = self._orthogonal(cout, dtype)
        taps = [[(), h]]  # (index tuple, matrix) pairs of the growing product
        for size in spatial:
            axis_coeffs = self._polynomial(cout, size, dtype)
            taps = [[index + (j,), matmul(m, c)] for index, m in taps
                    for j, c in enumerate(axis_coeffs)]
        matrices = [m[:cin, :] * self.gain for _, m in taps]
        stacked = array_ops.stack(matrices)
        return array_ops.reshape(stacked, spatial + [cin, cout])


class ConvolutionOrthogonal1D(_ConvolutionOrthogonalND):
    """1-D orthogonal convolution kernel `[width, in_filters, out_filters]`."""

    _ranks = (3,)


class ConvolutionOrthogonal2D(_ConvolutionOrthogonalND):
    """2-D orthogonal convolution kernel `[height, width, in_filters, out_filters]`."""

    _ranks = (4,)


class ConvolutionOrthogonal3D(_ConvolutionOrthogonalND):
    """3-D orthogonal convolution kernel `[depth, height, width, in_filters, out_filters]`."""

    _ranks = (5,)


convolutional_delta_orthogonal = ConvolutionDeltaOrthogonal
convolutional_orthogonal_1d = ConvolutionOrthogonal1D
convolutional_orthogonal_2d = ConvolutionOrthogonal2D
convolutional_orthogonal_3d = ConvolutionOrthogonal3D
