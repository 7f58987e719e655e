"""Structured LinearOperators: a low-rank update of another operator, a Householder reflection,
circulant (1-D, 2-D and 3-D block) and Toeplitz matrices (`tf.linalg.LinearOperatorLowRankUpdate`,
...Householder, ...Circulant, ...Circulant2D, ...Circulant3D, ...Toeplitz)."""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops import math as math_ops
from tensorflux.ops.array import shapes as shape_ops
from tensorflux.ops.array.concat_split import concat
from tensorflux.ops.array.constants import constant, ones, zeros
from tensorflux.ops.array.diagonal import eye
from tensorflux.ops.array.gather_scatter import gather
from tensorflux.ops.array.padding import reverse
from tensorflux.ops.debug import checks
from tensorflux.ops.linalg import decompositions, solvers
from tensorflux.ops.linalg.linear_operator import LinearOperator, adjoint_tensor
from tensorflux.ops.linalg.linear_operator_basic import LinearOperatorDiag
from tensorflux.ops.signal import fft as fft_ops

__all__ = ["LinearOperatorLowRankUpdate", "LinearOperatorHouseholder",
           "LinearOperatorCirculant", "LinearOperatorCirculant2D", "LinearOperatorCirculant3D",
           "LinearOperatorToeplitz"]

_FLOATING = (dtypes.float16, dtypes.float32, dtypes.float64, dtypes.complex64, dtypes.complex128)


def _floating(value, name, dtype=None):
    t = convert_to_tensor(value, name=name, dtype=dtype)
    if t.dtype.base_dtype not in _FLOATING:
        raise TypeError(f"Argument {name} must have dtype in {[d.name for d in _FLOATING]}. "
                        f"Found: {t.dtype.base_dtype.name}")
    return t


