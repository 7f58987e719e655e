"""Gathers and scatters: GatherV2 (tf.gather, batch_dims too), Gather, GatherNd, ScatterNd."""

from __future__ import annotations

import numpy as np

from tensorflux.framework import errors
from tensorflux.framework.indexed_slices import IndexedSlices
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_conversion import constant_value, convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape, unknown_shape
from tensorflux.ops import math as math_ops
from tensorflux.ops.array import concat_split as concat_ops
from tensorflux.ops.array import shapes as shape_ops
from tensorflux.ops.array import slicing as slicing_ops
from tensorflux.ops.array.gradient_helpers import dense_gradient

__all__ = ["gather", "gather_nd", "scatter_nd", "batch_gather"]

_INDEX_TYPES = "{int32, int64}"
_UNSIGNED = {np.dtype(np.int16): np.uint16, np.dtype(np.int32): np.uint32,
             np.dtype(np.int64): np.uint64}

# -- GatherV2, Gather, GatherNd, ScatterNd ----------------------------------------------------

GatherV2 = define_op(
    "GatherV2", inputs=["params: Tparams", "indices: Tindices", "axis: Taxis"],
    outputs=["output: Tparams"],
    attrs=["batch_dims: int = 0", "Tparams: type", "Tindices: {int16, int32, int64}",
           f"Taxis: {_INDEX_TYPES}"])
Gather = define_op(
    "Gather", inputs=["params: Tparams", "indices: Tindices"], outputs=["output: Tparams"],
    attrs=["validate_indices: bool = True", "Tparams: type", "Tindices: {int32, int64}"])


def _gather_dims(params: TensorShape, indices: TensorShape, axis, batch_dims: int):
    if params.ndims is None or indices.ndims is None:
        return TensorShape(None)
    if axis is None:  # TF: the rank is still known
        if batch_dims < 0:
            batch_dims += indices.ndims
        return unknown_shape(params.ndims + indices.ndims - 1 - batch_dims)
    rank = params.ndims
    if not -rank <= axis < rank:
        raise ValueError(f"Shape must be at least rank {axis + 1 if axis >= 0 else -axis} but "
                         f"is rank {rank}: axis {axis} out of range")
    axis = axis + rank if axis < 0 else axis
    if batch_dims < 0:
        batch_dims += indices.ndims
    if batch_dims > axis:
        raise ValueError(f"batch_dims ({batch_dims}) must be less than or equal to axis "
                         f"({axis}).")
    if batch_dims > indices.ndims:
        raise ValueError(f"batch_dims ({batch_dims}) must be <= rank(indices) "
                         f"({indices.ndims}).")
    for i in range(batch_dims):
        a, b = params._dim_list[i], indices._dim_list[i]
        if a is not None and b is not None and a != b:
            raise ValueError(f"params.shape[{i}] ({a}) should equal indices.shape[{i}] ({b})")
    dims = list(params._dim_list)
    return TensorShape(dims[:axis] + list(indices._dim_list[batch_dims:]) + dims[axis + 1:])


@GatherV2.shape_fn(value_inputs=("axis",))
def _gather_v2_shape(params, indices, axis, *, batch_dims):
    return _gather_dims(params, indices, None if axis is None else int(axis), batch_dims)


@Gather.shape_fn
def _gather_shape(params, indices):
    return _gather_dims(params, indices, 0, 0)


def _check_gather_indices(indices, limit: int, what: str = "indices"):
    if indices.size and (indices.min() < 0 or indices.max() >= limit):
        bad = (indices < 0) | (indices >= limit)
        where_bad = np.unravel_index(int(np.flatnonzero(bad)[0]), indices.shape)
        position = ",".join(str(int(i)) for i in where_bad)
        raise errors.InvalidArgumentError(
            None, None, f"{what}[{position}] = {indices[where_bad]} is not in [0, {limit})")


