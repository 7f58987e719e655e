"""Out-of-place scatters into a tensor (TensorScatterUpdate/Add/Sub/Max/Min) and
`batch_scatter_update` on variables."""

from __future__ import annotations

import numpy as np

from tensorflux.framework import errors
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.indexed_slices import IndexedSlices
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.array.constants import zeros_like
from tensorflux.ops.array.gather_scatter import _nd_coords, gather_nd, scatter_nd
from tensorflux.ops.array.shapes import shape
from tensorflux.ops.math.casting import cast
from tensorflux.ops.math.comparison import equal
from tensorflux.ops.math.unary import negative
from tensorflux.ops.state import variable_ops as state_ops

__all__ = ["tensor_scatter_nd_update", "tensor_scatter_nd_add", "tensor_scatter_nd_sub",
           "tensor_scatter_nd_max", "tensor_scatter_nd_min", "tensor_scatter_update",
           "tensor_scatter_add", "tensor_scatter_sub", "batch_scatter_update"]


def _define(op_type):
    return define_op(op_type, inputs=["tensor: T", "indices: Tindices", "updates: T"],
                     outputs=["output: T"], attrs=["T: type", "Tindices: {int16, int32, int64}"])


TensorScatterUpdate = _define("TensorScatterUpdate")
TensorScatterAdd = _define("TensorScatterAdd")
TensorScatterSub = _define("TensorScatterSub")
TensorScatterMax = _define("TensorScatterMax")
TensorScatterMin = _define("TensorScatterMin")
# TF's older name for an out-of-place scatter-add (inputs named input/indices/updates).
ScatterNdNonAliasingAdd = define_op(
    "ScatterNdNonAliasingAdd", inputs=["input: T", "indices: Tindices", "updates: T"],
    outputs=["output: T"], attrs=["T: {numbertype, bool}", "Tindices: {int32, int64}"])


def _scatter_shape(tensor, indices, updates):
    if indices.ndims is not None:
        if indices.ndims == 0:
            raise ValueError(f"indices must be at least rank 1, got shape {indices}")
        depth = indices._dim_list[-1]
        if depth is not None and tensor.ndims is not None:
            if depth > tensor.ndims:
                raise ValueError(f"indices.shape[-1] = {depth} must be <= rank of tensor "
                                 f"{tensor}")
            expected = TensorShape(list(indices._dim_list[:-1]) + list(tensor._dim_list[depth:]))
            if not updates.is_compatible_with(expected):
                raise ValueError(f"updates shape {updates} must be indices.shape[:-1] + "
                                 f"tensor.shape[indices.shape[-1]:] = {expected}")
    return tensor


def _checked_coords(tensor, indices, updates):
    if indices.ndim == 0 or indices.shape[-1] > tensor.ndim:
        raise errors.InvalidArgumentError(
            None, None, f"indices must have rank >= 1 and indices.shape[-1] <= tensor rank, got "
                        f"indices shape {list(indices.shape)} and tensor shape "
                        f"{list(tensor.shape)}")
    depth = indices.shape[-1]
    expected = indices.shape[:-1] + tensor.shape[depth:]
    if updates.shape != expected:
        raise errors.InvalidArgumentError(
            None, None, f"updates shape {list(updates.shape)} must be indices.shape[:-1] + "
                        f"tensor.shape[indices.shape[-1]:] = {list(expected)}")
    if depth == 0:
        # NOTE: every update addresses the whole tensor: scatter into a leading axis of one.
        return (np.zeros(indices.shape[:-1], dtype=np.int64),)
    return _nd_coords(indices, tensor.shape, "tensor")


def _make_kernel(ufunc):
    def kernel(tensor, indices, updates):
        coords = _checked_coords(tensor, indices, updates)
        whole = indices.shape[-1] == 0
        out = tensor[None].copy() if whole else tensor.copy()
        if ufunc is None:
            out[coords] = updates
        else:
            ufunc.at(out, coords, updates)
        return out[0] if whole else out

    return kernel


for _op, _ufunc in ((TensorScatterUpdate, None), (TensorScatterAdd, np.add),
                    (TensorScatterSub, np.subtract), (TensorScatterMax, np.maximum),
                    (TensorScatterMin, np.minimum)):
    _op.shape_fn(_scatter_shape)
    _op.kernel(_make_kernel(_ufunc))
ScatterNdNonAliasingAdd.shape_fn(_scatter_shape)
_non_aliasing_add = _make_kernel(np.add)  # np.add of bools is or


@ScatterNdNonAliasingAdd.kernel
def _scatter_nd_non_aliasing_add_kernel(input, indices, updates):  # noqa: A002 - TF's name
    if input.size == 0:
        if indices.size or updates.size:
            raise errors.InvalidArgumentError(
                None, None, f"Indices and updates specified for empty output shape "
                            f"{list(input.shape)}")
        return input.copy()
    return _non_aliasing_add(input, indices, updates)


def scatter_nd_non_aliasing_add(input, indices, updates, name=None):  # noqa: A002 - TF's name
    """A copy of `input` with `updates` added at `indices` (duplicates summed; bools or-ed).

    TF's `array_ops.scatter_nd_non_aliasing_add`; `input` itself is never changed.

    Raises:
        ValueError: statically known shapes that do not fit (see `tensor_scatter_nd_add`).
    """
    return ScatterNdNonAliasingAdd(input, indices, updates, name=name)


