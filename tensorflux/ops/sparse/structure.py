"""SparseTensor structure ops: SparseReshape, SparseReorder, SparseConcat, SparseSlice (+Grad),
SparseSplit and SparseFillEmptyRows (+Grad), with their TF1 wrappers."""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.op_def import define_op
from tensorflux.framework.sparse_tensor import SparseTensor
from tensorflux.framework.tensor_conversion import constant_value, convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops.array import concat_split as concat_ops
from tensorflux.ops.array import gather_scatter as gather_ops
from tensorflux.ops.array import shapes as shape_ops
from tensorflux.ops.math import casting
from tensorflux.ops.math import reduction as reduction_ops
from tensorflux.ops.math import sequence as sequence_ops
from tensorflux.ops.sparse.util import (
    as_sparse,
    check_bounds,
    dims_of,
    index_matrix,
    linear,
    match_rows,
    unlinear,
)

__all__ = ["sparse_reshape", "sparse_reorder", "sparse_concat", "sparse_slice", "sparse_split",
           "sparse_fill_empty_rows"]


def _rank_of(shape: TensorShape):
    return shape.with_rank(1)._dim_list[0]


# -- SparseReshape ------------------------------------------------------------------------------

SparseReshape = define_op(
    "SparseReshape", inputs=["input_indices: int64", "input_shape: int64", "new_shape: int64"],
    outputs=["output_indices: int64", "output_shape: int64"], differentiable=False)


@SparseReshape.shape_fn(value_inputs=("new_shape",))
def _sparse_reshape_shape(input_indices, input_shape, new_shape):
    rows = input_indices.with_rank(2)._dim_list[0]
    rank = None if new_shape is None else len(dims_of(new_shape))
    return [TensorShape([rows, rank]), TensorShape([rank])]


def _resolve_new_shape(dims: np.ndarray, new_dims: np.ndarray) -> np.ndarray:
    total = int(np.prod(dims))
    unknown = np.flatnonzero(new_dims == -1)
    if len(unknown) > 1:
        raise errors.InvalidArgumentError(
            None, None, f"only one output dimension may be -1, not both {unknown[0]} and "
            f"{unknown[1]}")
    if np.any(new_dims < -1):
        raise errors.InvalidArgumentError(
            None, None, f"size {int(new_dims.min())} must be non-negative, not "
            f"{new_dims.tolist()}")
    resolved = new_dims.copy()
    known = int(np.prod(new_dims[new_dims != -1]))
    if len(unknown):
        if known == 0 or total % known:
            raise errors.InvalidArgumentError(
                None, None, f"Input to reshape is a SparseTensor with {total} dense values, "
                f"but the requested shape requires a multiple of {known}")
        resolved[unknown[0]] = total // known
    if int(np.prod(resolved)) != total:
        raise errors.InvalidArgumentError(
            None, None, f"Input to reshape is a tensor with {total} dense values, but the "
            f"requested shape has {int(np.prod(resolved))}")
    return resolved


@SparseReshape.kernel
def _sparse_reshape_kernel(input_indices, input_shape, new_shape):
    dims = dims_of(input_shape)
    indices = index_matrix(input_indices, len(dims), "input_indices")
    resolved = _resolve_new_shape(dims, dims_of(new_shape))
    return unlinear(linear(indices, dims), resolved), resolved


def _check_static_reshape(dense_shape, shape) -> None:
    """TF's construction-time checks of sparse_reshape when the shapes are constant."""
    if shape is None:
        return
    if dense_shape is None:  # TF checks only a fully known input shape, else when run
        return
    wanted = [int(d) for d in np.asarray(shape).reshape(-1)]
    if wanted.count(-1) > 1:
        raise ValueError(f"At most one dimension can be inferred (-1). Found: {wanted}")
    size = int(np.prod(np.asarray(dense_shape, np.int64)))
    known = int(np.prod([d for d in wanted if d != -1], dtype=np.int64))
    fits = size % known == 0 if -1 in wanted and known else size == known
    if not fits:
        shown = [None if d == -1 else d for d in wanted]
        raise ValueError(f"Cannot reshape a tensor with {size} elements to shape {shown} "
                         f"({known} elements).")


