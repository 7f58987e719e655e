"""SparseTensor helpers built from other ops (as in TF1): retain, transpose, merge,
to_indicator, mask (IndexedSlices), from_dense, eye, expand_dims."""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.indexed_slices import IndexedSlices
from tensorflux.framework.scopes import op_name_scope as _scope
from tensorflux.framework.sparse_tensor import SparseTensor
from tensorflux.framework.tensor_conversion import constant_value, convert_to_tensor
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.array import concat_split as concat_ops
from tensorflux.ops.array import gather_scatter as gather_ops
from tensorflux.ops.array import shapes as shape_ops
from tensorflux.ops.debug import checks as check_ops
from tensorflux.ops.math import casting as cast_ops
from tensorflux.ops.math import comparison as comparison_ops
from tensorflux.ops.math import reduction as reduction_ops
from tensorflux.ops.math import select as select_ops
from tensorflux.ops.math import sequence as sequence_ops
from tensorflux.ops.sparse.core import sparse_tensor_to_dense
from tensorflux.ops.sparse.structure import sparse_reorder
from tensorflux.ops.sparse.util import as_sparse

__all__ = ["sparse_retain", "sparse_transpose", "sparse_merge", "sparse_to_indicator",
           "sparse_mask", "sparse_reset_shape"]



def sparse_retain(sp_input, to_retain):
    """The entries of `sp_input` where the bool vector `to_retain` is True (order kept).

    Raises:
        ValueError: `to_retain` is not a vector with one element per value.
    """
    sp_input = as_sparse(sp_input)
    to_retain = convert_to_tensor(to_retain, dtype=dtypes.bool_, name="to_retain")
    retain_shape = to_retain.shape.with_rank(1)
    if not retain_shape.is_compatible_with(sp_input.values.shape):
        raise ValueError(f"sparse_retain: to_retain has shape {retain_shape} but sp_input has "
                         f"{sp_input.values.shape} values")
    with _scope(None, "SparseRetain"):
        where = shape_ops.reshape(select_ops.where(to_retain), [-1])
        indices = gather_ops.gather(sp_input.indices, where)
        values = gather_ops.gather(sp_input.values, where)
        return SparseTensor(indices, values, array_ops.identity(sp_input.dense_shape))


def sparse_transpose(sp_input, perm=None, name=None):
    """Permutes the dimensions of a SparseTensor (reversed when `perm` is None); the result's
    entries are reordered row-major."""
    sp_input = as_sparse(sp_input)
    with _scope(name, "SparseTranspose"):
        if perm is None:
            rank = shape_ops.size(sp_input.dense_shape, out_type=dtypes.int32)
            perm = sequence_ops.range(rank - 1, -1, -1)
        else:
            perm = convert_to_tensor(perm, dtype=dtypes.int32, name="perm")
        indices = gather_ops.gather(sp_input.indices, perm, axis=1)
        dense_shape = gather_ops.gather(sp_input.dense_shape, perm)
        return sparse_reorder(SparseTensor(indices, sp_input.values, dense_shape))


