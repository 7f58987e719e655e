"""The TF1 compatibility surface programs call at their top, and small introspection helpers.

tensorflux is TF1 graph mode only: the `disable_*` switches (and the behaviour toggles that
only matter to TF2) are accepted as no-ops, while `enable_eager_execution` and
`enable_v2_behavior` raise a ValueError saying eager mode is not supported. The helpers
(`is_tensor`, `get_static_value`, `dimension_value`, `assert_near`, `arg_max`, ...) follow
`tf.compat.v1`.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.indexed_slices import IndexedSlices
from tensorflux.framework.sparse_tensor import SparseTensor
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import constant_value, convert_to_tensor
from tensorflux.framework.tensor_shape import Dimension, TensorShape
from tensorflux.ops import math as math_ops
from tensorflux.ops.debug.logging import Assert
from tensorflux.ops.math import comparison as comparison_ops
from tensorflux.ops.math import reduction as reduction_ops
from tensorflux.ops.math import unary as unary_ops
from tensorflux.ops.math.casting import cast
from tensorflux.ops.state import resource_variables
from tensorflux.ops.state.variables import Variable
from tensorflux.platform.tf_logging import get_logger

__all__ = ["disable_v2_behavior", "enable_v2_behavior", "disable_eager_execution",
           "enable_eager_execution", "executing_eagerly", "disable_resource_variables",
           "enable_resource_variables", "resource_variables_enabled", "disable_control_flow_v2",
           "enable_control_flow_v2", "control_flow_v2_enabled", "disable_tensor_equality",
           "enable_tensor_equality", "disable_v2_tensorshape", "enable_v2_tensorshape",
           "get_logger", "is_tensor", "get_static_value", "dimension_value",
           "dimension_at_index", "is_numeric_tensor", "assert_near", "arg_max", "arg_min",
           "to_complex64", "to_complex128"]

_EAGER_MESSAGE = ("tensorflux implements TensorFlow 1.x graph mode only: eager execution is not "
                  "supported. Build a graph and run it in a tf.Session instead.")


# -- behaviour switches ----------------------------------------------------------------------

def disable_v2_behavior() -> None:
    """No-op: tensorflux always has TF1 behaviour (graph mode, ref variables, v1 control flow)."""


def enable_v2_behavior() -> None:
    """Always raises: TF2 behaviour means eager execution, which tensorflux does not have.

    Raises:
        ValueError: always.
    """
    raise ValueError(f"enable_v2_behavior: {_EAGER_MESSAGE}")


def disable_eager_execution() -> None:
    """No-op: tensorflux never executes eagerly."""


def enable_eager_execution(config=None, device_policy=None, execution_mode=None) -> None:
    """Always raises: tensorflux has no eager mode.

    Raises:
        ValueError: always.
    """
    raise ValueError(f"enable_eager_execution: {_EAGER_MESSAGE}")


def executing_eagerly() -> bool:
    """False: ops build graph nodes; values come from `Session.run`."""
    return False


def disable_resource_variables() -> None:
    """Makes `tf.Variable` / `tf.get_variable` create reference variables (the TF1 default)."""
    resource_variables.disable_resource_variables()


def enable_resource_variables() -> None:
    """Makes `tf.Variable` / `tf.get_variable` create ResourceVariables unless
    `use_resource=False` is given."""
    resource_variables.enable_resource_variables()


def resource_variables_enabled() -> bool:
    """Whether `tf.Variable` creates ResourceVariables by default."""
    return resource_variables.resource_variables_enabled()


def disable_control_flow_v2() -> None:
    """No-op: `tf.cond` and `tf.while_loop` build v1 control flow (Switch/Merge/Enter/Exit)."""


def enable_control_flow_v2() -> None:
    """No-op: only v1 control flow exists; graphs keep Switch/Merge/Enter/Exit."""


def control_flow_v2_enabled() -> bool:
    """False: control flow is built from the v1 primitives."""
    return False


def disable_tensor_equality() -> None:
    """No-op: tensors compare (and hash) by identity, as in TF1."""


def enable_tensor_equality() -> None:
    """No-op: tensors keep TF1's identity equality, so they stay usable as dict keys."""