class LinearOperatorLowRankUpdate(LinearOperator):
    """`A = L + U D V^H`: a base operator `L` plus a rank-K update.

    `u` is `[..., M, K]`, `v` (default `u`) `[..., N, K]`, `diag_update` (default ones) `[..., K]`.
    `solve` and `determinant` use the Woodbury identity and the determinant lemma, so only
    K x K systems are solved beside `L`'s own.

    Raises:
        TypeError: `u`, `v`, `diag_update` of another dtype than the base operator.
        ValueError: contradicting hints.
    """

    def __init__(self, base_operator, u, diag_update=None, v=None, is_diag_update_positive=None,
                 is_non_singular=None, is_self_adjoint=None, is_positive_definite=None,
                 is_square=None, name="LinearOperatorLowRankUpdate"):
        dtype = base_operator.dtype
        self._base = base_operator
        self._u = _floating(u, "u", dtype)
        self._use_v = v is not None
        self._v = self._u if v is None else _floating(v, "v", dtype)
        self._diag = None if diag_update is None else _floating(diag_update, "diag_update",
                                                                dtype)
        self._is_diag_update_positive = is_diag_update_positive
        if not self._use_v and base_operator.is_self_adjoint and \
                (self._diag is None or not dtype.is_complex):
            if is_self_adjoint is False:
                raise ValueError("A = L + UDU^H, with L self-adjoint and D real diagonal. "
                                 "Since UDU^H is self-adjoint, this must be a self-adjoint "
                                 "operator.")
            is_self_adjoint = True
        if not self._use_v and base_operator.is_positive_definite and \
                (self._diag is None or is_diag_update_positive):
            if is_positive_definite is False:
                raise ValueError("A = L + UDU^H with L positive definite and D positive is "
                                 "positive definite.")
            is_positive_definite = True
        parents = list(base_operator.graph_parents) + [self._u, self._v] + \
            ([] if self._diag is None else [self._diag])
        super().__init__(dtype, graph_parents=parents, is_non_singular=is_non_singular,
                         is_self_adjoint=is_self_adjoint,
                         is_positive_definite=is_positive_definite, is_square=is_square,
                         name=name)

    @property
    def base_operator(self):
        return self._base

    @property
    def u(self):
        return self._u

    @property
    def v(self):
        return self._v

    @property
    def diag_update(self):
        return self._diag

    def _shape(self):
        base = self._base.shape
        batch = base[:-2]
        for t in (self._u, self._v):
            if t.shape.ndims is not None and batch.ndims is not None:
                batch = shape_ops.broadcast_static_shape(batch, t.shape[:-2])
        if base.ndims is None:
            return TensorShape(None)
        return batch.concatenate(base[-2:])

    def _shape_tensor(self):
        base = self._base.shape_tensor()
        batch = base[:-2]
        for t in (self._u, self._v):
            batch = shape_ops.broadcast_dynamic_shape(batch, shape_ops.shape(t)[:-2])
        return concat([batch, base[-2:]], 0)

    def _scaled(self, x, conj=False):
        """`D x` for a `[..., K, R]` x (identity when there is no diag_update)."""
        if self._diag is None:
            return x
        d = math_ops.conj(self._diag) if conj and self.dtype.is_complex else self._diag
        return shape_ops.expand_dims(d, -1) * x

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        x = adjoint_tensor(x) if adjoint_arg else x
        left, right = (self._v, self._u) if adjoint else (self._u, self._v)
        base = self._base.matmul(x, adjoint=adjoint)
        update = math_ops.matmul(left, self._scaled(math_ops.matmul(right, x, adjoint_a=True),
                                                    conj=adjoint))
        return base + update

    def _capacitance(self, adjoint=False):
        """`C = D^{-1} + V^H L^{-1} U` (or with the roles of U and V swapped for the adjoint)."""
        left, right = (self._v, self._u) if adjoint else (self._u, self._v)
        linv_u = self._base.solve(left, adjoint=adjoint)
        c = math_ops.matmul(right, linv_u, adjoint_a=True)
        k = c.shape[-1].value if c.shape.ndims is not None else None
        if self._diag is None:
            ident = eye(k if k is not None else shape_ops.shape(c)[-1], dtype=self.dtype)
            return c + ident
        d = math_ops.conj(self._diag) if adjoint and self.dtype.is_complex else self._diag
        return c + LinearOperatorDiag(1.0 / d, is_square=True).to_dense()

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        rhs = adjoint_tensor(rhs) if adjoint_arg else rhs
        left, right = (self._v, self._u) if adjoint else (self._u, self._v)
        linv_rhs = self._base.solve(rhs, adjoint=adjoint)
        linv_left = self._base.solve(left, adjoint=adjoint)
        cap = self._capacitance(adjoint)
        inner = solvers.matrix_solve(cap, math_ops.matmul(right, linv_rhs, adjoint_a=True))
        return linv_rhs - math_ops.matmul(linv_left, inner)

    def _diag_det(self):
        if self._diag is None:
            return None
        return math_ops.reduce_prod(self._diag, axis=-1)

    def _determinant(self):
        det = self._base.determinant() * decompositions.matrix_determinant(self._capacitance())
        d = self._diag_det()
        return det if d is None else det * d

    def _log_abs_determinant(self):
        _, log_cap = decompositions.log_matrix_determinant(self._capacitance())
        total = self._base.log_abs_determinant() + log_cap
        if self._diag is not None:
            log_d = math_ops.reduce_sum(math_ops.log(math_ops.abs(self._diag)), axis=-1)
            total = total + (math_ops.cast(log_d, self.dtype) if self.dtype.is_complex
                             else log_d)
        return total

    def _to_dense(self):
        ud = self._u if self._diag is None else \
            self._u * shape_ops.expand_dims(self._diag, -2)
        return self._base.to_dense() + math_ops.matmul(ud, self._v, adjoint_b=True)


