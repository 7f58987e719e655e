"""`tf.linalg.LinearOperator`: a [batch of] matrices known by how they act, not by their entries.

An operator of shape `[B1, ..., Bb, M, N]` holds whatever parameters define it (a diagonal, a
factor, other operators) and adds ops for `matmul`, `solve`, `determinant`, ... that use its
structure; `to_dense` builds the matrix itself. Subclasses implement `_shape`,
`_shape_tensor` and `_matmul`; every other method has a dense fallback here that a subclass
replaces where its structure gives a cheaper or exact answer.

The `is_X` hints (`non_singular`, `self_adjoint`, `positive_definite`, `square`) are promises
of the caller, never checked at run time (the `assert_*` methods add the checks); they decide
which methods are allowed (no `solve` of an operator said to be singular) and which shortcuts
apply (the adjoint of a self-adjoint operator is itself).
"""

from __future__ import annotations

import abc

import numpy as np

from tensorflux.framework import dtypes
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import Dimension, TensorShape
from tensorflux.ops import math as math_ops
from tensorflux.ops.array import shapes as shape_ops
from tensorflux.ops.array.concat_split import concat
from tensorflux.ops.array.constants import constant
from tensorflux.ops.array.diagonal import eye, matrix_diag_part
from tensorflux.ops.debug import checks
from tensorflux.ops.linalg import decompositions, solvers

__all__ = ["LinearOperator", "broadcast_matrix_batch_dims", "dense_shape_tensor"]


def _adjoint(x):
    """The conjugate transpose of the last two dimensions."""
    return shape_ops.matrix_transpose(math_ops.conj(x) if x.dtype.is_complex else x)


def adjoint_tensor(x, name=None):
    """`tf.linalg.adjoint` without the name scope (used by the operators' methods)."""
    return _adjoint(convert_to_tensor(x, name=name or "x"))


def dense_shape_tensor(x) -> Tensor:
    """The shape of a dense tensor as an int32 tensor (static where known)."""
    shape = x.shape
    if shape.is_fully_defined():
        return constant(shape.as_list(), dtype=dtypes.int32)
    return shape_ops.shape(x)


def broadcast_matrix_batch_dims(batch_matrices):
    """Broadcasts the batch dimensions of several `[..., M, N]` tensors against each other."""
    mats = [convert_to_tensor(m) for m in batch_matrices]
    if all(m.shape.ndims is not None and m.shape[:-2].is_fully_defined() for m in mats):
        batch = TensorShape([])
        for m in mats:
            batch = shape_ops.broadcast_static_shape(batch, m.shape[:-2])
        return [m if m.shape[:-2] == batch else
                shape_ops.broadcast_to(m, concat([constant(batch.as_list(), dtypes.int32),
                                                  shape_ops.shape(m)[-2:]], 0))
                for m in mats]
    batch = shape_ops.shape(mats[0])[:-2]
    for m in mats[1:]:
        batch = shape_ops.broadcast_dynamic_shape(batch, shape_ops.shape(m)[:-2])
    return [shape_ops.broadcast_to(m, concat([batch, shape_ops.shape(m)[-2:]], 0)) for m in mats]


