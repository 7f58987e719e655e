"""The LinearOperators defined by one tensor: a full matrix, a diagonal, a lower triangle, the
identity (plain or scaled) and zeros (`tf.linalg.LinearOperatorFullMatrix`, ...Diag,
...LowerTriangular, ...Identity, ...ScaledIdentity, ...Zeros)."""

from __future__ import annotations

from tensorflux.framework import dtypes
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.framework.tensor_util import constant_value
from tensorflux.ops import math as math_ops
from tensorflux.ops.array import shapes as shape_ops
from tensorflux.ops.array.concat_split import concat
from tensorflux.ops.array.constants import constant, ones, zeros
from tensorflux.ops.array.diagonal import (
    eye,
    matrix_band_part,
    matrix_diag,
    matrix_diag_part,
    matrix_set_diag,
)
from tensorflux.ops.debug import checks
from tensorflux.ops.linalg import solvers
from tensorflux.ops.linalg.linear_operator import (
    LinearOperator,
    adjoint_tensor,
    broadcast_matrix_batch_dims,
)

__all__ = ["LinearOperatorFullMatrix", "LinearOperatorDiag", "LinearOperatorLowerTriangular",
           "LinearOperatorIdentity", "LinearOperatorScaledIdentity", "LinearOperatorZeros"]

_FLOATING = (dtypes.float16, dtypes.float32, dtypes.float64, dtypes.complex64, dtypes.complex128)


def _checked_tensor(value, name, min_rank, allowed=_FLOATING):
    t = convert_to_tensor(value, name=name)
    if t.dtype.base_dtype not in allowed:
        raise TypeError(f"Argument {name} must have dtype in {[d.name for d in allowed]}. "
                        f"Found: {t.dtype.base_dtype.name}")
    if t.shape.ndims is not None and t.shape.ndims < min_rank:
        raise ValueError(f"Argument {name} must have at least {min_rank} dimensions. "
                         f"Found: {t.shape}")
    return t


def _matmul_dense(matrix, x, adjoint, adjoint_arg):
    return math_ops.matmul(matrix, x, adjoint_a=adjoint, adjoint_b=adjoint_arg)


class LinearOperatorFullMatrix(LinearOperator):
    """A LinearOperator wrapping a `[B1, ..., Bb, M, N]` matrix.

    Raises:
        TypeError: the matrix is not floating point or complex.
    """

    def __init__(self, matrix, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name="LinearOperatorFullMatrix"):
        self._matrix = _checked_tensor(matrix, "matrix", 2)
        super().__init__(self._matrix.dtype.base_dtype, graph_parents=[self._matrix],
                         is_non_singular=is_non_singular, is_self_adjoint=is_self_adjoint,
                         is_positive_definite=is_positive_definite, is_square=is_square,
                         name=name)

    def _shape(self):
        return self._matrix.shape

    def _shape_tensor(self):
        return shape_ops.shape(self._matrix)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return _matmul_dense(self._matrix, x, adjoint, adjoint_arg)

    def _to_dense(self):
        return self._matrix


