"""Partitioning ops: DynamicPartition, DynamicStitch (for sharded embeddings), Unique, and
sequence_mask."""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops import math as math_ops
from tensorflux.ops.array import gather_scatter as gather_ops
from tensorflux.ops.array import shapes as shape_ops
from tensorflux.ops.array.constants import constant
from tensorflux.ops.array.gradient_helpers import dense_gradient, reshape_like
from tensorflux.ops.array.shapes import expand_dims
from tensorflux.ops.math.reduction import reduce_max

__all__ = ["dynamic_partition", "dynamic_stitch", "parallel_dynamic_stitch", "unique",
           "unique_with_counts", "sequence_mask"]


def _as_outputs(items):
    """Kernel results for a list output: the value itself when the op has one output."""
    items = tuple(items)
    return items[0] if len(items) == 1 else items


# -- DynamicPartition -------------------------------------------------------------------------

DynamicPartition = define_op(
    "DynamicPartition", inputs=["data: T", "partitions: int32"],
    outputs=["outputs: num_partitions * T"], attrs=["num_partitions: int >= 1", "T: type"])


@DynamicPartition.shape_fn
def _dynamic_partition_shape(data, partitions, *, num_partitions):
    if data.ndims is None or partitions.ndims is None:
        return [[TensorShape(None)] * num_partitions]
    prefix = data[:partitions.ndims]
    if data.ndims < partitions.ndims or not prefix.is_compatible_with(partitions):
        raise ValueError(f"partitions shape {partitions} must be a prefix of data shape {data}")
    return [[TensorShape([None] + list(data._dim_list[partitions.ndims:]))] * num_partitions]


@DynamicPartition.kernel(factory=True)
def _dynamic_partition_kernel(num_partitions):
    def dynamic_partition(data, partitions):
        if data.shape[:partitions.ndim] != partitions.shape:
            raise errors.InvalidArgumentError(
                None, None, f"data.shape must start with partitions.shape, got data.shape = "
                            f"{list(data.shape)}, partitions.shape = {list(partitions.shape)}")
        flat = partitions.reshape(-1)
        if flat.size and (flat.min() < 0 or flat.max() >= num_partitions):
            bad = np.flatnonzero((flat < 0) | (flat >= num_partitions))[0]
            position = ",".join(map(str, np.unravel_index(int(bad), partitions.shape)))
            where = f"[{position}]" if partitions.ndim else ""  # TF: "partitions = 17"
            raise errors.InvalidArgumentError(
                None, None, f"partitions{where} = {flat[bad]} is not in [0, "
                            f"{num_partitions})")
        rows = data.reshape((flat.size,) + data.shape[partitions.ndim:])
        order = np.argsort(flat, kind="stable")
        counts = np.bincount(flat, minlength=num_partitions)
        return _as_outputs(np.split(rows[order], np.cumsum(counts)[:-1]))

    return dynamic_partition


@DynamicPartition.gradient
def _dynamic_partition_grad(op, *grads):
    data, partitions = op.inputs
    num = op.get_attr("num_partitions")
    original = shape_ops.reshape(math_ops.range(0, shape_ops.size(partitions), 1),
                                 shape_ops.shape(partitions))
    positions = dynamic_partition(original, partitions, num)
    stitched = dynamic_stitch(positions, [dense_gradient(g) for g in grads])
    return [reshape_like(stitched, data), None]


def dynamic_partition(data, partitions, num_partitions, name=None):
    """Splits `data` into `num_partitions` tensors by the partition index of each entry.

    Args:
        data: a Tensor whose shape starts with `partitions.shape`.
        partitions: int32 partition numbers in [0, num_partitions).
        num_partitions: the number of outputs.
        name: op name.

    Returns:
        A list of `num_partitions` Tensors; output i holds the entries with partition i, in
        order.

    Raises:
        InvalidArgumentError: (at run time) a partition number is out of range.

    Example:
        >>> tf.dynamic_partition([10, 20, 30], [1, 0, 1], 2)   # -> [[20], [10, 30]]
    """
    return DynamicPartition(data, partitions, num_partitions=num_partitions, name=name)