def sparse_reshape(sp_input, shape, name=None):
    """The SparseTensor of `sp_input` reshaped to `shape` (row-major, one -1 allowed).

    Raises:
        ValueError: a static shape mismatch.
        InvalidArgumentError: (at run time) the element counts differ.
    """
    sp_input = as_sparse(sp_input)
    shape = convert_to_tensor(shape, name="shape")
    if shape.dtype.base_dtype != dtypes.int64:  # an int32 tf.shape(...) is fine, as in TF
        shape = casting.cast(shape, dtypes.int64)
    _check_static_reshape(constant_value(sp_input.dense_shape), constant_value(shape))
    out = SparseReshape(sp_input.indices, sp_input.dense_shape, shape,
                        name=name or "SparseReshape")
    return SparseTensor(out.output_indices, sp_input.values, out.output_shape)


# -- SparseReorder ------------------------------------------------------------------------------

SparseReorder = define_op(
    "SparseReorder", inputs=["input_indices: int64", "input_values: T", "input_shape: int64"],
    outputs=["output_indices: int64", "output_values: T"], attrs=["T: type"])


@SparseReorder.shape_fn
def _sparse_reorder_shape(input_indices, input_values, input_shape):
    return [input_indices.with_rank(2), input_values.with_rank(1)]


@SparseReorder.kernel
def _sparse_reorder_kernel(input_indices, input_values, input_shape):
    dims = dims_of(input_shape)
    indices = index_matrix(input_indices, len(dims), "input_indices")
    # row-major order of the index rows themselves: no bounds check, as TF
    order = np.lexsort(indices.T[::-1]) if len(dims) else np.arange(len(indices))
    return indices[order], np.asarray(input_values)[order]


@SparseReorder.gradient
def _sparse_reorder_grad(op, indices_grad, values_grad):
    indices, _, shape = op.inputs
    entries = sequence_ops.range(0, shape_ops.shape(indices, out_type=dtypes.int64)[0],
                                 dtype=dtypes.int64)
    ordered = SparseReorder(indices, entries, shape).output_values
    return [None, gather_ops.gather(values_grad, shape_ops.invert_permutation(ordered)), None]


def sparse_reorder(sp_input, name=None):
    """`sp_input` with its entries in canonical row-major order."""
    sp_input = as_sparse(sp_input)
    out = SparseReorder(sp_input.indices, sp_input.values, sp_input.dense_shape, name=name)
    return SparseTensor(out.output_indices, out.output_values, sp_input.dense_shape)


# -- SparseConcat -------------------------------------------------------------------------------

SparseConcat = define_op(
    "SparseConcat", inputs=["indices: N * int64", "values: N * T", "shapes: N * int64"],
    outputs=["output_indices: int64", "output_values: T", "output_shape: int64"],
    attrs=["concat_dim: int", "N: int >= 2", "T: type"], differentiable=False)


@SparseConcat.shape_fn
def _sparse_concat_shape(indices, values, shapes, *, concat_dim):
    rank = None
    for shape in shapes:
        dim = _rank_of(shape)
        rank = dim if rank is None else rank
        if dim is not None and dim != rank:
            raise ValueError(f"All SparseTensors must have the same rank, got {rank} and {dim}")
    # The output holds every input's entries: its count is static when all inputs' are.
    counts = [TensorShape(i).with_rank_at_least(1)[0].value if TensorShape(i).ndims else None
              for i in indices]
    nnz = None if any(c is None for c in counts) else sum(counts)
    return [TensorShape([nnz, rank]), TensorShape([nnz]), TensorShape([rank])]


@SparseConcat.kernel(factory=True)
def _sparse_concat_factory(concat_dim, N):  # noqa: N803 - TF attr name
    def sparse_concat(*args):
        indices, values, shapes = args[:N], args[N:2 * N], [dims_of(s) for s in args[2 * N:]]
        rank = len(shapes[0])
        if not -rank <= concat_dim < rank:
            raise errors.InvalidArgumentError(
                None, None, f"Concat dimension must be in range [{-rank}, {rank}), got "
                f"{concat_dim}")
        axis = concat_dim % rank
        for i, dims in enumerate(shapes):
            if len(dims) != rank:
                raise errors.InvalidArgumentError(
                    None, None, f"Input shapes must match: input {i} has rank {len(dims)} but "
                    f"input 0 has rank {rank}")
            bad = [d for d in range(rank) if d != axis and dims[d] != shapes[0][d]]
            if bad:
                raise errors.InvalidArgumentError(
                    None, None, f"Input shapes must match: expected {shapes[0][bad[0]]} for "
                    f"dimension {bad[0]} but got {dims[bad[0]]} at position {i}")
        sizes = np.array([s[axis] for s in shapes], np.int64)
        offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        parts = [index_matrix(i, rank) for i in indices]
        counts = [len(p) for p in parts]
        merged = np.concatenate(parts)
        merged[:, axis] += np.repeat(offsets, counts)
        out_shape = shapes[0].copy()
        out_shape[axis] = sizes.sum()
        order = np.argsort(linear(merged, out_shape), kind="stable")
        merged_values = np.concatenate([np.asarray(v) for v in values])
        return merged[order], merged_values[order], out_shape

    return sparse_concat


