"""Gathers and scatters: GatherV2 (tf.gather, batch_dims too), Gather, GatherNd, ScatterNd."""

from __future__ import annotations

import numpy as np

from tensorflux.framework import errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops.array.shapes import _refine

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
    if params.ndims is None or indices.ndims is None or axis is None:
        return TensorShape(None)
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
        a, b = params.dims[i], indices.dims[i]
        if a is not None and b is not None and a != b:
            raise ValueError(f"params.shape[{i}] ({a}) should equal indices.shape[{i}] ({b})")
    dims = list(params.dims)
    return TensorShape(dims[:axis] + list(indices.dims[batch_dims:]) + dims[axis + 1:])


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


@Gather.kernel
def _gather_kernel(params, indices):
    return _gather(params, indices, 0, 0)


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
    depth = indices.dims[-1]
    if depth is None:
        return TensorShape(None)
    if depth > params.ndims:
        raise ValueError(f"indices.shape[-1] must be <= params.rank, but saw indices shape: "
                         f"{indices} and params shape: {params}")
    return TensorShape(list(indices.dims[:-1]) + list(params.dims[depth:]))


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
    if indices.shape[-1] == 0:
        return np.broadcast_to(params, indices.shape[:-1] + params.shape)
    return params[_nd_coords(indices, params.shape, "param")]


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
    if indices.ndims is not None and updates.ndims is not None and indices.dims[-1] is not None:
        depth = indices.dims[-1]
        expected = TensorShape(list(indices.dims[:-1]) + dims[depth:])
        if not updates.is_compatible_with(expected):
            raise ValueError(f"updates shape {updates} must be {expected} for indices shape "
                             f"{indices} and output shape {dims}")
    return TensorShape(dims)


@ScatterNd.kernel
def _scatter_nd_kernel(indices, updates, shape):
    out = np.zeros(shape, dtype=updates.dtype)
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


def scatter_nd(indices, updates, shape, name=None):
    """Zeros of `shape` with `updates` added at `indices` (duplicates are summed)."""
    indices = convert_to_tensor(indices)
    shape = convert_to_tensor(shape, dtype=indices.dtype)
    result = ScatterNd(indices, updates, shape, name=name)

    return _refine(result, shape)