class LinearOperatorDiag(LinearOperator):
    """A `[batch]` square diagonal operator `A = diag(d)` for `d` of shape `[B1, ..., Bb, N]`.

    Raises:
        TypeError: bad dtype. ValueError: `is_square=False`, or a real diagonal said not to be
            self-adjoint.
    """

    def __init__(self, diag, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name="LinearOperatorDiag"):
        self._diag = _checked_tensor(diag, "diag", 1)
        if not self._diag.dtype.is_complex:
            if is_self_adjoint is False:
                raise ValueError("A real diagonal operator is always self adjoint.")
            is_self_adjoint = True
        if is_square is False:
            raise ValueError("Only square diagonal operators currently supported.")
        super().__init__(self._diag.dtype.base_dtype, graph_parents=[self._diag],
                         is_non_singular=is_non_singular, is_self_adjoint=is_self_adjoint,
                         is_positive_definite=is_positive_definite, is_square=True, name=name)

    @property
    def diag(self):
        """The diagonal tensor."""
        return self._diag

    def _shape(self):
        d = self._diag.shape
        if d.ndims is None:
            return TensorShape(None)
        return d.concatenate(d[-1:])

    def _shape_tensor(self):
        d = shape_ops.shape(self._diag)
        return concat([d, d[-1:]], 0)

    def _scale(self, adjoint):
        d = math_ops.conj(self._diag) if adjoint and self.dtype.is_complex else self._diag
        return shape_ops.expand_dims(d, -1)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        x = adjoint_tensor(x) if adjoint_arg else x
        return self._scale(adjoint) * x

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        rhs = adjoint_tensor(rhs) if adjoint_arg else rhs
        return rhs / self._scale(adjoint)

    def _determinant(self):
        return math_ops.reduce_prod(self._diag, axis=-1)

    def _log_abs_determinant(self):
        log_abs = math_ops.reduce_sum(math_ops.log(math_ops.abs(self._diag)), axis=-1)
        return math_ops.cast(log_abs, self.dtype) if self.dtype.is_complex else log_abs

    def _to_dense(self):
        return matrix_diag(self._diag)

    def _diag_part(self):
        return self._diag

    def _add_to_tensor(self, x):
        return matrix_set_diag(x, matrix_diag_part(x) + self._diag)

    def _eigvals(self):
        return self._diag

    def _cholesky(self):
        return LinearOperatorDiag(math_ops.sqrt(self._diag), is_non_singular=True,
                                  is_self_adjoint=True, is_positive_definite=True,
                                  is_square=True)

    def _inverse(self):
        return LinearOperatorDiag(1.0 / self._diag, is_non_singular=self.is_non_singular,
                                  is_self_adjoint=self.is_self_adjoint,
                                  is_positive_definite=self.is_positive_definite,
                                  is_square=True)

    def _assert_non_singular(self):
        return checks.assert_none_equal(
            self._diag, zeros([], dtype=self.dtype),
            message="Singular operator:  Diagonal contained zero values.")

    def _assert_positive_definite(self):
        if self.dtype.is_complex:
            message = ("Diagonal operator had diagonal entries with non-positive real part, "
                       "thus was not positive definite.")
        else:
            message = "Real diagonal operator had non-positive diagonal entries, thus was " \
                      "not positive definite."
        return checks.assert_positive(math_ops.real(self._diag), message=message)

    def _assert_self_adjoint(self):
        if not self.dtype.is_complex:
            return checks.assert_equal(1, 1)
        return checks.assert_equal(math_ops.imag(self._diag),
                                   zeros([], dtype=self.dtype.real_dtype),
                                   message="This diagonal operator contained non-zero "
                                           "imaginary values.  Thus it was not self-adjoint.")


class LinearOperatorLowerTriangular(LinearOperator):
    """A `[batch]` square lower-triangular operator; only the lower triangle of `tril` is read.

    Raises:
        TypeError: bad dtype. ValueError: `is_square=False`.
    """

    def __init__(self, tril, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None,
                 name="LinearOperatorLowerTriangular"):
        if is_square is False:
            raise ValueError("Only square lower triangular operators supported at this time.")
        self._tril = _checked_tensor(tril, "tril", 2)
        self._band = matrix_band_part(self._tril, -1, 0)
        super().__init__(self._tril.dtype.base_dtype, graph_parents=[self._tril],
                         is_non_singular=is_non_singular, is_self_adjoint=is_self_adjoint,
                         is_positive_definite=is_positive_definite, is_square=True, name=name)

    def _shape(self):
        return self._tril.shape

    def _shape_tensor(self):
        return shape_ops.shape(self._tril)

    def _diag(self):
        return matrix_diag_part(self._tril)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return _matmul_dense(self._band, x, adjoint, adjoint_arg)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        rhs = adjoint_tensor(rhs) if adjoint_arg else rhs
        matrix, rhs = broadcast_matrix_batch_dims([self._tril, rhs])
        return solvers.matrix_triangular_solve(matrix, rhs, lower=True, adjoint=adjoint)

    def _determinant(self):
        return math_ops.reduce_prod(self._diag(), axis=-1)

    def _log_abs_determinant(self):
        log_abs = math_ops.reduce_sum(math_ops.log(math_ops.abs(self._diag())), axis=-1)
        return math_ops.cast(log_abs, self.dtype) if self.dtype.is_complex else log_abs

    def _to_dense(self):
        return self._band

    def _diag_part(self):
        return self._diag()

    def _eigvals(self):
        return self._diag()

    def _assert_non_singular(self):
        return checks.assert_none_equal(
            self._diag(), zeros([], dtype=self.dtype),
            message="Singular operator:  Diagonal contained zero values.")