def sparse_concat(axis, sp_inputs, name=None, expand_nonconcat_dim=False, concat_dim=None,
                  expand_nonconcat_dims=None):
    """Concatenates SparseTensors along `axis`; the result's entries are in row-major order.

    Args:
        axis: the (Python int) dimension to concatenate along; negative counts from the end.
        sp_inputs: a list of at least two SparseTensors of one rank and dtype.
        expand_nonconcat_dim: grow the other dimensions to the largest input's, instead of
            requiring them equal.
        concat_dim, expand_nonconcat_dims: deprecated aliases.
    """
    if concat_dim is not None:
        if axis is not None and axis != concat_dim:
            raise ValueError("Cannot specify both 'axis' and 'concat_dim'")
        axis = concat_dim
    if expand_nonconcat_dims is not None:
        expand_nonconcat_dim = expand_nonconcat_dims
    sp_inputs = [as_sparse(sp, "sp_inputs") for sp in sp_inputs]
    if len(sp_inputs) == 1:
        return sp_inputs[0]
    shapes = [sp.dense_shape for sp in sp_inputs]
    with graph_mod.get_default_graph().name_scope(name or "SparseConcat"):
        if expand_nonconcat_dim:
            dim = int(axis)
            if dim < -1:
                rank = next((_rank_of(s.shape) for s in shapes
                             if _rank_of(s.shape) is not None), None)
                if rank is None:
                    raise ValueError("sparse_concat with expand_nonconcat_dim and an axis < -1 "
                                     "needs inputs of known rank")
                dim %= rank
            largest = reduction_ops.reduce_max(concat_ops.stack(shapes), axis=0)
            if dim == -1:
                shapes = [concat_ops.concat([largest[:-1], s[-1:]], 0) for s in shapes]
            else:
                shapes = [concat_ops.concat([largest[:dim], s[dim:dim + 1], largest[dim + 1:]],
                                            0) for s in shapes]
        out = SparseConcat([sp.indices for sp in sp_inputs], [sp.values for sp in sp_inputs],
                           shapes, concat_dim=int(axis))
    return SparseTensor(out.output_indices, out.output_values, out.output_shape)


# -- SparseSlice, SparseSliceGrad ---------------------------------------------------------------

SparseSlice = define_op(
    "SparseSlice",
    inputs=["indices: int64", "values: T", "shape: int64", "start: int64", "size: int64"],
    outputs=["output_indices: int64", "output_values: T", "output_shape: int64"],
    attrs=["T: type"])
SparseSliceGrad = define_op(
    "SparseSliceGrad",
    inputs=["backprop_val_grad: T", "input_indices: int64", "input_start: int64",
            "output_indices: int64"],
    outputs=["val_grad: T"], attrs=["T: {numbertype}"], differentiable=False)


@SparseSlice.shape_fn
def _sparse_slice_shape(indices, values, shape, start, size):
    rank = _rank_of(shape)
    return [TensorShape([None, rank]), TensorShape([None]), TensorShape([rank])]


@SparseSlice.kernel
def _sparse_slice_kernel(indices, values, shape, start, size):
    dims, start, size = dims_of(shape), dims_of(start), dims_of(size)
    if len(start) != len(dims) or len(size) != len(dims):
        raise errors.InvalidArgumentError(
            None, None, f"Expected start and size to have {len(dims)} elements each, got "
            f"start {start.tolist()} and size {size.tolist()}")
    indices = index_matrix(indices, len(dims))
    keep = np.all((indices >= start) & (indices < start + size), axis=1)
    out_shape = np.maximum(np.minimum(start + size, dims) - start, 0)
    return indices[keep] - start, np.asarray(values)[keep], out_shape


@SparseSliceGrad.shape_fn
def _sparse_slice_grad_shape(backprop_val_grad, input_indices, input_start, output_indices):
    return TensorShape([input_indices.with_rank(2)._dim_list[0]])