def _dense(grad):
    return convert_to_tensor(grad) if isinstance(grad, IndexedSlices) else grad


@TensorScatterUpdate.gradient
def _tensor_scatter_update_grad(op, grad):
    indices, updates = op.inputs[1], op.inputs[2]
    grad = _dense(grad)
    return [TensorScatterUpdate(grad, indices, zeros_like(updates)), None,
            gather_nd(grad, indices)]


@TensorScatterAdd.gradient
def _tensor_scatter_add_grad(op, grad):
    grad = _dense(grad)
    return [grad, None, gather_nd(grad, op.inputs[1])]


@ScatterNdNonAliasingAdd.gradient
def _scatter_nd_non_aliasing_add_grad(op, grad):
    grad = _dense(grad)
    return [grad, None, gather_nd(grad, op.inputs[1])]


@TensorScatterSub.gradient
def _tensor_scatter_sub_grad(op, grad):
    grad = _dense(grad)
    return [grad, None, negative(gather_nd(grad, op.inputs[1]))]


def _tensor_scatter_extremum_grad(op, grad):
    """The gradient flows to every input equal to the output element it produced, split evenly
    between ties (the tensor's own value counts as one candidate)."""

    tensor, indices, updates = op.inputs
    output = op.outputs[0]
    grad = _dense(grad)
    tensor_hits = cast(equal(tensor, output), grad.dtype)
    update_hits = cast(equal(updates, gather_nd(output, indices)), grad.dtype)
    count = tensor_hits + scatter_nd(indices, update_hits, shape(tensor, out_type=indices.dtype))
    share = grad / count
    return [share * tensor_hits, None, gather_nd(share, indices) * update_hits]


TensorScatterMax.gradient(_tensor_scatter_extremum_grad)
TensorScatterMin.gradient(_tensor_scatter_extremum_grad)


def tensor_scatter_nd_update(tensor, indices, updates, name=None):
    """A copy of `tensor` with the slices addressed by `indices` replaced by `updates`.

    Args:
        tensor: the tensor to copy.
        indices: int tensor [..., depth]; each row addresses an element or slice of `tensor`.
        updates: tensor of shape `indices.shape[:-1] + tensor.shape[depth:]`.
        name: optional name.

    Returns:
        A tensor like `tensor` (with duplicate indices, the last update wins).

    Raises:
        InvalidArgumentError (at run time): an index is out of range.

    Example:
        >>> tf.tensor_scatter_nd_update([1, 2, 3, 4], [[1], [3]], [9, 10])  # [1, 9, 3, 10]
    """
    return TensorScatterUpdate(tensor, indices, updates, name=name)


def tensor_scatter_nd_add(tensor, indices, updates, name=None):
    """A copy of `tensor` with `updates` added at `indices` (duplicates accumulate)."""
    return TensorScatterAdd(tensor, indices, updates, name=name)


def tensor_scatter_nd_sub(tensor, indices, updates, name=None):
    """A copy of `tensor` with `updates` subtracted at `indices` (duplicates accumulate)."""
    return TensorScatterSub(tensor, indices, updates, name=name)


def tensor_scatter_nd_max(tensor, indices, updates, name=None):
    """A copy of `tensor` holding the element-wise maximum with `updates` at `indices`."""
    return TensorScatterMax(tensor, indices, updates, name=name)


def tensor_scatter_nd_min(tensor, indices, updates, name=None):
    """A copy of `tensor` holding the element-wise minimum with `updates` at `indices`."""
    return TensorScatterMin(tensor, indices, updates, name=name)


tensor_scatter_update = tensor_scatter_nd_update
tensor_scatter_add = tensor_scatter_nd_add
tensor_scatter_sub = tensor_scatter_nd_sub


def batch_scatter_update(ref, indices, updates, use_locking=True, name=None):
    """Per batch entry, `ref[b..., indices[b..., i], ...] = updates[b..., i, ...]`.

    Args:
        ref: a variable of shape `batch_shape + [n] + inner`.
        indices: int tensor of shape `batch_shape + [k]` (static rank required).
        updates: tensor of shape `batch_shape + [k] + inner`.
        use_locking: passed to the scatter.
        name: optional name.

    Returns:
        `ref` after the update (the ScatterNdUpdate output).

    Raises:
        ValueError: the rank of `indices` is unknown.

    Example:
        >>> tf.batch_scatter_update(v, [[1], [0]], [[5.0], [6.0]])  # v: [2, 3]
    """

    graph = graph_mod.get_default_graph()
    with graph.name_scope(name or "BatchScatterUpdate"):
        indices = convert_to_tensor(indices, name="indices")
        updates = convert_to_tensor(updates, name="updates")
        rank = indices.shape.ndims
        if rank is None:
            raise ValueError("batch_scatter_update needs indices of known rank")
        if rank == 0:
            raise ValueError("batch_scatter_update needs indices of rank >= 1, got a scalar")
        dims = array_ops.shape(indices, out_type=indices.dtype)
        last = array_ops.expand_dims(indices, -1)
        parts = []
        for axis in range(rank - 1):
            ones = [1] * (rank + 1)
            ones[axis] = -1
            positions = array_ops.reshape(
                math_ops.range(dims[axis], dtype=indices.dtype), ones)
            parts.append(positions * array_ops.ones_like(last))
        nd_indices = array_ops.concat(parts + [last], axis=-1)
        return state_ops.scatter_nd_update(ref, nd_indices, updates, use_locking=use_locking)