# -- DynamicStitch, ParallelDynamicStitch -----------------------------------------------------

DynamicStitch = define_op("DynamicStitch", inputs=["indices: N * int32", "data: N * T"],
                          outputs=["merged: T"], attrs=["N: int >= 1", "T: type"])
ParallelDynamicStitch = define_op(
    "ParallelDynamicStitch", inputs=["indices: N * int32", "data: N * T"],
    outputs=["merged: T"], attrs=["N: int >= 1", "T: type"])


def _stitch_shape(indices, data):
    """[max index + 1 when every index tensor is constant, else ?] + data's trailing dims."""
    inner = None
    for index, shape in zip(indices, data):
        index_shape = index.shape
        if index_shape.ndims is None:
            continue
        rank = index_shape.ndims
        if shape.ndims is not None and (shape.ndims < rank or
                                        not shape[:rank].is_compatible_with(index_shape)):
            raise ValueError(f"data shape {shape} must start with indices shape {index_shape}")
        rest = shape[rank:] if shape.ndims is not None else TensorShape(None)
        if inner is not None and not inner.is_compatible_with(rest):
            raise ValueError(f"All data inputs must have the same trailing shape, got {inner} "
                             f"and {rest}")
        inner = rest if inner is None else inner.merge_with(rest)
    if inner is None or inner.ndims is None:
        return TensorShape(None)
    values = [index.value for index in indices]
    size = None
    if all(v is not None for v in values):
        size = max((int(np.max(v)) + 1 for v in values if np.size(v)), default=0)
    return TensorShape([size]).concatenate(inner)


DynamicStitch.shape_fn(_stitch_shape, static_inputs=("indices",))
ParallelDynamicStitch.shape_fn(_stitch_shape, static_inputs=("indices",))


def _stitch_kernel(*args):
    n = len(args) // 2
    indices, data = args[:n], args[n:]
    first = data[0]
    inner = first.shape[indices[0].ndim:]
    flat_idx = []
    flat_data = []
    for i, (idx, values) in enumerate(zip(indices, data)):
        if values.shape[:idx.ndim] != idx.shape or values.shape[idx.ndim:] != inner:
            raise errors.InvalidArgumentError(
                None, None, f"data[{i}].shape = {list(values.shape)} does not start with "
                            f"indices[{i}].shape = {list(idx.shape)} followed by {list(inner)}")
        flat_idx.append(idx.reshape(-1))
        flat_data.append(values.reshape((idx.size,) + inner))
    all_idx = np.concatenate(flat_idx)
    all_data = np.concatenate(flat_data) if len(flat_data) > 1 else flat_data[0]
    if all_idx.size and all_idx.min() < 0:
        raise errors.InvalidArgumentError(
            None, None, f"indices must be non-negative, got {int(all_idx.min())}")
    size = int(all_idx.max()) + 1 if all_idx.size else 0
    merged = np.zeros((size,) + inner, dtype=first.dtype)
    # Later entries win on duplicate indices: keep the last occurrence of each index.
    reversed_idx = all_idx[::-1]
    _, first_seen = np.unique(reversed_idx, return_index=True)
    keep = all_idx.size - 1 - first_seen
    merged[all_idx[keep]] = all_data[keep]
    return merged


DynamicStitch.kernel(_stitch_kernel)


def _stitch_grad(op, grad):
    n = op.get_attr("N")
    indices = op.inputs[:n]
    grad = dense_gradient(grad)
    return [None] * n + [gather_ops.gather(grad, i) for i in indices]


DynamicStitch.gradient(_stitch_grad)
ParallelDynamicStitch.kernel(_stitch_kernel)


ParallelDynamicStitch.gradient(_stitch_grad)