class LinearOperatorHouseholder(LinearOperator):
    """The reflection `H = I - 2 v v^H / (v^H v)` about the hyperplane orthogonal to `v`.

    Raises:
        ValueError: a hint that a reflection cannot have (singular, not self-adjoint, not
            square, positive definite).
    """

    def __init__(self, reflection_axis, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name="LinearOperatorHouseholder"):
        self._axis = _floating(reflection_axis, "reflection_axis")
        if is_self_adjoint is False:
            raise ValueError("A Householder operator is always self adjoint.")
        if is_non_singular is False:
            raise ValueError("A Householder operator is always non-singular.")
        if is_square is False:
            raise ValueError("A Householder operator is always square.")
        if is_positive_definite is True:
            raise ValueError("A Householder operator is never positive definite.")
        super().__init__(self._axis.dtype.base_dtype, graph_parents=[self._axis],
                         is_non_singular=True, is_self_adjoint=True,
                         is_positive_definite=False, is_square=True, name=name)

    @property
    def reflection_axis(self):
        return self._axis

    def _shape(self):
        a = self._axis.shape
        return TensorShape(None) if a.ndims is None else a.concatenate(a[-1:])

    def _shape_tensor(self):
        a = shape_ops.shape(self._axis)
        return concat([a, a[-1:]], 0)

    def _unit(self):
        v = self._axis
        norm2 = math_ops.reduce_sum(math_ops.real(math_ops.conj(v) * v) if
                                    self.dtype.is_complex else v * v, axis=-1, keepdims=True)
        return v, math_ops.cast(norm2, self.dtype)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        x = adjoint_tensor(x) if adjoint_arg else x
        v, norm2 = self._unit()
        col = shape_ops.expand_dims(v, -1)
        proj = math_ops.matmul(col, x, adjoint_a=True)
        return x - 2.0 * col * (proj / shape_ops.expand_dims(norm2, -1))

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._matmul(rhs, adjoint, adjoint_arg)

    def _determinant(self):
        return -ones(self.batch_shape_tensor(), dtype=self.dtype)

    def _log_abs_determinant(self):
        return zeros(self.batch_shape_tensor(), dtype=self.dtype)

    def _to_dense(self):
        v, norm2 = self._unit()
        col = shape_ops.expand_dims(v, -1)
        outer = math_ops.matmul(col, col, adjoint_b=True)
        n = self.domain_dimension.value
        ident = eye(n if n is not None else self.domain_dimension_tensor(), dtype=self.dtype)
        return ident - 2.0 * outer / shape_ops.expand_dims(norm2, -1)

    def _trace(self):
        n = math_ops.cast(self.domain_dimension_tensor(), self.dtype)
        return ones(self.batch_shape_tensor(), dtype=self.dtype) * (n - 2.0)

    def _eigvals(self):
        n = self.domain_dimension_tensor()
        ones_n = ones(concat([self.batch_shape_tensor(), shape_ops.reshape(n - 1, [1])], 0),
                      dtype=self.dtype)
        return concat([-ones(concat([self.batch_shape_tensor(), [1]], 0), dtype=self.dtype),
                       ones_n], axis=-1)

    def _cond(self):
        return ones(self.batch_shape_tensor(), dtype=self.dtype)

    def _inverse(self):
        return self

    def _assert_non_singular(self):
        return checks.assert_equal(1, 1)

    def _assert_self_adjoint(self):
        return checks.assert_equal(1, 1)


_FFTS = {1: (fft_ops.fft, fft_ops.ifft), 2: (fft_ops.fft2d, fft_ops.ifft2d),
         3: (fft_ops.fft3d, fft_ops.ifft3d)}
_COMPLEX_OF = {dtypes.float16: dtypes.complex64, dtypes.float32: dtypes.complex64,
               dtypes.float64: dtypes.complex128, dtypes.complex64: dtypes.complex64,
               dtypes.complex128: dtypes.complex128}


