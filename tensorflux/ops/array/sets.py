"""Set operations along the last dimension (SetSize, DenseToDense/DenseToSparse/SparseToSparse
SetOperation) and the `tf.sets` wrappers, which return SparseTensors of sorted members."""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.sparse_tensor import SparseTensor, convert_to_tensor_or_sparse_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops.sparse.util import check_bounds, dims_of, index_matrix, linear, unlinear

__all__ = ["set_size", "set_intersection", "set_union", "set_difference"]

_SET_TYPES = "{int8, int16, int32, int64, uint8, uint16, string}"
_VALID_DTYPES = frozenset(dtypes.as_dtype(t) for t in
                          ("int8", "int16", "int32", "int64", "uint8", "uint16", "string"))
_OPERATIONS = ("a-b", "b-a", "intersection", "union")
_SET_OUTPUTS = ["result_indices: int64", "result_values: T", "result_shape: int64"]
_SET_ATTRS = ["set_operation: string", "validate_indices: bool = True", f"T: {_SET_TYPES}"]

SetSize = define_op(
    "SetSize", inputs=["set_indices: int64", "set_values: T", "set_shape: int64"],
    outputs=["size: int32"], attrs=["validate_indices: bool = True", f"T: {_SET_TYPES}"],
    differentiable=False)
DenseToDenseSetOperation = define_op(
    "DenseToDenseSetOperation", inputs=["set1: T", "set2: T"], outputs=_SET_OUTPUTS,
    attrs=_SET_ATTRS, differentiable=False)
DenseToSparseSetOperation = define_op(
    "DenseToSparseSetOperation",
    inputs=["set1: T", "set2_indices: int64", "set2_values: T", "set2_shape: int64"],
    outputs=_SET_OUTPUTS, attrs=_SET_ATTRS, differentiable=False)
SparseToSparseSetOperation = define_op(
    "SparseToSparseSetOperation",
    inputs=["set1_indices: int64", "set1_values: T", "set1_shape: int64", "set2_indices: int64",
            "set2_values: T", "set2_shape: int64"],
    outputs=_SET_OUTPUTS, attrs=_SET_ATTRS, differentiable=False)


# -- shape functions --------------------------------------------------------------------------

def _sparse_rank(indices, shape):
    rank = shape.with_rank(1)._dim_list[0]
    indices.with_rank(2)
    if rank is not None and rank < 2:
        raise ValueError(f"Sets need a shape of rank >= 2, got rank {rank}")
    return rank


def _result_shapes(rank):
    return [TensorShape([None, rank]), TensorShape([None]), TensorShape([rank])]


@SetSize.shape_fn
def _set_size_shape(set_indices, set_values, set_shape):
    _sparse_rank(set_indices, set_shape)
    return TensorShape(None)


@DenseToDenseSetOperation.shape_fn
def _dense_to_dense_shape(set1, set2):
    if set1.ndims is None or set2.ndims is None:
        return _result_shapes(set1.ndims if set1.ndims is not None else set2.ndims)
    set1.with_rank_at_least(2)
    set2.with_rank_at_least(2)
    if set1.ndims != set2.ndims:
        raise ValueError(f"set1 and set2 must have the same rank, got {set1} and {set2}")
    TensorShape(set1._dim_list[:-1]).merge_with(TensorShape(set2._dim_list[:-1]))
    return _result_shapes(set1.ndims)


@DenseToSparseSetOperation.shape_fn
def _dense_to_sparse_shape(set1, set2_indices, set2_values, set2_shape):
    rank = _sparse_rank(set2_indices, set2_shape)
    set1.with_rank_at_least(2)
    if set1.ndims is not None and rank is not None and set1.ndims != rank:
        raise ValueError(f"set1 has rank {set1.ndims} but set2 has rank {rank}")
    return _result_shapes(set1.ndims if set1.ndims is not None else rank)


@SparseToSparseSetOperation.shape_fn
def _sparse_to_sparse_shape(set1_indices, set1_values, set1_shape, set2_indices, set2_values,
                            set2_shape):
    rank1 = _sparse_rank(set1_indices, set1_shape)
    rank2 = _sparse_rank(set2_indices, set2_shape)
    if rank1 is not None and rank2 is not None and rank1 != rank2:
        raise ValueError(f"set1 has rank {rank1} but set2 has rank {rank2}")
    return _result_shapes(rank1 if rank1 is not None else rank2)


# -- kernels ------------------------------------------------------------------------------------
# A set argument becomes (batch dims, row of each element, values): rows are row-major
# positions in the batch dims; members are then unique (row, value) pairs.