def _checked_num_rows(num_rows, name="num_rows"):
    t = convert_to_tensor(num_rows, name=name)
    if not t.dtype.is_integer:
        raise TypeError(f"Argument {name} must be integer type. Found: {t}")
    if t.shape.ndims is not None and t.shape.ndims != 0:
        raise ValueError(f"Argument {name} must be a 0-D Tensor. Found: {t}")
    value = constant_value(t)
    if value is not None and value < 0:
        raise ValueError(f"Argument {name} must be non-negative. Found: {value}")
    return math_ops.cast(t, dtypes.int32), (None if value is None else int(value))


def _checked_batch_shape(batch_shape):
    if batch_shape is None:
        return None, TensorShape([])
    t = math_ops.cast(convert_to_tensor(batch_shape, name="batch_shape"), dtypes.int32)
    if t.shape.ndims is not None and t.shape.ndims != 1:
        raise ValueError(f"Argument batch_shape must be a 1-D Tensor. Found: {t}")
    value = constant_value(t)
    if value is not None and (value < 0).any():
        raise ValueError(f"Argument batch_shape must be non-negative. Found: {value}")
    static = TensorShape([int(v) for v in value]) if value is not None else \
        TensorShape([None] * t.shape[0].value if t.shape[0].value is not None else None)
    return t, static


def _require(flag, message):
    if flag is False:
        raise ValueError(message)


class _BaseIdentity(LinearOperator):
    """What the identity operators share: `num_rows`, an optional batch shape."""

    def _rows(self):
        return self._num_rows_static if self._num_rows_static is not None else self._num_rows

    def _matrix_shape_tensor(self, columns=None):
        rows = shape_ops.reshape(self._num_rows, [1])
        cols = rows if columns is None else shape_ops.reshape(columns, [1])
        return concat([rows, cols], 0)

    def _eye(self, batch=None):
        return eye(self._rows(), batch_shape=batch, dtype=self.dtype)

    def _ones_diag(self):
        return ones(concat([self.batch_shape_tensor(), shape_ops.reshape(self._num_rows, [1])],
                           0), dtype=self.dtype)


class LinearOperatorIdentity(_BaseIdentity):
    """The `[batch]` identity `I` of `num_rows` rows (`tf.linalg.LinearOperatorIdentity`).

    With a `batch_shape`, `matmul` broadcasts its argument to it; without, the argument's own
    batch shape is kept. The hints are all fixed: any False raises ValueError.
    """

    def __init__(self, num_rows, batch_shape=None, dtype=None, is_non_singular=True,
                 is_self_adjoint=True, is_positive_definite=True, is_square=True,
                 assert_proper_shapes=False, name="LinearOperatorIdentity"):
        _require(is_non_singular, "An identity operator is always non-singular.")
        _require(is_positive_definite, "An identity operator is always positive-definite.")
        _require(is_self_adjoint, "An identity operator is always self-adjoint.")
        _require(is_square, "An identity operator is always square.")
        self._num_rows, self._num_rows_static = _checked_num_rows(num_rows)
        self._batch_shape_arg, self._batch_shape_static = _checked_batch_shape(batch_shape)
        self._assert_proper_shapes = assert_proper_shapes
        super().__init__(dtype or dtypes.float32, is_non_singular=True, is_self_adjoint=True,
                         is_positive_definite=True, is_square=True, name=name)

    def _shape(self):
        return self._batch_shape_static.concatenate([self._num_rows_static,
                                                    self._num_rows_static])

    def _shape_tensor(self):
        matrix = self._matrix_shape_tensor()
        if self._batch_shape_arg is None:
            return matrix
        return concat([self._batch_shape_arg, matrix], 0)

    def _broadcast(self, x):
        if self._batch_shape_arg is None:
            return x
        ones_batch = ones(concat([self._batch_shape_arg, [1, 1]], 0), dtype=self.dtype)
        return x * ones_batch

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        x = adjoint_tensor(x) if adjoint_arg else x
        return self._broadcast(x)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._matmul(rhs, adjoint_arg=adjoint_arg)

    def _determinant(self):
        return ones(self.batch_shape_tensor(), dtype=self.dtype)

    def _log_abs_determinant(self):
        return zeros(self.batch_shape_tensor(), dtype=self.dtype)

    def _to_dense(self):
        return self._eye(None if self._batch_shape_arg is None else self._batch_shape_arg)

    def _diag_part(self):
        return self._ones_diag()

    def _add_to_tensor(self, x):
        return matrix_set_diag(x, matrix_diag_part(x) + 1)

    def _eigvals(self):
        return self._ones_diag()

    def _cond(self):
        return ones(self.batch_shape_tensor(), dtype=self.dtype)

    def _cholesky(self):
        return self

    def _inverse(self):
        return self

    def _assert_non_singular(self):
        return checks.assert_equal(1, 1)

    def _assert_positive_definite(self):
        return checks.assert_equal(1, 1)

    def _assert_self_adjoint(self):
        return checks.assert_equal(1, 1)