def _gather(params, indices, axis: int, batch_dims: int):
    if axis < 0:
        axis += params.ndim
    if not 0 <= axis < params.ndim:
        raise errors.InvalidArgumentError(
            None, None, f"Expected axis in the range [{-params.ndim}, {params.ndim}), but got "
                        f"{axis}")
    if batch_dims == 0:
        # Negative indices become huge unsigned ones, so np.take's own bounds check rejects
        # them too; the detailed message is only computed on failure.
        try:
            return np.take(params, indices.view(_UNSIGNED[indices.dtype]), axis=axis)
        except IndexError:
            _check_gather_indices(indices, params.shape[axis])
            raise
    _check_gather_indices(indices, params.shape[axis])
    if batch_dims < 0:
        batch_dims += indices.ndim
    batch = params.shape[:batch_dims]
    if indices.shape[:batch_dims] != batch:
        raise errors.InvalidArgumentError(
            None, None, f"params.shape[:{batch_dims}] {list(batch)} should equal "
                        f"indices.shape[:{batch_dims}] {list(indices.shape[:batch_dims])}")
    flat_b = int(np.prod(batch, dtype=np.int64))
    pre = params.shape[batch_dims:axis]
    moved = np.moveaxis(params, axis, batch_dims).reshape(
        (flat_b, params.shape[axis]) + pre + params.shape[axis + 1:])
    irest = indices.shape[batch_dims:]
    flat_i = indices.reshape((flat_b,) + irest)
    rows = np.arange(flat_b).reshape((flat_b,) + (1,) * len(irest))
    picked = moved[rows, flat_i]  # [B, *irest, *pre, *post]
    k, m = len(pre), len(irest)
    perm = [0] + list(range(1 + m, 1 + m + k)) + list(range(1, 1 + m)) + \
        list(range(1 + m + k, picked.ndim))
    picked = picked.transpose(perm)
    return picked.reshape(batch + pre + irest + params.shape[axis + 1:])


@GatherV2.kernel(factory=True)
def _gather_v2_kernel(batch_dims):
    def gather_v2(params, indices, axis):
        return _gather(params, indices, int(axis), batch_dims)

    return gather_v2


@GatherV2.gradient
def _gather_v2_grad(op, grad):
    params, indices, axis = op.inputs
    batch_dims = op.get_attr("batch_dims")
    axis_value = constant_value(axis)
    if axis_value is None:
        raise ValueError(f"GatherV2 gradient of '{op.name}' needs a constant axis")
    axis_value = int(axis_value)
    if axis_value == 0 and batch_dims == 0:
        return [_gather_axis0_grad(params, indices, grad), None, None]
    rank = params.shape.ndims
    if rank is None or indices.shape.ndims is None:
        raise ValueError(f"GatherV2 gradient of '{op.name}' needs params and indices of "
                         "known rank")
    if axis_value < 0:
        axis_value += rank
    if batch_dims < 0:
        batch_dims += indices.shape.ndims
    return [_scatter_along_axis(params, indices, dense_gradient(grad), axis_value, batch_dims),
            None, None]


@Gather.kernel
def _gather_kernel(params, indices):
    return _gather(params, indices, 0, 0)


def _gather_axis0_grad(params, indices, grad):
    # NOTE: the shape is read where params live (a sharded embedding's shard on a ps task),
    # so only its shape, not the table, crosses the network.
    with params.graph.colocate_with(params):
        params_shape = shape_ops.shape(params)
    if params.shape.ndims is not None and params.shape[1:].is_fully_defined():
        values_shape = [-1] + params.shape.as_list()[1:]
    else:
        values_shape = concat_ops.concat(
            [[-1], slicing_ops.strided_slice(params_shape, [1], [0], [1], end_mask=1)], 0)
    values = shape_ops.reshape(dense_gradient(grad), values_shape)
    flat_indices = shape_ops.reshape(indices, [-1])
    return IndexedSlices(values, flat_indices, params_shape)


@Gather.gradient
def _gather_grad(op, grad):
    params, indices = op.inputs
    return [_gather_axis0_grad(params, indices, grad), None]


def gather(params, indices, validate_indices=None, name=None, axis=None, batch_dims=0):
    """Gathers slices of `params` along `axis` at `indices`.

    Args:
        params: the Tensor to gather from.
        indices: int32/int64 indices into dimension `axis` of `params`, any shape.
        validate_indices: ignored (indices are always validated), kept for TF1 compatibility.
        name: op name (default "GatherV2").
        axis: the dimension to gather along (default `batch_dims`); may be negative.
        batch_dims: leading dimensions shared by `params` and `indices`.

    Returns:
        A Tensor of shape `params.shape[:axis] + indices.shape[batch_dims:] +
        params.shape[axis + 1:]`. Its gradient w.r.t. `params` is an IndexedSlices when
        `axis == 0` and `batch_dims == 0`.

    Raises:
        InvalidArgumentError: (at run time) an index is negative or >= params.shape[axis].

    Example:
        >>> tf.gather([[1, 2], [3, 4], [5, 6]], [2, 0])   # -> [[5, 6], [1, 2]]
    """
    del validate_indices
    if batch_dims is None:
        batch_dims = 0
    if axis is None:
        axis = batch_dims
    if hasattr(params, "sparse_read") and axis == 0 and batch_dims == 0:
        return params.sparse_read(indices, name=name)
    return GatherV2(params, indices, axis, batch_dims=batch_dims, name=name)


