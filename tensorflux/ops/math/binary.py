"""Math ops: elementwise binary arithmetic with broadcasting, AddN, and Tensor operators.

This module is also the `math_ops` facade, as in TensorFlow: it re-exports the unary, comparison,
reduction, matmul, cast, select, sequence and segment families (each defined in its own module),
so `math_ops.reduce_sum` and `from tensorflux.ops.math import *` see them all.

Integer division (Div, FloorDiv, TruncateDiv, FloorMod, TruncateMod) by zero raises
InvalidArgumentError ("Integer division by zero"); FloorDiv/FloorMod round toward -inf, the
Truncate variants toward zero.
"""

from __future__ import annotations

import operator

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.common_shapes import broadcast_shape
from tensorflux.framework.indexed_slices import IndexedSlices
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape, as_shape
from tensorflux.ops.array import constants as constant_ops
from tensorflux.ops.math import comparison as comparison_ops
from tensorflux.ops.math import select as select_ops
from tensorflux.ops.math import unary as unary_ops
from tensorflux.ops.math.broadcast_gradient import unbroadcast

__all__ = ["add", "subtract", "multiply", "divide", "div", "truediv", "realdiv", "floordiv",
           "floor_div", "truncatediv", "floormod", "mod", "truncatemod", "pow", "maximum",
           "minimum", "squared_difference", "atan2", "div_no_nan", "divide_no_nan",
           "scalar_mul", "add_n", "accumulate_n"]

_SIGNED = "int8, int16, int32, int64"
_UNSIGNED = "uint8, uint16, uint32, uint64"
_ARITH = f"{{floattype, {_SIGNED}, {_UNSIGNED}, complex64, complex128}}"


def _binary(name: str, types: str = _ARITH, differentiable: bool = True):
    """Defines an elementwise binary op `z = f(x, y)` with NumPy broadcasting (no kernel)."""
    op = define_op(name, inputs=["x: T", "y: T"], outputs=["z: T"], attrs=[f"T: {types}"],
                   differentiable=differentiable)
    op.shape_fn(broadcast_shape)
    return op


def _int_zero_check(y):
    if not (y.all() if type(y) is np.ndarray else np.all(y)):  # the method: no dispatch layer
        raise errors.InvalidArgumentError(None, None, "Integer division by zero")


def _division_factory(int_fn, float_fn):
    """Kernel factory choosing the integer or floating rule once per node from T."""

    def factory(T):
        if T.is_integer:
            def int_kernel(x, y):
                _int_zero_check(y)
                return int_fn(x, y)

            return int_kernel

        def float_kernel(x, y):
            with np.errstate(divide="ignore", invalid="ignore"):
                return float_fn(x, y)

        return float_kernel

    return factory


def _truncate_divide(x, y):
    quotient = np.abs(x) // np.abs(y)
    return np.where((x < 0) != (y < 0), -quotient, quotient).astype(x.dtype, copy=False)


def _float_truncate_divide(x, y):
    return np.trunc(x / y)


# NOTE: AddV2's kernel is the bare operator: the executor benchmark measures per-op overhead.
AddV2 = _binary("AddV2")
AddV2.kernel(operator.add)
Add = _binary("Add", types=f"{{floattype, {_SIGNED}, uint8, complex64, complex128, string}}")
Add.kernel(operator.add)
Sub = _binary("Sub")
Sub.kernel(operator.sub)
Mul = _binary("Mul")
Mul.kernel(operator.mul)
Div = _binary("Div")
Div.kernel(_division_factory(_truncate_divide, np.true_divide), factory=True)
RealDiv = _binary("RealDiv")
RealDiv.kernel(_division_factory(_truncate_divide, np.true_divide), factory=True)
TruncateDiv = _binary("TruncateDiv", differentiable=False)
TruncateDiv.kernel(_division_factory(_truncate_divide, _float_truncate_divide), factory=True)
FloorDiv = _binary("FloorDiv", differentiable=False)
FloorDiv.kernel(_division_factory(np.floor_divide, np.floor_divide), factory=True)
FloorMod = _binary("FloorMod", types=f"{{{_SIGNED}, {_UNSIGNED}, floattype}}")
FloorMod.kernel(_division_factory(np.mod, np.mod), factory=True)
TruncateMod = _binary("TruncateMod", types="{int32, int64, floattype}")
TruncateMod.kernel(_division_factory(np.fmod, np.fmod), factory=True)
Mod = _binary("Mod", types="{int32, int64, floattype}")
Mod.kernel(_division_factory(np.fmod, np.fmod), factory=True)
Pow = _binary("Pow", types=f"{{floattype, {_SIGNED}, complex64, complex128}}")
Maximum = _binary("Maximum", types="{realnumbertype}")
Maximum.kernel(np.maximum)
Minimum = _binary("Minimum", types="{realnumbertype}")
Minimum.kernel(np.minimum)
SquaredDifference = _binary("SquaredDifference",
                            types="{floattype, int32, int64, complex64, complex128}")