class LinearOperatorScaledIdentity(_BaseIdentity):
    """`A = c I`, `c` of shape `[B1, ..., Bb]` (`tf.linalg.LinearOperatorScaledIdentity`)."""

    def __init__(self, num_rows, multiplier, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=True, assert_proper_shapes=False,
                 name="LinearOperatorScaledIdentity"):
        if is_square is False:
            raise ValueError("A ScaledIdentity operator is always square.")
        self._multiplier = _checked_tensor(multiplier, "multiplier", 0)
        self._num_rows, self._num_rows_static = _checked_num_rows(num_rows)
        self._assert_proper_shapes = assert_proper_shapes
        super().__init__(self._multiplier.dtype.base_dtype, graph_parents=[self._multiplier],
                         is_non_singular=is_non_singular, is_self_adjoint=is_self_adjoint,
                         is_positive_definite=is_positive_definite, is_square=True, name=name)

    @property
    def multiplier(self):
        """The scalar (or batch of scalars) `c`."""
        return self._multiplier

    def _shape(self):
        return self._multiplier.shape.concatenate([self._num_rows_static,
                                                   self._num_rows_static])

    def _shape_tensor(self):
        return concat([shape_ops.shape(self._multiplier), self._matrix_shape_tensor()], 0)

    def _scale(self, adjoint):
        c = math_ops.conj(self._multiplier) if adjoint and self.dtype.is_complex else \
            self._multiplier
        return shape_ops.expand_dims(shape_ops.expand_dims(c, -1), -1)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        x = adjoint_tensor(x) if adjoint_arg else x
        return x * self._scale(adjoint)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        rhs = adjoint_tensor(rhs) if adjoint_arg else rhs
        return rhs / self._scale(adjoint)

    def _rows_as(self, dtype):
        return math_ops.cast(self._num_rows, dtype)

    def _determinant(self):
        return math_ops.pow(self._multiplier, self._rows_as(self.dtype))

    def _log_abs_determinant(self):
        real = self.dtype.real_dtype if self.dtype.is_complex else self.dtype
        log_abs = self._rows_as(real) * math_ops.log(math_ops.abs(self._multiplier))
        return math_ops.cast(log_abs, self.dtype) if self.dtype.is_complex else log_abs

    def _to_dense(self):
        return self._scale(False) * self._eye()

    def _diag_part(self):
        return shape_ops.expand_dims(self._multiplier, -1) * self._ones_diag()

    def _add_to_tensor(self, x):
        return matrix_set_diag(x, matrix_diag_part(x)
                               + shape_ops.expand_dims(self._multiplier, -1))

    def _eigvals(self):
        return self._diag_part()

    def _cond(self):
        return ones(self.batch_shape_tensor(), dtype=self.dtype.real_dtype
                    if self.dtype.is_complex else self.dtype)

    def _cholesky(self):
        return LinearOperatorScaledIdentity(self._num_rows, math_ops.sqrt(self._multiplier),
                                            is_non_singular=True, is_self_adjoint=True,
                                            is_positive_definite=True, is_square=True)

    def _inverse(self):
        return LinearOperatorScaledIdentity(self._num_rows, 1.0 / self._multiplier,
                                            is_non_singular=self.is_non_singular,
                                            is_self_adjoint=self.is_self_adjoint,
                                            is_positive_definite=self.is_positive_definite,
                                            is_square=True)

    def _assert_non_singular(self):
        return checks.assert_none_equal(
            math_ops.abs(self._multiplier), zeros([], dtype=self.dtype.real_dtype
                                                  if self.dtype.is_complex else self.dtype),
            message="LinearOperator was singular")

    def _assert_positive_definite(self):
        return checks.assert_positive(math_ops.real(self._multiplier),
                                      message="LinearOperator was not positive definite.")

    def _assert_self_adjoint(self):
        imag = math_ops.imag(self._multiplier) if self.dtype.is_complex else \
            zeros([], dtype=self.dtype)
        return checks.assert_equal(imag, zeros([], dtype=imag.dtype),
                                   message="LinearOperator was not self-adjoint")