def dynamic_stitch(indices, data, name=None):
    """Interleaves `data` into one tensor: `merged[indices[m][i]] = data[m][i]`.

    Args:
        indices: a list of int32 Tensors.
        data: a list of Tensors; `data[m].shape` starts with `indices[m].shape`.
        name: op name.

    Returns:
        A Tensor of `max(indices) + 1` rows; later entries win on duplicate indices.

    Example:
        >>> tf.dynamic_stitch([[0, 2], [1]], [[1, 3], [2]])   # -> [1, 2, 3]
    """
    return DynamicStitch(list(indices), list(data), name=name)


def parallel_dynamic_stitch(indices, data, name=None):
    """Like `dynamic_stitch`; the winner among duplicate indices is unspecified."""
    return ParallelDynamicStitch(list(indices), list(data), name=name)


# -- Unique, UniqueWithCounts ------------------------------------------------------------------

Unique = define_op("Unique", inputs=["x: T"], outputs=["y: T", "idx: out_idx"],
                   attrs=["T: type", "out_idx: {int32, int64} = int32"], differentiable=False)
UniqueWithCounts = define_op(
    "UniqueWithCounts", inputs=["x: T"], outputs=["y: T", "idx: out_idx", "count: out_idx"],
    attrs=["T: type", "out_idx: {int32, int64} = int32"], differentiable=False)


@Unique.shape_fn
def _unique_shape(x):
    x.with_rank(1)
    return [TensorShape([None]), x]


@UniqueWithCounts.shape_fn
def _unique_with_counts_shape(x):
    x.with_rank(1)
    return [TensorShape([None]), x, TensorShape([None])]


