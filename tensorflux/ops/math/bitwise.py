"""Bitwise ops on integers: BitwiseAnd/Or/Xor, Invert, LeftShift, RightShift (broadcasting,
not differentiable), and CompareAndBitpack (`tf.compare_and_bitpack`)."""

from __future__ import annotations

import numpy as np

from tensorflux.framework.common_shapes import broadcast_shape
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_shape import TensorShape

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


CompareAndBitpack = define_op(
    "CompareAndBitpack", inputs=["input: T", "threshold: T"], outputs=["output: uint8"],
    attrs=["T: {bool, float16, float32, float64, int8, int16, int32, int64}"],
    differentiable=False)


@CompareAndBitpack.shape_fn
def _compare_and_bitpack_shape(x, threshold):
    if threshold.ndims is not None and threshold.ndims != 0:
        raise ValueError(f"Shape must be rank 0 but is rank {threshold.ndims} for threshold")
    if x.ndims is None:
        return TensorShape(None)
    if x.ndims == 0:
        raise ValueError("Shape must be at least rank 1 but is rank 0 for input")
    last = x[-1].value
    if last is not None and last % 8:
        raise ValueError(f"Inner dimension of input should be divisible by 8 but saw shape: {x}")
    return x[:-1].concatenate([None if last is None else last // 8])


@CompareAndBitpack.kernel
def _compare_and_bitpack_kernel(x, threshold):
    if np.ndim(threshold) != 0:
        raise ValueError(f"Compare must be a scalar, but saw shape: {np.shape(threshold)}")
    if x.ndim == 0 or x.shape[-1] % 8:
        raise ValueError(f"Inner dimension of input should be divisible by 8 but saw shape: "
                         f"{list(x.shape)}")
    bits = x if x.dtype == np.bool_ else x > threshold  # bool inputs are packed as they are
    return np.packbits(bits, axis=-1)


def compare_and_bitpack(input, threshold, name=None):  # noqa: A002 - TF's argument name
    """Packs `input > threshold` along the last axis, 8 values per uint8, first value in the
    most significant bit (bool inputs are packed as they are).

    Raises:
      ValueError: the last dimension is not a multiple of 8 or `threshold` is not a scalar.
    """
    return CompareAndBitpack(input, threshold, name=name)
