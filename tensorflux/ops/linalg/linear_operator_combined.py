"""LinearOperators built from other operators: the adjoint, the inverse, a product
(composition), a block diagonal (direct sum) and a Kronecker product
(`tf.linalg.LinearOperatorAdjoint`, ...Inversion, ...Composition, ...BlockDiag, ...Kronecker)."""

from __future__ import annotations

from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops import math as math_ops
from tensorflux.ops.array import shapes as shape_ops
from tensorflux.ops.array.concat_split import concat, split
from tensorflux.ops.array.constants import zeros
from tensorflux.ops.linalg.linear_operator import LinearOperator, adjoint_tensor

__all__ = ["LinearOperatorAdjoint", "LinearOperatorInversion", "LinearOperatorComposition",
           "LinearOperatorBlockDiag", "LinearOperatorKronecker"]


def _inherited_hint(name, from_operator, given):
    """A hint of an operator derived from `operator` (adjoint, inverse): the same property."""
    if from_operator is True and given is False:
        raise ValueError(f"The derived operator of an operator with {name}=True must have "
                         f"{name}=True (got False).")
    if from_operator is False and given is True:
        raise ValueError(f"The derived operator of an operator with {name}=False must have "
                         f"{name}=False (got True).")
    return from_operator if from_operator is not None else given


def _check_operators(operators, what):
    operators = list(operators)
    if not operators:
        raise ValueError(f"Expected a non-empty list of operators. Found: {operators}")
    for op in operators:
        if not isinstance(op, LinearOperator):
            raise TypeError(f"{what} takes LinearOperators, got {type(op).__name__}")
    dtype = operators[0].dtype
    for op in operators[1:]:
        if op.dtype != dtype:
            names = [(o.name, o.dtype.name) for o in operators]
            raise TypeError(f"Expected all operators to have the same dtype.  Found {names}")
    return operators


def _implied(operators, hint, given, what):
    """`True` when every operator has the property `hint`; a contradicting `given` raises."""
    if all(getattr(op, hint) for op in operators):
        if given is False:
            raise ValueError(f"The {what} of operators with {hint}=True always has "
                             f"{hint}=True.")
        return True
    return given


class _OperatorsOf(LinearOperator):
    """An operator made of a list of operators of one dtype (named by joining their names)."""

    _JOIN = "_"

    def __init__(self, operators, hints, is_square, name):
        self._operators = _check_operators(operators, type(self).__name__)
        graph_parents = [t for op in self._operators for t in op.graph_parents]
        super().__init__(self._operators[0].dtype, graph_parents=graph_parents,
                         is_square=is_square, **hints,
                         name=name or self._JOIN.join(op.name for op in self._operators))

    @property
    def operators(self):
        """The operators this one is made of."""
        return self._operators

    def _product_of(self, method):
        out = getattr(self._operators[0], method)()
        for op in self._operators[1:]:
            out = out * getattr(op, method)()
        return out

    def _sum_of(self, method):
        out = getattr(self._operators[0], method)()
        for op in self._operators[1:]:
            out = out + getattr(op, method)()
        return out


def _batch_shape(operators) -> TensorShape:
    batch = operators[0].batch_shape
    for op in operators[1:]:
        batch = shape_ops.broadcast_static_shape(batch, op.batch_shape)
    return batch


def _batch_shape_tensor(operators):
    batch = operators[0].batch_shape_tensor()
    for op in operators[1:]:
        batch = shape_ops.broadcast_dynamic_shape(batch, op.batch_shape_tensor())
    return batch


def _sum_dims(dims):
    total = 0
    for d in dims:
        if d.value is None:
            return None
        total += d.value
    return total


def _prod_dims(dims):
    total = 1
    for d in dims:
        if d.value is None:
            return None
        total *= d.value
    return total