class _BaseCirculant(LinearOperator):
    """`A x = ifft(spectrum * fft(x))` over the last `block_depth` axes of the spectrum."""

    _BLOCK_DEPTH = 1

    def __init__(self, spectrum, input_output_dtype=dtypes.complex64, is_non_singular=None,
                 is_self_adjoint=None, is_positive_definite=None, is_square=True, name=None):
        if is_square is False:
            raise ValueError("A circulant operator is always square.")
        spectrum = _floating(spectrum, "spectrum")
        d = self._BLOCK_DEPTH
        if spectrum.shape.ndims is not None and spectrum.shape.ndims < d:
            raise ValueError(f"Argument spectrum must have at least {d} dimensions. Found: "
                             f"{spectrum.shape}")
        self._complex = _COMPLEX_OF[spectrum.dtype.base_dtype]
        self._spectrum = math_ops.cast(spectrum, self._complex)
        super().__init__(dtypes.as_dtype(input_output_dtype), graph_parents=[self._spectrum],
                         is_non_singular=is_non_singular, is_self_adjoint=is_self_adjoint,
                         is_positive_definite=is_positive_definite, is_square=True,
                         name=name or type(self).__name__)

    @property
    def spectrum(self):
        return self._spectrum

    @property
    def block_depth(self):
        return self._BLOCK_DEPTH

    def block_shape_tensor(self):
        """The sizes of the circulant blocks (the spectrum's last `block_depth` dimensions)."""
        return shape_ops.shape(self._spectrum)[-self._BLOCK_DEPTH:]

    @property
    def block_shape(self):
        return self._spectrum.shape[-self._BLOCK_DEPTH:]

    def _shape(self):
        s = self._spectrum.shape
        if s.ndims is None:
            return TensorShape(None)
        d = self._BLOCK_DEPTH
        n = 1
        for dim in s[-d:]:
            n = None if n is None or dim.value is None else n * dim.value
        return s[:-d].concatenate([n, n])

    def _shape_tensor(self):
        s = shape_ops.shape(self._spectrum)
        d = self._BLOCK_DEPTH
        n = shape_ops.reshape(math_ops.reduce_prod(s[-d:]), [1])
        return concat([s[:-d], n, n], 0)

    def _from_complex(self, y):
        return y if self.dtype.is_complex else math_ops.cast(math_ops.real(y), self.dtype)

    def _apply_spectrum(self, x, spectrum):
        """`ifft(spectrum * fft(x))` applied to each column of `x` (`[..., N, R]`)."""
        d = self._BLOCK_DEPTH
        fft, ifft = _FFTS[d]
        xt = shape_ops.matrix_transpose(math_ops.cast(x, self._complex))
        xs = shape_ops.shape(xt)
        blocks = shape_ops.reshape(xt, concat([xs[:-1], self.block_shape_tensor()], 0))
        # One spectrum for every column: a unit axis in front of the block axes.
        y = ifft(shape_ops.expand_dims(spectrum, -d - 1) * fft(blocks))
        ys = shape_ops.shape(y)
        flat = shape_ops.reshape(y, concat([ys[:-d], [-1]], 0))
        return self._from_complex(shape_ops.matrix_transpose(flat))

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        x = adjoint_tensor(x) if adjoint_arg else x
        spec = math_ops.conj(self._spectrum) if adjoint else self._spectrum
        return self._apply_spectrum(x, spec)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        rhs = adjoint_tensor(rhs) if adjoint_arg else rhs
        spec = math_ops.conj(self._spectrum) if adjoint else self._spectrum
        return self._apply_spectrum(rhs, 1.0 / spec)

    def _flat_spectrum(self):
        s = shape_ops.shape(self._spectrum)
        return shape_ops.reshape(self._spectrum, concat([s[:-self._BLOCK_DEPTH], [-1]], 0))

    def _determinant(self):
        return self._from_complex(math_ops.reduce_prod(self._flat_spectrum(), axis=-1))

    def _log_abs_determinant(self):
        total = math_ops.reduce_sum(math_ops.log(math_ops.abs(self._flat_spectrum())), axis=-1)
        return math_ops.cast(total, self.dtype)

    def _trace(self):
        total = math_ops.reduce_sum(self._flat_spectrum(), axis=-1)
        return self._from_complex(total)

    def _eigvals(self):
        return self._from_complex(self._flat_spectrum())

    def convolution_kernel(self, name="convolution_kernel"):
        """The kernel `h` with `A x = h (*) x` (circular convolution): `ifft(spectrum)`."""
        with self._name_scope(name):
            return self._from_complex(_FFTS[self._BLOCK_DEPTH][1](self._spectrum))

    def _assert_non_singular(self):
        return checks.assert_positive(math_ops.abs(self._spectrum),
                                      message="Singular operator:  Spectrum contained zero "
                                              "values.")


