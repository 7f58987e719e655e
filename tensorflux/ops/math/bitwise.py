"""Bitwise ops on integers: BitwiseAnd/Or/Xor, Invert, LeftShift, RightShift (broadcasting,
not differentiable)."""

from __future__ import annotations

import numpy as np

from tensorflux.framework.common_shapes import broadcast_shape
from tensorflux.framework.op_def import define_op

__all__ = ["bitwise_and", "bitwise_or", "bitwise_xor", "invert", "left_shift", "right_shift"]

_INT_TYPES = "{int8, int16, int32, int64, uint8, uint16, uint32, uint64}"


def _binary(op_type):
    return define_op(op_type, inputs=["x: T", "y: T"], outputs=["z: T"],
                     attrs=[f"T: {_INT_TYPES}"], differentiable=False)


BitwiseAnd = _binary("BitwiseAnd")
BitwiseOr = _binary("BitwiseOr")
BitwiseXor = _binary("BitwiseXor")
LeftShift = _binary("LeftShift")
RightShift = _binary("RightShift")
Invert = define_op("Invert", inputs=["x: T"], outputs=["y: T"], attrs=[f"T: {_INT_TYPES}"],
                   differentiable=False)


def _binary_shape(x, y):
    return broadcast_shape(x, y)


def _clamped_shift(shift, x, y):
    # NOTE: as in TF, shift amounts outside [0, bits) are clamped into it (so shifting by -1
    # is a no-op and by >= bits is a shift by bits - 1); the result wraps in x's width.
    bits = np.iinfo(x.dtype).bits
    return shift(x, np.clip(y, 0, bits - 1).astype(x.dtype, copy=False))


for _op, _kernel in ((BitwiseAnd, np.bitwise_and), (BitwiseOr, np.bitwise_or),
                     (BitwiseXor, np.bitwise_xor),
                     (LeftShift, lambda x, y: _clamped_shift(np.left_shift, x, y)),
                     (RightShift, lambda x, y: _clamped_shift(np.right_shift, x, y))):
    _op.shape_fn(_binary_shape)
    _op.kernel(_kernel)


@Invert.shape_fn
def _invert_shape(x):
    return x


@Invert.kernel
def _invert_kernel(x):
    return np.invert(x)


def bitwise_and(x, y, name=None):
    """Element-wise `x & y` (integers, broadcasting).

    Example:
        >>> tf.bitwise.bitwise_and([12, 10], [10, 6])  # [8, 2]
    """
    return BitwiseAnd(x, y, name=name)


def bitwise_or(x, y, name=None):
    """Element-wise `x | y` (integers, broadcasting)."""
    return BitwiseOr(x, y, name=name)


def bitwise_xor(x, y, name=None):
    """Element-wise `x ^ y` (integers, broadcasting)."""
    return BitwiseXor(x, y, name=name)


def invert(x, name=None):
    """Element-wise bitwise complement `~x`."""
    return Invert(x, name=name)


def left_shift(x, y, name=None):
    """Element-wise `x << y`, wrapping in x's width; `y` is clamped to [0, bits - 1]."""
    return LeftShift(x, y, name=name)


def right_shift(x, y, name=None):
    """Element-wise `x >> y` (arithmetic for signed types); `y` is clamped to [0, bits - 1]."""
    return RightShift(x, y, name=name)