def batch_gather(params, indices, name=None):
    """Gathers along the first non-batch axis: `batch_dims = rank(indices) - 1`."""
    indices = convert_to_tensor(indices)
    if indices.shape.ndims is None:
        raise ValueError("batch_gather needs indices of known rank")
    batch_dims = indices.shape.ndims - 1
    return GatherV2(params, indices, batch_dims, batch_dims=batch_dims,
                    name=name or "batch_gather")


GatherNd = define_op("GatherNd", inputs=["params: Tparams", "indices: Tindices"],
                     outputs=["output: Tparams"],
                     attrs=["Tparams: type", "Tindices: {int16, int32, int64}"])


@GatherNd.shape_fn
def _gather_nd_shape(params, indices):
    if indices.ndims is None or params.ndims is None:
        return TensorShape(None)
    if indices.ndims == 0:
        raise ValueError("indices must have rank >= 1")
    depth = indices._dim_list[-1]
    if depth is None:
        return TensorShape(None)
    if depth > params.ndims:
        raise ValueError(f"indices.shape[-1] must be <= params.rank, but saw indices shape: "
                         f"{indices} and params shape: {params}")
    return TensorShape(list(indices._dim_list[:-1]) + list(params._dim_list[depth:]))


def _nd_coords(indices, shape, what: str):
    depth = indices.shape[-1]
    limits = np.asarray(shape[:depth], dtype=np.int64)
    if indices.size:
        bad = ((indices < 0) | (indices >= limits)).any(axis=-1)
        if bad.any():
            where_bad = np.unravel_index(int(np.flatnonzero(bad)[0]), bad.shape)
            position = ",".join(str(int(i)) for i in where_bad)
            raise errors.InvalidArgumentError(
                None, None, f"indices[{position}] = {indices[where_bad].tolist()} does not "
                            f"index into {what} shape {list(shape)}")
    return tuple(np.moveaxis(indices, -1, 0))


@GatherNd.kernel
def _gather_nd_kernel(params, indices):
    if indices.ndim == 0 or indices.shape[-1] > params.ndim:
        raise errors.InvalidArgumentError(
            None, None, f"indices.shape[-1] must be <= params.rank, got indices shape "
                        f"{list(indices.shape)} and params shape {list(params.shape)}")
    if params.size == 0 and int(np.prod(indices.shape[:-1])) > 0:
        raise errors.InvalidArgumentError(
            None, None, f"Requested more than 0 entries, but params is empty.  Params shape: "
                        f"[{','.join(str(d) for d in params.shape)}]")
    if indices.shape[-1] == 0:
        return np.broadcast_to(params, indices.shape[:-1] + params.shape)
    return params[_nd_coords(indices, params.shape, "param")]


def _scatter_along_axis(params, indices, grad, axis: int, batch_dims: int):
    """Sums `grad` (the output gradient of gather(params, indices, axis, batch_dims)) back
    into the shape of `params`, with ScatterNd."""
    rank = params.shape.ndims
    m = indices.shape.ndims - batch_dims
    k = axis - batch_dims
    # grad: [batch..., pre(k)..., irest(m)..., post...] -> [batch..., irest..., pre..., post...]
    perm = (list(range(batch_dims)) + list(range(batch_dims + k, batch_dims + k + m))
            + list(range(batch_dims, batch_dims + k))
            + list(range(batch_dims + k + m, batch_dims + k + m + rank - axis - 1)))
    moved = shape_ops.transpose(grad, perm)
    params_shape = shape_ops.shape(params, out_type=indices.dtype)
    index_parts = [shape_ops.expand_dims(indices, -1)]
    if batch_dims:
        batch_coords = []
        index_shape = shape_ops.shape(indices, out_type=indices.dtype)
        for b in range(batch_dims):
            size = index_shape[b]
            coord_shape = [1] * indices.shape.ndims
            coord_shape[b] = -1
            coord = shape_ops.reshape(math_ops.range(0, size, 1, dtype=indices.dtype), coord_shape)
            batch_coords.append(
                shape_ops.expand_dims(shape_ops.broadcast_to(coord, index_shape), -1))
        index_parts = batch_coords + index_parts
    coords = concat_ops.concat(index_parts, -1) if len(index_parts) > 1 else index_parts[0]
    # Scatter into [batch..., N, pre..., post...] then move N back to position `axis`.
    order = list(range(batch_dims)) + [axis] + list(range(batch_dims, axis)) + \
        list(range(axis + 1, rank))
    target = concat_ops.stack([params_shape[i] for i in order])
    scattered = scatter_nd(coords, moved, target)
    inverse = [0] * rank
    for i, p in enumerate(order):
        inverse[p] = i
    return shape_ops.transpose(scattered, inverse)


