"""Select (TF1 `tf.where(c, x, y)`), SelectV2 (broadcasting), ClipByValue / `tf.clip_by_value`,
and the `tf.where` / `tf.where_v2` wrappers (the one-argument form uses the Where op).

Select's condition is a scalar, has the shape of `t`, or is a vector matching `t`'s first
dimension (it then picks whole rows). SelectV2 broadcasts all three inputs.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import errors
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.common_shapes import broadcast_shape
from tensorflux.framework.op_def import define_op, get_op_def
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.lib.numerics import select_jit
from tensorflux.ops.array import constants as constant_ops
from tensorflux.ops.math import binary as binary_ops
from tensorflux.ops.math.broadcast_gradient import unbroadcast
from tensorflux.ops.math.comparison import Greater, Less, LogicalOr

__all__ = ["where", "where_v2", "clip_by_value"]

Select = define_op("Select", inputs=["condition: bool", "t: T", "e: T"], outputs=["output: T"],
                   attrs=["T: type"])


@Select.shape_fn
def _select_shape(condition, t, e):
    if not t.is_compatible_with(e):
        raise ValueError(f"Shapes must be equal: 't' is {t} and 'e' is {e}")
    out = t.merge_with(e)
    if condition.ndims is None or out.ndims is None or condition.ndims == 0:
        return out
    if condition.ndims == 1 and out.ndims > 1:
        first = out._dim_list[0]
        leading = condition._dim_list[0]
        if leading is not None and first is not None and leading != first:
            raise ValueError(f"Dimension 0 in both shapes must be equal, but are "
                             f"{leading} and {first}. Shapes are {condition} and {out}.")
        return out
    if not condition.is_compatible_with(out):
        raise ValueError(f"Shapes must be equal rank and compatible: condition {condition} "
                         f"vs t {out}")
    return out.merge_with(condition)


# Below this many elements np.where's branches cost less than the bitwise passes.
_BITWISE_MIN_SIZE = 1024
_BITWISE_KINDS = frozenset("biuf")


def _where(condition, t, e):
    """`np.where(condition, t, e)` for arrays of one shape. Large numeric ones pick bits
    instead: `e ^ ((t ^ e) & mask)` with `mask` all ones where `condition` holds is the same
    value bit for bit (NaN payloads and -0.0 included) and has no data-dependent branch, which
    np.where mispredicts on mixed conditions (~4x slower on random signs). With numba one
    compiled pass copies the same bits (`select_jit`)."""
    if condition.size >= _BITWISE_MIN_SIZE and select_jit.supports(condition, t, e):
        return select_jit.select(condition, t, e)
    if (condition.size < _BITWISE_MIN_SIZE or t.dtype != e.dtype
            or t.dtype.kind not in _BITWISE_KINDS or t.dtype.itemsize not in (1, 2, 4, 8)
            or condition.dtype != np.bool_):
        return np.where(condition, t, e)
    bits = np.dtype(f"u{t.dtype.itemsize}")
    mask = np.negative(condition.view(np.uint8), dtype=bits)  # True -> all ones
    e_bits = e.view(bits)
    out = np.bitwise_xor(t.view(bits), e_bits)
    out &= mask
    out ^= e_bits
    return out.view(t.dtype)


@Select.kernel
def _select_kernel(condition, t, e):
    if np.shape(t) != np.shape(e):
        raise errors.InvalidArgumentError(
            None, None, f"'t' and 'e' must have the same shape: {list(np.shape(t))} vs "
                        f"{list(np.shape(e))}")
    if condition.shape == np.shape(t):
        return _where(condition, t, e)
    if condition.ndim == 0:
        return np.where(condition, t, e)
    if condition.ndim == 1 and np.ndim(t) >= 1 and condition.shape[0] == np.shape(t)[0]:
        rows = condition.reshape((-1,) + (1,) * (np.ndim(t) - 1))
        return np.where(rows, t, e)
    raise errors.InvalidArgumentError(
        None, None, f"'condition' must be a scalar, a vector of size {np.shape(t)[:1]} or have "
                    f"the shape of 't' {list(np.shape(t))}, got {list(condition.shape)}")


SelectV2 = define_op("SelectV2", inputs=["condition: bool", "t: T", "e: T"],
                     outputs=["output: T"], attrs=["T: type"])


@SelectV2.shape_fn
def _select_v2_shape(condition, t, e):
    return broadcast_shape(broadcast_shape(condition, t), e)


@SelectV2.kernel
def _select_v2_kernel(condition, t, e):
    if condition.shape == np.shape(t) == np.shape(e):
        return _where(condition, t, e)
    return np.where(condition, t, e)


ClipByValue = define_op("ClipByValue", inputs=["t: T", "clip_value_min: T",
                                               "clip_value_max: T"],
                        outputs=["output: T"], attrs=["T: {numbertype}"])


@ClipByValue.shape_fn
def _clip_by_value_shape(t, clip_value_min, clip_value_max):
    for name, bound in (("clip_value_min", clip_value_min), ("clip_value_max", clip_value_max)):
        if bound.ndims not in (None, 0) and not bound.is_compatible_with(t):
            raise ValueError(f"{name} must be a scalar or have the shape of t {t}, got {bound}")
    return t


@ClipByValue.kernel
def _clip_by_value_kernel(t, low, high):
    return np.minimum(np.maximum(t, low), high).astype(t.dtype, copy=False)


# -- gradients --------------------------------------------------------------------------------

def _zero(t):
    return np.zeros([], t.dtype.as_numpy_dtype)


@Select.gradient
def _select_grad(op, grad):
    condition = op.inputs[0]
    zeros = constant_ops.zeros_like(grad)
    return None, Select(condition, grad, zeros), Select(condition, zeros, grad)


@SelectV2.gradient
def _select_v2_grad(op, grad):
    condition, t, e = op.inputs
    zero = _zero(grad)
    return (None, unbroadcast(SelectV2(condition, grad, zero), t),
            unbroadcast(SelectV2(condition, zero, grad), e))


@ClipByValue.gradient
def _clip_by_value_grad(op, grad):
    t, low, high = op.inputs
    zero = _zero(grad)
    below = Less(t, low)
    above = Greater(t, high)
    grad_t = SelectV2(LogicalOr(below, above), zero, grad)
    return (grad_t, unbroadcast(SelectV2(below, grad, zero), low),
            unbroadcast(SelectV2(above, grad, zero), high))


def _where_op():
    """The Where op (coordinates of true elements), defined with the array ops."""
    return get_op_def("Where")


# -- wrappers ---------------------------------------------------------------------------------

def where(condition, x=None, y=None, name=None):
    """TF1 `tf.where`: coordinates of true elements, or elementwise selection (Select).

    With only `condition`: an int64 matrix [num_true, rank] of the coordinates of its true (or
    non-zero) elements. With `x` and `y`: `x` where `condition` else `y`; `condition` has x's
    shape or is a vector over x's first dimension.

    Raises:
        ValueError: only one of `x` and `y` is given.

    Example:
        >>> tf.where([True, False, True])   # -> [[0], [2]]
    """
    if x is None and y is None:
        return _where_op()(condition, name=name)
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    x = convert_to_tensor(x, name="x")
    return Select(condition, x, y, name=name)


def where_v2(condition, x=None, y=None, name=None):
    """`tf.where_v2`: like `where`, but `condition`, `x` and `y` broadcast together."""
    if x is None and y is None:
        return _where_op()(condition, name=name)
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    x = convert_to_tensor(x, name="x")
    return SelectV2(condition, x, y, name=name)


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """Clamps `t` to [clip_value_min, clip_value_max] (Minimum then Maximum, as TF1).

    Raises:
        ValueError: the clipped result would change `t`'s shape (broadcasting bounds).
    """

    graph = graph_mod.get_default_graph()
    with graph.name_scope(name or "clip_by_value") as scope:
        t = convert_to_tensor(t, name="t")
        low = convert_to_tensor(clip_value_min, dtype=t.dtype.base_dtype)
        high = convert_to_tensor(clip_value_max, dtype=t.dtype.base_dtype)
        t_min = binary_ops.Minimum(t, high)
        if not t_min.shape.is_compatible_with(t.shape):
            raise ValueError(f"clip_by_value: clip_value_max {high.shape} would broadcast t "
                             f"{t.shape} to {t_min.shape}")
        result = binary_ops.Maximum(t_min, low, name=scope)
        if not result.shape.is_compatible_with(t.shape):
            raise ValueError(f"clip_by_value: clip_value_min {low.shape} would broadcast t "
                             f"{t.shape} to {result.shape}")
        return result
