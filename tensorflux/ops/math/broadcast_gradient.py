"""Shared gradient helpers: undoing broadcasting (`unbroadcast`) and BroadcastGradientArgs.

`unbroadcast(grad, x)` sums `grad` (the gradient of a broadcasting op's output) over the axes
along which `x` was broadcast and gives it `x`'s shape. Static shapes are resolved at graph
construction (the usual case costs one or two `Sum` ops and no shape ops); unknown dimensions
fall back to TensorFlow's runtime form `Shape -> BroadcastGradientArgs -> Sum -> Reshape`.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import errors
from tensorflux.framework.op_def import OP_DEFS, define_op
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops import array as array_ops

__all__ = ["unbroadcast", "broadcast_gradient_args", "reduction_axes"]


def _broadcast_gradient_args(s0: np.ndarray, s1: np.ndarray):
    """Axes to sum each operand's gradient over (TF's rule, including all-ones axes)."""
    s0 = np.asarray(s0)
    s1 = np.asarray(s1)
    # Python ints: shape vectors are short, and NumPy calls on them cost more than the work.
    d0 = s0.reshape(-1).tolist()
    d1 = s1.reshape(-1).tolist()
    if s0.shape == s1.shape and d0 == d1:
        empty = np.zeros([0], s0.dtype)
        return empty, empty.copy()
    rank = max(len(d0), len(d1))
    p0 = [1] * (rank - len(d0)) + d0
    p1 = [1] * (rank - len(d1)) + d1
    if any(a != b and a != 1 and b != 1 for a, b in zip(p0, p1)):
        raise errors.InvalidArgumentError(
            None, None, f"Incompatible shapes: [{','.join(map(str, d0))}] vs. "
                        f"[{','.join(map(str, d1))}]")
    r0 = np.array([i for i, d in enumerate(p0) if d == 1], dtype=s0.dtype)
    r1 = np.array([i for i, d in enumerate(p1) if d == 1], dtype=s1.dtype)
    return r0, r1


# NOTE: TensorFlow files BroadcastGradientArgs under array ops; it is defined here unless an
# array module registered it first, so both modules can import in any order without a clash.
if "BroadcastGradientArgs" not in OP_DEFS:
    BroadcastGradientArgs = define_op(
        "BroadcastGradientArgs", inputs=["s0: T", "s1: T"], outputs=["r0: T", "r1: T"],
        attrs=["T: {int32, int64} = int32"], differentiable=False)

    @BroadcastGradientArgs.shape_fn
    def _broadcast_gradient_args_shape(s0, s1):
        return [TensorShape([None]), TensorShape([None])]

    BroadcastGradientArgs.kernel(_broadcast_gradient_args)
else:
    BroadcastGradientArgs = OP_DEFS.lookup("BroadcastGradientArgs")


def broadcast_gradient_args(s0, s1, name=None):
    """Returns `(r0, r1)`: the axes to reduce the gradients of two broadcast operands over."""
    return BroadcastGradientArgs(s0, s1, name=name)


def reduction_axes(x_shape: TensorShape, grad_shape: TensorShape):
    """Static plan for unbroadcasting: `(leading, kept)` axis tuples, or None if unknown.

    `leading` are the extra leading axes of the gradient (summed away); `kept` are the axes,
    counted after removing the leading ones, where `x` has size 1 (summed with keepdims).
    """
    if x_shape.ndims is None or grad_shape.ndims is None or grad_shape.ndims < x_shape.ndims:
        return None
    extra = grad_shape.ndims - x_shape.ndims
    kept = []
    for i, (dx, dg) in enumerate(zip(x_shape._dim_list, grad_shape._dim_list[extra:])):
        dx = None if dx is None else int(dx)
        dg = None if dg is None else int(dg)
        if dx == 1:
            if dg != 1:
                kept.append(i)
        elif dx is None and dg != 1:
            return None  # x's size here may be 1 (broadcast) or not: decide at run time
    return tuple(range(extra)), tuple(kept)


def unbroadcast(grad, x):
    """Reduces `grad` (shaped like a broadcast result) to the shape of tensor `x`.

    Args:
        grad: the gradient of an elementwise op's output, a Tensor (None passes through).
        x: the op's input tensor whose gradient is wanted.

    Returns:
        `grad` summed over the broadcast axes, with exactly `x`'s shape.

    Example:
        >>> dx = unbroadcast(grad, op.inputs[0])   # in a gradient function of AddV2
    """
    if grad is None:
        return None
    # cycle: a module-level import breaks `import tensorflux` (partly initialized module)
    from tensorflux.ops.math.reduction import reduce_sum

    x_shape = x.shape
    grad_shape = grad.shape
    if (x_shape.is_fully_defined() and grad_shape.is_fully_defined()
            and x_shape.as_list() == grad_shape.as_list()):
        return grad
    plan = reduction_axes(x_shape, grad_shape)
    if plan is not None:
        leading, kept = plan
        if leading:
            grad = reduce_sum(grad, axis=list(leading))
        if kept:
            grad = reduce_sum(grad, axis=list(kept), keepdims=True)
        if grad.shape.is_compatible_with(x_shape):
            if leading or kept:
                grad.set_shape(x_shape)  # a fresh Sum: x's static dims are known to hold
            return grad

    sx = array_ops.shape(x)
    sg = array_ops.shape(grad)
    rx, _ = broadcast_gradient_args(sx, sg)
    return array_ops.reshape(reduce_sum(grad, axis=rx), sx)