@GatherNd.gradient
def _gather_nd_grad(op, grad):
    params, indices = op.inputs
    shape = shape_ops.shape(params, out_type=indices.dtype)
    if indices.shape.ndims == 2 and indices.shape[-1].value == 1:
        # Whole rows of params, as a gather along axis 0: sparse, as TF returns it (the sparse
        # optimizer paths rely on it).
        rows = shape_ops.squeeze(indices, [-1])
        return [IndexedSlices(dense_gradient(grad), rows, shape), None]
    return [scatter_nd(indices, dense_gradient(grad), shape), None]


def gather_nd(params, indices, name=None, batch_dims=0):
    """Gathers slices of `params` addressed by the last dimension of `indices`."""
    if batch_dims:
        raise ValueError("gather_nd with batch_dims > 0 is not supported by GatherNd; use "
                         "tf.gather with batch_dims")
    return GatherNd(params, indices, name=name)


ScatterNd = define_op("ScatterNd", inputs=["indices: Tindices", "updates: T", "shape: Tindices"],
                      outputs=["output: T"], attrs=["T: type", "Tindices: {int16, int32, int64}"])


@ScatterNd.shape_fn(value_inputs=("shape",))
def _scatter_nd_shape(indices, updates, shape):
    if shape is None:
        return TensorShape(None)
    dims = [int(d) for d in np.reshape(shape, [-1])]
    if indices.ndims is not None and updates.ndims is not None and \
            indices._dim_list[-1] is not None:
        depth = indices._dim_list[-1]
        expected = TensorShape(list(indices._dim_list[:-1]) + dims[depth:])
        if not updates.is_compatible_with(expected):
            raise ValueError(f"updates shape {updates} must be {expected} for indices shape "
                             f"{indices} and output shape {dims}")
    return TensorShape(dims)


@ScatterNd.kernel
def _scatter_nd_kernel(indices, updates, shape):
    if updates.dtype == object:  # strings: empty where nothing lands, duplicates concatenated
        out = np.full([int(d) for d in shape], b"", dtype=object)
    else:
        out = np.zeros(shape, dtype=updates.dtype)
    if out.size == 0:
        if indices.size or updates.size:
            raise errors.InvalidArgumentError(
                None, None, f"Indices and updates specified for empty output shape "
                            f"{list(out.shape)}")
        return out
    expected = indices.shape[:-1] + out.shape[indices.shape[-1]:] if indices.ndim else None
    if expected is None or updates.shape != expected:
        raise errors.InvalidArgumentError(
            None, None, f"updates shape {list(updates.shape)} must be indices.shape[:-1] + "
                        f"shape[indices.shape[-1]:] for indices shape {list(indices.shape)} and "
                        f"output shape {list(out.shape)}")
    if indices.shape[-1] == 0:
        out += updates.reshape((-1,) + out.shape).sum(axis=0, dtype=out.dtype)
        return out
    np.add.at(out, _nd_coords(indices, out.shape, "output"), updates)
    return out


@ScatterNd.gradient
def _scatter_nd_grad(op, grad):
    indices = op.inputs[0]
    return [None, gather_nd(dense_gradient(grad), indices), None]


def scatter_nd(indices, updates, shape, name=None):
    """Zeros of `shape` with `updates` added at `indices` (duplicates are summed)."""
    indices = convert_to_tensor(indices)
    shape = convert_to_tensor(shape, dtype=indices.dtype)
    result = ScatterNd(indices, updates, shape, name=name)

    return shape_ops._refine(result, shape)
