"""Comparisons (Less ... NotEqual) and logical ops, with broadcasting; bool outputs.

Equal and NotEqual accept every dtype (strings and bools too). With
`incompatible_shape_error=False` shapes that do not broadcast compare as a scalar
False (Equal) / True (NotEqual) instead of failing, as in TensorFlow.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework.common_shapes import broadcast_shape
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_shape import TensorShape

__all__ = ["less", "less_equal", "greater", "greater_equal", "equal", "not_equal",
           "approximate_equal", "logical_and", "logical_or", "logical_not", "logical_xor"]


def _comparison(name, numpy_fn):
    op = define_op(name, inputs=["x: T", "y: T"], outputs=["z: bool"],
                   attrs=["T: {realnumbertype}"], differentiable=False)
    op.shape_fn(broadcast_shape)
    op.kernel(numpy_fn)
    return op


Less = _comparison("Less", np.less)
LessEqual = _comparison("LessEqual", np.less_equal)
Greater = _comparison("Greater", np.greater)
GreaterEqual = _comparison("GreaterEqual", np.greater_equal)


def _equality(name, numpy_fn, mismatch: bool):
    op = define_op(name, inputs=["x: T", "y: T"], outputs=["z: bool"],
                   attrs=["T: type", "incompatible_shape_error: bool = True"],
                   differentiable=False)

    @op.shape_fn
    def _shape(x, y, *, incompatible_shape_error):
        try:
            return broadcast_shape(x, y)
        except ValueError:
            if incompatible_shape_error:
                raise
            return TensorShape([])

    @op.kernel(factory=True)
    def _factory(T, incompatible_shape_error):
        def kernel(x, y):
            if not incompatible_shape_error:
                try:
                    np.broadcast_shapes(np.shape(x), np.shape(y))
                except ValueError:
                    return np.bool_(mismatch)
            return np.asarray(numpy_fn(x, y), dtype=np.bool_)

        return kernel

    return op


Equal = _equality("Equal", np.equal, mismatch=False)
NotEqual = _equality("NotEqual", np.not_equal, mismatch=True)


ApproximateEqual = define_op("ApproximateEqual", inputs=["x: T", "y: T"], outputs=["z: bool"],
                             attrs=["T: {numbertype}", "tolerance: float = 1e-05"],
                             differentiable=False)


@ApproximateEqual.shape_fn
def _approximate_equal_shape(x, y, *, tolerance):
    """Both inputs have one shape (no broadcasting): their merge."""
    if x.ndims is not None and y.ndims is not None and x.ndims != y.ndims:
        raise ValueError(f"Shapes must be equal rank, but are {x.ndims} and {y.ndims}")
    try:
        return x.merge_with(y)
    except ValueError:
        raise ValueError(f"Shapes {x} and {y} must be equal for ApproximateEqual") from None


@ApproximateEqual.kernel
def _approximate_equal_kernel(x, y, *, tolerance):
    if x.shape != y.shape:
        raise ValueError(f"x and y must be of the same shape. x shape: {x.shape}. y shape: "
                         f"{y.shape}")
    return np.abs(x - y) < tolerance


def _logical(name, numpy_fn):
    op = define_op(name, inputs=["x: bool", "y: bool"], outputs=["z: bool"],
                   differentiable=False)
    op.shape_fn(broadcast_shape)
    op.kernel(numpy_fn)
    return op


LogicalAnd = _logical("LogicalAnd", np.logical_and)
LogicalOr = _logical("LogicalOr", np.logical_or)
LogicalNot = define_op("LogicalNot", inputs=["x: bool"], outputs=["y: bool"],
                       differentiable=False)
LogicalNot.shape_fn(lambda x: x)
LogicalNot.kernel(np.logical_not)


def less(x, y, name=None):
    """x < y elementwise (bool)."""
    return Less(x, y, name=name)


def less_equal(x, y, name=None):
    """x <= y elementwise (bool)."""
    return LessEqual(x, y, name=name)


def greater(x, y, name=None):
    """x > y elementwise (bool)."""
    return Greater(x, y, name=name)


def greater_equal(x, y, name=None):
    """x >= y elementwise (bool)."""
    return GreaterEqual(x, y, name=name)


def equal(x, y, name=None):
    """x == y elementwise (bool); any dtype, including strings.

    Example:
        >>> tf.equal(["a", "b"], "a")   # -> [True, False]
    """
    return Equal(x, y, name=name)


def not_equal(x, y, name=None):
    """x != y elementwise (bool); any dtype, including strings."""
    return NotEqual(x, y, name=name)


def approximate_equal(x, y, tolerance=0.00001, name=None):
    """|x - y| < tolerance elementwise (bool); `x` and `y` must have the same shape."""
    return ApproximateEqual(x, y, tolerance=tolerance, name=name)


def logical_and(x, y, name=None):
    """x AND y elementwise for bool tensors."""
    return LogicalAnd(x, y, name=name)


def logical_or(x, y, name=None):
    """x OR y elementwise for bool tensors."""
    return LogicalOr(x, y, name=name)


def logical_not(x, name=None):
    """NOT x elementwise for a bool tensor."""
    return LogicalNot(x, name=name)


def logical_xor(x, y, name="LogicalXor"):
    """x XOR y elementwise: (x OR y) AND NOT (x AND y), as TensorFlow composes it."""
    return LogicalAnd(LogicalOr(x, y), LogicalNot(LogicalAnd(x, y)), name=name)


def _compare_operator(op):
    def compare(self, other):
        return op(self, other)

    return compare


def _invert(self):
    return LogicalNot(self)


for _dunder, _op in (("__lt__", Less), ("__le__", LessEqual), ("__gt__", Greater),
                     ("__ge__", GreaterEqual)):
    Tensor._override_operator(_dunder, _compare_operator(_op))
Tensor._override_operator("__invert__", _invert)