def sparse_merge(sp_ids, sp_values, vocab_size, name=None, already_sorted=False):
    """Combines id and value SparseTensors: entry `[..., k]` with id `i` becomes `[..., i]`.

    `sp_ids` may be a list (one id tensor per new trailing dimension) with a matching list of
    `vocab_size`s.

    Example:
        >>> ids = tf.SparseTensor([[0, 0], [0, 1]], tf.constant([3, 7], tf.int64), [1, 2])
        >>> vals = tf.SparseTensor([[0, 0], [0, 1]], [0.5, 1.5], [1, 2])
        >>> tf.sparse_merge(ids, vals, 10)   # indices [[0, 3], [0, 7]], shape [1, 10]
    """
    # a SparseTensorValue is a namedtuple, but one id tensor
    several = isinstance(sp_ids, (list, tuple)) and not hasattr(sp_ids, "dense_shape")
    ids_list = list(sp_ids) if several else [sp_ids]
    sizes = list(vocab_size) if isinstance(vocab_size, (list, tuple)) else [vocab_size]
    if len(ids_list) != len(sizes):
        raise ValueError(f"sp_ids and vocab_size must have the same length, got "
                         f"{len(ids_list)} and {len(sizes)}")
    ids_list = [as_sparse(ids, "sp_ids") for ids in ids_list]
    for ids in ids_list:
        if ids.dtype.base_dtype not in (dtypes.int32, dtypes.int64):
            raise TypeError(f"sp_ids.values must be int32 or int64, got {ids.dtype.name}")
    sp_values = as_sparse(sp_values, "sp_values")
    with _scope(name, "SparseMerge"):
        columns = [shape_ops.expand_dims(cast_ops.cast(ids.values, dtypes.int64), 1)
                   for ids in ids_list]
        indices = concat_ops.concat([ids_list[0].indices[:, :-1]] + columns, 1)
        sizes = [cast_ops.cast(convert_to_tensor(s), dtypes.int64) for s in sizes]
        shape = concat_ops.concat([ids_list[0].dense_shape[:-1],
                                   concat_ops.stack([shape_ops.reshape(s, []) for s in sizes])],
                                  0)
        merged = SparseTensor(indices, sp_values.values, shape)
        return merged if already_sorted else sparse_reorder(merged)


def sparse_to_indicator(sp_input, vocab_size, name=None):
    """A dense bool tensor `[..., vocab_size]`: True at `[..., id]` for each id in a row.

    Args:
        sp_input: SparseTensor of int32/int64 ids, shape [..., k].
        vocab_size: the size of the new last dimension.
    """

    sp_input = as_sparse(sp_input)
    with _scope(name, "SparseToIndicator"):
        count = shape_ops.shape(sp_input.indices)[0]
        trues = array_ops.fill(concat_ops.stack([count]), True)
        flags = SparseTensor(sp_input.indices, trues, sp_input.dense_shape)
        merged = sparse_merge(sp_input, flags, vocab_size)
        return sparse_tensor_to_dense(merged, default_value=False, validate_indices=False)


def sparse_mask(a, mask_indices, name=None):
    """The rows of IndexedSlices `a` whose index is not in `mask_indices`.

    Example:
        >>> a = tf.IndexedSlices(values, indices=[12, 26, 37, 45])
        >>> tf.sparse_mask(a, [12, 45]).indices   # -> [26, 37]
    """
    with _scope(name, "sparse_mask"):
        indices = convert_to_tensor(a.indices)
        mask = cast_ops.cast(convert_to_tensor(mask_indices, name="mask_indices"),
                             indices.dtype.base_dtype)
        hits = comparison_ops.equal(shape_ops.expand_dims(indices, 1),
                                    shape_ops.expand_dims(mask, 0))
        keep = comparison_ops.logical_not(reduction_ops.reduce_any(hits, axis=1))
        where = shape_ops.reshape(select_ops.where(keep), [-1])
        return IndexedSlices(gather_ops.gather(a.values, where),
                             gather_ops.gather(indices, where), a.dense_shape)


def from_dense(tensor, name=None):
    """The SparseTensor of the non-zero (non-empty for strings) elements of `tensor`."""
    with _scope(name, "dense_to_sparse"):
        tensor = convert_to_tensor(tensor, name="tensor")
        zero = b"" if tensor.dtype.base_dtype == dtypes.string else \
            np.zeros([], tensor.dtype.base_dtype.as_numpy_dtype)
        indices = select_ops.where(comparison_ops.not_equal(tensor, zero))
        values = gather_ops.gather_nd(tensor, indices)
        shape = shape_ops.shape(tensor, out_type=dtypes.int64)
        return SparseTensor(indices, values, shape)


def eye(num_rows, num_columns=None, dtype=dtypes.float32, name=None):
    """A sparse identity matrix `[num_rows, num_columns]` (square when columns is None)."""
    with _scope(name, "eye"):
        rows = cast_ops.cast(convert_to_tensor(num_rows, name="num_rows"), dtypes.int64)
        cols = rows if num_columns is None else \
            cast_ops.cast(convert_to_tensor(num_columns, name="num_columns"), dtypes.int64)
        diag = sequence_ops.range(0, math_ops.minimum(rows, cols), dtype=dtypes.int64)
        indices = concat_ops.stack([diag, diag], axis=1)
        values = array_ops.ones(shape_ops.shape(diag), dtype=dtype)
        return SparseTensor(indices, values, concat_ops.stack([rows, cols]))