class LinearOperatorAdjoint(LinearOperator):
    """The adjoint (conjugate transpose) of `operator`, without forming it."""

    def __init__(self, operator, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name=None):
        self._operator = operator
        super().__init__(
            operator.dtype, graph_parents=operator.graph_parents,
            is_non_singular=_inherited_hint("is_non_singular", operator.is_non_singular,
                                            is_non_singular),
            is_self_adjoint=_inherited_hint("is_self_adjoint", operator.is_self_adjoint,
                                            is_self_adjoint),
            is_positive_definite=_inherited_hint("is_positive_definite",
                                                 operator.is_positive_definite,
                                                 is_positive_definite),
            is_square=_inherited_hint("is_square", operator.is_square, is_square),
            name=name or operator.name + "_adjoint")

    @property
    def operator(self):
        """The operator whose adjoint this is."""
        return self._operator

    def _shape(self):
        s = self._operator.shape
        if s.ndims is None:
            return s
        return s[:-2].concatenate([s[-1], s[-2]])

    def _shape_tensor(self):
        s = self._operator.shape_tensor()
        return concat([s[:-2], s[-1:], s[-2:-1]], 0)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return self._operator.matmul(x, adjoint=not adjoint, adjoint_arg=adjoint_arg)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._operator.solve(rhs, adjoint=not adjoint, adjoint_arg=adjoint_arg)

    def _determinant(self):
        det = self._operator.determinant()
        return math_ops.conj(det) if self.dtype.is_complex else det

    def _log_abs_determinant(self):
        return self._operator.log_abs_determinant()

    def _to_dense(self):
        return adjoint_tensor(self._operator.to_dense())

    def _trace(self):
        tr = self._operator.trace()
        return math_ops.conj(tr) if self.dtype.is_complex else tr

    def _diag_part(self):
        d = self._operator.diag_part()
        return math_ops.conj(d) if self.dtype.is_complex else d

    def adjoint(self, name="adjoint"):
        return self._operator


