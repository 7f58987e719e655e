"""`tf.assert_*`: checks that fail at graph construction when they can, else at run time.

Each check converts its inputs, and when their values are known while the graph is built
(`constant_value`) and the check fails, raises at once as TensorFlow does: InvalidArgumentError
for value checks, ValueError for rank checks, TypeError for type checks. Otherwise it returns an
Assert op (run it or make it a control dependency) or, for checks settled statically, a NoOp.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework.op_def import get_op_def
from tensorflux.framework.scopes import op_name_scope as _scope
from tensorflux.framework.sparse_tensor import SparseTensor
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import constant_value, convert_to_tensor
from tensorflux.ops.array import concat_split, shapes
from tensorflux.ops.control_flow.primitives import no_op, with_dependencies
from tensorflux.ops.debug.logging import Assert, check_numerics
from tensorflux.ops.math import binary, comparison, reduction, unary

__all__ = ["assert_equal", "assert_none_equal", "assert_less", "assert_less_equal",
           "assert_greater", "assert_greater_equal", "assert_positive", "assert_negative",
           "assert_non_negative", "assert_non_positive", "assert_rank", "assert_rank_at_least",
           "assert_type", "assert_integer", "assert_scalar"]



def _message_prefix(message) -> str:
    return f"{message}.  " if message else ""


def _static_text(item) -> str:
    if not isinstance(item, Tensor):
        return str(item)
    value = constant_value(item)
    return str(item) if value is None else str(value)


def _assert_static(condition, data) -> None:
    if not condition:
        raise errors.InvalidArgumentError(None, None, "\n".join(_static_text(d) for d in data))


def _reduce_all(condition: Tensor) -> Tensor:
    ndims = condition.shape.ndims
    if ndims is not None:
        axes = convert_to_tensor(np.arange(ndims, dtype=np.int32))
    else:
        axes = get_op_def("Range")(np.int32(0), get_op_def("Rank")(condition), np.int32(1))
    return get_op_def("All")(condition, axes)


def _binary_assert(sym, default_name, op_type, static_fn, x, y, data, summarize, message,
                   name):
    with _scope(name, default_name):
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y", dtype=x.dtype.base_dtype)
        if data is None:
            data = [f"Condition x {sym} y did not hold element-wise:",
                    f"x ({x.name}) = ", x, f"y ({y.name}) = ", y]
        if message is not None:
            data = [message, *data]
        condition = _reduce_all(get_op_def(op_type)(x, y))
        x_static = constant_value(x)
        y_static = constant_value(y)
        if x_static is not None and y_static is not None:
            _assert_static(bool(np.all(static_fn(x_static, y_static))), data)
        return Assert(condition, data, summarize=summarize)


def assert_equal(x, y, data=None, summarize=None, message=None, name=None):
    """Checks `x == y` element-wise (with broadcasting).

    Args:
        x: a tensor.
        y: a tensor of the same dtype, broadcastable with `x`.
        data: tensors to show on failure (default: a message, `x` and `y`).
        summarize: entries to show per tensor.
        message: a prefix for the failure message.
        name: optional name (default "assert_equal").

    Returns:
        An Assert op; a NoOp when `x` and `y` are the same tensor.

    Raises:
        InvalidArgumentError: both values are known while building and differ.

    Example:
        >>> with tf.control_dependencies([tf.assert_equal(tf.shape(a), tf.shape(b))]):
        ...     c = a + b
    """
    if x is y and isinstance(x, Tensor):
        with _scope(name, "assert_equal"):
            return no_op()
    return _binary_assert("==", "assert_equal", "Equal", np.equal, x, y, data, summarize,
                          message, name)


def assert_none_equal(x, y, data=None, summarize=None, message=None, name=None):
    """Checks `x != y` for every element (see `assert_equal` for the arguments)."""
    return _binary_assert("!=", "assert_none_equal", "NotEqual", np.not_equal, x, y, data,
                          summarize, message, name)


def assert_less(x, y, data=None, summarize=None, message=None, name=None):
    """Checks `x < y` element-wise (see `assert_equal` for the arguments)."""
    return _binary_assert("<", "assert_less", "Less", np.less, x, y, data, summarize, message,
                          name)


def assert_less_equal(x, y, data=None, summarize=None, message=None, name=None):
    """Checks `x <= y` element-wise (see `assert_equal` for the arguments)."""
    return _binary_assert("<=", "assert_less_equal", "LessEqual", np.less_equal, x, y, data,
                          summarize, message, name)


def assert_greater(x, y, data=None, summarize=None, message=None, name=None):
    """Checks `x > y` element-wise (see `assert_equal` for the arguments)."""
    return _binary_assert(">", "assert_greater", "Greater", np.greater, x, y, data, summarize,
                          message, name)


def assert_greater_equal(x, y, data=None, summarize=None, message=None, name=None):
    """Checks `x >= y` element-wise (see `assert_equal` for the arguments)."""
    return _binary_assert(">=", "assert_greater_equal", "GreaterEqual", np.greater_equal, x, y,
                          data, summarize, message, name)


def _sign_assert(default_name, sym, check, zero_first, x, data, summarize, message, name):
    message = _message_prefix(message)
    with _scope(name, default_name):
        x = convert_to_tensor(x, name="x")
        if data is None:
            data = [message, f"Condition x {sym} 0 did not hold element-wise:",
                    f"x ({x.name}) = ", x]
        zero = convert_to_tensor(0, dtype=x.dtype.base_dtype)
        args = (zero, x) if zero_first else (x, zero)
        return check(*args, data=data, summarize=summarize)


def assert_positive(x, data=None, summarize=None, message=None, name=None):
    """Checks `x > 0` element-wise.

    Args:
        x: a numeric tensor.
        data: tensors to show on failure.
        summarize: entries to show per tensor.
        message: a prefix for the failure message.
        name: optional name.

    Returns:
        An Assert op.
    """
    return _sign_assert("assert_positive", ">", assert_less, True, x, data, summarize, message,
                        name)


def assert_negative(x, data=None, summarize=None, message=None, name=None):
    """Checks `x < 0` element-wise (see `assert_positive`)."""
    return _sign_assert("assert_negative", "<", assert_less, False, x, data, summarize, message,
                        name)


def assert_non_negative(x, data=None, summarize=None, message=None, name=None):
    """Checks `x >= 0` element-wise (see `assert_positive`)."""
    return _sign_assert("assert_non_negative", ">=", assert_less_equal, True, x, data, summarize,
                        message, name)


def assert_non_positive(x, data=None, summarize=None, message=None, name=None):
    """Checks `x <= 0` element-wise (see `assert_positive`)."""
    return _sign_assert("assert_non_positive", "<=", assert_less_equal, False, x, data,
                        summarize, message, name)


def _rank_assert(default_name, what, static_ok, op_type, x, rank, data, summarize, message,
                 name):
    with _scope(name, default_name):
        x = convert_to_tensor(x, name="x")
        rank = convert_to_tensor(rank, name="rank")
        message = _message_prefix(message)
        if rank.dtype.base_dtype != dtypes.int32:
            raise TypeError(f"{rank.name} must be of type tf.int32; got {rank.dtype!r}")
        if data is None:
            data = [message, f"Tensor {x.name} must have {what}", rank, "Received shape: ",
                    get_op_def("Shape")(x)]
        rank_static = constant_value(rank)
        if rank_static is not None:
            if np.ndim(rank_static) != 0:
                raise ValueError("Rank must be a scalar.")
            actual = x.shape.ndims
            if actual is not None:
                if not static_ok(actual, int(rank_static)):
                    raise ValueError(f"{message}Tensor {x.name} must have {what} "
                                     f"{int(rank_static)}.  Received rank {actual}, shape "
                                     f"{x.shape}")
                return no_op(name="static_checks_determined_all_ok")
        rank = _checked_scalar_rank(rank)
        condition = get_op_def(op_type)(get_op_def("Rank")(x), rank)
        return Assert(condition, data, summarize=summarize)


def _checked_scalar_rank(rank):
    """`rank`, usable only once a run-time check found it a scalar (as TF: a rank fed as
    [n] fails with "Rank must be a scalar" rather than inside the comparison)."""
    check = Assert(comparison.equal(shapes.rank(rank), 0),
                   ["Rank must be a scalar. Received rank: ", rank])
    return with_dependencies([check], rank)


def assert_rank(x, rank, data=None, summarize=None, message=None, name=None):
    """Checks that `x` has rank `rank`.

    Args:
        x: a tensor.
        rank: a scalar int32.
        data: tensors to show on failure.
        summarize: entries to show per tensor.
        message: a prefix for the failure message.
        name: optional name.

    Returns:
        An Assert op, or a NoOp when the static rank settles it.

    Raises:
        ValueError: the static rank of `x` is known and wrong.
    """
    return _rank_assert("assert_rank", "rank", lambda a, r: a == r, "Equal", x, rank, data,
                        summarize, message, name)


def assert_rank_at_least(x, rank, data=None, summarize=None, message=None, name=None):
    """Checks that `x` has rank `rank` or more (see `assert_rank`)."""
    return _rank_assert("assert_rank_at_least", "rank at least", lambda a, r: a >= r,
                        "GreaterEqual", x, rank, data, summarize, message, name)


def assert_type(tensor, tf_type, message=None, name=None):
    """Checks statically that `tensor` has dtype `tf_type`.

    Returns:
        A NoOp.

    Raises:
        TypeError: the dtypes differ.
    """
    tf_type = dtypes.as_dtype(tf_type)
    with _scope(name, "assert_type"):
        tensor = convert_to_tensor(tensor, name="tensor")
        if tensor.dtype.base_dtype != tf_type:
            raise TypeError(f"{_message_prefix(message)}{tensor.name} must be of type "
                            f"{tf_type!r}; got {tensor.dtype!r}")
        return no_op(name="statically_determined_correct_type")


def assert_integer(x, message=None, name=None):
    """Checks statically that `x` has an integer dtype.

    Returns:
        A NoOp.

    Raises:
        TypeError: `x` is not an integer tensor.
    """
    with _scope(name, "assert_integer"):
        x = convert_to_tensor(x, name="x")
        if not x.dtype.is_integer:
            raise TypeError(f'{_message_prefix(message)}Expected "x" to be integer type.  '
                            f"Found: {x.name} of dtype {x.dtype}")
        return no_op(name="statically_determined_was_integer")


def assert_scalar(tensor, name=None, message=None):
    """Checks statically that `tensor` is a scalar; returns it (converted).

    Raises:
        ValueError: its rank is not 0, or unknown.
    """
    with _scope(name, "assert_scalar") as scope:
        tensor = convert_to_tensor(tensor, name=scope.rstrip("/") or None)
        shape = tensor.shape
        if shape.ndims != 0:
            raise ValueError(f"{_message_prefix(message)}Expected scalar shape for "
                             f"{tensor.name}, saw shape: {shape}.")
        return tensor


# -- tf.assert_near, tf.assert_rank_in, ... (root names, not in tf.debugging) --------------

def assert_near(x, y, rtol=None, atol=None, data=None, summarize=None, message=None, name=None):
    """Checks `|x - y| <= atol + rtol * |y|` element-wise, at run time.

    Args:
        x: a float or complex tensor.
        y: a tensor of the same dtype, broadcastable with `x`.
        rtol: relative tolerance (default 10 * machine epsilon of the dtype).
        atol: absolute tolerance (default 10 * machine epsilon of the dtype).
        data: tensors to show on failure (default: a message, `x` and `y`).
        summarize: entries to show per tensor.
        message: a prefix for the failure message.
        name: optional name (default "assert_near").

    Returns:
        An Assert op: run it, or make it a control dependency.

    Raises:
        TypeError: `x` is not a float or complex tensor.
    """
    with _scope(name, "assert_near"):
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y", dtype=x.dtype.base_dtype)
        dtype = x.dtype.base_dtype
        if not (dtype.is_floating or dtype.is_complex):
            raise TypeError(f"assert_near: x must be a float or complex tensor, got {dtype!r}")
        real = dtype.real_dtype if dtype.is_complex else dtype
        eps = 10 * np.finfo(real.as_numpy_dtype).eps
        rtol = convert_to_tensor(eps if rtol is None else rtol, name="rtol", dtype=real)
        atol = convert_to_tensor(eps if atol is None else atol, name="atol", dtype=real)
        if data is None:
            data = [f"x and y not equal to tolerance rtol = {rtol}, atol = {atol}",
                    f"x ({x.name}) = ", x, f"y ({y.name}) = ", y]
        if message is not None:
            data = [message, *data]
        tolerance = binary.add(atol, binary.multiply(rtol, unary.abs(y)))
        close = comparison.less_equal(unary.abs(binary.subtract(x, y)), tolerance)
        return Assert(reduction.reduce_all(close), data, summarize=summarize)


def assert_rank_in(x, ranks, data=None, summarize=None, message=None, name=None):
    """Checks that the rank of `x` is one of `ranks`.

    Args:
        x: a tensor.
        ranks: an iterable of scalar int32 ranks.
        data: tensors to show on failure.
        summarize: entries to show per tensor.
        message: a prefix for the failure message.
        name: optional name.

    Returns:
        An Assert op, or a NoOp when the static rank settles it.

    Raises:
        ValueError: the static rank of `x` is known and not in `ranks`.

    Example:
        >>> tf.assert_rank_in(images, [3, 4])
    """

    with _scope(name, "assert_rank_in"):
        x = convert_to_tensor(x, name="x")
        ranks = [convert_to_tensor(r, name="rank") for r in ranks]
        prefix = f"{message}.  " if message else ""
        for rank in ranks:
            if rank.dtype.base_dtype != dtypes.int32:
                raise TypeError(f"{rank.name} must be of type tf.int32; got {rank.dtype!r}")
        static = [constant_value(r) for r in ranks]
        if all(s is not None for s in static):
            if any(np.ndim(s) != 0 for s in static):
                raise ValueError("Rank must be a scalar.")
            wanted = tuple(int(s) for s in static)
            if x.shape.ndims is not None:
                if x.shape.ndims not in wanted:
                    raise ValueError(f"{prefix}Tensor {x.name} must have rank in {wanted}.  "
                                     f"Received rank {x.shape.ndims}, shape {x.shape}")
                return no_op(name="static_checks_determined_all_ok")

        if data is None:
            data = [prefix, f"Tensor {x.name} must have rank in", *ranks, "Received shape: ",
                    shapes.shape(x)]
        ranks = [r if s is not None else _checked_scalar_rank(r)
                 for r, s in zip(ranks, static)]
        condition = reduction.reduce_any(comparison.equal(concat_split.stack(ranks),
                                                          shapes.rank(x)))
        return Assert(condition, data, summarize=summarize)


def assert_same_float_dtype(tensors=None, dtype=None):
    """Validates that `tensors` (and `dtype`) share one floating base dtype.

    Args:
        tensors: tensors (or None entries, or objects with a `dtype`) to check.
        dtype: an expected dtype, or None.

    Returns:
        The common floating dtype (float32 when nothing names one).

    Raises:
        ValueError: the dtypes differ or are not floating.
    """
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype).base_dtype
    for tensor in tensors or ():
        if tensor is None or getattr(tensor, "dtype", None) is None:
            continue
        base = dtypes.as_dtype(tensor.dtype).base_dtype
        if dtype is None:
            dtype = base
        elif base != dtype:
            raise ValueError(f"{getattr(tensor, 'name', tensor)}, type={base.name} must be of "
                             f"the same type ({dtype.name}).")
    if dtype is None:
        return dtypes.float32
    if not dtype.is_floating:
        raise ValueError(f"Expected floating point type, got {dtype.name}.")
    return dtype


def assert_proper_iterable(values):
    """Raises TypeError unless `values` is an iterable of values (not a tensor, array or
    string, which iterate as one value in TF's eyes)."""

    if isinstance(values, (Tensor, SparseTensor, np.ndarray, str, bytes, bytearray)):
        raise TypeError(f"Expected argument 'values' to be a \"proper\" iterable.  Found: "
                        f"{type(values)}")
    if not hasattr(values, "__iter__"):
        raise TypeError(f"Expected argument 'values' to be iterable.  Found: {type(values)}")


def verify_tensor_all_finite(t=None, msg=None, name=None, x=None, message=None):
    """Returns `t`, failing the step if it holds NaN or Inf (a CheckNumerics dependency).

    Args:
        t: a floating tensor (`x` is the TF2 spelling).
        msg: the error message prefix (`message` is the TF2 spelling).
        name: optional name.

    Returns:
        `t`'s value, produced after the check.
    """

    t = x if t is None else t
    msg = message if msg is None else msg
    if t is None:
        raise TypeError("verify_tensor_all_finite() needs a tensor `t`")
    with _scope(name, "VerifyFinite"):
        t = convert_to_tensor(t, name="t")
        check = check_numerics(t, message=msg)
        return with_dependencies([check], t)