def expand_dims(sp_input, axis=None, name=None):
    """Inserts a dimension of size 1 at `axis` (a Python int in [-rank - 1, rank]).

    Raises:
        ValueError: `axis` is missing, or negative with an input of unknown rank.
    """
    sp_input = as_sparse(sp_input)
    if axis is None:
        raise ValueError("sparse expand_dims needs an axis")
    axis = int(axis)
    with _scope(name, "expand_dims"):
        if axis < 0:
            rank = sp_input.shape.ndims
            if rank is None:
                raise ValueError("sparse expand_dims with a negative axis needs a known rank")
            if axis < -rank - 1:
                raise ValueError(f"axis {axis} is out of range for rank {rank}")
            axis += rank + 1
        count = shape_ops.shape(sp_input.indices, out_type=dtypes.int64)[0:1]
        column = array_ops.zeros(concat_ops.concat([count, [1]], 0), dtype=dtypes.int64)
        indices = concat_ops.concat([sp_input.indices[:, :axis], column,
                                     sp_input.indices[:, axis:]], 1)
        shape = concat_ops.concat([sp_input.dense_shape[:axis],
                                   np.ones([1], np.int64), sp_input.dense_shape[axis:]], 0)
        return SparseTensor(indices, sp_input.values, shape)


def sparse_reset_shape(sp_input, new_shape=None):
    """`sp_input` with a new dense shape: the tight bounding box of its indices when
    `new_shape` is None, else `new_shape` (same rank, no dimension smaller).

    Raises:
        ValueError: a statically known `new_shape` of another rank or with a smaller dimension.
        InvalidArgumentError: (at run time) the same, for shapes known only then.
    """

    sp_input = as_sparse(sp_input)
    with _scope(None, "SparseResetShape"):
        values = array_ops.identity(sp_input.values)
        if new_shape is None:  # no entries: every dimension 0 (never the max of nothing)
            bound = reduction_ops.reduce_max(sp_input.indices, axis=0) + 1
            return SparseTensor(sp_input.indices, values,
                                math_ops.maximum(np.int64(0), bound))
        new_shape = convert_to_tensor(new_shape, name="new_shape")
        if new_shape.dtype.base_dtype != dtypes.int64:  # TF casts int32 shapes
            new_shape = cast_ops.cast(new_shape, dtypes.int64)
        new_shape.shape.with_rank(1)
        if not new_shape.shape[:1].is_compatible_with(sp_input.dense_shape.shape[:1]):
            raise ValueError(f"Requested new_shape has rank {new_shape.shape[0]} but sp_input "
                             f"has rank {sp_input.dense_shape.shape[0]}.")
        static_new = constant_value(new_shape)
        old = sp_input.shape
        if static_new is not None and old.is_fully_defined():
            old_dims = np.asarray(old.as_list(), np.int64)
            if len(static_new) != len(old_dims) or np.any(static_new < old_dims):
                raise ValueError(f"Requested new_shape should have dimension sizes >= "
                                 f"sp_input.shape. Found new_shape ({static_new.tolist()}), "
                                 f"sp_input.shape ({old_dims.tolist()}).")
            return SparseTensor(sp_input.indices, values, new_shape)
        # the rank check runs first: the element-wise one needs equal ranks (as TF)
        graph = graph_mod.get_default_graph()
        with graph.control_dependencies([check_ops.assert_equal(
                shape_ops.shape(new_shape), shape_ops.shape(sp_input.dense_shape))]):
            larger = check_ops.assert_less_equal(sp_input.dense_shape, new_shape)
        with graph.control_dependencies([larger]):
            return SparseTensor(sp_input.indices, values, array_ops.identity(new_shape))
