"""TF's `weights_broadcast_ops`: checking and broadcasting loss and metric weights.

Weights broadcast to values when they are a scalar, or have the values' rank with every
dimension either 1 or equal to the values' dimension (stricter than NumPy: no rank promotion).
Static shapes decide at graph construction (ValueError); otherwise an `Assert` decides at run
time (InvalidArgumentError). Both messages start "weights can not be broadcast to values."
"""

from __future__ import annotations

from tensorflux.framework import graph as graph_mod
from tensorflux.framework.scopes import op_name_scope as _scope
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops import array as array_ops
from tensorflux.ops.control_flow import primitives as control_flow
from tensorflux.ops.debug.logging import Assert
from tensorflux.ops.math import binary, comparison, reduction

__all__ = ["assert_broadcastable", "broadcast_weights"]

_MESSAGE = "weights can not be broadcast to values."


def _static_error(weights, values):
    return ValueError(f"{_MESSAGE} values.rank={values.shape.ndims}. weights.rank="
                      f"{weights.shape.ndims}. values.shape={values.shape}. weights.shape="
                      f"{weights.shape}.")


def _dynamic_check(weights, values):
    w_shape = array_ops.shape(weights)
    v_shape = array_ops.shape(values)
    w_rank = array_ops.rank(weights)
    v_rank = array_ops.rank(values)
    common = array_ops.reshape(binary.minimum(w_rank, v_rank), [1])
    w_dims = array_ops.slice(w_shape, [0], common)
    v_dims = array_ops.slice(v_shape, [0], common)
    dims_ok = reduction.reduce_all(comparison.logical_or(comparison.equal(w_dims, 1),
                                                         comparison.equal(w_dims, v_dims)))
    valid = comparison.logical_or(
        comparison.equal(w_rank, 0),
        comparison.logical_and(comparison.equal(w_rank, v_rank), dims_ok))
    return Assert(valid, [_MESSAGE, "weights.shape=", w_shape, "values.shape=", v_shape,
                          "is_scalar=", comparison.equal(w_rank, 0)], summarize=-1,
                  name="assert_broadcastable")


def assert_broadcastable(weights, values):
    """Checks that `weights` can be broadcast to `values` (see the module docstring).

    Args:
        weights: a Tensor or value: a scalar, or of the rank of `values`.
        values: a Tensor.

    Returns:
        An operation that checks at run time (a `no_op` when the static shapes decide).

    Raises:
        ValueError: the static shapes show `weights` cannot be broadcast to `values`.
    """
    with _scope(None, "assert_broadcastable"):
        weights = convert_to_tensor(weights, name="weights")
        values = convert_to_tensor(values, name="values")
        w_shape, v_shape = weights.shape, values.shape
        if w_shape.ndims == 0:
            return control_flow.no_op(name="static_scalar_check_success")
        if w_shape.ndims is not None and v_shape.ndims is not None:
            if w_shape.ndims != v_shape.ndims:
                raise _static_error(weights, values)
            known = [(w, v) for w, v in zip(w_shape._dim_list, v_shape._dim_list)
                     if w is not None and v is not None]
            if any(w not in (1, v) for w, v in known):
                raise _static_error(weights, values)
            if w_shape.is_fully_defined() and v_shape.is_fully_defined():
                return control_flow.no_op(name="static_dims_check_success")
        return _dynamic_check(weights, values)


def broadcast_weights(weights, values):
    """`weights` broadcast to the shape of `values`, after `assert_broadcastable`.

    Raises:
        ValueError: the static shapes show `weights` cannot be broadcast to `values`.
    """
    with _scope(None, "broadcast_weights"):
        values = convert_to_tensor(values, name="values")
        weights = convert_to_tensor(weights, name="weights")
        if (weights.shape.is_fully_defined() and values.shape.is_fully_defined()
                and weights.shape == values.shape):
            return weights
        check = assert_broadcastable(weights, values)
        with graph_mod.get_default_graph().control_dependencies([check]):
            return weights * array_ops.ones_like(values, dtype=weights.dtype)