class LinearOperatorCirculant(_BaseCirculant):
    """A [batch] circulant matrix given by its spectrum `[B..., N]` (`A = F^H diag(s) F`)."""

    _BLOCK_DEPTH = 1

    def __init__(self, spectrum, input_output_dtype=dtypes.complex64, is_non_singular=None,
                 is_self_adjoint=None, is_positive_definite=None, is_square=True,
                 name="LinearOperatorCirculant"):
        super().__init__(spectrum, input_output_dtype, is_non_singular, is_self_adjoint,
                         is_positive_definite, is_square, name)


class LinearOperatorCirculant2D(_BaseCirculant):
    """A block circulant matrix with circulant blocks; spectrum `[B..., N0, N1]`."""

    _BLOCK_DEPTH = 2

    def __init__(self, spectrum, input_output_dtype=dtypes.complex64, is_non_singular=None,
                 is_self_adjoint=None, is_positive_definite=None, is_square=True,
                 name="LinearOperatorCirculant2D"):
        super().__init__(spectrum, input_output_dtype, is_non_singular, is_self_adjoint,
                         is_positive_definite, is_square, name)


class LinearOperatorCirculant3D(_BaseCirculant):
    """A nested block circulant matrix; spectrum `[B..., N0, N1, N2]`."""

    _BLOCK_DEPTH = 3

    def __init__(self, spectrum, input_output_dtype=dtypes.complex64, is_non_singular=None,
                 is_self_adjoint=None, is_positive_definite=None, is_square=True,
                 name="LinearOperatorCirculant3D"):
        super().__init__(spectrum, input_output_dtype, is_non_singular, is_self_adjoint,
                         is_positive_definite, is_square, name)


class LinearOperatorToeplitz(LinearOperator):
    """A [batch] Toeplitz matrix: first column `col`, first row `row` (`row[0]` is ignored:
    the diagonal is `col[0]`).

    Raises:
        TypeError: `col` and `row` of different or non-floating dtypes.
    """

    def __init__(self, col, row, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name="LinearOperatorToeplitz"):
        self._col = _floating(col, "col")
        self._row = _floating(row, "row", self._col.dtype.base_dtype)
        if is_square is False:
            raise ValueError("Only square Toeplitz operators currently supported.")
        super().__init__(self._col.dtype.base_dtype, graph_parents=[self._col, self._row],
                         is_non_singular=is_non_singular, is_self_adjoint=is_self_adjoint,
                         is_positive_definite=is_positive_definite, is_square=True, name=name)

    @property
    def col(self):
        return self._col

    @property
    def row(self):
        return self._row

    def _shape(self):
        c, r = self._col.shape, self._row.shape
        if c.ndims is None or r.ndims is None:
            return TensorShape(None)
        batch = shape_ops.broadcast_static_shape(c[:-1], r[:-1])
        n = c[-1].merge_with(r[-1])
        return batch.concatenate([n, n])

    def _shape_tensor(self):
        c, r = shape_ops.shape(self._col), shape_ops.shape(self._row)
        batch = shape_ops.broadcast_dynamic_shape(c[:-1], r[:-1])
        return concat([batch, c[-1:], c[-1:]], 0)

    def _to_dense(self):
        n = self.domain_dimension.value
        if n is None:
            raise ValueError(f"{self.name}: to_dense needs the number of rows statically")
        rank = self._col.shape.ndims
        if rank is None:
            raise ValueError(f"{self.name}: to_dense needs the rank of col statically")
        # entries[..., n - 1 + i - j] is T[i, j]: row[j - i] above the diagonal, col[i - j] on
        # and below it.
        col, row = self._col, self._row
        if col.shape[:-1] != row.shape[:-1]:
            col, row = col + 0 * row, row + 0 * col
        entries = concat([reverse(row[..., 1:], [-1]), col], axis=-1)
        index = (n - 1) + np.arange(n)[:, None] - np.arange(n)[None, :]
        dense = gather(entries, constant(index.astype(np.int32)), axis=rank - 1)
        dense.set_shape(self.shape)
        return dense

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return math_ops.matmul(self._to_dense(), x, adjoint_a=adjoint, adjoint_b=adjoint_arg)

    def _diag_part(self):
        n = self.domain_dimension_tensor()
        first = self._col[..., :1]
        return first * ones(concat([shape_ops.shape(first)[:-1], shape_ops.reshape(n, [1])], 0),
                            dtype=self.dtype)