class LinearOperator(abc.ABC):
    """Base class of every `tf.linalg.LinearOperator*` (TF 1.x `tf.linalg.LinearOperator`).

    Args:
        dtype: the operator's element type (what `matmul` takes and returns).
        graph_parents: tensors the operator depends on (kept for TF1 compatibility).
        is_non_singular, is_self_adjoint, is_positive_definite, is_square: hints (True, False,
            or None for unknown); a positive definite operator is non-singular, and non-singular
            and self-adjoint operators are square.
        name: the name scope of the operator's methods.

    Raises:
        ValueError: the hints contradict each other.
    """

    def __init__(self, dtype, graph_parents=None, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name=None):
        if is_positive_definite:
            if is_non_singular is False:
                raise ValueError("A positive definite matrix is always non-singular.")
            is_non_singular = True
        if is_non_singular:
            if is_square is False:
                raise ValueError("A non-singular matrix is always square.")
            is_square = True
        if is_self_adjoint:
            if is_square is False:
                raise ValueError("A self-adjoint matrix is always square.")
            is_square = True
        self._dtype = dtypes.as_dtype(dtype).base_dtype if dtype is not None else None
        self._graph_parents = list(graph_parents or [])
        self._is_non_singular = is_non_singular
        self._is_self_adjoint = is_self_adjoint
        self._is_positive_definite = is_positive_definite
        self._is_square_set_or_implied_by_hints = is_square
        self._name = name or type(self).__name__

    # -- properties --------------------------------------------------------------------------

    @property
    def dtype(self):
        """The element type of the operator."""
        return self._dtype

    @property
    def name(self):
        """The operator's name (the name scope of its methods)."""
        return self._name

    @property
    def graph_parents(self):
        """The tensors this operator was built from."""
        return self._graph_parents

    @property
    def is_non_singular(self):
        return self._is_non_singular

    @property
    def is_self_adjoint(self):
        return self._is_self_adjoint

    @property
    def is_positive_definite(self):
        return self._is_positive_definite

    @property
    def is_square(self):
        """True if the operator is square: from the hints, else from the static shape."""
        auto = self.shape[-2:]
        if auto.ndims == 2 and auto[0].value is not None and auto[1].value is not None:
            computed = auto[0].value == auto[1].value
        else:
            computed = None
        hint = self._is_square_set_or_implied_by_hints
        if hint is not None and computed is not None and hint != computed:
            raise ValueError(f"Operator '{self.name}' was said to be square={hint} but its "
                             f"shape is {self.shape}")
        return hint if hint is not None else computed

    @property
    def shape(self) -> TensorShape:
        """The static shape `[B1, ..., Bb, M, N]`."""
        return self._shape()

    def shape_tensor(self, name="shape_tensor"):
        """The shape as a 1-D int32 tensor (static where known)."""
        with self._name_scope(name):
            if self.shape.is_fully_defined():
                return constant(self.shape.as_list(), dtype=dtypes.int32)
            return self._shape_tensor()

    @property
    def batch_shape(self) -> TensorShape:
        """The static batch shape `[B1, ..., Bb]`."""
        return self.shape[:-2]

    def batch_shape_tensor(self, name="batch_shape_tensor"):
        """The batch shape as a 1-D int32 tensor."""
        with self._name_scope(name):
            if self.batch_shape.is_fully_defined():
                return constant(self.batch_shape.as_list(), dtype=dtypes.int32)
            return self.shape_tensor()[:-2]

    @property
    def tensor_rank(self):
        """The rank `b + 2` of the dense matrix (None if unknown)."""
        return self.shape.ndims

    def tensor_rank_tensor(self, name="tensor_rank_tensor"):
        with self._name_scope(name):
            if self.tensor_rank is not None:
                return constant(self.tensor_rank, dtype=dtypes.int32)
            return shape_ops.size(self.shape_tensor())

    @property
    def domain_dimension(self) -> Dimension:
        """N, the dimension of the vectors the operator acts on."""
        if self.shape.ndims is None:
            return Dimension(None)
        return self.shape[-1]

    def domain_dimension_tensor(self, name="domain_dimension_tensor"):
        with self._name_scope(name):
            if self.domain_dimension.value is not None:
                return constant(self.domain_dimension.value, dtype=dtypes.int32)
            return self.shape_tensor()[-1]

    @property
    def range_dimension(self) -> Dimension:
        """M, the dimension of the operator's results."""
        if self.shape.ndims is None:
            return Dimension(None)
        return self.shape[-2]

    def range_dimension_tensor(self, name="range_dimension_tensor"):
        with self._name_scope(name):
            if self.range_dimension.value is not None:
                return constant(self.range_dimension.value, dtype=dtypes.int32)
            return self.shape_tensor()[-2]

    @property
    def H(self):  # noqa: N802 - TF's name
        """The adjoint of this operator."""
        return self.adjoint()

    # -- subclass interface ------------------------------------------------------------------

    @abc.abstractmethod
    def _shape(self) -> TensorShape:
        """The static shape (every operator defines it)."""

    @abc.abstractmethod
    def _shape_tensor(self):
        """The dynamic shape as an int32 tensor."""

    @abc.abstractmethod
    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        """`self @ x` on a checked argument."""

    # -- helpers -----------------------------------------------------------------------------

    def _name_scope(self, name):
        return graph_mod.get_default_graph().name_scope(f"{self.name}/{name}")

    def _check_input_dtype(self, arg):
        if arg.dtype.base_dtype != self.dtype:
            raise TypeError(f"Expected argument to have dtype {self.dtype.name}. Found: "
                            f"{arg.dtype.base_dtype.name} in tensor {arg.name}")

    def _convert_arg(self, x, name):
        # A tensor keeps its dtype (and a mismatch is a TypeError, as in TF); Python and NumPy
        # values are converted to the operator's dtype.
        x = x if isinstance(x, Tensor) else convert_to_tensor(x, dtype=self.dtype, name=name)
        self._check_input_dtype(x)
        return x

    def _check_dims(self, x, adjoint, adjoint_arg, what):
        """Static check: the contracted dimension of `x` matches the operator's."""
        want = self.range_dimension if adjoint else self.domain_dimension
        if x.shape.ndims is None or want.value is None:
            return
        got = x.shape[-1] if adjoint_arg else x.shape[-2]
        if got.value is not None and got.value != want.value:
            raise ValueError(f"{what}: operator '{self.name}' of shape {self.shape} is "
                             f"incompatible with argument of shape {x.shape}: expected "
                             f"dimension {want.value} but got {got.value}")

    def _square_only(self, method):
        if self.is_square is False:
            raise NotImplementedError(f"{method} not implemented for an operator that is "
                                      f"expected to not be square.")

    # -- public methods ------------------------------------------------------------------------

    def matmul(self, x, adjoint=False, adjoint_arg=False, name="matmul"):
        """`self @ x` (or `adjoint(self) @ x`, with `x` optionally adjointed first).

        Args:
            x: a `[..., N, R]` tensor of the operator's dtype, or a LinearOperator (then a
                LinearOperatorComposition is returned).
            adjoint: apply the operator's adjoint.
            adjoint_arg: use the adjoint of `x`.

        Raises:
            TypeError: `x` has another dtype. ValueError: incompatible static dimensions.
        """
        if isinstance(x, LinearOperator):
            # cycle: the composition is a LinearOperator built from this base class
            from tensorflux.ops.linalg.linear_operator_combined import LinearOperatorComposition
            left = self.adjoint() if adjoint else self
            right = x.adjoint() if adjoint_arg else x
            if right.range_dimension.value is not None and \
                    left.domain_dimension.value is not None and \
                    right.range_dimension.value != left.domain_dimension.value:
                raise ValueError(f"Operators are incompatible. Expected `x` to have dimension "
                                 f"{left.domain_dimension.value} but got "
                                 f"{right.range_dimension.value}.")
            with self._name_scope(name):
                return LinearOperatorComposition([left, right])
        with self._name_scope(name):
            x = self._convert_arg(x, "x")
            self._check_dims(x, adjoint, adjoint_arg, "matmul")
            return self._matmul(x, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def matvec(self, x, adjoint=False, name="matvec"):
        """`self @ x` for a `[..., N]` vector `x`."""
        with self._name_scope(name):
            x = self._convert_arg(x, "x")
            mat = shape_ops.expand_dims(x, -1)
            self._check_dims(mat, adjoint, False, "matvec")
            return shape_ops.squeeze(self._matmul(mat, adjoint=adjoint), [-1])

    def determinant(self, name="det"):
        """The determinant of each matrix of the batch, shape `[B1, ..., Bb]`."""
        self._square_only("Determinant")
        with self._name_scope(name):
            return self._determinant()

    def _determinant(self):
        return decompositions.matrix_determinant(self.to_dense())

    def log_abs_determinant(self, name="log_abs_det"):
        """log |det| of each matrix of the batch."""
        self._square_only("Determinant")
        with self._name_scope(name):
            return self._log_abs_determinant()

    def _log_abs_determinant(self):
        _, log_abs = decompositions.log_matrix_determinant(self.to_dense())
        return log_abs

    def _solve_allowed(self):
        if self.is_non_singular is False:
            raise NotImplementedError("Exact solve not implemented for an operator that is "
                                      "expected to be singular.")
        if self.is_square is False:
            raise NotImplementedError("Exact solve not implemented for an operator that is "
                                      "expected to not be square.")

    def solve(self, rhs, adjoint=False, adjoint_arg=False, name="solve"):
        """X with `self @ X = rhs` (or `adjoint(self) @ X = rhs`).

        Raises:
            NotImplementedError: the operator is said to be singular or not square.
        """
        if isinstance(rhs, LinearOperator):
            return self.inverse().matmul(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)
        self._solve_allowed()
        with self._name_scope(name):
            rhs = self._convert_arg(rhs, "rhs")
            self._check_dims(rhs, not adjoint, adjoint_arg, "solve")
            return self._solve(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        if adjoint_arg:
            rhs = _adjoint(rhs)
        matrix, rhs = broadcast_matrix_batch_dims([self.to_dense(), rhs])
        if self.is_self_adjoint and self.is_positive_definite:
            return solvers.cholesky_solve(decompositions.cholesky(matrix), rhs)
        return solvers.matrix_solve(matrix, rhs, adjoint=adjoint)

    def solvevec(self, rhs, adjoint=False, name="solve"):
        """x with `self @ x = rhs` for a `[..., N]` vector `rhs`."""
        self._solve_allowed()
        with self._name_scope(name):
            rhs = self._convert_arg(rhs, "rhs")
            mat = shape_ops.expand_dims(rhs, -1)
            self._check_dims(mat, not adjoint, False, "solvevec")
            return shape_ops.squeeze(self._solve(mat, adjoint=adjoint), [-1])

    def adjoint(self, name="adjoint"):
        """The adjoint operator (the operator itself when it is self-adjoint)."""
        if self.is_self_adjoint is True:
            return self
        # cycle: LinearOperatorAdjoint is a LinearOperator
        from tensorflux.ops.linalg.linear_operator_combined import LinearOperatorAdjoint
        with self._name_scope(name):
            return LinearOperatorAdjoint(self)

    def inverse(self, name="inverse"):
        """The inverse operator (a LinearOperatorInversion unless the subclass knows better).

        Raises:
            ValueError: the operator is said to be singular or not square.
        """
        if self.is_square is False:
            raise ValueError("Cannot take the Inverse: This operator represents a non square "
                             "matrix.")
        if self.is_non_singular is False:
            raise ValueError("Cannot take the Inverse: This operator represents a singular "
                             "matrix.")
        with self._name_scope(name):
            return self._inverse()

    def _inverse(self):
        # cycle: LinearOperatorInversion is a LinearOperator
        from tensorflux.ops.linalg.linear_operator_combined import LinearOperatorInversion
        return LinearOperatorInversion(self)

    def cholesky(self, name="cholesky"):
        """The lower-triangular Cholesky factor as a LinearOperator.

        Raises:
            ValueError: the operator is not said to be self-adjoint and positive definite.
        """
        if not (self.is_self_adjoint and self.is_positive_definite):
            raise ValueError("Cholesky decomposition only exists for self-adjoint positive "
                             "definite matrices.")
        with self._name_scope(name):
            return self._cholesky()

    def _cholesky(self):
        # cycle: the factor is a LinearOperatorLowerTriangular
        from tensorflux.ops.linalg.linear_operator_basic import LinearOperatorLowerTriangular
        return LinearOperatorLowerTriangular(decompositions.cholesky(self.to_dense()),
                                             is_non_singular=True, is_self_adjoint=False,
                                             is_square=True)

    def to_dense(self, name="to_dense"):
        """The dense `[B1, ..., Bb, M, N]` matrix."""
        with self._name_scope(name):
            return self._to_dense()

    def _to_dense(self):
        n = self.domain_dimension.value
        if n is None:
            n = self.domain_dimension_tensor()
        batch = self.batch_shape.as_list() if self.batch_shape.is_fully_defined() else \
            self.batch_shape_tensor()
        return self._matmul(eye(n, batch_shape=batch, dtype=self.dtype))

    def diag_part(self, name="diag_part"):
        """The main diagonal of each matrix, shape `[B1, ..., Bb, min(M, N)]`."""
        with self._name_scope(name):
            return self._diag_part()

    def _diag_part(self):
        return matrix_diag_part(self.to_dense())

    def trace(self, name="trace"):
        """The sum of the main diagonal, shape `[B1, ..., Bb]`."""
        with self._name_scope(name):
            return self._trace()

    def _trace(self):
        return math_ops.reduce_sum(self.diag_part(), axis=-1)

    def add_to_tensor(self, x, name="add_to_tensor"):
        """`x + self.to_dense()` (with the operator's structure where it helps)."""
        with self._name_scope(name):
            x = self._convert_arg(x, "x")
            return self._add_to_tensor(x)

    def _add_to_tensor(self, x):
        return math_ops.add(self.to_dense(), x)

    def eigvals(self, name="eigvals"):
        """The eigenvalues of a self-adjoint operator (ascending per batch member).

        Raises:
            NotImplementedError: the operator is not said to be self-adjoint.
        """
        if not self.is_self_adjoint:
            raise NotImplementedError("Only self-adjoint matrices are supported.")
        with self._name_scope(name):
            return self._eigvals()

    def _eigvals(self):
        return decompositions.self_adjoint_eigvals(self.to_dense())

    def cond(self, name="cond"):
        """The condition number (largest over smallest singular value) of each matrix."""
        with self._name_scope(name):
            return self._cond()

    def _cond(self):
        if self.is_self_adjoint:
            vals = math_ops.abs(self.eigvals())
        else:
            vals = decompositions.svd(self.to_dense(), compute_uv=False)
        return math_ops.reduce_max(vals, axis=-1) / math_ops.reduce_min(vals, axis=-1)

    # -- assertions ----------------------------------------------------------------------------

    def assert_non_singular(self, name="assert_non_singular"):
        """An op that fails at run time if some matrix of the batch is singular."""
        with self._name_scope(name):
            return self._assert_non_singular()

    def _assert_non_singular(self):
        real = self.dtype.real_dtype if self.dtype.is_complex else self.dtype
        eps = np.finfo(real.as_numpy_dtype).eps
        cond = self.cond()
        return checks.assert_less(cond, math_ops.cast(1.0 / (100.0 * eps), cond.dtype),
                                  message="Singular matrix up to precision epsilon.")

    def assert_positive_definite(self, name="assert_positive_definite"):
        """An op that fails at run time if some matrix is not positive definite."""
        with self._name_scope(name):
            return self._assert_positive_definite()

    def _assert_positive_definite(self):
        if not self.is_self_adjoint:
            raise NotImplementedError("assert_positive_definite is only implemented for "
                                      "operators said to be self-adjoint (is_self_adjoint=True).")
        return checks.assert_positive(math_ops.real(self.eigvals()),
                                      message="Matrix was not positive definite.")

    def assert_self_adjoint(self, name="assert_self_adjoint"):
        """An op that fails at run time if some matrix differs from its adjoint."""
        with self._name_scope(name):
            return self._assert_self_adjoint()

    def _assert_self_adjoint(self):
        dense = self.to_dense()
        return checks.assert_equal(dense, _adjoint(dense),
                                   message="Matrix was not equal to its adjoint.")

    def __repr__(self):
        return (f"<tf.linalg.{type(self).__name__} '{self.name}' shape={self.shape} "
                f"dtype={self.dtype.name}>")