class LinearOperatorInversion(LinearOperator):
    """The inverse of a non-singular square `operator`, without forming it.

    Raises:
        ValueError: `operator` is said to be singular or not square.
    """

    def __init__(self, operator, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name=None):
        if operator.is_non_singular is False or is_non_singular is False:
            raise ValueError(f"operator and supplied hints must have is_non_singular=True. "
                             f"Found: operator.is_non_singular={operator.is_non_singular}, "
                             f"is_non_singular={is_non_singular}.")
        if operator.is_square is False or is_square is False:
            raise ValueError(f"operator and supplied hints must have is_square=True. Found: "
                             f"operator.is_square={operator.is_square}, is_square={is_square}.")
        self._operator = operator
        super().__init__(
            operator.dtype, graph_parents=operator.graph_parents, is_non_singular=True,
            is_self_adjoint=_inherited_hint("is_self_adjoint", operator.is_self_adjoint,
                                            is_self_adjoint),
            is_positive_definite=_inherited_hint("is_positive_definite",
                                                 operator.is_positive_definite,
                                                 is_positive_definite),
            is_square=True, name=name or operator.name + "_inv")

    @property
    def operator(self):
        """The operator whose inverse this is."""
        return self._operator

    def _shape(self):
        return self._operator.shape

    def _shape_tensor(self):
        return self._operator.shape_tensor()

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return self._operator.solve(x, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._operator.matmul(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _determinant(self):
        return 1.0 / self._operator.determinant()

    def _log_abs_determinant(self):
        return -1.0 * self._operator.log_abs_determinant()

    def _inverse(self):
        return self._operator


class LinearOperatorComposition(_OperatorsOf):
    """The product `operators[0] @ operators[1] @ ...`, applied right to left.

    Raises:
        ValueError: an empty list, or adjacent operators whose dimensions do not match.
        TypeError: operators of different dtypes.
    """

    _JOIN = "_o_"

    def __init__(self, operators, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name=None):
        operators = _check_operators(operators, "LinearOperatorComposition")
        for left, right in zip(operators, operators[1:]):
            want, got = left.domain_dimension.value, right.range_dimension.value
            if want is not None and got is not None and want != got:
                raise ValueError(f"Operators are incompatible. Expected `x` to have dimension "
                                 f"{want} but got {got}.")
        hints = dict(is_non_singular=_implied(operators, "is_non_singular", is_non_singular,
                                              "composition"),
                     is_self_adjoint=is_self_adjoint, is_positive_definite=is_positive_definite)
        super().__init__(operators, hints, is_square, name)

    def _shape(self):
        first, last = self._operators[0].shape, self._operators[-1].shape
        if first.ndims is None or last.ndims is None:
            return TensorShape(None)
        return _batch_shape(self._operators).concatenate([first[-2], last[-1]])

    def _shape_tensor(self):
        first = self._operators[0].shape_tensor()
        last = self._operators[-1].shape_tensor()
        return concat([_batch_shape_tensor(self._operators), first[-2:-1], last[-1:]], 0)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        order = self._operators if adjoint else list(reversed(self._operators))
        out = order[0].matmul(x, adjoint=adjoint, adjoint_arg=adjoint_arg)
        for op in order[1:]:
            out = op.matmul(out, adjoint=adjoint)
        return out

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        if not all(op.is_square for op in self._operators):
            return super()._solve(rhs, adjoint, adjoint_arg)
        order = list(reversed(self._operators)) if adjoint else self._operators
        out = order[0].solve(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)
        for op in order[1:]:
            out = op.solve(out, adjoint=adjoint)
        return out

    def _determinant(self):
        if not all(op.is_square for op in self._operators):
            return super()._determinant()
        return self._product_of("determinant")

    def _log_abs_determinant(self):
        if not all(op.is_square for op in self._operators):
            return super()._log_abs_determinant()
        return self._sum_of("log_abs_determinant")


class LinearOperatorBlockDiag(_OperatorsOf):
    """The block-diagonal operator with the (square) `operators` on its diagonal.

    Raises:
        ValueError: an empty list, or an operator that is not square.
        TypeError: operators of different dtypes.
    """

    _JOIN = "_ds_"

    def __init__(self, operators, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=True, name=None):
        operators = _check_operators(operators, "LinearOperatorBlockDiag")
        for op in operators:
            if op.is_square is False:
                raise ValueError(f"Argument operators must be square; operator {op.name} has "
                                 f"shape {op.shape}")
        if is_square is False:
            raise ValueError("A blockwise diagonal operator is always square.")
        given = dict(is_non_singular=is_non_singular, is_self_adjoint=is_self_adjoint,
                     is_positive_definite=is_positive_definite)
        hints = {hint: _implied(operators, hint, value, "direct sum")
                 for hint, value in given.items()}
        super().__init__(operators, hints, True, name)

    def _dims(self):
        return [op.domain_dimension for op in self._operators]

    def _shape(self):
        if any(op.shape.ndims is None for op in self._operators):
            return TensorShape(None)
        n = _sum_dims(self._dims())
        return _batch_shape(self._operators).concatenate([n, n])

    def _shape_tensor(self):
        n = self._operators[0].domain_dimension_tensor()
        for op in self._operators[1:]:
            n = n + op.domain_dimension_tensor()
        n = shape_ops.reshape(n, [1])
        return concat([_batch_shape_tensor(self._operators), n, n], 0)

    def _split_rows(self, x):
        sizes = [op.domain_dimension_tensor() for op in self._operators]
        return split(x, sizes, axis=-2)

    def _blockwise(self, x, adjoint_arg, method, adjoint):
        x = adjoint_tensor(x) if adjoint_arg else x
        parts = self._split_rows(x)
        outs = [getattr(op, method)(part, adjoint=adjoint)
                for op, part in zip(self._operators, parts)]
        return concat(outs, axis=-2)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return self._blockwise(x, adjoint_arg, "matmul", adjoint)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._blockwise(rhs, adjoint_arg, "solve", adjoint)

    def _determinant(self):
        return self._product_of("determinant")

    def _log_abs_determinant(self):
        return self._sum_of("log_abs_determinant")

    def _diag_part(self):
        return concat([op.diag_part() for op in self._operators], axis=-1)

    def _trace(self):
        return self._sum_of("trace")

    def _to_dense(self):
        blocks = [op.to_dense() for op in self._operators]
        sizes = [op.domain_dimension_tensor() for op in self._operators]
        rows = []
        for i, block in enumerate(blocks):
            row = []
            for j, size in enumerate(sizes):
                if i == j:
                    row.append(block)
                else:
                    shape = concat([shape_ops.shape(block)[:-1], shape_ops.reshape(size, [1])],
                                   0)
                    row.append(zeros(shape, dtype=self.dtype))
            rows.append(concat(row, axis=-1))
        dense = concat(rows, axis=-2)
        dense.set_shape(self.shape)
        return dense

    def _inverse(self):
        return LinearOperatorBlockDiag([op.inverse() for op in self._operators],
                                       is_non_singular=self.is_non_singular,
                                       is_self_adjoint=self.is_self_adjoint,
                                       is_positive_definite=self.is_positive_definite)

    def _cholesky(self):
        return LinearOperatorBlockDiag([op.cholesky() for op in self._operators],
                                       is_non_singular=True)


class LinearOperatorKronecker(_OperatorsOf):
    """The Kronecker product `operators[0] (x) operators[1] (x) ...`.

    Raises:
        ValueError: an empty list. TypeError: operators of different dtypes.
    """

    _JOIN = "_x_"

    def __init__(self, operators, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name=None):
        operators = _check_operators(operators, "LinearOperatorKronecker")
        hints = dict(is_non_singular=_implied(operators, "is_non_singular", is_non_singular,
                                              "Kronecker product"),
                     is_self_adjoint=_implied(operators, "is_self_adjoint", is_self_adjoint,
                                              "Kronecker product"),
                     is_positive_definite=is_positive_definite)
        super().__init__(operators, hints, is_square, name)

    def _shape(self):
        if any(op.shape.ndims is None for op in self._operators):
            return TensorShape(None)
        m = _prod_dims([op.range_dimension for op in self._operators])
        n = _prod_dims([op.domain_dimension for op in self._operators])
        return _batch_shape(self._operators).concatenate([m, n])

    def _shape_tensor(self):
        m = self._operators[0].range_dimension_tensor()
        n = self._operators[0].domain_dimension_tensor()
        for op in self._operators[1:]:
            m = m * op.range_dimension_tensor()
            n = n * op.domain_dimension_tensor()
        return concat([_batch_shape_tensor(self._operators), shape_ops.reshape(m, [1]),
                       shape_ops.reshape(n, [1])], 0)

    def _apply(self, x, adjoint, adjoint_arg, method):
        """Applies each factor along its own axis of `x` viewed as `[..., d1, ..., dk, R]`.

        Row-major Kronecker order: factor 0 owns the most significant part of the row index.
        """
        x = adjoint_tensor(x) if adjoint_arg else x
        if x.shape.ndims is None:
            raise ValueError(f"{self.name}: the argument's rank must be known statically")
        nb, k = x.shape.ndims - 2, len(self._operators)

        def dim(op, domain):
            return shape_ops.reshape(op.domain_dimension_tensor() if domain
                                     else op.range_dimension_tensor(), [1])

        dims = [dim(op, not adjoint) for op in self._operators]
        xs = shape_ops.shape(x)
        cols = xs[-1:]
        cur = shape_ops.reshape(x, concat([xs[:nb]] + dims + [cols], 0))
        for i, op in enumerate(self._operators):
            axis = nb + i
            rest = [a for a in range(nb, nb + k + 1) if a != axis]
            perm = list(range(nb)) + [axis] + rest
            moved = shape_ops.transpose(cur, perm)
            ms = shape_ops.shape(moved)
            out = getattr(op, method)(shape_ops.reshape(moved, concat([ms[:nb + 1], [-1]], 0)),
                                      adjoint=adjoint)
            dims[i] = dim(op, adjoint)
            os_ = shape_ops.shape(out)
            shaped = shape_ops.reshape(out, concat(
                [os_[:-2], dims[i]] + [dims[j] for j in range(k) if j != i] + [cols], 0))
            inverse = [0] * (nb + k + 1)
            for pos, a in enumerate(perm):
                inverse[a] = pos
            cur = shape_ops.transpose(shaped, inverse)
        total = dims[0]
        for d in dims[1:]:
            total = total * d
        cs = shape_ops.shape(cur)
        return shape_ops.reshape(cur, concat([cs[:nb], total, cols], 0))

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return self._apply(x, adjoint, adjoint_arg, "matmul")

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        if not all(op.is_square for op in self._operators):
            return super()._solve(rhs, adjoint, adjoint_arg)
        return self._apply(rhs, adjoint, adjoint_arg, "solve")

    def _determinant(self):
        if not all(op.is_square for op in self._operators):
            return super()._determinant()
        n = self.domain_dimension_tensor()
        det = None
        for op in self._operators:
            power = math_ops.cast(n // op.domain_dimension_tensor(), op.dtype)
            term = math_ops.pow(op.determinant(), power)
            det = term if det is None else det * term
        return det

    def _log_abs_determinant(self):
        if not all(op.is_square for op in self._operators):
            return super()._log_abs_determinant()
        n = self.domain_dimension_tensor()
        total = None
        for op in self._operators:
            logdet = op.log_abs_determinant()
            term = math_ops.cast(n // op.domain_dimension_tensor(), logdet.dtype) * logdet
            total = term if total is None else total + term
        return total

    def _to_dense(self):
        dense = self._operators[0].to_dense()
        for op in self._operators[1:]:
            right = op.to_dense()
            # kron(A, B)[.., i*p + k, j*q + l] = A[.., i, j] * B[.., k, l]
            a = shape_ops.expand_dims(shape_ops.expand_dims(dense, -1), -3)
            b = shape_ops.expand_dims(shape_ops.expand_dims(right, -3), -2)
            prod = a * b
            ps = shape_ops.shape(prod)
            dense = shape_ops.reshape(prod, concat([ps[:-4], ps[-4:-3] * ps[-3:-2],
                                                    ps[-2:-1] * ps[-1:]], 0))
        dense.set_shape(self.shape)
        return dense

    def _inverse(self):
        return LinearOperatorKronecker([op.inverse() for op in self._operators],
                                       is_non_singular=True)