@SparseSliceGrad.kernel
def _sparse_slice_grad_kernel(backprop_val_grad, input_indices, input_start, output_indices):
    start = dims_of(input_start)
    rank = len(start)
    query = np.asarray(input_indices, np.int64).reshape(-1, rank) - start
    pos = match_rows(query, np.asarray(output_indices, np.int64).reshape(-1, rank))
    grad = np.asarray(backprop_val_grad)
    picked = grad[np.maximum(pos, 0)] if grad.size else np.zeros(len(pos), grad.dtype)
    return np.where(pos >= 0, picked, 0).astype(grad.dtype)


@SparseSlice.gradient
def _sparse_slice_grad(op, indices_grad, values_grad, shape_grad):
    indices, _, _, start, _ = op.inputs
    val_grad = SparseSliceGrad(values_grad, indices, start, op.outputs[0])
    return [None, val_grad, None, None, None]


def sparse_slice(sp_input, start, size, name=None):
    """The entries of `sp_input` inside the box `[start, start + size)`, shifted to the origin.

    The result's shape is `size` clipped to the input's bounds.

    Example:
        >>> sp = tf.SparseTensor([[0, 0], [1, 3]], [1, 2], [2, 4])
        >>> tf.sparse_slice(sp, [0, 2], [2, 2])   # indices [[1, 1]], shape [2, 2]
    """
    sp_input = as_sparse(sp_input)
    start = convert_to_tensor(start, dtype=dtypes.int64, name="start")
    size = convert_to_tensor(size, dtype=dtypes.int64, name="size")
    out = SparseSlice(sp_input.indices, sp_input.values, sp_input.dense_shape, start, size,
                      name=name)
    return SparseTensor(out.output_indices, out.output_values, out.output_shape)


# -- SparseSplit --------------------------------------------------------------------------------

SparseSplit = define_op(
    "SparseSplit", inputs=["split_dim: int64", "indices: int64", "values: T", "shape: int64"],
    outputs=["output_indices: num_split * int64", "output_values: num_split * T",
             "output_shape: num_split * int64"],
    attrs=["num_split: int >= 1", "T: type"], differentiable=False)


@SparseSplit.shape_fn
def _sparse_split_shape(split_dim, indices, values, shape, *, num_split):
    rank = _rank_of(shape)
    return [[TensorShape([None, rank])] * num_split, [TensorShape([None])] * num_split,
            [TensorShape([rank])] * num_split]


@SparseSplit.kernel(factory=True)
def _sparse_split_factory(num_split):
    def sparse_split(split_dim, indices, values, shape):
        dims = dims_of(shape)
        rank = len(dims)
        if np.ndim(split_dim) != 0:
            raise errors.InvalidArgumentError(
                None, None, f"split_dim: axis should be a scalar, got shape "
                f"{list(np.shape(split_dim))}")
        axis = int(split_dim)
        if not -rank <= axis < rank:
            raise errors.InvalidArgumentError(
                None, None, f"split_dim: axis should be in range [{-rank}, {rank}), got {axis}")
        axis %= rank
        if num_split > dims[axis]:
            raise errors.InvalidArgumentError(
                None, None, f"num_split must be in the range [1, {dims[axis]}] (the size of "
                f"split_dim), got {num_split}")
        base, extra = divmod(int(dims[axis]), num_split)
        sizes = np.full(num_split, base, np.int64)
        sizes[:extra] += 1
        bounds = np.concatenate([[0], np.cumsum(sizes)])
        indices = index_matrix(indices, rank)
        check_bounds(indices, dims)
        piece = np.searchsorted(bounds, indices[:, axis], side="right") - 1
        values = np.asarray(values)
        out_indices, out_values, out_shapes = [], [], []
        for i in range(num_split):
            keep = piece == i
            part = indices[keep]
            part[:, axis] -= bounds[i]
            out_indices.append(part)
            out_values.append(values[keep])
            shape_i = dims.copy()
            shape_i[axis] = sizes[i]
            out_shapes.append(shape_i)
        return tuple(out_indices + out_values + out_shapes)

    return sparse_split


class _KeywordRequired:
    def __repr__(self) -> str:
        return "KeywordRequired()"


_KEYWORD_REQUIRED = _KeywordRequired()