def disable_v2_tensorshape() -> None:
    """No-op: `TensorShape` items are `Dimension`s, as in TF1."""


def enable_v2_tensorshape() -> None:
    """No-op: `TensorShape` keeps TF1 `Dimension` items (`dimension_value` reads both)."""


# -- introspection ---------------------------------------------------------------------------

def is_tensor(x) -> bool:
    """Whether `x` is a tensor-like graph value (Tensor, Variable, SparseTensor, IndexedSlices).

    NumPy arrays and Python values are not tensors.
    """
    return isinstance(x, (Tensor, Variable, SparseTensor, IndexedSlices))


def get_static_value(tensor, partial: bool = False):
    """The value of `tensor` if it can be computed while the graph is built, else None.

    Args:
        tensor: a Tensor, or any other value (returned unchanged, as in TF).
        partial: accepted for TF compatibility; only fully known values are returned.

    Returns:
        A NumPy value, None when it depends on feeds or state, or `tensor` itself when it is
        not a graph value.

    Example:
        >>> tf.get_static_value(tf.constant([1, 2]))   # -> array([1, 2], dtype=int32)
    """
    if isinstance(tensor, Variable):
        return None
    if not isinstance(tensor, Tensor):
        return tensor
    return constant_value(tensor)


def dimension_value(dimension):
    """The int (or None) of a `Dimension`; ints and None pass through."""
    if isinstance(dimension, Dimension):
        return dimension.value
    return dimension


def dimension_at_index(shape, index) -> Dimension:
    """The `Dimension` of `shape` at `index` (`Dimension(None)` when the rank is unknown)."""
    shape = TensorShape(shape)
    if shape.dims is None:
        return Dimension(None)
    return Dimension(dimension_value(shape.dims[index]))


_NON_NUMERIC = {dtypes.bool_, dtypes.string}


def is_numeric_tensor(tensor) -> bool:
    """Whether `tensor` is a Tensor of a number dtype (not bool, string or resource)."""
    if not isinstance(tensor, Tensor):
        return False
    dtype = tensor.dtype.base_dtype
    return dtype not in _NON_NUMERIC and (dtype.is_floating or dtype.is_integer
                                          or dtype.is_complex or dtype.is_quantized)


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
    graph = graph_mod.get_default_graph()
    with graph.name_scope(name or "assert_near"):
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
        tolerance = math_ops.add(atol, math_ops.multiply(rtol, unary_ops.abs(y)))
        close = comparison_ops.less_equal(unary_ops.abs(math_ops.subtract(x, y)), tolerance)
        return Assert(reduction_ops.reduce_all(close), data, summarize=summarize)


# -- old names -------------------------------------------------------------------------------

def arg_max(input, dimension, output_type=dtypes.int64, name=None):  # noqa: A002 - TF name
    """The index of the largest entry along `dimension` (old name of `tf.math.argmax`)."""
    return reduction_ops.argmax(input, axis=dimension, output_type=output_type, name=name)


def arg_min(input, dimension, output_type=dtypes.int64, name=None):  # noqa: A002 - TF name
    """The index of the smallest entry along `dimension` (old name of `tf.math.argmin`)."""
    return reduction_ops.argmin(input, axis=dimension, output_type=output_type, name=name)


def to_complex64(x, name="ToComplex64"):
    """Casts `x` to complex64 (old name for `tf.cast(x, tf.complex64)`)."""
    return cast(x, dtypes.complex64, name=name)


def to_complex128(x, name="ToComplex128"):
    """Casts `x` to complex128 (old name for `tf.cast(x, tf.complex128)`)."""
    return cast(x, dtypes.complex128, name=name)