DivNoNan = _binary("DivNoNan", types="{floattype, complex64, complex128}")
Atan2 = define_op("Atan2", inputs=["y: T", "x: T"], outputs=["z: T"], attrs=["T: {floattype}"])
Atan2.shape_fn(broadcast_shape)
Atan2.kernel(np.arctan2)

@Pow.kernel(factory=True)
def _pow_factory(T):
    if T.is_integer:
        def int_pow(x, y):
            if np.any(y < 0):
                raise errors.InvalidArgumentError(
                    None, None, "Integers to negative integer powers are not allowed")
            return np.power(x, y)

        return int_pow

    def float_pow(x, y):
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return np.power(x, y)

    return float_pow


@SquaredDifference.kernel(factory=True)
def _squared_difference_factory(T):
    if T.is_complex:
        def complex_kernel(x, y):
            d = x - y
            return d * np.conj(d)

        return complex_kernel

    def kernel(x, y):
        d = x - y
        return d * d

    return kernel


@DivNoNan.kernel
def _div_no_nan_kernel(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.true_divide(x, y)
    return np.where(y == 0, np.zeros([], z.dtype), z)


# -- gradients ------------------------------------------------------------------------------

def _conj(t):
    if t.dtype.is_complex:
        return unary_ops.conj(t)
    return t


@AddV2.gradient
def _add_grad(op, grad):
    x, y = op.inputs
    return unbroadcast(grad, x), unbroadcast(grad, y)


Add.gradient(_add_grad)


@Sub.gradient
def _sub_grad(op, grad):
    x, y = op.inputs
    return unbroadcast(grad, x), unbroadcast(unary_ops.negative(grad), y)


@Mul.gradient
def _mul_grad(op, grad):
    x, y = op.inputs
    return unbroadcast(Mul(grad, _conj(y)), x), unbroadcast(Mul(_conj(x), grad), y)


def _div_grad(op, grad):
    x, y = op.inputs
    x, y = _conj(x), _conj(y)
    gx = RealDiv(grad, y)
    gy = Mul(grad, RealDiv(RealDiv(unary_ops.negative(x), y), y))
    return unbroadcast(gx, op.inputs[0]), unbroadcast(gy, op.inputs[1])


Div.gradient(_div_grad)
RealDiv.gradient(_div_grad)


def _mod_grad(quotient_op):
    def grad_fn(op, grad):
        x, y = op.inputs
        gy = Mul(grad, unary_ops.negative(quotient_op(x, y)))
        return unbroadcast(grad, x), unbroadcast(gy, y)

    return grad_fn


FloorMod.gradient(_mod_grad(FloorDiv))
TruncateMod.gradient(_mod_grad(TruncateDiv))
Mod.gradient(_mod_grad(TruncateDiv))


def _min_max_grad(selector):
    def grad_fn(op, grad):
        x, y = op.inputs
        zero = np.zeros([], grad.dtype.as_numpy_dtype)
        x_wins = selector(x, y)
        return (unbroadcast(select_ops.where_v2(x_wins, grad, zero), x),
                unbroadcast(select_ops.where_v2(x_wins, zero, grad), y))

    return grad_fn


def _greater_equal(x, y):
    return comparison_ops.GreaterEqual(x, y)


def _less_equal(x, y):
    return comparison_ops.LessEqual(x, y)


Maximum.gradient(_min_max_grad(_greater_equal))
Minimum.gradient(_min_max_grad(_less_equal))


@Atan2.gradient
def _atan2_grad(op, grad):
    y, x = op.inputs
    scale = RealDiv(grad, AddV2(Mul(x, x), Mul(y, y)))
    return unbroadcast(Mul(x, scale), y), unbroadcast(Mul(unary_ops.negative(y), scale), x)


@Pow.gradient
def _pow_grad(op, grad):
    # NOTE: the incoming gradient multiplies first (as TF orders it): with a zero gradient,
    # `grad * y` is 0 before meeting a large `x ** (y - 1)` or `z * log(x)` (no 0 * inf NaN in
    # float16). Complex inputs use the conjugates (the gradient of a holomorphic function).
    x, y = op.inputs
    z = op.outputs[0]
    cx, cy, cz = _conj(x), _conj(y), _conj(z)
    one = np.ones([], x.dtype.as_numpy_dtype)
    zero = np.zeros([], x.dtype.as_numpy_dtype)
    gx = Mul(Mul(grad, cy), Pow(cx, Sub(cy, one)))
    if x.dtype.is_complex:
        log_x = select_ops.where_v2(comparison_ops.Equal(cx, zero), zero, unary_ops.log(cx))
    else:
        positive = comparison_ops.greater(x, zero)
        safe_x = select_ops.where_v2(positive, x, one)
        log_x = select_ops.where_v2(positive, unary_ops.log(safe_x), zero)
    gy = Mul(Mul(grad, cz), log_x)
    return unbroadcast(gx, x), unbroadcast(gy, y)


@SquaredDifference.gradient
def _squared_difference_grad(op, grad):
    x, y = op.inputs
    two = np.asarray(2, grad.dtype.as_numpy_dtype)
    gx = Mul(Mul(grad, two), Sub(x, y))
    return unbroadcast(gx, x), unbroadcast(unary_ops.negative(gx), y)


@DivNoNan.gradient
def _div_no_nan_grad(op, grad):
    x, y = op.inputs
    gx = DivNoNan(grad, _conj(y))
    gy = Mul(grad, DivNoNan(DivNoNan(unary_ops.negative(_conj(x)), _conj(y)), _conj(y)))
    return unbroadcast(gx, x), unbroadcast(gy, y)


# -- AddN -----------------------------------------------------------------------------------

AddN = define_op("AddN", inputs=["inputs: N * T"], outputs=["sum: T"],
                 attrs=["N: int >= 1", "T: {numbertype, variant}"])


@AddN.shape_fn
def _add_n_shape(inputs):
    result = inputs[0]
    for shape in inputs[1:]:
        if not result.is_compatible_with(shape):
            raise ValueError(f"Inputs must have the same shape, got {result} and {shape}")
        result = result.merge_with(shape)
    return result


@AddN.kernel
def _add_n_kernel(*inputs):
    total = inputs[0] + inputs[1] if len(inputs) > 1 else inputs[0].copy()
    for value in inputs[2:]:
        total += value
    return total


@AddN.gradient
def _add_n_grad(op, grad):
    return [grad] * len(op.inputs)


# -- wrappers -------------------------------------------------------------------------------

def _scoped(scope_name, name, fn):
    graph = graph_mod.get_default_graph()
    with graph.name_scope(name or scope_name) as scope:
        return fn(scope)


def _same_dtype(x, y):
    """Converts x, then y preferring x's dtype (the op reports a remaining mismatch)."""
    x = convert_to_tensor(x, name="x")
    y = convert_to_tensor(y, preferred_dtype=x.dtype.base_dtype, name="y")
    return x, y


def add(x, y, name=None):
    """x + y elementwise with broadcasting (AddV2; strings use Add and concatenate).

    Example:
        >>> tf.add([1, 2], 10)   # -> [11, 12]
    """
    x = convert_to_tensor(x, name="x")
    if x.dtype.base_dtype == dtypes.string:
        return Add(x, y, name=name or "Add")
    return AddV2(x, y, name=name or "Add")


def subtract(x, y, name=None):
    """x - y elementwise with broadcasting."""
    return Sub(x, y, name=name)


def multiply(x, y, name=None):
    """x * y elementwise with broadcasting."""
    return Mul(x, y, name=name)


_TRUEDIV_CAST = {dtypes.int8: dtypes.float32, dtypes.uint8: dtypes.float32,
                 dtypes.int16: dtypes.float32, dtypes.uint16: dtypes.float32,
                 dtypes.int32: dtypes.float64, dtypes.uint32: dtypes.float64,
                 dtypes.int64: dtypes.float64, dtypes.uint64: dtypes.float64}


def _truediv(x, y, name):
    # cycle: ops.math.casting -> ops.math.select imports this module (at import time)
    from tensorflux.ops.math.casting import cast

    x, y = _same_dtype(x, y)
    dtype = x.dtype.base_dtype
    if dtype != y.dtype.base_dtype:
        raise TypeError(f"x and y must have the same dtype, got {dtype.name} != "
                        f"{y.dtype.name}")
    if dtype.is_bool or dtype == dtypes.string:
        raise TypeError(f"Invalid dtype {dtype.name} in __truediv__")
    target = _TRUEDIV_CAST.get(dtype)
    if target is not None:
        x = cast(x, target)
        y = cast(y, target)
    return RealDiv(x, y, name=name)


def truediv(x, y, name=None):
    """x / y in floating point: int8/16 and uint8/16 give float32, wider ints float64.

    Raises:
        TypeError: x and y have different dtypes, or a non-numeric dtype.
    """
    return _scoped("truediv", name, lambda scope: _truediv(x, y, scope))


def divide(x, y, name=None):
    """x / y with Python 3 semantics (`truediv`)."""
    return _scoped("truediv", name, lambda scope: _truediv(x, y, scope))


def div(x, y, name=None):
    """TF1 division: floor division for integers, true division for floats (Python 2)."""

    def build(scope):
        a, b = _same_dtype(x, y)
        if a.dtype.is_floating or a.dtype.is_complex:
            return RealDiv(a, b, name=scope)
        return FloorDiv(a, b, name=scope)

    return _scoped("div", name, build)


def realdiv(x, y, name=None):
    """x / y for real (floating) tensors; integers truncate toward zero."""
    return RealDiv(x, y, name=name)


def floordiv(x, y, name=None):
    """x // y rounding toward -inf (`floordiv(-7, 2) == -4`)."""
    return _scoped("floordiv", name, lambda scope: FloorDiv(*_same_dtype(x, y), name=scope))


def floor_div(x, y, name=None):
    """x // y rounding toward -inf (FloorDiv)."""
    return FloorDiv(x, y, name=name)


def truncatediv(x, y, name=None):
    """x / y rounding toward zero (C semantics)."""
    return TruncateDiv(x, y, name=name)


def floormod(x, y, name=None):
    """Remainder with the sign of `y` (Python %: `mod(-7, 3) == 2`)."""
    return FloorMod(x, y, name=name)


mod = floormod


def truncatemod(x, y, name=None):
    """Remainder with the sign of `x` (C fmod: `truncatemod(-7, 3) == -1`)."""
    return TruncateMod(x, y, name=name)


def pow(x, y, name=None):  # noqa: A001 - TF name
    """x ** y elementwise; integer x to a negative integer power is an error."""
    return _scoped("Pow", name, lambda scope: Pow(*_same_dtype(x, y), name=scope))


def maximum(x, y, name=None):
    """Elementwise max(x, y); NaN propagates."""
    return Maximum(x, y, name=name)


def minimum(x, y, name=None):
    """Elementwise min(x, y); NaN propagates."""
    return Minimum(x, y, name=name)


def squared_difference(x, y, name=None):
    """(x - y) * conj(x - y) elementwise."""
    return SquaredDifference(x, y, name=name)


def atan2(y, x, name=None):
    """The angle of the point (x, y): arctan(y / x) with the quadrant from the signs."""
    return Atan2(y, x, name=name)


def div_no_nan(x, y, name=None):
    """x / y, but 0 wherever y == 0; integer inputs are first cast as in `truediv`."""

    def build(scope):
        # cycle: ops.math.casting -> ops.math.select imports this module (at import time)
        from tensorflux.ops.math.casting import cast

        a, b = _same_dtype(x, y)
        target = _TRUEDIV_CAST.get(a.dtype.base_dtype)
        if target is not None:
            a, b = cast(a, target), cast(b, target)
        return DivNoNan(a, b, name=scope)

    return _scoped("div_no_nan", name, build)


divide_no_nan = div_no_nan


def scalar_mul(scalar, x, name=None):
    """scalar * x, where `scalar` is a 0-d value converted to x's dtype.

    `x` may be an IndexedSlices (a sparse gradient): its values are scaled.

    Raises:
        ValueError: `scalar` is not 0-d.
    """

    values = x.values if isinstance(x, IndexedSlices) else convert_to_tensor(x)
    scalar = convert_to_tensor(scalar, dtype=values.dtype.base_dtype, name="scalar")
    if scalar.shape.ndims not in (None, 0):
        raise ValueError(f"Only scalar multiply works, got shape {scalar.shape}")
    if isinstance(x, IndexedSlices):
        return IndexedSlices(Mul(scalar, values, name=name), x.indices, x.dense_shape)
    return Mul(scalar, values, name=name)


def add_n(inputs, name=None):
    """Sums a list of same-shaped tensors (AddN); a one-element list is returned as is.

    Raises:
        ValueError: `inputs` is empty or not a list of tensors.
    """
    if not inputs or not isinstance(inputs, (list, tuple)):
        raise ValueError("inputs must be a list of at least one Tensor with the same dtype "
                         "and shape")
    values = [convert_to_tensor(v) for v in inputs]
    if len(values) == 1:
        if name:
            return constant_ops.identity(values[0], name=name)
        return values[0]
    return AddN(values, name=name)


def accumulate_n(inputs, shape=None, tensor_dtype=None, name=None):
    """Sums a list of tensors of one dtype and shape (TF1's accumulate_n; computed with AddN).

    Args:
        inputs: a non-empty list of tensors (or IndexedSlices) of the same dtype and shape.
        shape: optional expected shape of every input (and of the result).
        tensor_dtype: optional expected dtype of every input.
        name: optional name.

    Raises:
        ValueError: `inputs` is empty or not a list, the inputs' dtypes differ, or their
            shapes (or `shape`) are incompatible.
        TypeError: `tensor_dtype` differs from the inputs' dtype.
    """
    if not inputs or not isinstance(inputs, (list, tuple)):
        raise ValueError("inputs must be a list of at least one Tensor/IndexedSlices with the "
                         "same dtype and shape")
    values = [v if isinstance(v, IndexedSlices) else convert_to_tensor(v) for v in inputs]
    first = values[0].dtype.base_dtype
    if any(v.dtype.base_dtype != first for v in values):
        raise ValueError("inputs must be a list of at least one Tensor/IndexedSlices with the "
                         "same dtype and shape")
    merged = as_shape(shape) if shape is not None else TensorShape(None)
    for v in values:
        if isinstance(v, Tensor):
            merged = merged.merge_with(v.shape)
    if tensor_dtype is not None and dtypes.as_dtype(tensor_dtype) != first:
        raise TypeError(f"tensor_dtype is {dtypes.as_dtype(tensor_dtype).name}, but input is "
                        f"of type {first.name}")
    return add_n(values, name=name)


# -- operator overloads ----------------------------------------------------------------------

def _overload(op_fn, scope: str):
    """TF1's binary operator wrapper: the other operand converts to self's dtype."""

    def binary(self, other):
        graph = graph_mod.get_default_graph()
        with graph.name_scope(scope) as name:
            try:
                y = convert_to_tensor(other, dtype=self.dtype.base_dtype, name="y")
            except (TypeError, ValueError):
                if hasattr(type(other), f"__r{scope}__") and not isinstance(other, Tensor):
                    return NotImplemented
                raise
            return op_fn(self, y, name=name)

    def reverse(self, other):
        graph = graph_mod.get_default_graph()
        with graph.name_scope(scope) as name:
            x = convert_to_tensor(other, dtype=self.dtype.base_dtype, name="x")
            return op_fn(x, self, name=name)

    return binary, reverse


def _matmul(a, b, name=None):
    # cycle: ops.math.matrix_product -> ops.math.unary imports this module (at import time)
    from tensorflux.ops.math.matrix_product import matmul

    return matmul(a, b, name=name)


def _logical(op_name):
    def fn(x, y, name=None):
        return getattr(comparison_ops, op_name)(x, y, name=name)

    return fn


def _install_operators():
    table = [("add", lambda x, y, name: AddV2(x, y, name=name)
              if x.dtype.base_dtype != dtypes.string else Add(x, y, name=name)),
             ("sub", lambda x, y, name: Sub(x, y, name=name)),
             ("mul", lambda x, y, name: Mul(x, y, name=name)),
             ("truediv", _truediv),
             ("div", lambda x, y, name: div(x, y, name=name)),
             ("floordiv", lambda x, y, name: FloorDiv(x, y, name=name)),
             ("mod", lambda x, y, name: FloorMod(x, y, name=name)),
             ("pow", lambda x, y, name: Pow(x, y, name=name)),
             ("matmul", _matmul),
             ("and", _logical("LogicalAnd")),
             ("or", _logical("LogicalOr")),
             ("xor", _logical("logical_xor"))]
    for scope, fn in table:
        binary, reverse = _overload(fn, scope)
        Tensor._override_operator(f"__{scope}__", binary)
        Tensor._override_operator(f"__r{scope}__", reverse)


_install_operators()