def _dense_members(dense):
    if dense.ndim < 2:
        raise errors.InvalidArgumentError(None, None, f"Sets need rank >= 2, got shape "
                                                      f"{list(dense.shape)}")
    batch = np.asarray(dense.shape[:-1], np.int64)
    rows = np.repeat(np.arange(int(np.prod(batch)), dtype=np.int64), dense.shape[-1])
    return batch, rows, dense.reshape(-1)


def _sparse_members(indices, values, shape, validate_indices, what):
    dims = dims_of(shape)
    if len(dims) < 2:
        raise errors.InvalidArgumentError(None, None, f"{what}: sets need a shape of rank >= 2, "
                                                      f"got {dims.tolist()}")
    indices = index_matrix(indices, len(dims), f"{what} indices")
    values = np.asarray(values).reshape(-1)
    if len(values) != len(indices):
        raise errors.InvalidArgumentError(
            None, None, f"{what}: {len(indices)} indices but {len(values)} values")
    check_bounds(indices, dims)
    if validate_indices and len(indices) > 1:
        flat = linear(indices, dims)
        bad = np.flatnonzero(flat[1:] <= flat[:-1])
        if bad.size:
            i = int(bad[0]) + 1
            kind = "repeated" if flat[i] == flat[i - 1] else "out of order"
            raise errors.InvalidArgumentError(
                None, None, f"indices[{i}] = {indices[i].tolist()} is {kind}. Many sparse ops "
                            f"require sorted indices. Use `tf.sparse.reorder` to create a "
                            f"correctly ordered copy.")
    batch = dims[:-1]
    return batch, linear(indices[:, :-1], batch), values


def _keys(rows, codes, count):
    return np.unique(rows * count + codes)


def _set_operation(first, second, set_operation):
    batch1, rows1, values1 = first
    batch2, rows2, values2 = second
    if not np.array_equal(batch1, batch2):
        raise errors.InvalidArgumentError(
            None, None, f"Mismatched shapes {batch1.tolist()} vs {batch2.tolist()}")
    everything = np.concatenate([values1, values2])
    uniques, codes = np.unique(everything, return_inverse=True)
    count = max(len(uniques), 1)
    codes = codes.reshape(-1).astype(np.int64)
    keys1 = _keys(rows1, codes[:len(values1)], count)
    keys2 = _keys(rows2, codes[len(values1):], count)
    if set_operation == "intersection":
        keys = np.intersect1d(keys1, keys2, assume_unique=True)
    elif set_operation == "union":
        keys = np.union1d(keys1, keys2)
    elif set_operation == "a-b":
        keys = np.setdiff1d(keys1, keys2, assume_unique=True)
    elif set_operation == "b-a":
        keys = np.setdiff1d(keys2, keys1, assume_unique=True)
    else:
        raise errors.InvalidArgumentError(
            None, None, f"Invalid set_operation {set_operation!r}; expected one of {_OPERATIONS}")
    rows = keys // count
    starts = np.searchsorted(rows, rows, side="left")
    columns = np.arange(len(rows), dtype=np.int64) - starts
    width = int(columns.max()) + 1 if len(columns) else 0
    indices = np.concatenate([unlinear(rows, batch1), columns[:, None]], axis=1)
    values = uniques[keys % count].astype(values1.dtype, copy=False) if len(keys) else \
        values1[:0]
    return indices, values, np.append(batch1, width).astype(np.int64)


@SetSize.kernel
def _set_size_kernel(set_indices, set_values, set_shape, *, validate_indices):
    batch, rows, values = _sparse_members(set_indices, set_values, set_shape, validate_indices,
                                          "set")
    _, codes = np.unique(values, return_inverse=True)
    count = int(codes.max()) + 1 if codes.size else 1
    members = _keys(rows, codes.reshape(-1).astype(np.int64), count) // count
    sizes = np.bincount(members, minlength=int(np.prod(batch)))
    return sizes.astype(np.int32).reshape(tuple(int(d) for d in batch))


@DenseToDenseSetOperation.kernel
def _dense_to_dense_kernel(set1, set2, *, set_operation, validate_indices):
    return _set_operation(_dense_members(set1), _dense_members(set2), set_operation)


@DenseToSparseSetOperation.kernel
def _dense_to_sparse_kernel(set1, set2_indices, set2_values, set2_shape, *, set_operation,
                            validate_indices):
    second = _sparse_members(set2_indices, set2_values, set2_shape, validate_indices, "set2")
    return _set_operation(_dense_members(set1), second, set_operation)