def _unique(x, np_type):
    if x.ndim != 1:
        raise errors.InvalidArgumentError(None, None, f"unique expects a 1D vector, got shape "
                                                      f"{list(x.shape)}")
    values, first, inverse, counts = np.unique(x, return_index=True, return_inverse=True,
                                               return_counts=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return values[order], rank[inverse.reshape(-1)].astype(np_type), counts[order].astype(np_type)


@Unique.kernel(factory=True)
def _unique_kernel(out_idx):
    np_type = out_idx.as_numpy_dtype

    def unique_kernel(x):
        y, idx, _ = _unique(x, np_type)
        return y, idx

    return unique_kernel


@UniqueWithCounts.kernel(factory=True)
def _unique_with_counts_kernel(out_idx):
    np_type = out_idx.as_numpy_dtype

    def unique_with_counts_kernel(x):
        return _unique(x, np_type)

    return unique_with_counts_kernel


_V2_ATTRS = ["T: type", "Taxis: {int32, int64} = int64", "out_idx: {int32, int64} = int32"]
UniqueV2 = define_op("UniqueV2", inputs=["x: T", "axis: Taxis"], outputs=["y: T", "idx: out_idx"],
                     attrs=_V2_ATTRS, differentiable=False)
UniqueWithCountsV2 = define_op(
    "UniqueWithCountsV2", inputs=["x: T", "axis: Taxis"],
    outputs=["y: T", "idx: out_idx", "count: out_idx"], attrs=_V2_ATTRS, differentiable=False)


def _unique_axis(axis, rank, error):
    """The axis of a UniqueV2 `axis` vector (None: the 1-D case), checked as TF does."""
    values = [int(v) for v in np.asarray(axis).reshape(-1)]
    if np.ndim(axis) > 1:
        raise error(f"axis expects a 1D vector, got shape {list(np.shape(axis))}")
    if len(values) > 1:
        raise error(f"axis does not support input tensors larger than 1 elements, got {values}")
    if not values:
        return None
    if rank is not None and not -rank <= values[0] < rank:
        raise error(f"axis expects to be in the range [{-rank}, {rank}), got {values[0]}")
    return values[0] % rank if rank else values[0]


def _unique_v2_shapes(x, axis, with_counts):
    counts = [TensorShape([None])] if with_counts else []
    if axis is None:  # not known statically: any axis of x
        return [TensorShape(None), TensorShape([None])] + counts
    if x.ndims is None:
        return [TensorShape(None), TensorShape([None])] + counts
    a = _unique_axis(axis, x.ndims, ValueError)
    if a is None:
        if x.ndims != 1:
            raise ValueError(f"x expects a 1D vector when axis is empty, got shape {x}")
        return [TensorShape([None]), x] + ([TensorShape([None])] if with_counts else [])
    dims = x.as_list()
    dims[a] = None
    return [TensorShape(dims), TensorShape([x._dim_list[a]])] + \
        ([TensorShape([None])] if with_counts else [])


@UniqueV2.shape_fn(value_inputs=("axis",))
def _unique_v2_shape(x, axis):
    return _unique_v2_shapes(x, axis, False)


@UniqueWithCountsV2.shape_fn(value_inputs=("axis",))
def _unique_with_counts_v2_shape(x, axis):
    return _unique_v2_shapes(x, axis, True)


def _unique_along(x, axis, np_type):
    def error(message):
        return errors.InvalidArgumentError(None, None, message)

    a = _unique_axis(axis, x.ndim, error)
    if a is None:
        return _unique(x, np_type)
    moved = np.moveaxis(x, a, 0)
    rows = moved.reshape(moved.shape[0], -1)
    seen: dict = {}
    idx = np.empty(rows.shape[0], dtype=np_type)
    firsts, counts = [], []
    for i, row in enumerate(rows):
        key = row.tobytes() if row.dtype != object else tuple(row.tolist())
        j = seen.setdefault(key, len(firsts))
        if j == len(firsts):
            firsts.append(i)
            counts.append(0)
        counts[j] += 1
        idx[i] = j
    y = np.moveaxis(moved[firsts], 0, a) if firsts else np.moveaxis(moved[:0], 0, a)
    return np.ascontiguousarray(y), idx, np.asarray(counts, dtype=np_type)


@UniqueV2.kernel(factory=True)
def _unique_v2_kernel(out_idx):
    np_type = out_idx.as_numpy_dtype

    def unique_v2(x, axis):
        y, idx, _ = _unique_along(x, axis, np_type)
        return y, idx

    return unique_v2


@UniqueWithCountsV2.kernel(factory=True)
def _unique_with_counts_v2_kernel(out_idx):
    np_type = out_idx.as_numpy_dtype

    def unique_with_counts_v2(x, axis):
        return _unique_along(x, axis, np_type)

    return unique_with_counts_v2


def unique(x, out_idx=dtypes.int32, name=None):
    """The distinct values of 1-D `x` in order of first appearance, and each element's index
    into them."""
    return Unique(x, out_idx=out_idx, name=name)


def unique_with_counts(x, out_idx=dtypes.int32, name=None):
    """Like `unique`, plus how often each distinct value occurs."""
    return UniqueWithCounts(x, out_idx=out_idx, name=name)


# -- sequence_mask ----------------------------------------------------------------------------

def sequence_mask(lengths, maxlen=None, dtype=dtypes.bool_, name=None):
    """`mask[..., j] = j < lengths[...]` for `j < maxlen` (default: the largest length)."""

    with graph_mod.get_default_graph().name_scope(name or "SequenceMask"):
        lengths = convert_to_tensor(lengths, name="lengths")
        if maxlen is None:
            maxlen = reduce_max(lengths)
            maxlen = math_ops.maximum(constant(0, maxlen.dtype), maxlen)
        else:
            maxlen = convert_to_tensor(maxlen, name="maxlen")
        if maxlen.shape.ndims is not None and maxlen.shape.ndims != 0:
            raise ValueError("maxlen must be scalar for sequence_mask")
        row = math_ops.range(constant(0, maxlen.dtype), maxlen, constant(1, maxlen.dtype))
        matrix = math_ops.cast(expand_dims(lengths, -1), maxlen.dtype)
        result = math_ops.less(row, matrix)
        dtype = dtypes.as_dtype(dtype)
        if result.dtype.base_dtype == dtype.base_dtype:
            return result
        return math_ops.cast(result, dtype)
