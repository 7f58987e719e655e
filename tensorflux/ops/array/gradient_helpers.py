"""Helpers shared by the gradient functions of several op families.

`dense_gradient` turns an `IndexedSlices` gradient into a dense tensor, `reshape_like` gives a
gradient the shape of a forward input, and `is_zero` recognises gradients known to be all zeros
(so second-order rules can skip them). Each op's gradient itself lives next to its op.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework.indexed_slices import IndexedSlices
from tensorflux.framework.tensor_conversion import constant_value, convert_to_tensor
from tensorflux.ops.array import shapes as shape_ops

__all__ = ["dense_gradient", "reshape_like", "is_zero"]


def dense_gradient(grad):
    """`grad` as a dense tensor (an `IndexedSlices` is converted; anything else is returned)."""
    return convert_to_tensor(grad) if isinstance(grad, IndexedSlices) else grad


def reshape_like(grad, x):
    """`grad` (dense or `IndexedSlices`) reshaped to the shape of `x` (static when known)."""
    grad = dense_gradient(grad)
    if x.shape.is_fully_defined():
        return shape_ops.reshape(grad, x.shape.as_list())
    return shape_ops.reshape(grad, shape_ops.shape(x))


def is_zero(tensor) -> bool:
    """True when `tensor` is None or known to be all zeros (e.g. a filled-in output grad)."""
    if tensor is None:
        return True
    if tensor.op.type in ("ZerosLike", "Zeros"):
        return True
    if tensor.op.type == "Fill":
        # NOTE: large `tf.zeros` are Fill ops, too big for constant_value to evaluate.
        fill_value = constant_value(tensor.op.inputs[1])
        return fill_value is not None and not np.any(fill_value)
    value = constant_value(tensor)
    return value is not None and not np.any(value)
