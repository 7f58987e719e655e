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
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import constant_value, convert_to_tensor
from tensorflux.ops.control_flow.primitives import no_op
from tensorflux.ops.debug.logging import Assert

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
        condition = get_op_def(op_type)(get_op_def("Rank")(x), rank)
        return Assert(condition, data, summarize=summarize)


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