def sparse_split(keyword_required=_KEYWORD_REQUIRED, sp_input=None, num_split=None, axis=None,
                 name=None, split_dim=None):
    """Splits `sp_input` into `num_split` SparseTensors along `axis` (keyword arguments only).

    The first `size % num_split` pieces get one extra slice.

    Raises:
        ValueError: positional arguments, or a missing `sp_input` / `num_split` / `axis`.
    """
    if not isinstance(keyword_required, _KeywordRequired):
        raise ValueError("Keyword arguments are required for this function.")
    if split_dim is not None:
        if axis is not None and axis != split_dim:
            raise ValueError("Cannot specify both 'axis' and 'split_dim'")
        axis = split_dim
    if sp_input is None:
        raise ValueError("sp_input is required")
    if num_split is None:
        raise ValueError("num_split is required")
    if axis is None:
        raise ValueError("axis is required")
    sp_input = as_sparse(sp_input)
    split_dim_t = convert_to_tensor(axis, dtype=dtypes.int64, name="split_dim")
    out = SparseSplit(split_dim_t, sp_input.indices, sp_input.values, sp_input.dense_shape,
                      num_split=int(num_split), name=name)
    return [SparseTensor(i, v, s) for i, v, s in zip(out.output_indices, out.output_values,
                                                     out.output_shape)]


# -- SparseFillEmptyRows, SparseFillEmptyRowsGrad -----------------------------------------------

SparseFillEmptyRows = define_op(
    "SparseFillEmptyRows",
    inputs=["indices: int64", "values: T", "dense_shape: int64", "default_value: T"],
    outputs=["output_indices: int64", "output_values: T", "empty_row_indicator: bool",
             "reverse_index_map: int64"], attrs=["T: type"])
SparseFillEmptyRowsGrad = define_op(
    "SparseFillEmptyRowsGrad", inputs=["reverse_index_map: int64", "grad_values: T"],
    outputs=["d_values: T", "d_default_value: T"], attrs=["T: type"], differentiable=False)


@SparseFillEmptyRows.shape_fn
def _fill_empty_rows_shape(indices, values, dense_shape, default_value):
    default_value.with_rank(0)
    rank = _rank_of(dense_shape)
    rows = indices.with_rank(2)._dim_list[0]
    return [TensorShape([None, rank]), TensorShape([None]), TensorShape([None]),
            TensorShape([rows])]


@SparseFillEmptyRows.kernel
def _fill_empty_rows_kernel(indices, values, dense_shape, default_value):
    dims = dims_of(dense_shape)
    if len(dims) < 1:
        raise errors.InvalidArgumentError(None, None, "dense_shape must be a non-empty vector")
    indices = index_matrix(indices, len(dims))
    check_bounds(indices, dims)
    rows = int(dims[0])
    counts = np.bincount(indices[:, 0], minlength=rows)
    empty = counts == 0
    filler = np.zeros((int(empty.sum()), len(dims)), np.int64)
    filler[:, 0] = np.flatnonzero(empty)
    all_indices = np.concatenate([indices, filler])
    all_values = np.concatenate([np.asarray(values), np.full(len(filler), default_value,
                                                             np.asarray(values).dtype)])
    order = np.argsort(all_indices[:, 0], kind="stable")
    position = np.empty(len(order), np.int64)
    position[order] = np.arange(len(order))
    return all_indices[order], all_values[order], empty, position[:len(indices)]


@SparseFillEmptyRowsGrad.shape_fn
def _fill_empty_rows_grad_shape(reverse_index_map, grad_values):
    return [reverse_index_map.with_rank(1), TensorShape([])]


@SparseFillEmptyRowsGrad.kernel
def _fill_empty_rows_grad_kernel(reverse_index_map, grad_values):
    d_values = np.asarray(grad_values)[np.asarray(reverse_index_map, np.int64)]
    d_default = np.sum(grad_values) - np.sum(d_values)
    return d_values, np.asarray(d_default, grad_values.dtype)


@SparseFillEmptyRows.gradient
def _fill_empty_rows_grad(op, indices_grad, values_grad, indicator_grad, map_grad):
    d_values, d_default = SparseFillEmptyRowsGrad(op.outputs[3], values_grad)
    return [None, d_values, None, d_default]


def sparse_fill_empty_rows(sp_input, default_value, name=None):
    """Adds `default_value` at `[row, 0, ..., 0]` for each row of `sp_input` with no entries.

    Returns:
        (SparseTensor with rows in order, bool vector marking the rows that were empty).
    """
    sp_input = as_sparse(sp_input)
    with graph_mod.get_default_graph().name_scope(name or "SparseFillEmptyRows"):
        default = convert_to_tensor(default_value, dtype=sp_input.dtype.base_dtype,
                                    name="default_value")
        out = SparseFillEmptyRows(sp_input.indices, sp_input.values, sp_input.dense_shape,
                                  default)
    return (SparseTensor(out.output_indices, out.output_values, sp_input.dense_shape),
            out.empty_row_indicator)
