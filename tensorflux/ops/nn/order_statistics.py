"""NthElement: the n-th smallest (or largest) entry along the last dimension, with its gradient
and the `nth_element` wrapper (TF's nn_ops.nth_element; tf.contrib.nn.nth_element).
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops

__all__: list = []

NthElement = define_op(
    "NthElement", inputs=["input: T", "n: int32"], outputs=["values: T"],
    attrs=["reverse: bool = False",
           "T: {float32, float64, int32, uint8, int16, int8, int64, bfloat16, uint16, "
           "float16, uint32, uint64}"])


@NthElement.shape_fn(value_inputs=("n",))
def _nth_element_shape(input, n):  # noqa: A002 - TF's input name
    input = input.with_rank_at_least(1)  # noqa: A001
    if n is not None:
        n = np.asarray(n)
        if n.ndim != 0:
            raise ValueError(f"Input must be scalar but has rank {n.ndim}")
        n = int(n)
        if n < 0:
            raise ValueError(f"Dimension size, given by scalar input 1, must be non-negative "
                             f"but is {n}")
    if input.ndims is None:
        return TensorShape(None)
    last = input._dim_list[-1]
    if n is not None and last is not None and last <= n:
        raise ValueError(f"Input must have last dimension > n = {n} (last dimension {last})")
    return TensorShape(list(input._dim_list[:-1]))


@NthElement.kernel
def _nth_element_kernel(x, n, *, reverse):
    if np.ndim(n) != 0:
        raise errors.InvalidArgumentError(None, None, f"n must be scalar, got shape "
                                                      f"{list(np.shape(n))}")
    n = int(n)
    if n < 0:
        raise errors.InvalidArgumentError(None, None, f"Need n >= 0, got {n}")
    if x.ndim < 1:
        raise errors.InvalidArgumentError(None, None, f"Input must be >= 1-D, got shape "
                                                      f"{list(x.shape)}")
    width = x.shape[-1]
    if width <= n:
        raise errors.InvalidArgumentError(
            None, None, f"Input must have at least n+1 columns (n = {n}, columns = {width})")
    kth = width - 1 - n if reverse else n
    return np.partition(x, kth, axis=-1)[..., kth]


@NthElement.gradient
def _nth_element_grad(op, grad):
    """The output's gradient is shared equally by the entries of its row equal to it."""
    x, picked = op.inputs[0], op.outputs[0]
    hits = math_ops.cast(math_ops.equal(x, array_ops.expand_dims(picked, -1)), grad.dtype)
    share = grad / math_ops.reduce_sum(hits, axis=-1)
    return [hits * array_ops.expand_dims(share, -1), None]


def nth_element(input, n, reverse=False, name=None):  # noqa: A002 - TF1 signature
    """The n-th smallest (or, with reverse, largest) value along the last dimension.

    Args:
        input: a real tensor of rank >= 1 whose last dimension is > n.
        n: a non-negative int32 scalar.
        reverse: take the n-th largest instead.
        name: op name.

    Returns:
        A tensor of input's dtype and shape without its last dimension.

    Raises:
        ValueError: input of rank 0, n not a scalar or negative, or the last dimension not
            greater than n (when known while building).
        InvalidArgumentError (when run): the same checks on the fed values.
    """
    return NthElement(input, n, reverse=reverse, name=name)