@SparseToSparseSetOperation.kernel
def _sparse_to_sparse_kernel(set1_indices, set1_values, set1_shape, set2_indices, set2_values,
                             set2_shape, *, set_operation, validate_indices):
    first = _sparse_members(set1_indices, set1_values, set1_shape, validate_indices, "set1")
    second = _sparse_members(set2_indices, set2_values, set2_shape, validate_indices, "set2")
    return _set_operation(first, second, set_operation)


# -- wrappers -----------------------------------------------------------------------------------

def _check_dtype(value, what):
    if value.dtype.base_dtype not in _VALID_DTYPES:
        raise TypeError(f"'{what}' has invalid dtype `{value.dtype!r}` not in supported dtypes: "
                        f"{sorted(d.name for d in _VALID_DTYPES)}")


def set_size(a, validate_indices=True):
    """The number of unique members of each set (the last dimension) of SparseTensor `a`.

    Args:
        a: a SparseTensor of rank >= 2 (int8/16/32/64, uint8/16 or string values), indices in
            row-major order.
        validate_indices: check that the indices are sorted and unique.

    Returns:
        An int32 tensor shaped like `a.dense_shape[:-1]`.

    Raises:
        TypeError: `a` is not a SparseTensor or has an unsupported dtype.

    Example:
        >>> tf.sets.set_size(tf.SparseTensor([[0, 0], [0, 1]], [1, 1], [1, 3]))  # [1]
    """
    a = convert_to_tensor_or_sparse_tensor(a, name="a")
    if not isinstance(a, SparseTensor):
        raise TypeError(f"Expected `SparseTensor`, got {a}.")
    _check_dtype(a.values, "a")
    return SetSize(a.indices, a.values, a.dense_shape, validate_indices=validate_indices)


def _set_op(a, b, set_operation, validate_indices, swap_ok):
    a = convert_to_tensor_or_sparse_tensor(a, name="a")
    b = convert_to_tensor_or_sparse_tensor(b, name="b")
    if isinstance(a, SparseTensor) and not isinstance(b, SparseTensor):
        if not swap_ok:  # a-b with a sparse: b-a with the roles swapped
            set_operation = {"a-b": "b-a", "b-a": "a-b"}[set_operation]
        a, b = b, a
    a_values = a.values if isinstance(a, SparseTensor) else a
    b_values = b.values if isinstance(b, SparseTensor) else b
    if a_values.dtype.base_dtype != b_values.dtype.base_dtype:
        raise TypeError(f"Types don't match, {a_values.dtype!r} vs {b_values.dtype!r}.")
    _check_dtype(a_values, "a")
    attrs = dict(set_operation=set_operation, validate_indices=validate_indices)
    if isinstance(b, SparseTensor):
        if isinstance(a, SparseTensor):
            out = SparseToSparseSetOperation(a.indices, a.values, a.dense_shape, b.indices,
                                             b.values, b.dense_shape, **attrs)
        else:
            out = DenseToSparseSetOperation(a, b.indices, b.values, b.dense_shape, **attrs)
    else:
        out = DenseToDenseSetOperation(a, b, **attrs)
    return SparseTensor(out.result_indices, out.result_values, out.result_shape)


def set_intersection(a, b, validate_indices=True):
    """Members of each set of `a` also in the matching set of `b` (sets: the last dimension).

    Args:
        a: a Tensor or SparseTensor of rank >= 2.
        b: a Tensor or SparseTensor with the same batch dimensions and dtype.
        validate_indices: check that sparse indices are sorted and unique.

    Returns:
        A SparseTensor of the same rank: row `i...` lists that set's members in ascending
        order; the last dimension is the largest result set.

    Raises:
        TypeError: dtypes differ or are not supported.

    Example:
        >>> tf.sets.set_intersection([[1, 2, 2, 5]], [[2, 5, 7, 1]])  # values [1, 2, 5]
    """
    return _set_op(a, b, "intersection", validate_indices, True)


def set_union(a, b, validate_indices=True):
    """Members of each set of `a` or of the matching set of `b` (see `set_intersection`)."""
    return _set_op(a, b, "union", validate_indices, True)


def set_difference(a, b, aminusb=True, validate_indices=True):
    """Members of each set of `a` not in `b` (or of `b` not in `a` when `aminusb` is False;
    see `set_intersection`)."""
    return _set_op(a, b, "a-b" if aminusb else "b-a", validate_indices, False)