class LinearOperatorZeros(_BaseIdentity):
    """The `[batch]` zero matrix of `num_rows x num_columns` (`tf.linalg.LinearOperatorZeros`)."""

    def __init__(self, num_rows, num_columns=None, batch_shape=None, dtype=None,
                 is_non_singular=False, is_self_adjoint=True, is_positive_definite=False,
                 is_square=True, assert_proper_shapes=False, name="LinearOperatorZeros"):
        if is_non_singular:
            raise ValueError("A Zeros operator is always singular.")
        if is_positive_definite:
            raise ValueError("A Zeros operator is always not positive-definite.")
        self._num_rows, self._num_rows_static = _checked_num_rows(num_rows)
        if num_columns is None:
            self._num_columns, self._num_columns_static = self._num_rows, self._num_rows_static
        else:
            self._num_columns, self._num_columns_static = _checked_num_rows(num_columns,
                                                                            "num_columns")
        square = (None if self._num_rows_static is None or self._num_columns_static is None
                  else self._num_rows_static == self._num_columns_static)
        if square is False:
            if is_self_adjoint:
                raise ValueError("A Zeros operator can't be self-adjoint if it is not square.")
            is_self_adjoint, is_square = False, False
        self._batch_shape_arg, self._batch_shape_static = _checked_batch_shape(batch_shape)
        self._assert_proper_shapes = assert_proper_shapes
        super().__init__(dtype or dtypes.float32, is_non_singular=False,
                         is_self_adjoint=is_self_adjoint, is_positive_definite=False,
                         is_square=is_square, name=name)

    def _shape(self):
        return self._batch_shape_static.concatenate([self._num_rows_static,
                                                    self._num_columns_static])

    def _shape_tensor(self):
        matrix = self._matrix_shape_tensor(self._num_columns)
        if self._batch_shape_arg is None:
            return matrix
        return concat([self._batch_shape_arg, matrix], 0)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        x = adjoint_tensor(x) if adjoint_arg else x
        rows = self._num_columns if adjoint else self._num_rows
        out_shape = concat([shape_ops.shape(x)[:-2], shape_ops.reshape(rows, [1]),
                            shape_ops.shape(x)[-1:]], 0)
        out = zeros(out_shape, dtype=self.dtype)
        if self._batch_shape_arg is not None:
            out = out * zeros(concat([self._batch_shape_arg, [1, 1]], 0), dtype=self.dtype)
        return out

    def _determinant(self):
        return zeros(self.batch_shape_tensor(), dtype=self.dtype)

    def _log_abs_determinant(self):
        return math_ops.log(math_ops.abs(self._determinant()))

    def _to_dense(self):
        return zeros(self.shape_tensor(), dtype=self.dtype)

    def _diag_part(self):
        size = math_ops.minimum(self._num_rows, self._num_columns)
        return zeros(concat([self.batch_shape_tensor(), shape_ops.reshape(size, [1])], 0),
                     dtype=self.dtype)

    def _add_to_tensor(self, x):
        return x if self._batch_shape_arg is None else x + self.to_dense()

    def _eigvals(self):
        return self._diag_part()

    def _assert_non_singular(self):
        return checks.assert_equal(constant(0), constant(1),
                                   message="Zero operators are always non-invertible.")

    def _assert_positive_definite(self):
        return checks.assert_equal(constant(0), constant(1),
                                   message="Zero operators are always non-positive definite.")

    def _assert_self_adjoint(self):
        return checks.assert_equal(1, 1)
